"""The important scenarios again, against a second, independent server: Glewlwyd 2.7.5 from Debian
(scripts/second-server; what it is and how it behaves: Tests/Server/GLEWLWYD.md).

Run:
    scripts/second-server start; eval "$(scripts/second-server env)"
    SFAUTH_BINARY=<sfauth> .venv/bin/python -m pytest -q Tests/CLI/test_second_server.py
or without the first line: the module then starts a private Glewlwyd for the session (Tests/CLI/glewlwyd.py).
Needs neither the DOT test server nor its variables.

Glewlwyd matches redirect URIs exactly, so every browser login uses the registered callback port
(SFAUTH_GLEWLWYD_CALLBACK_PORT); it puts RFC 9207 `iss` on every redirect without advertising it; it
needs `nonce` whenever `openid` is asked for; its revocation endpoint needs client authentication.
"""
import base64
import json
import pathlib
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from glewlwyd import free_port, glewlwyd, gsfauth  # noqa: F401  (glewlwyd, gsfauth: pytest fixtures)
from test_grants import wait_for_verification_uri

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Tests" / "Browser"))
from drive import run_browser  # noqa: E402

OK, LOGIN_REQUIRED, CANCELLED, NETWORK = 0, 3, 4, 6
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


def userinfo(g, access_token):
    status, body = http(g["SFAUTH_GLEWLWYD_USERINFO_URL"], headers={"Authorization": f"Bearer {access_token}"})
    return status, (json.loads(body) if status == 200 else body)


def refresh_at_server(g, refresh_token, client_id, secret=None):
    """Presents a refresh token to Glewlwyd directly, as sfauth's client would."""
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
    if secret:
        form["client_secret"] = secret
    return http(g["SFAUTH_GLEWLWYD_TOKEN_URL"], form)


def stored(runner):
    """The stored account files, parsed."""
    directory = runner.home / "accounts"
    files = sorted(directory.glob("*.json")) if directory.exists() else []
    return [json.loads(path.read_text()) for path in files]


def only_account(runner):
    accounts = stored(runner)
    assert len(accounts) == 1, [a.get("identifier") for a in accounts]
    return accounts[0]


def browser_login_args(g, client_id=None, port=None, scope=BROWSER_SCOPES, timeout=60, extra=()):
    return ["login", "--issuer", g["SFAUTH_GLEWLWYD_ISSUER"],
            "--client-id", client_id or g["SFAUTH_GLEWLWYD_CLIENT_ID"],
            "--port", str(port or g["SFAUTH_GLEWLWYD_CALLBACK_PORT"]),
            "--scope", scope, "--timeout", str(timeout), *extra]


def browser_login(runner, client_id=None, **env):
    result = runner.run(*browser_login_args(runner.glewlwyd, client_id), **env)
    report = runner.browser_report(within=60)              # the browser is done before the next test binds the port
    return result, report


def assert_signed_in_as_alice(g, result, report, runner, client_id):
    assert result.returncode == OK, result.stderr
    assert result.stdout == ""                              # login prints no data
    assert "Signed in as alice" in result.stderr, result.stderr
    assert report["ok"] and report["server"] == "glewlwyd", report
    account = only_account(runner)
    assert account["username"] == "alice"
    assert account["email"] == g["SFAUTH_GLEWLWYD_EMAIL"]
    assert account["displayName"] == g["SFAUTH_GLEWLWYD_NAME"]
    assert account["clientId"] == client_id
    assert account["obtainedBy"] == "browser"
    assert account.get("refreshToken"), "Glewlwyd issues refresh tokens to code-flow clients"
    assert set(account["scopes"]) == set(BROWSER_SCOPES.split())
    assert account["server"]["tokenEndpoint"] == g["SFAUTH_GLEWLWYD_TOKEN_URL"]
    # What `sfauth token` prints is the stored token, and Glewlwyd accepts it.
    token = runner.run("token")
    assert token.returncode == OK, token.stderr
    assert token.stdout == account["accessToken"] + "\n"
    status, info = userinfo(g, account["accessToken"])
    assert status == 200, info
    assert info["preferred_username"] == "alice" and info["email"] == g["SFAUTH_GLEWLWYD_EMAIL"]
    return account


# ------------------------------------------------------------------ browser login

def test_an_issuer_alone_asks_for_the_scopes_its_metadata_lists(gsfauth, glewlwyd):
    """Glewlwyd refuses an authorization request without a scope; with --issuer and no --scope, sfauth
    asks for openid and offline_access because the metadata lists them (issue 17 §9). (As bob: Glewlwyd
    remembers each user's consent per client, and alice's other sign-ins here ask for more scopes.)"""
    args = [a for a in browser_login_args(glewlwyd) if a not in ("--scope", BROWSER_SCOPES)]
    result = gsfauth.run(*args, SFAUTH_TEST_USERNAME="bob", SFAUTH_TEST_PASSWORD="bob-password")
    report = gsfauth.browser_report(within=60)
    assert result.returncode == OK, result.stderr
    assert "scope=openid%20offline_access" in report["url"] or "scope=openid+offline_access" in report["url"], report["url"]
    account = only_account(gsfauth)
    assert "openid" in account["scopes"] and account.get("refreshToken")


def test_login_by_discovery(gsfauth, glewlwyd):
    result, report = browser_login(gsfauth)
    account = assert_signed_in_as_alice(glewlwyd, result, report, gsfauth, glewlwyd["SFAUTH_GLEWLWYD_CLIENT_ID"])
    assert account["server"]["issuer"] == glewlwyd["SFAUTH_GLEWLWYD_ISSUER"]
    assert account["server"]["revocationEndpoint"] == glewlwyd["SFAUTH_GLEWLWYD_REVOKE_URL"]
    assert account["redirectURI"] == f"http://127.0.0.1:{glewlwyd['SFAUTH_GLEWLWYD_CALLBACK_PORT']}/callback"
    # The browser really went through Glewlwyd's own pages: sign-in, then consent ("Grant access",
    # the first time alice meets this client) or straight "Continue", then the redirect.
    steps = " | ".join(report["steps"])
    assert "login form: signing in as alice" in steps and "glewlwyd" in steps, steps
    whoami = gsfauth.run("whoami", "--json")
    assert whoami.returncode == OK, whoami.stderr
    who = json.loads(whoami.stdout)
    assert who["username"] == "alice", who
    assert glewlwyd["SFAUTH_GLEWLWYD_EMAIL"] in whoami.stdout and glewlwyd["SFAUTH_GLEWLWYD_NAME"] in whoami.stdout, who


def test_login_with_the_registered_localhost_redirect(gsfauth, glewlwyd):
    g = glewlwyd
    result = gsfauth.run(*browser_login_args(g, extra=("--callback-host", "localhost")))
    report = gsfauth.browser_report(within=60)
    account = assert_signed_in_as_alice(g, result, report, gsfauth, g["SFAUTH_GLEWLWYD_CLIENT_ID"])
    assert account["redirectURI"] == f"http://localhost:{g['SFAUTH_GLEWLWYD_CALLBACK_PORT']}/callback"


def test_login_by_explicit_endpoints(gsfauth, glewlwyd):
    g = glewlwyd
    result = gsfauth.run("login",
                         "--authorize-url", g["SFAUTH_GLEWLWYD_AUTHORIZE_URL"], "--token-url", g["SFAUTH_GLEWLWYD_TOKEN_URL"],
                         "--revoke-url", g["SFAUTH_GLEWLWYD_REVOKE_URL"], "--userinfo-url", g["SFAUTH_GLEWLWYD_USERINFO_URL"],
                         "--client-id", g["SFAUTH_GLEWLWYD_CLIENT_ID"], "--port", g["SFAUTH_GLEWLWYD_CALLBACK_PORT"],
                         "--scope", BROWSER_SCOPES, "--timeout", "60")
    report = gsfauth.browser_report(within=60)
    # The redirect carries `iss` although nothing told sfauth the issuer: with no issuer to compare
    # it to, the parameter cannot be checked and must not be a reason to refuse the login.
    account = assert_signed_in_as_alice(g, result, report, gsfauth, g["SFAUTH_GLEWLWYD_CLIENT_ID"])
    assert account["server"]["authorizationEndpoint"] == g["SFAUTH_GLEWLWYD_AUTHORIZE_URL"]
    assert account["server"]["revocationEndpoint"] == g["SFAUTH_GLEWLWYD_REVOKE_URL"]


def test_login_on_a_port_glewlwyd_does_not_know_times_out_with_a_clear_message(gsfauth, glewlwyd):
    port = free_port()
    while str(port) == glewlwyd["SFAUTH_GLEWLWYD_CALLBACK_PORT"]:
        port = free_port()
    started = time.monotonic()
    result = gsfauth.run(*browser_login_args(glewlwyd, port=port, timeout=8))
    elapsed = time.monotonic() - started
    report = gsfauth.browser_report(within=60)
    # Glewlwyd answers the authorization request with 403 and an empty page: no redirect ever comes.
    assert report["http_status"] == 403 and not report["ok"], report
    assert result.returncode == CANCELLED, result.stderr
    assert result.stdout == ""
    assert "Timed out after 8 s" in result.stderr, result.stderr
    assert f"register http://127.0.0.1:{port}/callback" in result.stderr, result.stderr
    assert 7 <= elapsed < 30
    assert stored(gsfauth) == []


# ------------------------------------------------------------------ refresh and rotation

def test_refresh_rotates_and_the_old_refresh_token_is_dead(gsfauth, glewlwyd):
    g = glewlwyd
    result, report = browser_login(gsfauth)
    before = assert_signed_in_as_alice(g, result, report, gsfauth, g["SFAUTH_GLEWLWYD_CLIENT_ID"])

    refreshed = gsfauth.run("token", "--refresh")
    assert refreshed.returncode == OK, refreshed.stderr
    after = only_account(gsfauth)
    assert refreshed.stdout == after["accessToken"] + "\n"
    assert after["accessToken"] != before["accessToken"]
    assert after["refreshToken"] and after["refreshToken"] != before["refreshToken"], "Glewlwyd rotates refresh tokens"
    assert after["username"] == "alice" and after["email"] == g["SFAUTH_GLEWLWYD_EMAIL"]  # kept: no ID token on refresh
    status, info = userinfo(g, after["accessToken"])
    assert status == 200 and info["preferred_username"] == "alice", info

    # The rotated token works in turn, and rotates again.
    second = gsfauth.run("token", "--refresh")
    assert second.returncode == OK, second.stderr
    latest = only_account(gsfauth)
    assert latest["refreshToken"] not in (before["refreshToken"], after["refreshToken"])
    # The refresh token sfauth replaced first is dead at the server (400, empty body). (Presenting it
    # also disables the newest one: see the next test.)
    status, body = refresh_at_server(g, before["refreshToken"], g["SFAUTH_GLEWLWYD_CLIENT_ID"])
    assert status == 400 and body == "", (status, body)


def test_a_reused_refresh_token_ends_the_chain_and_sfauth_asks_for_a_new_login(gsfauth, glewlwyd):
    g = glewlwyd
    result, report = browser_login(gsfauth)
    before = assert_signed_in_as_alice(g, result, report, gsfauth, g["SFAUTH_GLEWLWYD_CLIENT_ID"])
    assert gsfauth.run("token", "--refresh").returncode == OK
    # Someone presents the refresh token sfauth already replaced (a stolen copy): Glewlwyd answers 400
    # with an empty body and disables the newest token of the chain -- the one sfauth holds.
    status, body = refresh_at_server(g, before["refreshToken"], g["SFAUTH_GLEWLWYD_CLIENT_ID"])
    assert status == 400, (status, body)
    # The stored refresh token is refused now (400, empty body, no `invalid_grant`): only a new login
    # helps, so sfauth must say so (exit 3, account `login-required`), not "try again later" (exit 6).
    again = gsfauth.run("token", "--refresh")
    assert again.returncode == LOGIN_REQUIRED, again.stderr
    assert again.stdout == ""
    assert "sfauth login" in again.stderr, again.stderr
    listing = gsfauth.run("accounts", "--json")
    assert listing.returncode == OK, listing.stderr
    assert [a["state"] for a in json.loads(listing.stdout)["accounts"]] == ["login-required"], listing.stdout


# ------------------------------------------------------------------ logout

def test_logout_when_glewlwyd_refuses_to_revoke_for_a_public_client(gsfauth, glewlwyd):
    g = glewlwyd
    result, report = browser_login(gsfauth)
    account = assert_signed_in_as_alice(g, result, report, gsfauth, g["SFAUTH_GLEWLWYD_CLIENT_ID"])

    logout = gsfauth.run("logout")
    assert logout.returncode == NETWORK, logout.stderr   # a bare 401: the token lives on at the server, not a success
    assert logout.stdout == ""
    # Glewlwyd's revocation endpoint needs client authentication: a public client's request gets 401
    # with an empty body. sfauth must say the tokens were NOT revoked, only forgotten here.
    assert "did not revoke the refresh token" in logout.stderr, logout.stderr
    assert "HTTP 401" in logout.stderr, logout.stderr
    assert "only forgotten locally" in logout.stderr, logout.stderr
    assert stored(gsfauth) == []
    # And so it is: the tokens still work at the server.
    status, info = userinfo(g, account["accessToken"])
    assert status == 200, info
    status, body = refresh_at_server(g, account["refreshToken"], g["SFAUTH_GLEWLWYD_CLIENT_ID"])
    assert status == 200 and json.loads(body).get("access_token"), (status, body)


def test_logout_revokes_at_glewlwyd_for_a_confidential_client(gsfauth, glewlwyd):
    g = glewlwyd
    secret = g["SFAUTH_GLEWLWYD_CONFIDENTIAL_CLIENT_SECRET"]
    client_id = g["SFAUTH_GLEWLWYD_CONFIDENTIAL_CLIENT_ID"]
    result, report = browser_login(gsfauth, client_id, SFAUTH_CLIENT_SECRET=secret)
    account = assert_signed_in_as_alice(g, result, report, gsfauth, client_id)

    # The client's secret is at hand (as for `sfauth token` of a client-credentials account), so the
    # revocation request can authenticate the client, which Glewlwyd requires.
    logout = gsfauth.run("logout", SFAUTH_CLIENT_SECRET=secret)
    assert logout.returncode == OK, logout.stderr
    assert logout.stdout == ""
    assert "revoked the refresh token" in logout.stderr, logout.stderr
    assert "only forgotten locally" not in logout.stderr, logout.stderr
    assert stored(gsfauth) == []
    status, body = refresh_at_server(g, account["refreshToken"], client_id, secret)
    assert status == 400, (status, body)


# ------------------------------------------------------------------ device grant

def start_device_login(runner, g, *extra):
    process = runner.start("login", "--issuer", g["SFAUTH_GLEWLWYD_ISSUER"],
                           "--client-id", g["SFAUTH_GLEWLWYD_DEVICE_CLIENT_ID"], "--device",
                           "--scope", "openid profile email offline_access", "--timeout", "120", *extra)
    return wait_for_verification_uri(process, "code")         # Glewlwyd's complete URI says ?code=


def test_device_grant_approved_on_glewlwyds_device_page(gsfauth, glewlwyd):
    g = glewlwyd
    process, complete_uri, user_code, shown = start_device_login(gsfauth, g)
    try:
        assert f"open {g['SFAUTH_GLEWLWYD_DEVICE_VERIFICATION_URL']} on any device and enter the code" in shown, shown
        assert user_code in shown
        result = run_browser(complete_uri, action="approve",
                             env={"SFAUTH_TEST_USERNAME": "alice", "SFAUTH_TEST_PASSWORD": g["SFAUTH_GLEWLWYD_PASSWORD"]})
        assert result.get("device_status") == "authorized", result
        stdout, stderr = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == OK, stderr
    assert stdout == ""
    assert "Signed in as alice" in stderr, stderr
    account = only_account(gsfauth)
    assert account["obtainedBy"] == "device_code"
    assert account["clientId"] == g["SFAUTH_GLEWLWYD_DEVICE_CLIENT_ID"]
    assert account["username"] == "alice" and account.get("refreshToken")
    token = gsfauth.run("token")
    assert token.returncode == OK, token.stderr
    status, info = userinfo(g, token.stdout.strip())
    assert status == 200 and info["preferred_username"] == "alice", info


# ------------------------------------------------------------------ client credentials

def test_client_credentials(gsfauth, glewlwyd):
    g = glewlwyd
    client_id, secret = g["SFAUTH_GLEWLWYD_SERVICE_CLIENT_ID"], g["SFAUTH_GLEWLWYD_SERVICE_CLIENT_SECRET"]
    result = gsfauth.run("login", "--issuer", g["SFAUTH_GLEWLWYD_ISSUER"], "--client-id", client_id,
                         "--client-credentials", "--scope", g["SFAUTH_GLEWLWYD_SERVICE_SCOPE"],
                         SFAUTH_CLIENT_SECRET=secret)
    assert result.returncode == OK, result.stderr
    assert result.stdout == ""
    assert f"Signed in as the client {client_id}" in result.stderr, result.stderr
    account = only_account(gsfauth)
    assert account["obtainedBy"] == "client_credentials"
    assert account["clientId"] == client_id
    assert not account.get("refreshToken")
    assert account["scopes"] == [g["SFAUTH_GLEWLWYD_SERVICE_SCOPE"]]
    assert secret not in json.dumps(account)               # the secret is never stored
    token = gsfauth.run("token")
    assert token.returncode == OK, token.stderr
    assert token.stdout == account["accessToken"] + "\n"
    # The token is Glewlwyd's: an RS256 JWT for this client and scope, signed by a key of its JWKS.
    header, claims = (json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
                      for part in account["accessToken"].split(".")[:2])
    assert header["alg"] == "RS256"
    assert claims["client_id"] == client_id and claims["scope"] == g["SFAUTH_GLEWLWYD_SERVICE_SCOPE"]
    assert claims["iss"] == g["SFAUTH_GLEWLWYD_ISSUER"] and claims["exp"] > time.time()
    status, body = http(g["SFAUTH_GLEWLWYD_JWKS_URL"])
    assert status == 200 and header["kid"] in [key["kid"] for key in json.loads(body)["keys"]], body


def test_client_credentials_with_a_wrong_secret_stores_nothing(gsfauth, glewlwyd):
    g = glewlwyd
    result = gsfauth.run("login", "--issuer", g["SFAUTH_GLEWLWYD_ISSUER"], "--client-id", g["SFAUTH_GLEWLWYD_SERVICE_CLIENT_ID"],
                         "--client-credentials", "--scope", g["SFAUTH_GLEWLWYD_SERVICE_SCOPE"],
                         SFAUTH_CLIENT_SECRET="not-the-secret")
    # Glewlwyd answers 403 with an empty body (not RFC 6749's 401 invalid_client).
    assert result.returncode != OK
    assert "403" in result.stderr, result.stderr
    assert stored(gsfauth) == []
