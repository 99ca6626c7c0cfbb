"""Answers no one expected, each of which once crashed sfauth or misled its user: numbers out of
every range, terminal escapes in a server's words, servers that never say who signed in, a store
directory others can write, a logout racing a refresh. A scripted server (stub_server.py) plays the
odd servers; the real test server plays the ones that never say who signed in."""
import json
import os
import stat
import subprocess
import time

from stub_server import StubServer
from test_login import CANCELLED, LOGIN_REQUIRED, NETWORK, OK, REFUSED, STORAGE, USAGE, call_api

CONTROL_BYTES = [b"\x1b", b"\x07", b"\x9b", "\u202e".encode(), b"\r"]


def stub_args(stub, *extra):
    return ["--authorize-url", stub.url("/authorize"), "--token-url", stub.url("/token"), "--client-id", "stub-client", *extra]


def password_login(sfauth, stub, *extra, **env):
    """Signs in with the password grant against the stub (no browser needed)."""
    process = subprocess.run([sfauth.binary, "login", *stub_args(stub, "--password", "--username", "alice", *extra)],
                             input="pw\n", env=dict(sfauth.env, **env), capture_output=True, text=True, timeout=60)
    return process


def account_files(sfauth):
    return sorted((sfauth.home / "accounts").glob("*.json")) if (sfauth.home / "accounts").exists() else []


def only_account(sfauth):
    [path] = account_files(sfauth)
    return json.loads(path.read_text())


def assert_terminal_safe(text):
    raw = text.encode()
    for control in CONTROL_BYTES:
        assert control not in raw, f"{control!r} reached the terminal: {text!r}"


# MARK: - Numbers

def test_nan_issued_at_and_huge_expires_in_are_survived(sfauth):
    with StubServer() as stub:
        stub.answer("/token", 200, {"access_token": "at-1", "refresh_token": "rt-1", "issued_at": "nan", "expires_in": 1e300})
        login = password_login(sfauth, stub)
        assert login.returncode == OK, login.stderr
        stored = only_account(sfauth)
        ten_years = 10 * 365 * 86400
        assert abs(stored["expiresAt"] - (time.time() + ten_years)) < 120
        assert abs(stored["issuedAt"] - time.time()) < 120
        for args in (["token"], ["token", "--json"], ["token", "--env"], ["accounts", "--json"], ["whoami"]):
            result = sfauth.run(*args)
            assert result.returncode == OK, (args, result.returncode, result.stderr)
        assert json.loads(sfauth.run("token", "--json").stdout)["expires_at"] == stored["expiresAt"]


def test_a_refresh_answered_with_nan_keeps_the_rotated_refresh_token(sfauth):
    with StubServer() as stub:
        stub.answer("/token", 200, {"access_token": "at-1", "refresh_token": "rt-1", "expires_in": 1})
        assert password_login(sfauth, stub).returncode == OK
        time.sleep(1.1)
        # The server rotates (rt-1 is retired) and answers with an unusable issued_at and token type.
        stub.answer("/token", 200, {"access_token": "at-2", "refresh_token": "rt-2", "issued_at": "inf", "token_type": "mac"})
        refresh = sfauth.run("token")
        assert refresh.returncode == NETWORK, refresh.stderr
        assert refresh.stderr.startswith("sfauth: ") and refresh.stderr.count("\n") == 1, refresh.stderr
        assert "refresh_token=rt-1" in stub.requests("/token")[-1]
        assert only_account(sfauth)["refreshToken"] == "rt-2"
        # A usable answer with a nan issued_at works, and uses the newest refresh token.
        stub.answer("/token", 200, {"access_token": "at-3", "refresh_token": "rt-3", "issued_at": "nan", "expires_in": 3600})
        again = sfauth.run("token")
        assert again.returncode == OK, again.stderr
        assert again.stdout.strip() == "at-3"
        assert "refresh_token=rt-2" in stub.requests("/token")[-1]


def test_device_numbers_out_of_range_end_with_a_message_not_a_signal(sfauth):
    with StubServer() as stub:
        device = {"device_code": "d", "user_code": "ABCD", "verification_uri": stub.url("/device")}
        stub.answer("/device_authorization", 200, dict(device, interval=1e20, expires_in="1e400"))
        args = stub_args(stub, "--device", "--device-authorization-url", stub.url("/device_authorization"))
        result = sfauth.run("login", *args, timeout=30)
        assert result.returncode == NETWORK, result.stderr
        assert "expires_in" in result.stderr and result.stderr.startswith("sfauth: ")
        # An absurd interval is clamped; the code's lifetime still ends the wait.
        stub.answer("/device_authorization", 200, dict(device, interval=1e20, expires_in=2))
        started = time.time()
        result = sfauth.run("login", *args, timeout=30)
        assert result.returncode == CANCELLED, result.stderr
        assert "Timed out after 2 s" in result.stderr
        assert time.time() - started < 15
        assert account_files(sfauth) == []


# MARK: - A server's words on the terminal

def test_terminal_escapes_from_the_server_are_shown_escaped(sfauth):
    with StubServer() as stub:
        stub.answer("/token", 400, {"error": "invalid_grant\x1b]0;pwned\x07",
                                    "error_description": "bad\x1b[2J\r\nsfauth: all good \u202egnp.exe\x9b31m"})
        result = password_login(sfauth, stub)
        assert result.returncode == REFUSED, result.stderr
        assert_terminal_safe(result.stderr)
        assert "\\u{1B}]0;pwned\\u{7}" in result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("sfauth: ")]
        assert len(errors) == 1, result.stderr  # the description's newline did not make a second line
        # The device grant's codes and pages too.
        stub.answer("/device_authorization", 200, {"device_code": "d", "user_code": "AB\x1b[31mCD\u202e",
                                                   "verification_uri": stub.url("/dev\x07ice"), "expires_in": 1, "interval": 1})
        stub.answer("/token", 400, {"error": "authorization_pending"})
        device = sfauth.run("login", *stub_args(stub, "--device", "--device-authorization-url", stub.url("/device_authorization")))
        assert device.returncode == CANCELLED, device.stderr
        assert_terminal_safe(device.stderr)
        assert "AB\\u{1B}[31mCD\\u{202E}" in device.stderr


def test_salesforce_refusals_say_the_next_step_with_sfauths_flags(sfauth):
    # The library names the next step as a value; the command says it with its own flags.
    with StubServer() as stub:
        for error, step in (("invalid_client_id", "check --client-id."),
                            ("OAUTH_APP_BLOCKED", "or sign in with your own connected app (--client-id)."),
                            ("redirect_uri_mismatch", "or pass the --port and --callback-path that are registered.")):
            stub.answer("/token", 400, {"error": error})
            result = password_login(sfauth, stub)
            assert result.returncode == REFUSED, result.stderr
            [line] = [line for line in result.stderr.splitlines() if line.startswith("sfauth: ")]
            assert line.endswith(step), line


def test_names_with_terminal_escapes_are_escaped_on_stdout_and_exact_for_scripts(sfauth):
    with StubServer() as stub:
        stub.answer("/token", 200, {"access_token": "at-1", "instance_url": "https://i.example/\x1b[2J"})
        assert password_login(sfauth, stub).returncode == OK
        for args in (["accounts"], ["whoami"], ["accounts", "--json"], ["whoami", "--json"], ["token", "--json"]):
            result = sfauth.run(*args)
            assert result.returncode == OK, result.stderr
            assert_terminal_safe(result.stdout)
        assert json.loads(sfauth.run("token", "--json").stdout)["instance_url"] == "https://i.example/\x1b[2J"
        env = sfauth.run("token", "--env").stdout
        assert_terminal_safe(env)
        evaluated = subprocess.run(["bash", "-c", env + '\nprintf %s "$SF_INSTANCE_URL"'], capture_output=True, text=True)
        assert evaluated.stdout == "https://i.example/\x1b[2J"


def test_tokens_with_control_characters_are_refused(sfauth):
    with StubServer() as stub:
        stub.answer("/token", 200, {"access_token": "at\x1b]0;x\x07"})
        result = password_login(sfauth, stub)
        assert result.returncode == NETWORK, result.stderr
        assert account_files(sfauth) == []


# MARK: - Servers that never say who signed in

def test_two_people_at_a_server_that_never_says_who_signed_in_are_two_accounts(sfauth, server):
    # No openid scope and no userinfo endpoint: the token response is all there is.
    args = ["login", "--authorize-url", server["SFAUTH_TEST_AUTHORIZE_URL"], "--token-url", server["SFAUTH_TEST_TOKEN_URL"],
            "--revoke-url", server["SFAUTH_TEST_REVOKE_URL"], "--client-id", server["SFAUTH_TEST_CLIENT_ID"], "--scope", "read"]
    alice = sfauth.run(*args)
    assert alice.returncode == OK, alice.stderr
    assert "did not say who you are" in alice.stderr and "--alias" in alice.stderr
    alice_token = sfauth.run("token").stdout.strip()
    bob = sfauth.run(*args, SFAUTH_TEST_USERNAME="bob", SFAUTH_TEST_PASSWORD="bob-password")
    assert bob.returncode == OK, bob.stderr
    names = [p.name for p in account_files(sfauth)]
    assert len(names) == 2 and all("unidentified-" in name for name in names), names
    # Bob's sign-in neither replaced nor revoked Alice's.
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], alice_token)[0] == 200
    assert sfauth.run("token").stdout.strip() != alice_token
    # Such an account can be named: --account signs that one in again, --alias names it (issue 17 §13).
    first = sorted(json.loads(p.read_text())["identifier"] for p in account_files(sfauth))[0]
    assert f"sfauth login --account {first} --alias NAME" in alice.stderr, alice.stderr
    named = sfauth.run("login", "--account", first, "--alias", "alice")
    assert named.returncode == OK, named.stderr
    assert sorted(p.name for p in account_files(sfauth)) == sorted(names)
    assert json.loads(sfauth.run("whoami", "alice", "--json").stdout)["account"] == first


# MARK: - The store and the environment

def test_a_store_directory_others_can_write_is_refused(sfauth):
    with StubServer() as stub:
        stub.answer("/token", 200, {"access_token": "at-1", "expires_in": 3600})
        assert password_login(sfauth, stub).returncode == OK
        files = {p: p.read_bytes() for p in sfauth.home.rglob("*") if p.is_file()}
        os.chmod(sfauth.home, 0o777)
        for args in (["token"], ["token", "--json"], ["accounts"], ["logout", "--local-only"]):
            result = sfauth.run(*args)
            assert result.returncode == STORAGE, (args, result.stderr)
            assert str(sfauth.home) in result.stderr and "chmod 700" in result.stderr, result.stderr
        assert {p: p.read_bytes() for p in sfauth.home.rglob("*") if p.is_file()} == files
        os.chmod(sfauth.home, 0o700)
        assert sfauth.run("token").returncode == OK


def test_a_relative_sfauth_home_is_refused(sfauth, tmp_path):
    result = subprocess.run([sfauth.binary, "token"], env=dict(sfauth.env, SFAUTH_HOME="creds"), cwd=tmp_path,
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == USAGE, result.stderr
    assert "SFAUTH_HOME must be an absolute path" in result.stderr
    assert not (tmp_path / "creds").exists()


def test_the_browser_inherits_no_secrets(sfauth, tmp_path):
    dump = tmp_path / "browser-env"
    script = tmp_path / "browser"
    script.write_text(f"#!/bin/sh\nenv > '{dump}'\n")
    script.chmod(0o755)
    with StubServer() as stub:
        result = sfauth.run("login", *stub_args(stub, "--browser-command", str(script), "--timeout", "2"),
                            SFAUTH_CLIENT_SECRET="client-secret-value", SFAUTH_ACCESS_TOKEN="",
                            SF_ACCESS_TOKEN="exported-token-value", SFAUTH_SOMETHING_ELSE="kept")
    assert result.returncode == CANCELLED, result.stderr
    seen = dump.read_text()
    assert "SFAUTH_SOMETHING_ELSE=kept" in seen
    assert "client-secret-value" not in seen and "exported-token-value" not in seen


def test_a_logout_during_a_refresh_is_not_undone_by_it(sfauth):
    with StubServer() as stub:
        stub.answer("/token", 200, {"access_token": "at-1", "refresh_token": "rt-1", "expires_in": 1})
        assert password_login(sfauth, stub).returncode == OK
        time.sleep(1.1)
        # A slow refresh; the logout starts while the server is still answering it.
        stub.answer("/token", 200, {"access_token": "at-2", "refresh_token": "rt-2", "expires_in": 3600}, delay=2)
        token = sfauth.start("token")
        stub.wait_for_request("/token", count=2)
        logout = sfauth.run("logout", "--local-only")
        out, err = token.communicate(timeout=30)
        assert logout.returncode == OK, logout.stderr
        assert token.returncode == OK, err
        # The logout waited for the refresh and removed its result; nothing came back afterwards.
        assert account_files(sfauth) == []
        assert sfauth.run("token").returncode == LOGIN_REQUIRED
