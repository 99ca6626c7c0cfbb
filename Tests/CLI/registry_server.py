"""A loopback container registry with token authentication, for the Docker credential helper tests.

A stand-in for a registry behind an OAuth/OIDC-fronted token service (a registry cannot run here:
no Docker daemon, no registry image), reproducing what the documents and the real client do:

- Registry HTTP API v2 (distribution/distribution `docs/spec/api.md`): `GET /v2/` answers 401 with
  `WWW-Authenticate: Bearer realm="<this>/token",service="sfauth-test-registry"`; the manifest,
  config blob and tag list of `team/app:latest` are served only with a registry token this server
  issued for `repository:team/app:pull`.
- Its token service, both ways a client asks (distribution `docs/spec/auth/token.md` and
  `docs/spec/auth/oauth.md`; containers/image v5.23 `docker/docker_client.go`
  `getBearerToken` / `getBearerTokenOAuth2`, as the groundwork for issue 20 §B.2 observed skopeo
  send them):
  - `GET /token?service=&scope=&account=` with HTTP Basic `<username>:<access token>` (the helper
    answered a username and password);
  - `POST /token`, form `grant_type=refresh_token&refresh_token=<access token>&client_id=…&scope=…`,
    sent **chunked** (no Content-Length) — the helper answered `Username: <token>`, an identity token.
  Either way the token is accepted only when the test authorization server accepts it as an access
  token (its resource endpoint, `SFAUTH_TEST_RESOURCE_URL`, answers 200 to it: as the git and
  Kubernetes stand-ins check), and, for Basic, the username is the one this registry expects (GCR
  and Artifact Registry take `oauth2accesstoken`). Anything else: 401, and anonymous requests get
  401 "no anonymous access".

Plain http on 127.0.0.1 (skopeo `--tls-verify=false` tries https first, gets a 400 for its
ClientHello, then uses http). Serves from a daemon thread of the test process, so it ends with it;
`stop()` ends it sooner, and it also stops by itself after `lifetime` seconds. `requests` records
every request as a dict (method, path, authorization kind, username, token sent, status).
"""
import base64
import hashlib
import http.server
import json
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

SERVICE = "sfauth-test-registry"
REPOSITORY = "team/app"

CONFIG = json.dumps({"architecture": "amd64", "os": "linux",
                     "config": {"Env": ["PATH=/bin"], "Cmd": ["/bin/sh"]},
                     "rootfs": {"type": "layers", "diff_ids": []}, "history": []}).encode()
CONFIG_DIGEST = "sha256:" + hashlib.sha256(CONFIG).hexdigest()
MANIFEST = json.dumps({"schemaVersion": 2,
                       "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                       "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                                  "size": len(CONFIG), "digest": CONFIG_DIGEST},
                       "layers": []}).encode()
MANIFEST_DIGEST = "sha256:" + hashlib.sha256(MANIFEST).hexdigest()


class RegistryServer:
    def __init__(self, resource_url, username="oauth2accesstoken", lifetime=600):
        self.resource_url = resource_url
        self.username = username       # what Basic must carry as the user name
        self.requests = []
        self.lock = threading.Lock()
        self.issued = {}               # registry token -> scopes
        self._stopped = False
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.host = f"127.0.0.1:{self.port}"
        self.image = f"docker://{self.host}/{REPOSITORY}:latest"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.timer = threading.Timer(lifetime, self.stop)
        self.timer.daemon = True
        self.timer.start()

    def stop(self):
        with self.lock:
            if self._stopped:
                return
            self._stopped = True
        self.timer.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()

    def accepts(self, token):
        """Whether the test authorization server accepts `token` as an access token."""
        request = urllib.request.Request(self.resource_url, headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status == 200
        except (urllib.error.HTTPError, urllib.error.URLError):
            return False

    def token_requests(self):
        """The requests to the token endpoint: (method, kind, username, token, status)."""
        with self.lock:
            return [(r["method"], r["kind"], r["username"], r["token"], r["status"]) for r in self.requests if r["path"] == "/token"]

    def _handler(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status, body=b"", content_type="application/json", headers=()):
                if isinstance(body, (dict, list)):
                    body = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Docker-Distribution-API-Version", "registry/2.0")
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _record(self, status, kind=None, username=None, token=None):
                with server.lock:
                    server.requests.append({"method": self.command, "path": urllib.parse.urlsplit(self.path).path,
                                            "kind": kind, "username": username, "token": token, "status": status})

            def _challenge(self, scope=None):
                value = f'Bearer realm="http://{server.host}/token",service="{SERVICE}"'
                if scope:
                    value += f',scope="{scope}"'
                self._record(401)
                self._send(401, {"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]},
                           headers=[("WWW-Authenticate", value)])

            def _body(self):
                # containers/image sends the OAuth2 form chunked; http.server does not decode that.
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    raw = b""
                    while True:
                        size = int(self.rfile.readline().strip().split(b";")[0], 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return raw
                        raw += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _issue(self, scopes):
                token = "registry-" + secrets.token_urlsafe(16)
                with server.lock:
                    server.issued[token] = scopes
                return token

            def _token(self, form):
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                scopes = [s for value in query.get("scope", []) + form.get("scope", []) for s in value.split(" ") if s]
                if self.command == "GET":
                    header = self.headers.get("Authorization", "")
                    if not header.startswith("Basic "):
                        self._record(401, "anonymous")
                        return self._send(401, {"errors": [{"code": "UNAUTHORIZED", "message": "no anonymous access"}]})
                    username, _, password = base64.b64decode(header[6:]).decode(errors="replace").partition(":")
                    ok = username == server.username and server.accepts(password)
                    self._record(200 if ok else 401, "basic", username, password)
                    if not ok:
                        return self._send(401, {"errors": [{"code": "UNAUTHORIZED", "message": "invalid username or token"}]})
                    token = self._issue(scopes)
                    return self._send(200, {"token": token, "access_token": token, "expires_in": 300,
                                            "issued_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
                grant = form.get("grant_type", [""])[0]
                refresh = form.get("refresh_token", [""])[0]
                ok = grant == "refresh_token" and refresh != "" and server.accepts(refresh)
                self._record(200 if ok else 400, "identity-token", None, refresh or None)
                if not ok:
                    return self._send(400, {"error": "invalid_grant"})
                return self._send(200, {"access_token": self._issue(scopes), "expires_in": 300, "scope": " ".join(scopes)})

            def _registry_token_ok(self, scope):
                header = self.headers.get("Authorization", "")
                if not header.startswith("Bearer "):
                    return False
                with server.lock:
                    scopes = server.issued.get(header[7:])
                return scopes is not None and (scope is None or scope in scopes)

            def _handle(self):
                path = urllib.parse.urlsplit(self.path).path
                form = urllib.parse.parse_qs(self._body().decode(errors="replace")) if self.command == "POST" else {}
                if path == "/token":
                    return self._token(form)
                if path in ("/v2", "/v2/"):
                    if not self._registry_token_ok(None):
                        return self._challenge()
                    self._record(200, "registry-token")
                    return self._send(200, {})
                parts = path.split("/")
                scope = f"repository:{REPOSITORY}:pull"
                if path == f"/v2/{REPOSITORY}/tags/list":
                    if not self._registry_token_ok(scope):
                        return self._challenge(scope)
                    self._record(200, "registry-token")
                    return self._send(200, {"name": REPOSITORY, "tags": ["latest"]})
                if len(parts) >= 5 and parts[1] == "v2" and parts[-2] in ("manifests", "blobs"):
                    if "/".join(parts[2:-2]) != REPOSITORY:
                        self._record(404)
                        return self._send(404, {"errors": [{"code": "NAME_UNKNOWN", "message": "repository name not known"}]})
                    if not self._registry_token_ok(scope):
                        return self._challenge(scope)
                    self._record(200, "registry-token")
                    if parts[-2] == "manifests" and parts[-1] in ("latest", MANIFEST_DIGEST):
                        return self._send(200, MANIFEST, "application/vnd.docker.distribution.manifest.v2+json",
                                          headers=[("Docker-Content-Digest", MANIFEST_DIGEST)])
                    if parts[-2] == "blobs" and parts[-1] == CONFIG_DIGEST:
                        return self._send(200, CONFIG, "application/octet-stream", headers=[("Docker-Content-Digest", CONFIG_DIGEST)])
                    return self._send(404, {"errors": [{"code": "MANIFEST_UNKNOWN", "message": "manifest unknown"}]})
                self._record(404)
                self._send(404, {"errors": [{"code": "NOT_FOUND"}]})

            do_GET = _handle
            do_HEAD = _handle
            do_POST = _handle

        return Handler
