#!/usr/bin/env python3
"""A loopback fault server for sfauth's tests: a proxy to the test authorization server that can be
told to misbehave on one endpoint.

    fault_server.py [--upstream URL] [--upstream-issuer URL] [--signing-key PEM] [--ttl S] [--parent-pid N]

Defaults come from the SFAUTH_TEST_* variables of `scripts/test-server env` (SFAUTH_TEST_SERVER_URL,
SFAUTH_TEST_ISSUER, SFAUTH_TEST_RUN_DIR/oidc-rsa.pem). Python standard library and the `openssl`
command only. Everything binds 127.0.0.1. When ready it prints ONE JSON line on stdout:

    {"url": "http://127.0.0.1:P", "issuer": "http://127.0.0.1:P/o",
     "tls_url": "https://127.0.0.1:T", "tls_issuer": "https://127.0.0.1:T/o",
     "dead_url": "http://127.0.0.1:D", "pid": N}

and serves until its TTL (default 900 s) is over or the parent process (default: the one that
started it; 0 = none) is gone, whichever comes first.

Listeners
  url       the proxy. Paths are the upstream's (/o/token/, /o/revoke_token/, ...): everything is
            forwarded to the upstream server, except the endpoints below while a fault is armed.
  tls_url   the same handler over https with a self-signed certificate made by `openssl` at start:
            no client trusts it (the 'tls-untrusted' fault).
  dead_url  a port that is bound but never listens: every connection is refused ('refused').

Endpoints (name: path on the proxy)
  discovery   /o/.well-known/openid-configuration (also the RFC 8414 paths). Served by the fault
              server itself: the upstream document with `issuer` = this listener's issuer and the
              token, revocation, userinfo, JWKS and device endpoints on this listener (the
              authorization endpoint stays the upstream's: the browser talks to it directly). An
              endpoint armed with 'refused' is published on dead_url, one armed with 'tls-untrusted'
              on tls_url, so `sfauth login --issuer <issuer>` meets those faults too.
  token       /o/token/        passthrough rewrites an ID token's `iss` to this listener's issuer
                               and re-signs it (RS256, the upstream's key), so ID-token validation
                               against this issuer works.
  revocation  /o/revoke_token/
  userinfo    /o/userinfo/
  jwks        /o/.well-known/jwks.json
  device      /o/device-authorization/

Control (JSON; on any listener)
  POST /fault {"endpoint": "token", "fault": "html-503", "sticky": false}
               arm; one-shot by default (the next request to that endpoint), sticky until changed.
               "fault": "none" disarms that endpoint.
  POST /fault/reset   disarm everything, clear the counters.
  GET  /fault         {"armed": {...}, "hits": {endpoint: n}, "applied": {"endpoint/fault": n},
                       "tls_handshake_failures": n, "last_token": {...}, urls...}

Faults
  html-500, html-502, html-503, html-404   that status with an HTML error page (text/html)
  html-200            200 with an HTML page (a login page, a captive portal)
  json-503            503 application/json {"error": "temporarily_unavailable", ...}, Retry-After: 60
  refused             connection refused: clients are sent to dead_url (by discovery, or by tests
                      that take the endpoint's URL from /fault); a request that still reaches the
                      proxy gets its connection reset without an answer
  reset               200 headers and half the body, then a TCP RST (SO_LINGER 0)
  timeout             the request is read, nothing is answered until the client gives up (at most
                      --hang-limit seconds, default 120)
  truncated-json      200 application/json, the first half of a good body (a consistent
                      Content-Length: the HTTP layer is fine, the JSON is not)
  text-plain          a good JSON body labelled text/plain
  json-as-html        a good JSON body labelled text/html
  oversize            200 application/json, a valid JSON body of 5 MiB (sfauth caps bodies at 4 MiB)
  no-access-token     (token) 200 JSON without access_token
  token-type-mac      (token) a good token response with "token_type": "mac"
  no-device-code      (device) 200 JSON without device_code
  tls-untrusted       clients are sent to tls_url (see refused); the proxy answers normally

A "good body" of the token endpoint is made up here (never forwarded: a fault must not spend a
code or rotate a refresh token at the real server); the last one is in GET /fault `last_token`.
Other endpoints' good bodies are the upstream's answer to the same request.
"""
import argparse
import base64
import http.client
import json
import os
import secrets
import select
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ENDPOINT_KEYS = {  # endpoint name -> discovery key
    "token": "token_endpoint",
    "revocation": "revocation_endpoint",
    "userinfo": "userinfo_endpoint",
    "jwks": "jwks_uri",
    "device": "device_authorization_endpoint",
}
FAULTS = {"none", "json-503", "html-500", "html-502", "html-503", "html-404", "html-200", "refused", "reset", "timeout",
          "truncated-json", "text-plain", "json-as-html", "oversize", "no-access-token", "token-type-mac",
          "no-device-code", "tls-untrusted"}
REDIRECTING = {"refused", "tls-untrusted"}      # act by publishing another URL; always sticky
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection", "te",
              "trailer", "upgrade"}
REASONS = {200: "OK", 404: "Not Found", 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class State:
    def __init__(self, upstream, upstream_issuer, signing_key, hang_limit):
        self.lock = threading.Lock()
        self.upstream = urllib.parse.urlsplit(upstream)
        self.upstream_issuer = upstream_issuer.rstrip("/")
        self.signing_key = signing_key
        self.hang_limit = hang_limit
        self.stopping = threading.Event()
        self.urls = {}
        self.reset()

    def reset(self):
        with self.lock:
            self.armed = {}             # endpoint -> {"fault", "sticky"}
            self.hits = {}
            self.applied = {}
            self.tls_handshake_failures = 0
            self.last_token = None
            self.upstream_paths = None

    # ---- upstream

    def upstream_request(self, method, path, body=None, headers=None):
        connection = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            connection.close()

    def discovery_document(self):
        path = urllib.parse.urlsplit(self.upstream_issuer).path + "/.well-known/openid-configuration"
        status, _, body = self.upstream_request("GET", path)
        if status != 200:
            raise RuntimeError(f"upstream discovery answered {status}")
        return json.loads(body)

    def endpoint_paths(self):
        """path on the proxy -> endpoint name (the upstream's paths, learnt once)."""
        with self.lock:
            if self.upstream_paths is not None:
                return self.upstream_paths
        document = self.discovery_document()
        paths = {}
        for name, key in ENDPOINT_KEYS.items():
            if document.get(key):
                paths[urllib.parse.urlsplit(document[key]).path] = name
        issuer_path = urllib.parse.urlsplit(self.upstream_issuer).path
        for path in (issuer_path + "/.well-known/openid-configuration",
                     issuer_path + "/.well-known/oauth-authorization-server",
                     "/.well-known/oauth-authorization-server" + issuer_path,
                     "/.well-known/openid-configuration" + issuer_path):
            paths[path] = "discovery"
        with self.lock:
            self.upstream_paths = paths
        return paths

    # ---- faults

    def take(self, endpoint):
        """The fault for this request of `endpoint` (consuming a one-shot one), counting the hit."""
        with self.lock:
            self.hits[endpoint] = self.hits.get(endpoint, 0) + 1
            armed = self.armed.get(endpoint)
            if not armed:
                return None
            if not armed["sticky"] and armed["fault"] not in REDIRECTING:
                del self.armed[endpoint]
            key = f"{endpoint}/{armed['fault']}"
            self.applied[key] = self.applied.get(key, 0) + 1
            return armed["fault"]

    def published_origin(self, endpoint, own_origin):
        with self.lock:
            fault = (self.armed.get(endpoint) or {}).get("fault")
        if fault == "refused":
            return self.urls["dead_url"]
        if fault == "tls-untrusted":
            return self.urls["tls_url"]
        return own_origin

    def snapshot(self):
        with self.lock:
            return {"armed": dict(self.armed), "hits": dict(self.hits), "applied": dict(self.applied),
                    "tls_handshake_failures": self.tls_handshake_failures, "last_token": self.last_token,
                    **self.urls}

    # ---- ID tokens

    def resign(self, id_token, issuer):
        """The ID token with `iss` = issuer, signed again with the upstream's RSA key (RS256)."""
        header_b64, claims_b64, _ = id_token.split(".")
        header = json.loads(b64url_decode(header_b64))
        claims = json.loads(b64url_decode(claims_b64))
        if header.get("alg") != "RS256" or not self.signing_key or claims.get("iss") != self.upstream_issuer:
            return id_token
        claims["iss"] = issuer
        signing_input = f"{header_b64}.{b64url(json.dumps(claims, separators=(',', ':')).encode())}"
        signature = subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.signing_key], input=signing_input.encode(),
                                   capture_output=True, check=True).stdout
        return f"{signing_input}.{b64url(signature)}"


class Handler(BaseHTTPRequestHandler):
    server_version = "sfauth-fault-server"
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        log = self.server.log
        if log:
            log.write("%s %s\n" % (time.strftime("%H:%M:%S"), fmt % args))
            log.flush()

    @property
    def state(self):
        return self.server.state

    @property
    def origin(self):
        return self.server.origin

    @property
    def issuer(self):
        return self.origin + urllib.parse.urlsplit(self.state.upstream_issuer).path

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def dispatch(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length else b""
        path = urllib.parse.urlsplit(self.path).path
        try:
            if path == "/fault" or path.startswith("/fault/"):
                return self.control(path)
            endpoint = self.state.endpoint_paths().get(path)
            fault = self.state.take(endpoint) if endpoint else None
            if fault:
                return self.misbehave(endpoint, fault)
            if endpoint == "discovery":
                return self.send_json(200, self.discovery())
            return self.proxy(endpoint)
        except (BrokenPipeError, ConnectionResetError):
            pass

    # ---- control

    def control(self, path):
        if self.command == "GET" and path == "/fault":
            return self.send_json(200, self.state.snapshot())
        if self.command in ("POST", "DELETE") and path == "/fault/reset" or self.command == "DELETE" and path == "/fault":
            self.state.reset()
            return self.send_json(200, self.state.snapshot())
        if self.command == "POST" and path == "/fault":
            try:
                request = json.loads(self.body or b"{}")
                endpoint, fault = request["endpoint"], request["fault"]
            except (ValueError, KeyError, TypeError):
                return self.send_json(400, {"error": 'send {"endpoint": ..., "fault": ..., "sticky": false}'})
            if endpoint not in set(ENDPOINT_KEYS) | {"discovery"} or fault not in FAULTS:
                return self.send_json(400, {"error": f"unknown endpoint or fault: {endpoint!r} {fault!r}",
                                            "endpoints": sorted(set(ENDPOINT_KEYS) | {"discovery"}),
                                            "faults": sorted(FAULTS)})
            with self.state.lock:
                if fault == "none":
                    self.state.armed.pop(endpoint, None)
                else:
                    self.state.armed[endpoint] = {"fault": fault, "sticky": bool(request.get("sticky", False))}
            return self.send_json(200, self.state.snapshot())
        return self.send_json(404, {"error": "not_found"})

    # ---- normal answers

    def discovery(self):
        document = self.state.discovery_document()
        document["issuer"] = self.issuer
        upstream_origin = f"{self.state.upstream.scheme}://{self.state.upstream.netloc}"
        for name, key in ENDPOINT_KEYS.items():
            if document.get(key, "").startswith(upstream_origin):
                origin = self.state.published_origin(name, self.origin)
                document[key] = origin + document[key][len(upstream_origin):]
        return document

    def proxy(self, endpoint):
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"host"}}
        status, response_headers, body = self.state.upstream_request(
            self.command, self.path, body=self.body if self.command != "GET" else None, headers=headers)
        if endpoint == "token" and status == 200:
            try:
                document = json.loads(body)
                if isinstance(document, dict) and isinstance(document.get("id_token"), str):
                    document["id_token"] = self.state.resign(document["id_token"], self.issuer)
                    body = json.dumps(document).encode()
            except ValueError:
                pass
        self.send_response(status)
        for name, value in response_headers:
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def good_body(self, endpoint):
        """What the endpoint would answer: made up for the token endpoint, the upstream's otherwise."""
        if endpoint == "discovery":
            return json.dumps(self.discovery()).encode()
        if endpoint == "token":
            token = {"access_token": "fault-at-" + secrets.token_urlsafe(16), "token_type": "Bearer",
                     "expires_in": 3600, "scope": "openid profile",
                     "refresh_token": "fault-rt-" + secrets.token_urlsafe(16)}
            with self.state.lock:
                self.state.last_token = token
            return json.dumps(token).encode()
        if endpoint == "revocation":
            return b"{}"
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP | {"host"}}
        _, _, body = self.state.upstream_request(self.command, self.path,
                                                 body=self.body if self.command != "GET" else None, headers=headers)
        return body

    # ---- faults

    def misbehave(self, endpoint, fault):
        if fault.startswith("html-"):
            status = int(fault[5:])
            title = f"{status} {REASONS.get(status, 'Error')}" if status != 200 else "Sign in"
            page = (f"<!DOCTYPE html>\n<html><head><title>{title}</title></head>\n<body>\n<h1>{title}</h1>\n"
                    f"<p>The server is temporarily unable to service your request.</p>\n<hr><address>nginx</address>\n"
                    f"</body></html>\n").encode()
            return self.send_bytes(status, page, "text/html; charset=utf-8")
        if fault == "json-503":
            body = json.dumps({"error": "temporarily_unavailable",
                               "error_description": "The service is overloaded; try again in a minute."}).encode()
            self.send_response(503)
            self.send_header("Retry-After", "60")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            return
        if fault == "refused":
            return self.reset_connection()
        if fault == "tls-untrusted":
            return self.proxy(endpoint)
        if fault == "timeout":
            return self.hang()
        if fault == "reset":
            body = self.good_body(endpoint)
            head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                    f"Cache-Control: no-store\r\n\r\n").encode()
            self.wfile.write(head + body[: len(body) // 2])
            self.wfile.flush()
            return self.reset_connection()
        if fault == "truncated-json":
            body = self.good_body(endpoint)
            return self.send_bytes(200, body[: len(body) // 2], "application/json")
        if fault == "text-plain":
            return self.send_bytes(200, self.good_body(endpoint), "text/plain; charset=utf-8")
        if fault == "json-as-html":
            return self.send_bytes(200, self.good_body(endpoint), "text/html; charset=utf-8")
        if fault == "oversize":
            padding = "x" * (5 << 20)
            body = json.dumps({"access_token": "fault-oversize", "token_type": "Bearer", "expires_in": 3600,
                               "keys": [], "padding": padding}).encode()
            return self.send_bytes(200, body, "application/json")
        if fault == "no-access-token":
            return self.send_bytes(200, json.dumps({"token_type": "Bearer", "expires_in": 3600,
                                                    "scope": "openid"}).encode(), "application/json")
        if fault == "token-type-mac":
            document = json.loads(self.good_body(endpoint)) if endpoint == "token" else {}
            document["token_type"] = "mac"
            document["mac_key"] = "adijq39jdlaska9asud"
            document["mac_algorithm"] = "hmac-sha-256"
            return self.send_bytes(200, json.dumps(document).encode(), "application/json")
        if fault == "no-device-code":
            document = json.loads(self.good_body(endpoint))
            document.pop("device_code", None)
            return self.send_bytes(200, json.dumps(document).encode(), "application/json")
        raise AssertionError(fault)

    def send_bytes(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def send_json(self, status, document):
        self.send_bytes(status, json.dumps(document, indent=1).encode() + b"\n", "application/json")

    def reset_connection(self):
        """Ends the connection with a TCP RST once the handler returns (see Server.shutdown_request)."""
        self.close_connection = True
        with self.server.reset_lock:
            self.server.reset_requests.add(id(self.request))

    def hang(self):
        """Says nothing until the client closes the connection (or the limit, or the server stops)."""
        self.close_connection = True
        deadline = time.monotonic() + self.state.hang_limit
        connection = self.request
        while time.monotonic() < deadline and not self.state.stopping.is_set():
            readable, _, _ = select.select([connection], [], [], 0.25)
            if readable:
                try:
                    if not connection.recv(4096):
                        return
                except (OSError, ssl.SSLError):
                    return


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address, state, log, tls_context=None):
        super().__init__(address, Handler)
        self.state = state
        self.log = log
        self.reset_lock = threading.Lock()
        self.reset_requests = set()
        self.tls_context = tls_context
        scheme = "https" if tls_context else "http"
        self.origin = f"{scheme}://127.0.0.1:{self.server_address[1]}"

    def finish_request(self, request, client_address):
        if self.tls_context:
            try:
                request.settimeout(10)
                request = self.tls_context.wrap_socket(request, server_side=True)
                request.settimeout(None)
            except (ssl.SSLError, OSError):
                with self.state.lock:
                    self.state.tls_handshake_failures += 1
                return
        try:
            self.RequestHandlerClass(request, client_address, self)
        finally:
            with self.reset_lock:
                reset = id(request) in self.reset_requests
                self.reset_requests.discard(id(request))
            try:
                if reset:
                    request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    request.close()
                elif self.tls_context:
                    request.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        if self.log:
            import traceback
            self.log.write(traceback.format_exc())
            self.log.flush()


def make_certificate(directory):
    key, cert = os.path.join(directory, "key.pem"), os.path.join(directory, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", default=os.environ.get("SFAUTH_TEST_SERVER_URL"))
    parser.add_argument("--upstream-issuer", default=os.environ.get("SFAUTH_TEST_ISSUER"))
    run_dir = os.environ.get("SFAUTH_TEST_RUN_DIR")
    parser.add_argument("--signing-key", default=os.path.join(run_dir, "oidc-rsa.pem") if run_dir else None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ttl", type=float, default=float(os.environ.get("SFAUTH_FAULT_SERVER_TTL", 900)))
    parser.add_argument("--parent-pid", type=int, default=os.getppid())
    parser.add_argument("--hang-limit", type=float, default=120)
    parser.add_argument("--log", help="append one line per request here")
    args = parser.parse_args()
    if not args.upstream or not args.upstream_issuer:
        parser.error("no upstream: run `eval \"$(scripts/test-server env)\"` first or pass --upstream/--upstream-issuer")
    if args.signing_key and not os.path.exists(args.signing_key):
        args.signing_key = None

    state = State(args.upstream, args.upstream_issuer, args.signing_key, args.hang_limit)
    log = open(args.log, "a") if args.log else None
    workdir = tempfile.mkdtemp(prefix="sfauth-fault-server-")
    try:
        tls_context = make_certificate(workdir)
    finally:
        for name in os.listdir(workdir):
            os.unlink(os.path.join(workdir, name))
        os.rmdir(workdir)

    plain = Server(("127.0.0.1", args.port), state, log)
    tls = Server(("127.0.0.1", 0), state, log, tls_context)
    dead = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    dead.bind(("127.0.0.1", 0))                     # bound, never listening: connections are refused
    state.urls = {"url": plain.origin, "issuer": plain.origin + urllib.parse.urlsplit(state.upstream_issuer).path,
                  "tls_url": tls.origin, "tls_issuer": tls.origin + urllib.parse.urlsplit(state.upstream_issuer).path,
                  "dead_url": f"http://127.0.0.1:{dead.getsockname()[1]}"}
    for server in (plain, tls):
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    print(json.dumps(dict(state.urls, pid=os.getpid())), flush=True)

    deadline = time.monotonic() + args.ttl
    while time.monotonic() < deadline:
        if args.parent_pid > 1:
            try:
                os.kill(args.parent_pid, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                pass
        time.sleep(0.5)
    state.stopping.set()
    os._exit(0)


if __name__ == "__main__":
    main()
