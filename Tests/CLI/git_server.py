"""A loopback smart-HTTP git server for the git credential helper tests.

`git http-backend` run as CGI behind Python's http.server on 127.0.0.1, plain http. Every request
must carry `Authorization: Basic` whose password is an access token the test authorization server
accepts (checked by calling its resource endpoint, `SFAUTH_TEST_RESOURCE_URL`, with it); anything
else gets 401 with a Basic challenge. `attempts` records (username, password, status) of every
request that carried credentials. `stop()` ends it.
"""
import base64
import http.server
import os
import subprocess
import threading
import urllib.error
import urllib.request


class GitServer:
    def __init__(self, project_root, resource_url):
        self.project_root = str(project_root)
        self.resource_url = resource_url
        self.attempts = []
        self.unauthenticated = 0
        self.lock = threading.Lock()
        self.refused = set()           # tokens to refuse whatever the authorization server says
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.host = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.host}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def create_repository(self, name, files):
        """A bare repository `name` with one commit holding `files` ({path: text})."""
        work = os.path.join(self.project_root, "_work_" + name)
        subprocess.run(["git", "init", "-q", "-b", "main", work], check=True)
        for path, text in files.items():
            with open(os.path.join(work, path), "w") as f:
                f.write(text)
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
        subprocess.run(["git", "-C", work, "add", "."], check=True, env=env)
        subprocess.run(["git", "-C", work, "commit", "-q", "-m", "first"], check=True, env=env)
        subprocess.run(["git", "clone", "-q", "--bare", work, os.path.join(self.project_root, name)], check=True)
        return f"{self.url}/{name}"

    def accepts(self, token):
        if token in self.refused:
            return False
        request = urllib.request.Request(self.resource_url, headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status == 200
        except urllib.error.HTTPError:
            return False

    def _handler(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _challenge(self):
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="sfauth-test"')
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _handle(self):
                header = self.headers.get("Authorization", "")
                if not header.startswith("Basic "):
                    with server.lock:
                        server.unauthenticated += 1
                    return self._challenge()
                username, _, password = base64.b64decode(header[6:]).decode().partition(":")
                ok = server.accepts(password)
                with server.lock:
                    server.attempts.append((username, password, 200 if ok else 401))
                if not ok:
                    return self._challenge()
                self._run_backend(username)

            def _run_backend(self, username):
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                env = {
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "GIT_PROJECT_ROOT": server.project_root,
                    "GIT_HTTP_EXPORT_ALL": "1",
                    "REQUEST_METHOD": self.command,
                    "PATH_INFO": path,
                    "QUERY_STRING": query,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "CONTENT_LENGTH": str(length),
                    "REMOTE_USER": username,
                    "REMOTE_ADDR": "127.0.0.1",
                    "GATEWAY_INTERFACE": "CGI/1.1",
                    "SERVER_PROTOCOL": "HTTP/1.0",
                }
                for name in ("Content-Encoding", "Git-Protocol"):
                    if self.headers.get(name):
                        env["HTTP_" + name.upper().replace("-", "_")] = self.headers[name]
                result = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60)
                head, _, payload = result.stdout.partition(b"\r\n\r\n")
                if not _:
                    head, _, payload = result.stdout.partition(b"\n\n")
                status, headers = 200, []
                for line in head.decode("latin-1").splitlines():
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.strip().split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _handle
            do_POST = _handle

        return Handler
