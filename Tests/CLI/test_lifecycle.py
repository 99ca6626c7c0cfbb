"""Credential lifecycle end to end: expiry, one refresh for many processes, rejected refresh tokens,
crash consistency. The test server issues 5-second access tokens to `short-*` clients and rotates
refresh tokens with reuse detection (presenting a retired refresh token revokes the whole family)."""
import concurrent.futures
import json
import random
import signal
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from test_login import LOGIN_REQUIRED, OK, STORAGE, call_api

SHORT_LEEWAY = {"SFAUTH_TOKEN_LEEWAY": "1"}


def stats(server):
    with urllib.request.urlopen(server["SFAUTH_TEST_STATS_URL"], timeout=10) as response:
        return json.loads(response.read())["token_requests"]


def refresh_count(server):
    return stats(server).get("refresh_token", 0)


def login_short(sfauth, server):
    login = sfauth.run(*sfauth.login_args(client_id=server["SFAUTH_TEST_SHORT_CLIENT_ID"]))
    assert login.returncode == OK, login.stderr
    [account] = sfauth.stored_accounts()
    return sfauth.home / "accounts" / account


def wait_for_expiry(path):
    expires_at = json.loads(path.read_text())["expiresAt"]
    time.sleep(max(0.0, expires_at - time.time()) + 1.2)


def test_expired_token_is_refreshed(sfauth, server):
    path = login_short(sfauth, server)
    first = sfauth.run("token", **SHORT_LEEWAY).stdout.strip()
    wait_for_expiry(path)
    before = refresh_count(server)
    second = sfauth.run("token", **SHORT_LEEWAY)
    assert second.returncode == OK, second.stderr
    assert second.stdout.strip() != first
    assert refresh_count(server) == before + 1
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], second.stdout.strip())[0] == 200
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], first)[0] == 401


def test_fifty_parallel_processes_share_one_refresh(sfauth, server):
    path = login_short(sfauth, server)
    wait_for_expiry(path)
    before = refresh_count(server)
    env = dict(sfauth.env, **SHORT_LEEWAY)

    def run_one(_):
        return subprocess.run([sfauth.binary, "token"], env=env, capture_output=True, text=True, timeout=60)

    with concurrent.futures.ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(run_one, range(50)))
    assert [r.returncode for r in results] == [OK] * 50, [r.stderr for r in results if r.returncode]
    tokens = {r.stdout.strip() for r in results}
    assert len(tokens) == 1
    assert refresh_count(server) == before + 1
    [token] = tokens
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], token)[0] == 200
    # The family is still alive: the stored (newest) refresh token works.
    again = sfauth.run("token", "--refresh", **SHORT_LEEWAY)
    assert again.returncode == OK, again.stderr
    assert refresh_count(server) == before + 2


def test_rejected_refresh_token_requires_login_and_keeps_the_account(sfauth, server):
    path = login_short(sfauth, server)
    stored = json.loads(path.read_text())
    body = urllib.parse.urlencode({"token": stored["refreshToken"], "token_type_hint": "refresh_token",
                                   "client_id": stored["clientId"]}).encode()
    urllib.request.urlopen(urllib.request.Request(server["SFAUTH_TEST_REVOKE_URL"], data=body), timeout=10).read()
    wait_for_expiry(path)
    token = sfauth.run("token", **SHORT_LEEWAY)
    assert token.returncode == LOGIN_REQUIRED
    assert token.stdout == ""
    assert "no longer valid" in token.stderr and "invalid_grant" in token.stderr
    kept = json.loads(path.read_text())
    assert kept["status"] == "login_required"
    # Logging in again makes the account usable again (same account, not a second one).
    login_short(sfauth, server)
    assert sfauth.run("token", **SHORT_LEEWAY).returncode == OK
    assert len(sfauth.stored_accounts()) == 1


class RotatingTokenEndpoint(BaseHTTPRequestHandler):
    """A token endpoint (password and refresh grants, rotating refresh tokens) and a revocation
    endpoint that answer after a random short delay, so a client killed at a random moment is
    caught before, during and after each request."""
    issued = set()
    revoked = set()
    lock = threading.Lock()
    counter = 0

    def do_POST(self):
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        time.sleep(random.uniform(0, 0.03))
        if self.path == "/revoke":
            with self.lock:
                self.revoked.add(form["token"][0])
            return self.reply(200, b"")
        grant = form["grant_type"][0]
        assert grant in ("refresh_token", "password"), grant
        with self.lock:
            if grant == "refresh_token" and form["refresh_token"][0] in self.revoked:
                return self.reply(400, json.dumps({"error": "invalid_grant"}).encode())
            type(self).counter += 1
            n = self.counter
            self.issued.add(f"rt-{n}")
        self.reply(200, json.dumps({"access_token": f"at-{n}", "expires_in": 1, "refresh_token": f"rt-{n}"}).encode())

    def reply(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def check_store(home):
    """The store after any kill: complete, valid files; the default names a stored account; every
    refresh token kept is one the server issued."""
    accounts = sorted((home / "accounts").glob("*.json")) if (home / "accounts").exists() else []
    for path in accounts:
        stored = json.loads(path.read_text())          # always a complete, valid file
        assert stored["refreshToken"] in RotatingTokenEndpoint.issued
        assert stored["accessToken"].startswith("at-")
    default = home / "default"
    if default.exists() and accounts:
        named = default.read_text().strip()
        assert any(json.loads(p.read_text())["identifier"] == named for p in accounts), named
    return accounts


def test_kill_at_any_moment_never_corrupts_the_store(sfauth):
    """200 cycles of a refresh, a sign-in that replaces the account, or a logout, each killed with
    SIGKILL at a random moment (or left to finish)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), RotatingTokenEndpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        login = [sfauth.binary, "login", "--authorize-url", base + "/authorize", "--token-url", base + "/token",
                 "--revoke-url", base + "/revoke", "--client-id", "c", "--password", "--username", "alice"]
        operations = {"refresh": [sfauth.binary, "token", "--refresh"], "login": login, "logout": [sfauth.binary, "logout"]}

        def start(name):
            process = subprocess.Popen(operations[name], env=sfauth.env, stdin=subprocess.PIPE,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            process.stdin.write(b"password\n")
            process.stdin.close()
            return process

        # How long each takes here, now (a loaded machine is slower): kills land anywhere in that span.
        durations = {}
        for name in ("login", "refresh", "logout", "login"):
            started = time.monotonic()
            assert start(name).wait(timeout=60) == OK, name
            durations[name] = max(durations.get(name, 0), time.monotonic() - started)
        kills = {name: 0 for name in operations}
        for _ in range(200):
            name = "login" if not check_store(sfauth.home) else random.choice(["refresh", "refresh", "login", "logout"])
            process = start(name)
            time.sleep(random.uniform(0, durations[name] * 1.3))
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                kills[name] += 1
            process.wait()
            check_store(sfauth.home)
        # Whatever the last cycle left, the next commands work on it.
        final = subprocess.run(login, env=sfauth.env, input="password\n", capture_output=True, text=True, timeout=60)
        assert final.returncode == OK, final.stderr
        check = sfauth.run("token", "--json", "--refresh")
        assert check.returncode == OK, check.stderr
        # Temporary files of killed writers are cleaned up by the next write.
        assert sfauth.stored_accounts() == [f"127.0.0.1%3A{server.server_address[1]}%2Fuser%3Aalice.json"]
        assert all(count >= 5 for count in kills.values()), f"too few processes were killed mid-run: {kills}"
    finally:
        server.shutdown()
