#!/usr/bin/env python3
"""What `sfauth proxy` costs a request (part of scripts/benchmark; also runs alone):

  python3 scripts/benchmark-proxy.py BINARY      # SFAUTH_HOME must hold an account with a valid token

A fast upstream — a raw asyncio HTTP/1.1 server in its own process that answers every request with a
fixed 2-byte body, so the proxy's cost is what shows — is measured directly and through the proxy:
  1. latency: REQUESTS sequential requests (default 3000) on one keep-alive connection, in
     alternating rounds; p50 and p99 of each, and what the proxy adds;
  2. throughput: CLIENTS concurrent keep-alive clients (default 8, one process each) for SECONDS
     (default 3) each round; requests/s of each and the ratio.
The client is a raw socket loop (no HTTP library), so it costs both paths the same.
"""
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import time

REQUESTS = int(os.environ.get("REQUESTS", 3000))
ROUNDS = int(os.environ.get("PROXY_ROUNDS", 4))
CLIENTS = int(os.environ.get("CLIENTS", 8))
SECONDS = float(os.environ.get("SECONDS", 3))

UPSTREAM = r'''
import asyncio, socket, sys
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
class Answer(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.buffer = transport, b""
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    def data_received(self, data):
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:   # requests without a body
            self.buffer = self.buffer[end + 4:]
            self.transport.write(ANSWER)
async def main():
    server = await asyncio.get_running_loop().create_server(Answer, "127.0.0.1", 0, backlog=256)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()
asyncio.run(main())
'''


def connect(port):
    connection = socket.create_connection(("127.0.0.1", port))
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def exchange(connection, request):
    """One request and its whole response (a Content-Length body)."""
    connection.sendall(request)
    data = b""
    while True:
        data += connection.recv(65536)
        end = data.find(b"\r\n\r\n")
        if end < 0:
            continue
        length = 0
        for line in data[:end].split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if len(data) >= end + 4 + length:
            assert data.startswith(b"HTTP/1.1 200"), data[:100]
            return


def request_for(port):
    return b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: */*\r\n\r\n" % port


def latencies(port, count):
    connection = connect(port)
    request = request_for(port)
    for _ in range(50):
        exchange(connection, request)  # warm-up (the proxy's first request also reads the token)
    times = []
    for _ in range(count):
        started = time.perf_counter_ns()
        exchange(connection, request)
        times.append((time.perf_counter_ns() - started) / 1000)
    connection.close()
    return times


def client_loop(port, seconds, results):
    connection = connect(port)
    request = request_for(port)
    exchange(connection, request)
    done, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        exchange(connection, request)
        done += 1
    connection.close()
    results.put(done)


def throughput(port):
    results = multiprocessing.Queue()
    clients = [multiprocessing.Process(target=client_loop, args=(port, SECONDS, results)) for _ in range(CLIENTS)]
    for client in clients:
        client.start()
    total = sum(results.get() for _ in clients)
    for client in clients:
        client.join()
    return total / SECONDS


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    binary = sys.argv[1]
    upstream = subprocess.Popen([sys.executable, "-c", UPSTREAM], stdout=subprocess.PIPE, text=True)
    proxy = None
    try:
        upstream_port = int(upstream.stdout.readline())
        proxy = subprocess.Popen([binary, "proxy", "--print-url", f"http://127.0.0.1:{upstream_port}"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        proxy_port = int(proxy.stdout.readline().strip().rsplit(":", 1)[1])
        direct_times, proxy_times = [], []
        for round_number in range(ROUNDS):
            pair = [(direct_times, upstream_port), (proxy_times, proxy_port)]
            for times, port in (pair if round_number % 2 == 0 else reversed(pair)):
                times.extend(latencies(port, REQUESTS // ROUNDS))
        rates = {"direct": [], "proxy": []}
        for round_number in range(2):
            pair = [("direct", upstream_port), ("proxy", proxy_port)]
            for name, port in (pair if round_number % 2 == 0 else reversed(pair)):
                rates[name].append(throughput(port))
    finally:
        for process in (proxy, upstream):
            if process is not None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=10)
    print(f"sfauth proxy, against the same upstream directly ({len(direct_times)} sequential keep-alive requests each, "
          f"{ROUNDS} alternating rounds; {CLIENTS} concurrent clients for {SECONDS:g} s, 2 rounds):")
    for label, fraction in (("p50", 0.50), ("p99", 0.99)):
        direct, proxied = percentile(direct_times, fraction), percentile(proxy_times, fraction)
        print(f"  latency {label}: direct {direct:8.1f} µs   through the proxy {proxied:8.1f} µs   "
              f"added {proxied - direct:8.1f} µs   ratio {proxied / direct:5.2f}x")
    direct_rate, proxy_rate = statistics.median(rates["direct"]), statistics.median(rates["proxy"])
    print(f"  throughput: direct {direct_rate:9.0f} req/s   through the proxy {proxy_rate:9.0f} req/s   "
          f"ratio {proxy_rate / direct_rate:5.2f}x")


if __name__ == "__main__":
    main()
