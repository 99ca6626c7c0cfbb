"""A scripted HTTP server on 127.0.0.1 for answers no real server gives on purpose: numbers out of
every range, terminal escapes in error descriptions, slow refreshes. Each path answers with what a
test put there (status, headers, body, delay); every request is recorded. Stops with its context.

    with StubServer() as stub:
        stub.answer("/token", 200, {"access_token": "a", "issued_at": "nan"})
        ... stub.url("/token") ... stub.requests("/token")
"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubServer:
    def __init__(self):
        self._answers = {}
        self._requests = []
        self._headers = []
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
                path = self.path.split("?", 1)[0]
                with stub._lock:
                    stub._requests.append((path, body))
                    stub._headers.append((path, dict(self.headers.items())))
                    queue = stub._answers.get(path) or [(404, {}, b"", 0)]
                    answer = queue.pop(0) if len(queue) > 1 else queue[0]
                status, headers, payload, delay = answer
                if delay:
                    time.sleep(delay)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def url(self, path):
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def answer(self, path, status, body, headers=None, delay=0, then=None):
        """What `path` answers from now on: a dict or list is sent as JSON, bytes or str as they are.
        `then`: a list of further (status, body) answers, each used once, after this one."""
        def encoded(status, body, headers, delay):
            if isinstance(body, (dict, list)):
                payload, kind = json.dumps(body).encode(), "application/json"
            else:
                payload, kind = (body.encode() if isinstance(body, str) else body), "text/plain"
            return (status, dict({"Content-Type": kind}, **(headers or {})), payload, delay)
        queue = [encoded(status, body, headers, delay)] + [encoded(s, b, None, 0) for s, b in (then or [])]
        with self._lock:
            self._answers[path] = queue

    def requests(self, path=None):
        with self._lock:
            return [body for p, body in self._requests if path is None or p == path]

    def request_headers(self, path):
        """The headers of each request to `path`, in order."""
        with self._lock:
            return [headers for p, headers in self._headers if p == path]

    def wait_for_request(self, path, count=1, within=20):
        deadline = time.time() + within
        while time.time() < deadline:
            if len(self.requests(path)) >= count:
                return
            time.sleep(0.02)
        raise AssertionError(f"no request {count} to {path} within {within} s")
