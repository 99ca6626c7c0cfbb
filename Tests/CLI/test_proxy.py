"""`sfauth proxy`: a loopback reverse proxy that adds the account's token to every request, run as
the real binary against a real upstream (uvicorn, proxy_upstream.py) and the real test
authorization server. Tokens the upstream receives are checked against the test server's protected
resource; what the proxy refuses is checked never to reach the upstream."""
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time

import pytest

from conftest import Sfauth, free_port
from exchange_fixtures import audiences, idpy_account, idpy_server, jwt_claims  # noqa: F401  (pytest fixtures)
from proxy_upstream import ProxyUpstream
from test_login import LOGIN_REQUIRED, OK, USAGE, call_api


@pytest.fixture(scope="module")
def signed_in(binary, server, tmp_path_factory):
    """One account signed in through the browser flow (with a refresh token), shared by the module."""
    sfauth = Sfauth(binary, server, tmp_path_factory.mktemp("proxy"))
    login = sfauth.run(*sfauth.login_args())
    assert login.returncode == OK, login.stderr
    return sfauth


@pytest.fixture
def upstream():
    with ProxyUpstream() as running:
        yield running


class Proxy:
    """`sfauth proxy --print-url ...` running; `stop()` signals it and returns (status, stderr)."""

    def __init__(self, sfauth, *args, **env):
        self.process = sfauth.start("proxy", "--print-url", *args, **env)
        self.url = self.process.stdout.readline().strip()
        if not self.url:
            self.process.wait(timeout=10)
            raise AssertionError(f"the proxy did not start: {self.process.returncode} {self.process.stderr.read()}")
        self.host, self.port = self.url.removeprefix("http://").rsplit(":", 1) if self.url.startswith("http://") else (None, None)
        self.stderr = None

    def connection(self):
        return http.client.HTTPConnection(self.host, int(self.port), timeout=20)

    def request(self, method, path, body=None, headers=None):
        connection = self.connection()
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response, data

    def stop(self, signal_number=signal.SIGTERM):
        if self.process.poll() is None:
            self.process.send_signal(signal_number)
        status = self.process.wait(timeout=10)
        self.rest_of_stdout = self.process.stdout.read()
        self.stderr = self.process.stderr.read()
        return status, self.stderr

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def raw_exchange(host, port, data, timeout=10):
    """Sends bytes as they are and reads the answer until the proxy closes the connection."""
    with socket.create_connection((host, int(port)), timeout=timeout) as connection:
        connection.sendall(data)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer


def status_of(answer):
    return int(answer.split(b" ", 2)[1])


def upstream_token(record):
    values = [v for k, v in record["headers"] if k == "authorization"]
    assert len(values) == 1, values
    assert values[0].startswith("Bearer ")
    return values[0][len("Bearer "):]


def current_token(sfauth):
    result = sfauth.run("token")
    assert result.returncode == OK, result.stderr
    return result.stdout.strip()


def test_every_request_gets_the_accounts_token_and_nothing_of_the_clients(signed_in, server, upstream):
    token = current_token(signed_in)
    with Proxy(signed_in, "--verbose", upstream.url("/base/")) as proxy:
        assert proxy.url.startswith("http://127.0.0.1:")
        connection = proxy.connection()
        # Three requests on one client connection (keep-alive), the client's own key replaced.
        for i in range(3):
            connection.request("GET", f"/v1/models?page={i}", headers={
                "Authorization": "Bearer the-clients-own-key", "Connection": "keep-alive, X-Hop", "X-Hop": "private",
                "Proxy-Authorization": "Basic c2VjcmV0", "X-Custom": "kept"})
            response = connection.getresponse()
            echoed = json.loads(response.read())
            assert response.status == 200
        connection.close()
        received = upstream.requests
        assert [r["raw_path"] for r in received] == ["/base/v1/models"] * 3
        assert [r["query"] for r in received] == ["page=0", "page=1", "page=2"]
        # One client connection, one upstream connection: reused for the three requests.
        assert len({r["client_port"] for r in received}) == 1
        for record in received:
            assert upstream_token(record) == token
            names = {k for k, _ in record["headers"]}
            assert "x-hop" not in names and "proxy-authorization" not in names
            assert ("x-custom", "kept") in record["headers"]
            assert ("host", f"127.0.0.1:{upstream.port}") in record["headers"]
        assert echoed["method"] == "GET"
        # The token is real: the test server's protected resource accepts it.
        assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], upstream_token(received[0]))[0] == 200
        # HEAD and a body-less DELETE go as they are.
        head, data = proxy.request("HEAD", "/v1/x")
        assert head.status == 200 and data == b"" and int(head.getheader("Content-Length")) > 0
        deleted, _ = proxy.request("DELETE", "/v1/x")
        assert deleted.status == 200 and upstream.requests[-1]["method"] == "DELETE"
        status, stderr = proxy.stop()
    assert status == OK
    assert proxy.rest_of_stdout == ""  # stdout: the URL line and nothing else
    assert token not in stderr and "the-clients-own-key" not in stderr and "c2VjcmV0" not in stderr
    assert "GET /v1/models 200" in stderr and "page=" not in stderr  # paths logged without the query


def test_a_401_renews_the_token_and_sends_the_kept_body_again(signed_in, server, upstream):
    first = current_token(signed_in)
    upstream.reject_once.add(first)
    body = json.dumps({"messages": ["hello"] * 200}).encode()
    with Proxy(signed_in, upstream.url()) as proxy:
        response, data = proxy.request("POST", "/v1/chat", body=body, headers={"Content-Type": "application/json"})
        assert response.status == 200, data
        assert upstream.rejected == [first]
        sent = upstream.requests
        assert len(sent) == 2 and all(r["body"] == body and r["method"] == "POST" for r in sent)
        assert upstream_token(sent[0]) == first
        renewed = upstream_token(sent[1])
        assert renewed != first
        assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], renewed)[0] == 200
        # Renewed in the store too, as `sfauth token --refresh` would have.
        assert current_token(signed_in) == renewed
        # The next request reuses the renewed token from memory.
        assert proxy.request("GET", "/again")[0].status == 200
        assert upstream_token(upstream.requests[-1]) == renewed
        status, stderr = proxy.stop(signal.SIGINT)
    assert status == OK and first not in stderr and renewed not in stderr


def test_a_body_over_the_limit_streams_through_and_is_not_sent_again(signed_in, upstream):
    token = current_token(signed_in)
    big = os.urandom(300 * 1024)
    with Proxy(signed_in, "--max-replay-body", "64KiB", upstream.url()) as proxy:
        # Streamed (chunked by the client, and over the limit), arriving whole.
        connection = proxy.connection()
        connection.request("PUT", "/upload", body=iter([big[i:i + 10000] for i in range(0, len(big), 10000)]),
                           headers={"Transfer-Encoding": "chunked", "Content-Type": "application/octet-stream"}, encode_chunked=True)
        response = connection.getresponse()
        echoed = json.loads(response.read())
        assert response.status == 200 and echoed["body_length"] == len(big)
        assert echoed["body_sha256"] == hashlib.sha256(big).hexdigest()
        # Rejected once: the client gets the 401, the upstream saw the request once, a line says why.
        upstream.reject_once.add(token)
        before = len(upstream.requests)
        response, _ = proxy.request("POST", "/upload", body=big, headers={"Content-Type": "application/octet-stream"})
        assert response.status == 401
        assert len(upstream.requests) == before + 1 and len(upstream.requests[-1]["body"]) == len(big)
        # The next request gets a renewed token.
        assert proxy.request("GET", "/after")[0].status == 200
        assert upstream_token(upstream.requests[-1]) != token
        status, stderr = proxy.stop()
    assert status == OK
    assert "401" in stderr and "--max-replay-body" in stderr and "not sent again" in stderr, stderr
    assert token not in stderr


def test_server_sent_events_arrive_as_they_are_sent(signed_in, upstream):
    with Proxy(signed_in, upstream.url("/api")) as proxy:
        connection = proxy.connection()
        started = time.monotonic()
        connection.request("GET", "/events/sse?n=4&delay=0.3", headers={"Accept": "text/event-stream"})
        response = connection.getresponse()
        assert response.status == 200 and response.getheader("Content-Type").startswith("text/event-stream")
        arrivals = []
        while len(arrivals) < 4 and (line := response.readline()):
            if line.startswith(b"data: event"):
                arrivals.append((line.strip().decode(), time.monotonic() - started))
        rest = response.read()  # to the end of the stream
        ended = time.monotonic() - started
        connection.close()
        assert [name for name, _ in arrivals] == [f"data: event {i}" for i in range(4)]
        # Each event came when it was sent, not when the stream ended: ~0.3 s apart.
        gaps = [b - a for (_, a), (_, b) in zip(arrivals, arrivals[1:])]
        assert all(0.15 < gap < 1.0 for gap in gaps), gaps
        assert ended - arrivals[0][1] > 0.8, (arrivals, ended)
        assert rest == b"" or rest.strip() == b""
        status, _ = proxy.stop()
    assert status == OK


def test_chunked_and_sized_responses_pass_through(signed_in, upstream):
    with Proxy(signed_in, upstream.url()) as proxy:
        connection = proxy.connection()
        started = time.monotonic()
        connection.request("GET", "/chunked?n=3&delay=0.3")
        response = connection.getresponse()
        assert response.getheader("Transfer-Encoding") == "chunked" and response.getheader("Content-Length") is None
        lines = [(response.readline(), time.monotonic() - started) for _ in range(3)]
        assert [line for line, _ in lines] == [b"chunk 0\n", b"chunk 1\n", b"chunk 2\n"]
        assert lines[2][1] - lines[0][1] > 0.45  # the third chunk came ~0.6 s after the first, as sent
        assert response.read() == b""
        connection.close()
        response, data = proxy.request("GET", "/bytes?size=300000")
        assert response.status == 200 and len(data) == 300000 and response.getheader("Content-Length") == "300000"
        # An HTTP/1.0 client gets the stream delimited by the close.
        answer = raw_exchange(proxy.host, proxy.port, b"GET /chunked?n=2&delay=0.1 HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n" % proxy.port.encode())
        assert status_of(answer) == 200 and answer.endswith(b"chunk 0\nchunk 1\n") and b"chunked" not in answer.lower()
        assert proxy.stop()[0] == OK


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:8080", "192.168.1.10:8080", "example.com:80", ":8080"])
def test_listening_beyond_loopback_is_refused(sfauth, address):
    result = sfauth.run("proxy", "--listen", address, "https://api.example")
    assert result.returncode == USAGE, result
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1
    assert "127.0.0.1, [::1] or localhost" in result.stderr or "not HOST[:PORT]" in result.stderr, result.stderr


def test_a_port_in_use_is_a_usage_error_naming_listen(sfauth):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        result = sfauth.run("proxy", "--listen", f"127.0.0.1:{taken.getsockname()[1]}", "https://api.example",
                            SFAUTH_ACCESS_TOKEN="t")
    assert result.returncode == USAGE and "already in use" in result.stderr and "--listen" in result.stderr, result


@pytest.mark.parametrize("upstream_url", ["http://api.example/v1", "ftp://api.example", "https://user:pw@api.example", "https://api.example/a/../b"])
def test_an_upstream_that_may_not_get_the_token_is_refused(sfauth, upstream_url):
    result = sfauth.run("proxy", upstream_url)
    assert result.returncode == USAGE and result.stdout == "" and "upstream" in result.stderr, result


def test_it_is_not_an_open_proxy(signed_in, upstream):
    with Proxy(signed_in, upstream.url("/v1")) as proxy:
        host = f"127.0.0.1:{proxy.port}".encode()
        refused = {
            b"GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n": 400,
            b"GET http://127.0.0.2:%d/x HTTP/1.1\r\nHost: " % upstream.port + host + b"\r\n\r\n": 400,
            b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n": 405,
            b"GET /../secret HTTP/1.1\r\nHost: " + host + b"\r\n\r\n": 400,
            b"GET /%2e%2e/secret HTTP/1.1\r\nHost: " + host + b"\r\n\r\n": 400,
            b"GET /a/%2F..%2Fsecret HTTP/1.1\r\nHost: " + host + b"\r\n\r\n": 400,
            b"GET / HTTP/1.1\r\nHost: " + host + b"\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n": 400,
        }
        for request, expected in refused.items():
            answer = raw_exchange(proxy.host, proxy.port, request)
            assert status_of(answer) == expected, (request, answer)
            assert answer.endswith(b"\n") and b"sfauth proxy:" in answer
        assert upstream.requests == []
        # Absolute-form naming the proxy itself is an ordinary request.
        answer = raw_exchange(proxy.host, proxy.port, b"GET http://" + host + b"/ok HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
        assert status_of(answer) == 200 and upstream.paths() == ["/v1/ok"]
        status, stderr = proxy.stop()
    assert status == OK and "CONNECT" in stderr and "(405)" in stderr


def test_requests_a_web_page_could_make_are_refused(signed_in, upstream):
    with Proxy(signed_in, upstream.url()) as proxy:
        port = proxy.port
        for headers in ({"Host": f"evil.example:{port}"},  # DNS rebinding
                        {"Origin": "https://evil.example"},
                        {"Origin": "null"},
                        {"Sec-Fetch-Site": "cross-site"}):
            response, data = proxy.request("POST", "/v1/chat", body=b"{}", headers=headers)
            assert response.status == 403, (headers, data)
        assert upstream.requests == []
        # The proxy's own origin, and requests no page made, pass.
        assert proxy.request("GET", "/ok", headers={"Host": f"localhost:{port}", "Sec-Fetch-Site": "none"})[0].status == 200
        assert proxy.request("GET", "/ok", headers={"Origin": f"http://127.0.0.1:{port}"})[0].status == 200
        assert proxy.stop()[0] == OK


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to connect as another user")
def test_other_users_are_refused(signed_in, upstream):
    client = ("import socket,sys\ns=socket.create_connection(('127.0.0.1',int(sys.argv[1])))\n"
              "s.sendall(b'GET /x HTTP/1.1\\r\\nHost: 127.0.0.1:'+sys.argv[1].encode()+b'\\r\\n\\r\\n')\n"
              "print(s.recv(1000).split(b'\\r\\n')[0].decode())")
    with Proxy(signed_in, upstream.url()) as proxy:
        other = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", client, proxy.port],
                               capture_output=True, text=True, timeout=20)
        assert other.stdout.strip() == "HTTP/1.1 403 Forbidden", other
        assert upstream.requests == []
        mine = subprocess.run([sys.executable, "-c", client, proxy.port], capture_output=True, text=True, timeout=20)
        assert mine.stdout.strip() == "HTTP/1.1 200 OK", mine
        status, stderr = proxy.stop()
    assert status == OK and "another user" in stderr


def test_a_unix_socket_is_private_and_removed_on_exit(signed_in, upstream, tmp_path):
    path = tmp_path / "api.sock"
    with Proxy(signed_in, "--socket", str(path), upstream.url()) as proxy:
        assert proxy.url == f"unix:{path}"
        mode = os.lstat(path).st_mode
        assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
        with socket.socket(socket.AF_UNIX) as connection:
            connection.connect(str(path))
            connection.sendall(b"GET /over-unix HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        assert status_of(answer) == 200 and upstream.paths() == ["/over-unix"]
        # A second proxy on the same live socket is refused; the first keeps it.
        again = signed_in.run("proxy", "--socket", str(path), upstream.url())
        assert again.returncode == USAGE and "listening" in again.stderr
        status, _ = proxy.stop()
    assert status == OK and not path.exists()
    regular = tmp_path / "not-a-socket"
    regular.write_text("keep me")
    refused = signed_in.run("proxy", "--socket", str(regular), upstream.url())
    assert refused.returncode == USAGE and "not a socket" in refused.stderr and regular.read_text() == "keep me"


def test_an_unreachable_upstream_is_a_502(signed_in):
    with Proxy(signed_in, f"http://127.0.0.1:{free_port()}/v1") as proxy:
        response, data = proxy.request("GET", "/models")
        assert response.status == 502 and b"could not connect" in data, data
        status, stderr = proxy.stop()
    assert status == OK and "(502)" in stderr


def test_without_a_sign_in_requests_get_a_503_naming_the_login_command(sfauth, upstream):
    with Proxy(sfauth, upstream.url()) as proxy:
        response, data = proxy.request("GET", "/v1/models")
        assert response.status == 503 and b"sfauth login" in data, data
        assert upstream.requests == []
        status, stderr = proxy.stop()
    assert status == OK and "sfauth login" in stderr and "503" in stderr
    # A misspelt account is a mistake to fix now, not a sign-in to wait for.
    wrong = sfauth.run("proxy", "--account", "no-such-account", upstream.url())
    assert wrong.returncode == USAGE and "no-such-account" in wrong.stderr and wrong.stdout == ""


def test_print_url_to_a_file_as_a_script_does(signed_in, upstream, tmp_path):
    """`sfauth proxy --print-url UP > proxy.url &`: the URL is in the file (flushed) once it listens,
    and nothing else ever is."""
    url_file = tmp_path / "proxy.url"
    with open(url_file, "w") as out:
        process = subprocess.Popen([signed_in.binary, "proxy", "--print-url", upstream.url()], env=signed_in.env,
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 20
        while not url_file.read_text() and time.time() < deadline:
            time.sleep(0.05)
        url = url_file.read_text()
        assert url.startswith("http://127.0.0.1:") and url.endswith("\n") and url.count("\n") == 1
        host, port = url.strip().removeprefix("http://").rsplit(":", 1)
        connection = http.client.HTTPConnection(host, int(port), timeout=20)
        connection.request("GET", "/from-a-script")
        assert connection.getresponse().status == 200
        connection.close()
    finally:
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=10)
    assert status == OK and url_file.read_text() == url


def test_ipv6_loopback_and_what_the_listener_bounds(signed_in, upstream):
    """[::1] works (the peer's user found in /proc/net/tcp6); a head over 64 KiB gets 431; a client
    that waits for 100 Continue gets it before it sends its body."""
    with Proxy(signed_in, "--listen", "[::1]:0", upstream.url()) as proxy:
        assert proxy.url.startswith("http://[::1]:")
        port = int(proxy.url.rsplit(":", 1)[1])
        connection = http.client.HTTPConnection("::1", port, timeout=20)
        connection.request("GET", "/over-ipv6", headers={"Host": f"[::1]:{port}"})
        assert connection.getresponse().status == 200 and upstream.paths() == ["/over-ipv6"]
        connection.close()
        with socket.create_connection(("::1", port), timeout=10) as raw:
            raw.sendall(b"GET / HTTP/1.1\r\nHost: [::1]:%d\r\nX-Big: %s\r\n\r\n" % (port, b"x" * (70 * 1024)))
            assert raw.recv(100).startswith(b"HTTP/1.1 431 ")
        with socket.create_connection(("::1", port), timeout=10) as raw:
            raw.sendall(b"POST /continued HTTP/1.1\r\nHost: [::1]:%d\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n" % port)
            assert raw.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
            raw.sendall(b"hello")
            answer = raw.recv(65536)
            assert answer.startswith(b"HTTP/1.1 200 ") and upstream.requests[-1]["body"] == b"hello"
            assert "expect" not in {name for name, _ in upstream.requests[-1]["headers"]}
        status, stderr = proxy.stop()
    assert status == OK and "(431)" in stderr


def test_connections_beyond_the_limit_get_a_503(signed_in, upstream):
    with Proxy(signed_in, upstream.url()) as proxy:
        idle = [socket.create_connection((proxy.host, int(proxy.port)), timeout=10) for _ in range(64)]
        try:
            time.sleep(0.5)  # all 64 accepted and counted
            answer = raw_exchange(proxy.host, proxy.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % proxy.port.encode())
            assert status_of(answer) == 503 and b"too many connections" in answer
        finally:
            for connection in idle:
                connection.close()
        time.sleep(0.5)
        assert proxy.request("GET", "/after")[0].status == 200
        status, stderr = proxy.stop()
    assert status == OK and "64 connections are open already" in stderr


# ---------------------------------------------------------------- per-call targets and bound resources

def test_a_per_call_audience_is_what_the_upstream_gets(idpy_account, upstream):
    """--audience (and the other per-call options) go through the proxy's one token seam: the upstream
    receives the exchanged token for that audience, never the account's own."""
    account = idpy_account()
    with Proxy(account.sfauth, "--account", account.name, "--audience", "downstream-api", upstream.url("/")) as proxy:
        response, _ = proxy.request("GET", "/orders")
        assert response.status == 200
        sent = upstream_token(upstream.requests[-1])
        assert audiences(jwt_claims(sent)) == ["downstream-api"]
        assert sent != account.token().stdout.strip()
        proxy.stop()


def test_a_token_bound_to_a_resource_goes_to_no_other_upstream(sfauth, upstream):
    """A per-call --resource token may go only within that resource (as with sfauth request): an upstream
    elsewhere is refused at start, before any token is asked for."""
    assert sfauth.run(*sfauth.login_args(extra=("--alias", "main"))).returncode == OK
    process = sfauth.start("proxy", "--print-url", "--account", "main", "--resource", "https://api.example/",
                           upstream.url("/"))
    try:
        status = process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    stderr = process.stderr.read()
    assert status == 2 and "https://api.example/" in stderr and "127.0.0.1" in stderr, stderr
    assert process.stdout.read() == "" and upstream.requests == []
