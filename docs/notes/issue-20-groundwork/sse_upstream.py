#!/usr/bin/env python3
"""Upstream for a reverse-proxy test: SSE (sse-starlette), plain chunked stream, and a slow body.
Run: venv/bin/python sse_upstream.py [PORT]   (127.0.0.1 only)
  GET /sse?n=3&delay=0.5   text/event-stream, n events, `delay` s apart (sse-starlette EventSourceResponse)
  GET /chunked?n=3&delay=0.5   StreamingResponse without Content-Length -> Transfer-Encoding: chunked
  GET /auth                echoes the Authorization header it received (to check the proxy injects a token)
"""
import asyncio, sys
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route
from sse_starlette.sse import EventSourceResponse

async def sse(request):
    n = int(request.query_params.get("n", 3)); d = float(request.query_params.get("delay", 0.5))
    async def gen():
        for i in range(n):
            yield {"event": "tick", "id": str(i), "data": f"event {i}"}
            await asyncio.sleep(d)
    return EventSourceResponse(gen(), ping=int(request.query_params.get("ping", 15)))

async def chunked(request):
    n = int(request.query_params.get("n", 3)); d = float(request.query_params.get("delay", 0.5))
    async def gen():
        for i in range(n):
            yield f"chunk {i}\n".encode()
            await asyncio.sleep(d)
    return StreamingResponse(gen(), media_type="text/plain")

async def auth(request):
    return JSONResponse({"authorization": request.headers.get("authorization")})

app = Starlette(routes=[Route("/sse", sse), Route("/chunked", chunked), Route("/auth", auth)])
if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]) if len(sys.argv) > 1 else 8830, log_level="warning")
