"""The grants without a browser redirect, end to end: the built binary against the real test server.

Device grant approved or denied by the real headless browser at the verification page; client
credentials; the password grant with the password on standard input; JWT bearer assertions signed
with the RSA and EC keys the server registered for its JWT client.
"""
import json
import os
import pathlib
import re
import signal
import sys
import time
import urllib.request

import pytest

from test_login import CANCELLED, OK, REFUSED, USAGE, call_api

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Tests" / "Browser"))
from drive import run_browser  # noqa: E402  (the test browser's Python entry point)


def login(sfauth, client_id, *extra, stdin=None, **env):
    """`sfauth login --issuer <test server>` with a private discovery cache."""
    env.setdefault("XDG_CACHE_HOME", str(sfauth.home.parent / "cache"))
    args = ["login", "--issuer", sfauth.server["SFAUTH_TEST_ISSUER"], "--client-id", client_id, *extra]
    if stdin is None:
        return sfauth.run(*args, **env)
    environment = dict(sfauth.env, **env)
    import subprocess
    return subprocess.run([sfauth.binary, *args], env=environment, input=stdin, capture_output=True, text=True, timeout=90)


def api_user(server, token):
    status, body = call_api(server["SFAUTH_TEST_RESOURCE_URL"], token)
    assert status == 200, body
    return body["username"]


def accounts(sfauth):
    listing = sfauth.run("accounts", "--json")
    assert listing.returncode == OK, listing.stderr
    return json.loads(listing.stdout)["accounts"]


def post(url, **form):
    data = urllib.parse.urlencode(form).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=10) as response:
        return json.loads(response.read())


# ------------------------------------------------------------------ device authorization grant

def start_device_login(sfauth, *extra):
    process = sfauth.start("login", "--issuer", sfauth.server["SFAUTH_TEST_ISSUER"],
                           "--client-id", sfauth.server["SFAUTH_TEST_DEVICE_CLIENT_ID"], "--device", *extra,
                           XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    return wait_for_verification_uri(process, "user_code")


def wait_for_verification_uri(process, parameter):
    """Reads a device login's stderr until the verification_uri_complete (whose query carries the
    user code as `parameter`): returns (process, that URI, the code, the text read so far)."""
    process.stdin.close()
    process.stdin = None                                   # so communicate() does not flush it
    lines = []
    deadline = time.time() + 30
    while time.time() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line)
        match = re.search(r"(http://\S+\?" + parameter + r"=(\S+))", line)
        if match:
            return process, match.group(1), match.group(2), "".join(lines)
    process.kill()
    raise AssertionError("no verification_uri_complete on stderr:\n" + "".join(lines))


def finish(process, timeout=60):
    stdout, stderr = process.communicate(timeout=timeout)
    return process.returncode, stdout, stderr


def test_device_grant_approved_in_the_browser(sfauth, server):
    process, complete_uri, user_code, shown = start_device_login(sfauth)
    # What the person sees: the page, the code, and the one-step address.
    assert f"open {server['SFAUTH_TEST_DEVICE_VERIFICATION_URL']} on any device and enter the code" in shown
    assert user_code in shown

    result = run_browser(complete_uri, action="approve", env=server)
    assert result.get("device_status") == "authorized", result
    status, stdout, stderr = finish(process)
    assert status == OK, stderr
    assert stdout == ""                                   # stdout is for data; login prints none
    assert "Signed in as" in stderr

    token = sfauth.run("token")
    assert token.returncode == OK, token.stderr
    assert api_user(server, token.stdout.strip()) == "alice"
    # RFC 8628 §3.5: the client kept to the interval, so the server never had to say slow_down.
    state = json.loads(urllib.request.urlopen(
        f"{server['SFAUTH_TEST_DEVICE_STATUS_URL']}?user_code={user_code}", timeout=10).read())
    assert state["status"] == "redeemed" and state["slow_downs"] == 0 and state["polls"] >= 1
    # The device grant issued a refresh token: an expired token is refreshed like a browser login's.
    forced = sfauth.run("token", "--refresh")
    assert forced.returncode == OK, forced.stderr
    assert forced.stdout.strip() != token.stdout.strip()


def test_device_grant_denied_in_the_browser_stores_nothing(sfauth, server):
    process, complete_uri, _, _ = start_device_login(sfauth)
    result = run_browser(complete_uri, action="deny", env=server)
    assert result.get("device_status") == "denied", result
    status, _, stderr = finish(process)
    assert status == CANCELLED, stderr
    assert "denied" in stderr.lower()
    assert sfauth.stored_accounts() == []


def test_device_code_that_expires_ends_the_wait_with_a_clear_message(sfauth, server):
    process, _, user_code, _ = start_device_login(sfauth)
    post(server["SFAUTH_TEST_DEVICE_EXPIRE_URL"], user_code=user_code)
    status, _, stderr = finish(process)
    assert status == CANCELLED, stderr
    assert f"The code {user_code} expired before it was approved" in stderr
    assert sfauth.stored_accounts() == []


def test_device_grant_is_cancelled_by_ctrl_c(sfauth, server):
    process, _, user_code, _ = start_device_login(sfauth)
    time.sleep(1.5)                                       # at least one poll
    process.send_signal(signal.SIGINT)
    status, _, stderr = finish(process, timeout=20)
    assert status == CANCELLED, stderr
    assert "cancelled" in stderr
    assert sfauth.stored_accounts() == []


def test_device_grant_for_salesforce_says_what_to_use_instead(sfauth):
    """Salesforce's device flow is not RFC 8628's: sfauth names the ways that work (issue 17 §18)."""
    for args in (["login", "--device"], ["login", "--sandbox", "--device"]):
        result = sfauth.run(*args)
        assert result.returncode == USAGE, result
        assert "--no-browser" in result.stderr and "--jwt-key-file" in result.stderr


def test_device_grant_needs_a_device_endpoint(sfauth, server):
    result = sfauth.run("login", "--authorize-url", server["SFAUTH_TEST_AUTHORIZE_URL"], "--token-url", server["SFAUTH_TEST_TOKEN_URL"],
                        "--client-id", server["SFAUTH_TEST_DEVICE_CLIENT_ID"], "--device")
    assert result.returncode == USAGE
    assert "no device authorization endpoint" in result.stderr
    # Given explicitly, it works with explicit endpoints too.
    process = sfauth.start("login", "--authorize-url", server["SFAUTH_TEST_AUTHORIZE_URL"], "--token-url", server["SFAUTH_TEST_TOKEN_URL"],
                           "--device-authorization-url", server["SFAUTH_TEST_DEVICE_AUTHORIZATION_URL"],
                           "--client-id", server["SFAUTH_TEST_DEVICE_CLIENT_ID"], "--device")
    process.stdin.close()
    process.stdin = None
    line = ""
    while "user_code=" not in line:
        line = process.stderr.readline()
        assert line, "the device login ended without showing a code"
    user_code = line.strip().rsplit("user_code=", 1)[1]
    post(server["SFAUTH_TEST_DEVICE_DECIDE_URL"], user_code=user_code, action="approve", username="bob")
    status, _, stderr = finish(process)
    assert status == OK, stderr
    assert api_user(server, sfauth.run("token").stdout.strip()) == "bob"


# ------------------------------------------------------------------ client credentials

def test_client_credentials_sign_in_a_service_account(sfauth, server):
    result = login(sfauth, server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "--client-credentials",
                   SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"])
    assert result.returncode == OK, result.stderr
    assert f"Signed in as the client {server['SFAUTH_TEST_SERVICE_CLIENT_ID']}" in result.stderr
    assert api_user(server, sfauth.run("token").stdout.strip()) == server["SFAUTH_TEST_SERVICE_USERNAME"]
    # The server's userinfo names the user the client acts for, which keys the account; signing in
    # again replaces it rather than adding a second one.
    [account] = accounts(sfauth)
    again = login(sfauth, server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "--client-credentials",
                  SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"])
    assert again.returncode == OK, again.stderr
    assert [a["identifier"] for a in accounts(sfauth)] == [account["identifier"]]


def test_client_credentials_secret_from_a_file_and_a_wrong_secret(sfauth, server, tmp_path):
    secret_file = tmp_path / "secret"
    secret_file.write_text("wrong-secret\n")
    refused = login(sfauth, server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "--client-credentials", "--client-secret-file", str(secret_file))
    assert refused.returncode == REFUSED, refused.stderr
    assert "invalid_client" in refused.stderr
    assert sfauth.stored_accounts() == []
    missing = login(sfauth, server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "--client-credentials")
    assert missing.returncode == USAGE
    assert "SFAUTH_CLIENT_SECRET" in missing.stderr

    secret_file.write_text(server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"] + "\n")
    accepted = login(sfauth, server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "--client-credentials", "--client-secret-file", str(secret_file))
    assert accepted.returncode == OK, accepted.stderr


# ------------------------------------------------------------------ password grant

def test_password_grant_reads_the_password_from_stdin(sfauth, server):
    secret = {"SFAUTH_CLIENT_SECRET": server["SFAUTH_TEST_PASSWORD_CLIENT_SECRET"]}
    result = login(sfauth, server["SFAUTH_TEST_PASSWORD_CLIENT_ID"], "--password", "--username", "alice",
                   stdin="alice-password\n", **secret)
    assert result.returncode == OK, result.stderr
    assert "alice-password" not in result.stderr
    assert api_user(server, sfauth.run("token").stdout.strip()) == "alice"
    before = accounts(sfauth)

    wrong = login(sfauth, server["SFAUTH_TEST_PASSWORD_CLIENT_ID"], "--password", "--username", "alice",
                  stdin="not-her-password\n", **secret)
    assert wrong.returncode == REFUSED
    assert "invalid_grant" in wrong.stderr
    assert accounts(sfauth) == before                    # a failed sign-in changes nothing stored


def test_password_grant_never_takes_the_password_from_the_command_line(sfauth, server):
    result = login(sfauth, server["SFAUTH_TEST_PASSWORD_CLIENT_ID"], "--password", "alice-password", "--username", "alice",
                   SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_PASSWORD_CLIENT_SECRET"])
    assert result.returncode == USAGE
    empty = login(sfauth, server["SFAUTH_TEST_PASSWORD_CLIENT_ID"], "--password", "--username", "alice", stdin="",
                  SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_PASSWORD_CLIENT_SECRET"])
    assert empty.returncode == USAGE
    assert "no password given" in empty.stderr
    assert sfauth.stored_accounts() == []


# ------------------------------------------------------------------ JWT bearer

@pytest.mark.parametrize("key", ["SFAUTH_TEST_JWT_RSA_KEY", "SFAUTH_TEST_JWT_RSA_KEY_PKCS1", "SFAUTH_TEST_JWT_EC_KEY", "SFAUTH_TEST_JWT_EC_KEY_SEC1"])
def test_jwt_bearer_signs_in_with_the_registered_key(sfauth, server, key):
    result = login(sfauth, server["SFAUTH_TEST_JWT_CLIENT_ID"], "--jwt-key-file", server[key], "--username", "bob")
    assert result.returncode == OK, result.stderr
    assert api_user(server, sfauth.run("token").stdout.strip()) == "bob"


def test_jwt_bearer_with_an_unregistered_key_or_wrong_audience_is_refused(sfauth, server):
    unregistered = login(sfauth, server["SFAUTH_TEST_JWT_CLIENT_ID"], "--jwt-key-file", server["SFAUTH_TEST_JWT_UNREGISTERED_KEY"],
                         "--username", "bob")
    assert unregistered.returncode == REFUSED, unregistered.stderr
    assert "invalid_grant" in unregistered.stderr
    audience = login(sfauth, server["SFAUTH_TEST_JWT_CLIENT_ID"], "--jwt-key-file", server["SFAUTH_TEST_JWT_RSA_KEY"],
                     "--username", "bob", "--audience", "https://somewhere-else.example")
    assert audience.returncode == REFUSED, audience.stderr
    not_a_key = login(sfauth, server["SFAUTH_TEST_JWT_CLIENT_ID"], "--jwt-key-file", server["SFAUTH_TEST_JWT_PUBLIC_KEYS"],
                      "--username", "bob")
    assert not_a_key.returncode == USAGE
    assert "is not a usable private key" in not_a_key.stderr
    assert sfauth.stored_accounts() == []


def test_grant_choices_exclude_each_other(sfauth, server):
    result = login(sfauth, "x", "--device", "--client-credentials")
    assert result.returncode == USAGE
    assert "exclude each other" in result.stderr
    result = login(sfauth, "x", "--jwt-key-file", "/nonexistent")
    assert result.returncode == USAGE
    assert "needs a username: give --username" in result.stderr


# ------------------------------------------------------------------ no display: the next ways

def test_without_a_display_the_next_ways_are_offered(sfauth, server):
    # No display and no $BROWSER: xdg-open cannot open anything.
    env = {"BROWSER": "", "XDG_CACHE_HOME": str(sfauth.home.parent / "cache"), "SSH_CONNECTION": "10.0.0.1 50000 10.0.0.2 22"}
    result = sfauth.run("login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", server["SFAUTH_TEST_CLIENT_ID"],
                        "--scope", "openid", "--timeout", "3", **env)
    assert result.returncode == CANCELLED
    # Over SSH with no forwarded display no browser is even tried (issue 11); without SSH, xdg-open's
    # failure is reported with the reason.
    assert "SSH session without a forwarded display" in result.stderr
    assert "Open this URL in a browser to sign in" in result.stderr
    assert re.search(r"ssh -L (\d+):localhost:\1", result.stderr), result.stderr
    assert "sfauth login --device" in result.stderr        # the server publishes a device endpoint
    local = sfauth.run("login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", server["SFAUTH_TEST_CLIENT_ID"],
                       "--scope", "openid", "--timeout", "3", **dict(env, SSH_CONNECTION=""))
    assert local.returncode == CANCELLED and "no display here" in local.stderr, local.stderr


def test_password_typed_at_a_terminal_is_not_echoed(sfauth, server):
    """On a terminal the password is read with echo off: what is typed never appears on the screen."""
    import pty
    import select
    import subprocess
    leader, follower = pty.openpty()
    environment = dict(sfauth.env, SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_PASSWORD_CLIENT_SECRET"],
                       XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    process = subprocess.Popen([sfauth.binary, "login", "--issuer", server["SFAUTH_TEST_ISSUER"],
                                "--client-id", server["SFAUTH_TEST_PASSWORD_CLIENT_ID"], "--password", "--username", "alice"],
                               env=environment, stdin=follower, stdout=follower, stderr=follower, start_new_session=True)
    os.close(follower)
    screen = b""

    def read_until(marker, within=30):
        nonlocal screen
        deadline = time.time() + within
        while marker not in screen and time.time() < deadline:
            if select.select([leader], [], [], 0.2)[0]:
                try:
                    screen += os.read(leader, 4096)
                except OSError:
                    break
        return marker in screen

    assert read_until(b"Password for alice"), screen
    os.write(leader, b"alice-password\n")
    read_until(b"Signed in as")
    assert process.wait(timeout=60) == OK, screen.decode(errors="replace")
    os.close(leader)
    assert b"alice-password" not in screen
    assert api_user(server, sfauth.run("token").stdout.strip()) == "alice"


def test_jwt_bearer_account_renews_itself_when_its_token_expires(sfauth, server, tmp_path):
    """No refresh token: `sfauth token` signs a new assertion with the same key, as `sf` does."""
    key = tmp_path / "ci.key"
    key.write_bytes(pathlib.Path(server["SFAUTH_TEST_JWT_EC_KEY"]).read_bytes())
    # A relative key path: it is stored absolute, so `sfauth token` finds it from anywhere.
    import subprocess
    environment = dict(sfauth.env, XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    login = subprocess.run([sfauth.binary, "login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", server["SFAUTH_TEST_JWT_CLIENT_ID"],
                            "--jwt-key-file", "ci.key", "--username", "alice"], cwd=tmp_path, env=environment,
                           capture_output=True, text=True, timeout=60)
    assert login.returncode == OK, login.stderr
    first = sfauth.run("token").stdout.strip()

    [name] = sfauth.stored_accounts()
    path = sfauth.home / "accounts" / name
    record = json.loads(path.read_text())
    assert record["jwtBearerRenewal"]["keyFile"] == str(key)
    assert "refreshToken" not in record
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))
    assert accounts(sfauth)[0]["state"] == "expired-refreshable"

    def jwt_requests():
        stats = json.loads(urllib.request.urlopen(server["SFAUTH_TEST_STATS_URL"], timeout=10).read())
        return stats["token_requests"].get("urn:ietf:params:oauth:grant-type:jwt-bearer", 0)

    before = jwt_requests()
    renewed = sfauth.run("token")
    assert renewed.returncode == OK, renewed.stderr
    assert renewed.stdout.strip() != first
    assert api_user(server, renewed.stdout.strip()) == "alice"
    assert jwt_requests() == before + 1

    # Without its key the account cannot renew: login required (3), and the account is kept.
    key.unlink()
    record = json.loads(path.read_text())
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))
    stuck = sfauth.run("token")
    assert stuck.returncode == 3
    assert "cannot be renewed" in stuck.stderr and str(key) in stuck.stderr
    assert sfauth.stored_accounts() == [name]


def test_device_grant_slows_down_when_the_server_says_so(sfauth, server):
    """RFC 8628 §3.5: after slow_down the client adds 5 s to its interval for every later poll."""
    process, _, user_code, _ = start_device_login(sfauth)
    status_url = f"{server['SFAUTH_TEST_DEVICE_STATUS_URL']}?user_code={user_code}"
    post(server["SFAUTH_TEST_DEVICE_SLOW_DOWN_URL"], user_code=user_code)
    deadline = time.time() + 30
    state = {}
    while time.time() < deadline:                          # the demanded slow_down, then one more poll
        state = json.loads(urllib.request.urlopen(status_url, timeout=10).read())
        if state["slow_downs"] == 1 and state["polls"] >= 2:
            break
        time.sleep(0.5)
    post(server["SFAUTH_TEST_DEVICE_DECIDE_URL"], user_code=user_code, action="approve", username="alice")
    status, _, stderr = finish(process)
    assert status == OK, stderr
    state = json.loads(urllib.request.urlopen(status_url, timeout=10).read())
    # One slow_down (the demanded one): the polls after it kept to the longer interval, or the
    # server would have answered slow_down again.
    assert state["slow_downs"] == 1, state
    assert state["interval"] == int(server["SFAUTH_TEST_DEVICE_INTERVAL"]) + int(server["SFAUTH_TEST_DEVICE_SLOW_DOWN_SECONDS"])
    assert state["polls"] >= 2, state


def test_client_credentials_account_renews_itself_with_the_secret_at_hand(sfauth, server):
    secret = {"SFAUTH_CLIENT_SECRET": server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"]}
    assert login(sfauth, server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "--client-credentials", **secret).returncode == OK
    first = sfauth.run("token").stdout.strip()
    [name] = sfauth.stored_accounts()
    path = sfauth.home / "accounts" / name
    record = json.loads(path.read_text())
    assert server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"] not in path.read_text()    # the secret is never stored
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))

    listed = sfauth.run("accounts", "--json", SFAUTH_CLIENT_SECRET="")
    assert json.loads(listed.stdout)["accounts"][0]["state"] == "login-required"
    listed = sfauth.run("accounts", "--json", **secret)
    assert json.loads(listed.stdout)["accounts"][0]["state"] == "expired-refreshable"
    without = sfauth.run("token", SFAUTH_CLIENT_SECRET="")
    assert without.returncode == 3
    assert "Set SFAUTH_CLIENT_SECRET to let it renew itself" in without.stderr
    renewed = sfauth.run("token", **secret)
    assert renewed.returncode == OK, renewed.stderr
    assert renewed.stdout.strip() != first
    assert api_user(server, renewed.stdout.strip()) == server["SFAUTH_TEST_SERVICE_USERNAME"]
