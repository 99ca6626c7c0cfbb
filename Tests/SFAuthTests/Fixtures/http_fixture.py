#!/usr/bin/env python3
"""A small HTTP(S) server for CurlHTTPClient's tests (python3 standard library only).

Binds 127.0.0.1:0 and prints the port on the first stdout line. With --tls it first makes a
self-signed certificate for 127.0.0.1 with `openssl req -x509` in a temporary directory, serves
HTTPS, and prints the certificate's path on the second line.

Exits by itself after --lifetime seconds (default 60) or as soon as stdin reaches EOF, so a test
process that dies never leaves it running.

Routes:
  /echo          any method: {"method", "path", "headers": [[name, value], ...], "body"} as JSON
  /status/NNN    that status; ?type=html for an HTML body, JSON otherwise
  /slow          sleeps ?seconds=N (default 10) before answering
  /headers       custom headers, Content-Type: application/json; charset=utf-8
  /continue      answers Expect: 100-continue with an interim response carrying X-Interim: yes
  /big           ?bytes=N of "a" (Content-Length set unless ?chunked=1)
  anything else  404
"""

import argparse
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def version_string(self):
        return "sfauth-fixture"

    def log_message(self, format, *args):  # keep test output quiet
        pass

    # BaseHTTPRequestHandler sends "100 Continue" itself before calling do_*; /continue wants to
    # send its own interim response (with a header that must not leak into the final response).
    def handle_expect_100(self):
        if urlsplit(self.path).path == "/continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n")
            self.wfile.flush()
            return True
        return super().handle_expect_100()

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, status, body, content_type="application/json", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def route(self):
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        body = self.read_body()
        if url.path == "/echo":
            reply = {
                "method": self.command,
                "path": self.path,
                "headers": [[k, v] for k, v in self.headers.items()],
                "body": body.decode("utf-8", "replace"),
            }
            self.send(200, json.dumps(reply).encode())
        elif url.path.startswith("/status/"):
            status = int(url.path[len("/status/"):])
            if query.get("type") == "html":
                self.send(status, b"<html><body><h1>Server Error</h1></body></html>", "text/html; charset=utf-8")
            else:
                reply = {"error": "invalid_grant", "error_description": "status %d" % status}
                self.send(status, json.dumps(reply).encode())
        elif url.path == "/slow":
            time.sleep(float(query.get("seconds", "10")))
            self.send(200, b'{"slow":true}')
        elif url.path == "/headers":
            self.send(
                200,
                b'{"ok":true}',
                "application/json; charset=utf-8",
                [("X-Custom", "one"), ("X-Multi", "a"), ("X-Multi", "b"), ("Cache-Control", "no-store")],
            )
        elif url.path == "/continue":
            self.send(200, json.dumps({"received": len(body)}).encode())
        elif url.path == "/big":
            size = int(query.get("bytes", "0"))
            if query.get("chunked") == "1":
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b"a" * 65536
                left = size
                while left > 0:
                    piece = chunk[: min(left, len(chunk))]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    left -= len(piece)
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.send(200, b"a" * size, "application/octet-stream")
        else:
            self.send(404, b'{"error":"not_found"}')

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = route


def make_certificate(directory):
    cert = os.path.join(directory, "http_fixture_cert.pem")
    key = os.path.join(directory, "http_fixture_key.pem")
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return cert, key


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--lifetime", type=float, default=60)
    args = parser.parse_args()

    directory = tempfile.mkdtemp(prefix="sfauth-http-fixture-")

    def finish(*_):
        shutil.rmtree(directory, ignore_errors=True)
        os._exit(0)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    lines = [str(server.server_address[1])]
    if args.tls:
        cert, key = make_certificate(directory)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        lines.append(cert)

    def watch_stdin():
        while sys.stdin.buffer.read(4096):
            pass
        finish()

    threading.Thread(target=watch_stdin, daemon=True).start()
    threading.Timer(args.lifetime, finish).start()
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    finally:
        finish()


if __name__ == "__main__":
    main()
