#!/usr/bin/env python3
"""Tiny Docker Registry HTTP API v2 stand-in with token auth, plain http on 127.0.0.1.

  GET  /v2/                      -> 401 + WWW-Authenticate: Bearer realm=".../token",service="gw-registry"
                                    (200 with a valid bearer token)
  GET  /token?service=&scope=    -> Docker token spec: Basic auth (username:password) -> {"token","access_token",...}
  POST /token  (form)            -> OAuth2 variant (docker/distribution docs/spec/auth/oauth.md):
                                    grant_type=refresh_token (identity token) or password
  GET  /v2/<repo>/manifests/<ref>   (bearer; scope repository:<repo>:pull)
  GET  /v2/<repo>/blobs/<digest>    (bearer)

Every request is logged as one JSON line to stdout (method, path, query, auth header, form).
Accepted credentials: user "alice" / password "s3cret", or identity token "IDTOKEN-123".
Usage: fake_registry.py [PORT]
"""
import base64
import hashlib
import json
import secrets
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 5055
SERVICE = "gw-registry"
CHALLENGE = __import__("os").environ.get("CHALLENGE", "bearer")
USER, PASSWORD, IDTOKEN = "alice", "s3cret", "IDTOKEN-123"
TOKENS = {}  # bearer -> {"scope": ..., "exp": ...}

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


def log(**kw):
    print(json.dumps(kw), flush=True)


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, code, body=b"", ctype="application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Docker-Distribution-API-Version", "registry/2.0")
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _challenge(self, scope=None):
        if CHALLENGE == "basic":  # CHALLENGE=basic env: a registry with plain Basic auth (no token server)
            return self._send(401, {"errors": [{"code": "UNAUTHORIZED"}]},
                              headers=[("WWW-Authenticate", f'Basic realm="{SERVICE}"')])
        v = f'Bearer realm="http://127.0.0.1:{PORT}/token",service="{SERVICE}"'
        if scope:
            v += f',scope="{scope}"'
        self._send(401, {"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]},
                   headers=[("WWW-Authenticate", v)])

    def _bearer_ok(self, need_scope=None):
        a = self.headers.get("Authorization", "")
        if CHALLENGE == "basic":
            return a == "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if not a.startswith("Bearer "):
            return False
        t = TOKENS.get(a[7:])
        if not t or t["exp"] < time.time():
            return False
        return need_scope is None or need_scope in t["scope"]

    def _issue(self, scopes, refresh=False, oauth=False):
        tok = "bt-" + secrets.token_urlsafe(12)
        TOKENS[tok] = {"scope": scopes, "exp": time.time() + 300}
        body = {"token": tok, "access_token": tok, "expires_in": 300,
                "issued_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if oauth:
            body = {"access_token": tok, "expires_in": 300, "scope": " ".join(scopes)}
        if refresh:
            body["refresh_token"] = IDTOKEN
        return body

    def do_GET(self):
        self._handle()

    def do_HEAD(self):
        self._handle()

    def do_POST(self):
        self._handle()

    def _handle(self):
        u = urlparse(self.path)
        q = parse_qs(u.query)
        form = {}
        if self.command == "POST":
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                raw = b""
                while True:
                    size = int(self.rfile.readline().strip().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    raw += self.rfile.read(size)
                    self.rfile.readline()
            else:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
            form = parse_qs(raw.decode())
        log(method=self.command, path=u.path, query=q, authorization=self.headers.get("Authorization"),
            form=form, content_type=self.headers.get("Content-Type"), ua=self.headers.get("User-Agent"),
            te=self.headers.get("Transfer-Encoding"))

        if u.path in ("/v2", "/v2/"):
            return self._send(200, {}) if self._bearer_ok() else self._challenge()

        if u.path == "/token":
            scopes = q.get("scope", []) + form.get("scope", [])
            scopes = [s for x in scopes for s in x.split(" ")]
            if self.command == "GET":
                a = self.headers.get("Authorization", "")
                if a.startswith("Basic "):
                    user, _, pw = base64.b64decode(a[6:]).decode().partition(":")
                    if (user, pw) == (USER, PASSWORD):
                        # offline_token=true asks for a refresh_token (docker token spec)
                        return self._send(200, self._issue(scopes, refresh=q.get("offline_token") == ["true"]))
                    return self._send(401, {"errors": [{"code": "UNAUTHORIZED", "message": "bad credentials"}]})
                # anonymous
                return self._send(401, {"errors": [{"code": "UNAUTHORIZED", "message": "no anonymous access"}]})
            gt = form.get("grant_type", [""])[0]
            if gt == "refresh_token" and form.get("refresh_token") == [IDTOKEN]:
                return self._send(200, self._issue(scopes, oauth=True))
            if gt == "password" and form.get("username") == [USER] and form.get("password") == [PASSWORD]:
                return self._send(200, self._issue(scopes, oauth=True,
                                                   refresh=form.get("access_type") == ["offline"]))
            return self._send(400, {"error": "invalid_grant"})

        parts = u.path.split("/")
        # /v2/<repo...>/tags/list (skopeo inspect lists tags unless --no-tags)
        if len(parts) >= 5 and parts[1] == "v2" and parts[-2:] == ["tags", "list"]:
            repo = "/".join(parts[2:-2])
            scope = f"repository:{repo}:pull"
            if not self._bearer_ok(scope):
                return self._challenge(scope)
            return self._send(200, {"name": repo, "tags": ["latest"]})
        # /v2/<repo...>/manifests/<ref>  or /v2/<repo...>/blobs/<digest>
        if len(parts) >= 5 and parts[1] == "v2" and parts[-2] in ("manifests", "blobs"):
            repo = "/".join(parts[2:-2])
            scope = f"repository:{repo}:pull"
            if not self._bearer_ok(scope):
                return self._challenge(scope)
            if parts[-2] == "manifests" and parts[-1] in ("latest", MANIFEST_DIGEST):
                return self._send(200, MANIFEST, "application/vnd.docker.distribution.manifest.v2+json",
                                  headers=[("Docker-Content-Digest", MANIFEST_DIGEST)])
            if parts[-2] == "blobs" and parts[-1] == CONFIG_DIGEST:
                return self._send(200, CONFIG, "application/octet-stream",
                                  headers=[("Docker-Content-Digest", CONFIG_DIGEST)])
            return self._send(404, {"errors": [{"code": "MANIFEST_UNKNOWN", "message": "unknown"}]})
        self._send(404, {"errors": [{"code": "NOT_FOUND"}]})


if __name__ == "__main__":
    srv = ThreadingHTTPServer(("127.0.0.1", PORT), H)
    log(event="listening", port=PORT)
    srv.serve_forever()
