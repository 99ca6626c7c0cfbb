"""An upstream for `sfauth proxy` tests: a real HTTP/1.1 server (uvicorn + Starlette, sse-starlette
for server-sent events) on 127.0.0.1 that records every request it receives, exactly as it arrived.
Runs in a thread of the test process and stops with its context.

    with ProxyUpstream() as upstream:
        upstream.url("/v1")             # http://127.0.0.1:PORT/v1
        upstream.reject_once.add(token)  # answer 401 the first time this bearer token is seen
        upstream.requests               # [{"method", "raw_path", "query", "headers", "body", "client_port"}]

Routes (under any prefix, so a base path can be tested):
  .../sse?n=3&delay=0.3      text/event-stream, n events `delay` s apart (sse-starlette EventSourceResponse)
  .../chunked?n=3&delay=0.3  a StreamingResponse without Content-Length (Transfer-Encoding: chunked)
  .../bytes?size=N           N bytes with a Content-Length
  anything else              JSON echo of what was received (method, raw path, headers, body length)
Started from the issue 20 groundwork prototype (docs/notes/issue-20-groundwork/README.md, part C).
"""
import asyncio
import hashlib
import socket
import threading
import time

import uvicorn
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response, StreamingResponse


class ProxyUpstream:
    def __init__(self):
        self.requests = []
        self.reject_once = set()
        self.rejected = []
        self._lock = threading.Lock()
        self._starlette = Starlette()
        self._starlette.add_route("/{path:path}", self._handle, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._socket = sock
        config = uvicorn.Config(self._starlette, log_level="warning", lifespan="off", timeout_keep_alive=30)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)

    def url(self, path=""):
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self):
        self._thread.start()
        deadline = time.time() + 10
        while not self._server.started and time.time() < deadline:
            time.sleep(0.02)
        assert self._server.started, "the upstream did not start"
        return self

    def __exit__(self, *exc):
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()

    def paths(self):
        with self._lock:
            return [r["raw_path"] for r in self.requests]

    async def _handle(self, request):
        body = await request.body()
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.scope["headers"]]
        record = {"method": request.method, "raw_path": request.scope["raw_path"].decode("latin-1"),
                  "query": request.scope["query_string"].decode("latin-1"), "headers": headers, "body": body,
                  "client_port": request.scope["client"][1]}
        with self._lock:
            self.requests.append(record)
        authorization = request.headers.get("authorization", "")
        token = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
        with self._lock:
            if token in self.reject_once:
                self.reject_once.discard(token)
                self.rejected.append(token)
                return JSONResponse({"error": "invalid_token"}, status_code=401,
                                    headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        last = request.url.path.rsplit("/", 1)[-1]
        n = int(request.query_params.get("n", 3))
        delay = float(request.query_params.get("delay", 0.3))
        if last == "sse":
            async def events():
                for i in range(n):
                    yield {"event": "tick", "id": str(i), "data": f"event {i}"}
                    await asyncio.sleep(delay)
            return EventSourceResponse(events(), ping=600)
        if last == "chunked":
            async def chunks():
                for i in range(n):
                    yield f"chunk {i}\n".encode()
                    await asyncio.sleep(delay)
            return StreamingResponse(chunks(), media_type="text/plain")
        if last == "bytes":
            size = int(request.query_params.get("size", 0))
            return Response(b"x" * size, media_type="application/octet-stream")
        return JSONResponse({"method": request.method, "raw_path": record["raw_path"], "query": record["query"],
                             "headers": headers, "body_length": len(body), "body_sha256": hashlib.sha256(body).hexdigest()})
