"""The core scenarios again, against a third, independent server: NanoIDP 3.4.0 from PyPI
(scripts/third-server; what it is and how it behaves: Tests/Server/NANOIDP.md).

Run:
    scripts/third-server start; eval "$(scripts/third-server env)"
    SFAUTH_BINARY=<sfauth> .venv/bin/python -m pytest -q Tests/CLI/test_third_server.py
or without the first line: the module then starts a private NanoIDP for the session (Tests/CLI/nanoidp.py).
Needs neither the DOT test server nor its variables.

NanoIDP runs its `oauth21` profile here: PKCE with S256 required, refresh tokens rotate (reuse revokes
the family), redirect URIs are compared exactly except for the port of a loopback IP literal (RFC 8252
§7.3). It asks no consent (it redirects as soon as the user has signed in), sends no RFC 9207 `iss`
for an `http` issuer, lets a public client revoke its own tokens with its client_id alone, and revokes
exactly the token it is given (a revoked refresh token leaves its access token valid), so these tests
show that sfauth revokes both.
"""
import base64
import json
import os
import pathlib
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from nanoidp import free_port, nanoidp, nsfauth  # noqa: F401  (nanoidp, nsfauth: pytest fixtures)
from test_grants import wait_for_verification_uri

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Tests" / "Browser"))
from drive import run_browser  # noqa: E402

OK, LOGIN_REQUIRED, CANCELLED, REFUSED, NETWORK = 0, 3, 4, 5, 6
BROWSER_SCOPES = "openid profile email offline_access"
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


# ------------------------------------------------------------------ helpers

def http(url, form=None, headers=None, basic=None):
    """(status, body text) of a GET, or a form POST when `form` is given."""
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url, data=data, headers=dict(headers or {}))
    if basic:
        request.add_header("Authorization", "Basic " + base64.b64encode(f"{basic[0]}:{basic[1]}".encode()).decode())
    try:
        with OPENER.open(request, timeout=15) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def userinfo(n, access_token):
    status, body = http(n["SFAUTH_NANOIDP_USERINFO_URL"], headers={"Authorization": f"Bearer {access_token}"})
    return status, json.loads(body) if body.strip().startswith("{") else body


def introspect(n, token):
    """RFC 7662, as the API (a confidential client of its own) asks it."""
    status, body = http(n["SFAUTH_NANOIDP_INTROSPECT_URL"], {"token": token},
                        basic=(n["SFAUTH_NANOIDP_RESOURCE_SERVER_ID"], n["SFAUTH_NANOIDP_RESOURCE_SERVER_SECRET"]))
    assert status == 200, (status, body)
    return json.loads(body)


def refresh_at_server(n, refresh_token, client_id=None):
    """Presents a refresh token to NanoIDP directly, as sfauth's public client would."""
    status, body = http(n["SFAUTH_NANOIDP_TOKEN_URL"], {"grant_type": "refresh_token", "refresh_token": refresh_token,
                                                         "client_id": client_id or n["SFAUTH_NANOIDP_CLIENT_ID"]})
    return status, json.loads(body) if body.strip().startswith("{") else body


def stored(runner):
    """The stored account files, parsed."""
    directory = runner.home / "accounts"
    files = sorted(directory.glob("*.json")) if directory.exists() else []
    return [json.loads(path.read_text()) for path in files]


def only_account(runner):
    accounts = stored(runner)
    assert len(accounts) == 1, [a.get("identifier") for a in accounts]
    return accounts[0]


def age_the_access_token(runner):
    """Makes the stored access token look expired (its `expiresAt` 10 s ago), as time would."""
    [path] = (runner.home / "accounts").glob("*.json")
    account = json.loads(path.read_text())
    account["expiresAt"] = int(time.time()) - 10
    path.write_text(json.dumps(account))


def browser_login_args(n, client_id=None, scope=BROWSER_SCOPES, timeout=60, extra=()):
    args = ["login", "--issuer", n["SFAUTH_NANOIDP_ISSUER"], "--client-id", client_id or n["SFAUTH_NANOIDP_CLIENT_ID"],
            "--timeout", str(timeout), *extra]
    return args + (["--scope", scope] if scope else [])


def browser_login(runner, client_id=None, scope=BROWSER_SCOPES, extra=(), **env):
    result = runner.run(*browser_login_args(runner.nanoidp, client_id, scope, extra=extra), **env)
    report = runner.browser_report(within=60)
    return result, report


def query_of(url):
    return {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).items()}


def assert_signed_in_as_alice(n, result, report, runner, client_id=None):
    client_id = client_id or n["SFAUTH_NANOIDP_CLIENT_ID"]
    assert result.returncode == OK, result.stderr
    assert result.stdout == ""                              # login prints no data
    assert "Signed in as user alice" in result.stderr, result.stderr
    assert report["ok"] and report["server"] == "nanoidp", report
    account = only_account(runner)
    assert account["username"] == "alice" and account["userId"] == "alice"
    assert account["email"] == n["SFAUTH_NANOIDP_EMAIL"]
    assert account["clientId"] == client_id
    assert account["obtainedBy"] == "browser"
    assert account.get("refreshToken"), "NanoIDP issues refresh tokens to code-flow clients"
    assert account["server"]["issuer"] == n["SFAUTH_NANOIDP_ISSUER"]
    assert account["server"]["tokenEndpoint"] == n["SFAUTH_NANOIDP_TOKEN_URL"]
    assert account["server"]["revocationEndpoint"] == n["SFAUTH_NANOIDP_REVOKE_URL"]
    # What `sfauth token` prints is the stored token, and NanoIDP accepts it: at its userinfo
    # endpoint, and at its introspection endpoint for the API.
    token = runner.run("token")
    assert token.returncode == OK, token.stderr
    assert token.stdout == account["accessToken"] + "\n"
    status, info = userinfo(n, account["accessToken"])
    assert status == 200, info
    assert info["sub"] == "alice" and info["preferred_username"] == "alice", info
    assert info["email"] == n["SFAUTH_NANOIDP_EMAIL"], info
    described = introspect(n, account["accessToken"])
    assert described["active"] is True, described
    assert described["sub"] == "alice" and described["client_id"] == client_id, described
    assert described["iss"] == n["SFAUTH_NANOIDP_ISSUER"] and described["token_type"] == "Bearer", described
    return account


# ------------------------------------------------------------------ browser login

def test_login_by_discovery(nsfauth, nanoidp):
    n = nanoidp
    result, report = browser_login(nsfauth)
    account = assert_signed_in_as_alice(n, result, report, nsfauth)
    assert set(account["scopes"]) == set(BROWSER_SCOPES.split())
    # The authorization request NanoIDP's oauth21 profile insists on: the code flow with a PKCE S256
    # challenge, a state, and the redirect on a port the listener chose (NanoIDP matches the registered
    # http://127.0.0.1/callback on any port, RFC 8252 §7.3).
    asked = query_of(report["url"])
    assert report["url"].startswith(n["SFAUTH_NANOIDP_AUTHORIZE_URL"] + "?"), report["url"]
    assert asked["response_type"] == "code" and asked["client_id"] == n["SFAUTH_NANOIDP_CLIENT_ID"], asked
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43, asked
    assert len(asked["state"]) >= 32, asked
    port = urllib.parse.urlsplit(asked["redirect_uri"]).port
    assert asked["redirect_uri"] == f"http://127.0.0.1:{port}/callback" == account["redirectURI"], asked
    assert f"redirect to http://127.0.0.1:{port}/callback" in result.stderr, result.stderr
    # The browser really went through NanoIDP's own sign-in page, then straight to the listener.
    steps = " | ".join(report["steps"])
    assert "login form: signing in as alice (nanoidp)" in steps, steps
    assert f"on the redirect target: http://127.0.0.1:{port}/" in steps, steps

    whoami = nsfauth.run("whoami", "--json")
    assert whoami.returncode == OK, whoami.stderr
    who = json.loads(whoami.stdout)
    assert who["username"] == "alice" and who["user_id"] == "alice", who
    assert who["email"] == n["SFAUTH_NANOIDP_EMAIL"] and who["state"] == "valid", who
    assert who["server"] == n["SFAUTH_NANOIDP_ISSUER"], who
    plain = nsfauth.run("whoami")
    assert plain.returncode == OK, plain.stderr
    assert "alice" in plain.stdout and n["SFAUTH_NANOIDP_EMAIL"] in plain.stdout, plain.stdout


def test_an_issuer_alone_asks_for_the_scopes_its_metadata_lists(nsfauth, nanoidp):
    """With --issuer and no --scope, sfauth asks for openid and offline_access because NanoIDP's
    metadata lists them (issue 17 §9), and gets a refresh token for them. (As bob.)"""
    n = nanoidp
    result, report = browser_login(nsfauth, scope=None,
                                   SFAUTH_TEST_USERNAME="bob", SFAUTH_TEST_PASSWORD=n["SFAUTH_NANOIDP_BOB_PASSWORD"])
    assert result.returncode == OK, result.stderr
    assert report["ok"], report
    assert query_of(report["url"])["scope"] == "openid offline_access", report["url"]
    account = only_account(nsfauth)
    assert account["username"] == "bob" and account["scopes"] == ["openid", "offline_access"], account
    assert account.get("refreshToken")


def test_login_on_a_redirect_nanoidp_does_not_know_times_out_with_a_clear_message(nsfauth, nanoidp):
    """Only http://127.0.0.1/callback and http://[::1]/callback are registered: `localhost` gets no
    any-port exception (RFC 8252 §8.3 prefers the IP literal), so NanoIDP refuses the request with a
    400 JSON error on its own page and never redirects; sfauth waits out its timeout and says what to
    register."""
    port = free_port()
    started = time.monotonic()
    result = nsfauth.run(*browser_login_args(nanoidp, timeout=6, extra=("--callback-host", "localhost",
                                                                          "--port", str(port))))
    elapsed = time.monotonic() - started
    report = nsfauth.browser_report(within=60)
    assert report["http_status"] == 400 and not report["ok"], report
    assert "redirect_uri is not registered for this client" in report["error"], report
    assert result.returncode == CANCELLED, result.stderr
    assert result.stdout == ""
    assert "Timed out after 6 s" in result.stderr, result.stderr
    assert f"register http://localhost:{port}/callback" in result.stderr, result.stderr
    assert 5 <= elapsed < 30
    assert stored(nsfauth) == []


# ------------------------------------------------------------------ refresh and rotation

def test_an_expired_token_is_refreshed_and_the_rotated_refresh_token_replaces_the_old_one(nsfauth, nanoidp):
    n = nanoidp
    result, report = browser_login(nsfauth)
    before = assert_signed_in_as_alice(n, result, report, nsfauth)

    # Still valid: printed as stored, without asking the server.
    again = nsfauth.run("token")
    assert again.returncode == OK and again.stdout == before["accessToken"] + "\n", again.stderr
    assert only_account(nsfauth)["refreshToken"] == before["refreshToken"]

    age_the_access_token(nsfauth)
    refreshed = nsfauth.run("token")
    assert refreshed.returncode == OK, refreshed.stderr
    after = only_account(nsfauth)
    assert refreshed.stdout == after["accessToken"] + "\n"
    assert after["accessToken"] != before["accessToken"]
    assert after["expiresAt"] > time.time() + 600, after["expiresAt"]            # NanoIDP's 60 min, stored anew
    assert after["refreshToken"] and after["refreshToken"] != before["refreshToken"], "NanoIDP rotates refresh tokens"
    assert after["username"] == "alice" and after["email"] == n["SFAUTH_NANOIDP_EMAIL"]
    status, info = userinfo(n, after["accessToken"])
    assert status == 200 and info["preferred_username"] == "alice", info
    assert introspect(n, after["accessToken"])["active"] is True

    # The rotated token works in turn (sfauth stored the new one, not the old), and rotates again.
    age_the_access_token(nsfauth)
    second = nsfauth.run("token")
    assert second.returncode == OK, second.stderr
    latest = only_account(nsfauth)
    assert second.stdout == latest["accessToken"] + "\n"
    assert latest["refreshToken"] not in (before["refreshToken"], after["refreshToken"])
    # The refresh tokens sfauth replaced are dead at the server: spent, so presenting one is reuse.
    # (That also ends the family, the newest token included: see the next test.)
    status, body = refresh_at_server(n, before["refreshToken"])
    assert status == 400 and body["error"] == "invalid_grant", (status, body)


def test_a_reused_refresh_token_ends_the_family_and_sfauth_asks_for_a_new_login(nsfauth, nanoidp):
    n = nanoidp
    result, report = browser_login(nsfauth)
    before = assert_signed_in_as_alice(n, result, report, nsfauth)
    forced = nsfauth.run("token", "--refresh")
    assert forced.returncode == OK, forced.stderr
    assert only_account(nsfauth)["refreshToken"] != before["refreshToken"]
    # Someone presents the refresh token sfauth already replaced (a stolen copy): NanoIDP treats it as
    # leaked and revokes the whole family (RFC 9700 §4.14.2) -- the token sfauth holds included.
    status, body = refresh_at_server(n, before["refreshToken"])
    assert status == 400 and body["error"] == "invalid_grant", (status, body)
    # Only a new login helps now, so sfauth must say so (exit 3, account `login-required`), with the
    # server's words, and not "try again later" (exit 6).
    again = nsfauth.run("token", "--refresh")
    assert again.returncode == LOGIN_REQUIRED, again.stderr
    assert again.stdout == ""
    assert "sfauth login" in again.stderr, again.stderr
    assert "Refresh token has been revoked" in again.stderr, again.stderr
    listing = nsfauth.run("accounts", "--json")
    assert listing.returncode == OK, listing.stderr
    assert [a["state"] for a in json.loads(listing.stdout)["accounts"]] == ["login-required"], listing.stdout


# ------------------------------------------------------------------ device grant

def start_device_login(runner, n, *extra):
    process = runner.start("login", "--issuer", n["SFAUTH_NANOIDP_ISSUER"], "--client-id", n["SFAUTH_NANOIDP_CLIENT_ID"],
                           "--device", "--scope", BROWSER_SCOPES, "--timeout", "120", *extra)
    return wait_for_verification_uri(process, "user_code")     # NanoIDP's complete URI says ?user_code=


def finish(process, timeout=90):
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, stdout, stderr


def server_log_times(n, offset, pattern):
    """The times (seconds) of NanoIDP's log lines after byte `offset` that match `pattern`."""
    with open(n["SFAUTH_NANOIDP_LOG"], "rb") as log:
        log.seek(offset)
        text = log.read().decode(errors="replace")
    times = []
    for line in text.splitlines():
        stamp = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ", line)
        if stamp and re.search(pattern, line):
            times.append(time.mktime(time.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S")) + int(stamp.group(2)) / 1000)
    return times


def test_device_grant_approved_on_nanoidps_device_page(nsfauth, nanoidp):
    n = nanoidp
    log_offset = os.path.getsize(n["SFAUTH_NANOIDP_LOG"])
    process, complete_uri, user_code, shown = start_device_login(nsfauth, n)
    try:
        assert f"open {n['SFAUTH_NANOIDP_DEVICE_VERIFICATION_URL']} on any device and enter the code" in shown, shown
        assert user_code in shown and len(user_code) == 8, (user_code, shown)
        # The person types the code from the screen into the plain verification page (in lower case:
        # NanoIDP reads it case-insensitively, RFC 8628 §6.1), signs in and authorizes the device.
        result = run_browser(n["SFAUTH_NANOIDP_DEVICE_VERIFICATION_URL"], action="approve", user_code=user_code.lower(),
                             env={"SFAUTH_TEST_USERNAME": "alice", "SFAUTH_TEST_PASSWORD": n["SFAUTH_NANOIDP_PASSWORD"]})
        assert result["ok"] and result.get("device_status") == "authorized", result
        assert result["server"] == "nanoidp", result
    finally:
        status, stdout, stderr = finish(process)
    assert status == OK, stderr
    assert stdout == ""
    assert "Signed in as user alice" in stderr, stderr
    # RFC 8628 §3.5: sfauth waited the interval NanoIDP gave between its polls (NanoIDP never says
    # slow_down, so nothing else would have slowed it down), and stopped once it had the token.
    polls = server_log_times(n, log_offset, r'werkzeug .*"(\x1b\[[0-9;]*m)*POST /token ')
    interval = int(n["SFAUTH_NANOIDP_DEVICE_POLL_INTERVAL"])
    assert polls, "no poll of the token endpoint in NanoIDP's log"
    gaps = [later - earlier for earlier, later in zip(polls, polls[1:])]
    assert all(gap >= interval - 0.05 for gap in gaps), gaps
    account = only_account(nsfauth)
    assert account["obtainedBy"] == "device_code"
    assert account["clientId"] == n["SFAUTH_NANOIDP_CLIENT_ID"]
    assert account["username"] == "alice" and account.get("refreshToken")
    token = nsfauth.run("token")
    assert token.returncode == OK, token.stderr
    assert token.stdout == account["accessToken"] + "\n"
    status, info = userinfo(n, account["accessToken"])
    assert status == 200 and info["preferred_username"] == "alice", info
    assert introspect(n, account["accessToken"])["active"] is True
    # The device login's refresh token works like a browser login's (and rotates).
    forced = nsfauth.run("token", "--refresh")
    assert forced.returncode == OK, forced.stderr
    assert only_account(nsfauth)["refreshToken"] != account["refreshToken"]


def test_device_grant_denied_on_nanoidps_device_page_stores_nothing(nsfauth, nanoidp):
    n = nanoidp
    process, complete_uri, user_code, _ = start_device_login(nsfauth, n)
    try:
        result = run_browser(complete_uri, action="deny",
                             env={"SFAUTH_TEST_USERNAME": "alice", "SFAUTH_TEST_PASSWORD": n["SFAUTH_NANOIDP_PASSWORD"]})
        assert result["ok"] and result.get("device_status") == "denied", result
    finally:
        status, stdout, stderr = finish(process)
    assert status == CANCELLED, stderr
    assert stdout == ""
    assert "denied" in stderr.lower(), stderr
    assert stored(nsfauth) == []


# ------------------------------------------------------------------ logout

def test_logout_revokes_both_tokens_at_nanoidp(nsfauth, nanoidp):
    n = nanoidp
    result, report = browser_login(nsfauth)
    account = assert_signed_in_as_alice(n, result, report, nsfauth)

    logout = nsfauth.run("logout")
    assert logout.returncode == OK, logout.stderr
    assert logout.stdout == ""
    assert "revoked the refresh token and the access token" in logout.stderr, logout.stderr
    assert "only forgotten locally" not in logout.stderr, logout.stderr
    assert stored(nsfauth) == []
    # NanoIDP lets a public client revoke its own tokens with its client_id alone (RFC 7009 §2.1), and
    # answers 200 whatever it did -- so look: both tokens are dead there now. (NanoIDP revokes exactly
    # the token it is given; the access token is refused because sfauth revoked it too.)
    status, info = userinfo(n, account["accessToken"])
    assert status == 401 and info["error"] == "invalid_token", (status, info)
    assert introspect(n, account["accessToken"]) == {"active": False}
    assert introspect(n, account["refreshToken"]) == {"active": False}
    status, body = refresh_at_server(n, account["refreshToken"])
    assert status == 400 and body["error"] == "invalid_grant", (status, body)
    # And nothing is left here to print.
    token = nsfauth.run("token")
    assert token.returncode == LOGIN_REQUIRED and token.stdout == "", token.stderr


def test_logout_of_a_confidential_client_revokes_with_its_secret(nsfauth, nanoidp):
    """A confidential client registered for client_secret_post: sfauth signs in with the secret in the
    token request, keeps it with the refresh token (the 0600 record here), and logout authenticates
    the revocation with it, which NanoIDP requires for such a client (without it: 401
    invalid_client, and the tokens live on) — with nothing in the environment."""
    n = nanoidp
    client_id, secret = n["SFAUTH_NANOIDP_CONFIDENTIAL_CLIENT_ID"], n["SFAUTH_NANOIDP_CONFIDENTIAL_CLIENT_SECRET"]
    result, report = browser_login(nsfauth, client_id, SFAUTH_CLIENT_SECRET=secret)
    account = assert_signed_in_as_alice(n, result, report, nsfauth, client_id)
    assert account["clientSecret"] == secret               # kept where the refresh token is kept

    logout = nsfauth.run("logout")
    assert logout.returncode == OK, logout.stderr
    assert "revoked the refresh token and the access token" in logout.stderr, logout.stderr
    assert stored(nsfauth) == []
    assert introspect(n, account["accessToken"]) == {"active": False}
    assert introspect(n, account["refreshToken"]) == {"active": False}


def test_login_of_a_confidential_client_registered_for_http_basic(nsfauth, nanoidp):
    n = nanoidp
    client_id, secret = n["SFAUTH_NANOIDP_BASIC_CLIENT_ID"], n["SFAUTH_NANOIDP_BASIC_CLIENT_SECRET"]
    result, report = browser_login(nsfauth, client_id, SFAUTH_CLIENT_SECRET=secret)
    assert report["ok"], report                              # the sign-in itself went through
    account = assert_signed_in_as_alice(n, result, report, nsfauth, client_id)
    # RFC 6749 §2.3.1: refused in the body (invalid_client), the secret went once more in HTTP Basic,
    # and the account remembers that for its refreshes and its logout (with nothing in the environment).
    assert account["clientAuthentication"] == "client_secret_basic"
    path = nsfauth.home / "accounts" / next(iter(nsfauth.stored_accounts()))
    record = json.loads(path.read_text())
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))
    renewed = nsfauth.run("token")
    assert renewed.returncode == OK, renewed.stderr
    assert renewed.stdout.strip() != account["accessToken"]
    assert introspect(n, renewed.stdout.strip())["active"] is True
    refreshed = json.loads(path.read_text())
    logout = nsfauth.run("logout")
    assert logout.returncode == OK, logout.stderr
    assert introspect(n, refreshed["refreshToken"]) == {"active": False}
