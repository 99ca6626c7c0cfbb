"""The keyring backend end to end: a real gnome-keyring on a private D-Bus session (scripts/test runs
the suite under scripts/with-keyring, which sets SFAUTH_TEST_KEYRING=1)."""
import json
import os
import subprocess

import pytest

from test_accounts import login
from test_lifecycle import SHORT_LEEWAY, refresh_count, wait_for_expiry
from test_login import LOGIN_REQUIRED, OK, USAGE, call_api


@pytest.fixture(autouse=True)
def keyring():
    if os.environ.get("SFAUTH_TEST_KEYRING") != "1":
        if os.environ.get("SFAUTH_REQUIRE_KEYRING") == "1":
            pytest.fail("no test keyring: run the suite under scripts/with-keyring (scripts/test does)")
        pytest.skip("no test keyring (run under scripts/with-keyring)")


def secret_tool_lookup(account):
    result = subprocess.run(["secret-tool", "lookup", "account", account, "kind", "refresh_token"],
                            capture_output=True, text=True, timeout=10)
    return result.stdout if result.returncode == 0 else None


def test_keyring_login_refresh_and_logout(sfauth, server):
    result = sfauth.run(*sfauth.login_args(client_id=server["SFAUTH_TEST_SHORT_CLIENT_ID"], extra=["--verbose"]), SFAUTH_STORAGE="keyring")
    assert result.returncode == OK, result.stderr
    assert "the refresh token in the Secret Service keyring" in result.stderr
    [name] = sfauth.stored_accounts()
    path = sfauth.home / "accounts" / name
    record = json.loads(path.read_text())
    assert "refreshToken" not in record and record["refreshTokenInSecretStore"] is True
    stored_secret = secret_tool_lookup(record["identifier"])
    assert stored_secret

    # Expiry: the refresh uses the keyring's token and stores the rotated one there.
    wait_for_expiry(path)
    before = refresh_count(server)
    token = sfauth.run("token", SFAUTH_STORAGE="auto", **SHORT_LEEWAY)
    assert token.returncode == OK, token.stderr
    assert refresh_count(server) == before + 1
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], token.stdout.strip())[0] == 200
    rotated = secret_tool_lookup(record["identifier"])
    assert rotated and rotated != stored_secret
    assert "refreshToken" not in json.loads(path.read_text())

    logout = sfauth.run("logout", SFAUTH_STORAGE="auto")
    assert logout.returncode == OK and "revoked the refresh token" in logout.stderr
    assert secret_tool_lookup(record["identifier"]) is None


def test_a_keyring_account_with_the_keyring_switched_off_says_why(sfauth, server):
    result = sfauth.run(*sfauth.login_args(client_id=server["SFAUTH_TEST_SHORT_CLIENT_ID"]), SFAUTH_STORAGE="keyring")
    assert result.returncode == OK, result.stderr
    [name] = sfauth.stored_accounts()
    wait_for_expiry(sfauth.home / "accounts" / name)
    token = sfauth.run("token", SFAUTH_STORAGE="file", **SHORT_LEEWAY)
    assert token.returncode == 1 and "keyring is not in use" in token.stderr
    # A valid token never needs the keyring, whatever the mode.
    fresh = sfauth.run("token", "--refresh", SFAUTH_STORAGE="auto")
    assert fresh.returncode == OK
    assert sfauth.run("token", SFAUTH_STORAGE="file", SFAUTH_TOKEN_LEEWAY="0").returncode == OK
    # Logging out without the keyring would strand its refresh token there: refused, nothing removed.
    record = json.loads((sfauth.home / "accounts" / name).read_text())
    for args in (["logout"], ["logout", "--local-only"]):
        logout = sfauth.run(*args, SFAUTH_STORAGE="file")
        assert logout.returncode == 1 and "keyring is not in use" in logout.stderr, logout.stderr
        assert sfauth.stored_accounts() == [name]
        assert secret_tool_lookup(record["identifier"]) is not None


def test_auto_without_a_session_bus_falls_back_to_files_and_says_so(sfauth):
    result = sfauth.run(*sfauth.login_args(), SFAUTH_STORAGE="auto", DBUS_SESSION_BUS_ADDRESS="")
    assert result.returncode == OK, result.stderr
    assert "No keyring answered" in result.stderr
    [name] = sfauth.stored_accounts()
    assert "refreshToken" in json.loads((sfauth.home / "accounts" / name).read_text())


def test_keyring_mode_without_a_keyring_is_a_clear_error(sfauth):
    env = dict(SFAUTH_STORAGE="keyring", DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/bus")
    result = sfauth.run(*sfauth.login_args(extra=["--no-browser", "--timeout", "5"]), **env)
    assert result.returncode == USAGE
    assert "keyring cannot be used" in result.stderr
    assert sfauth.stored_accounts() == []


def test_auto_with_a_keyring_uses_it(sfauth):
    result = login(sfauth, "--verbose", SFAUTH_STORAGE="auto")
    assert "the refresh token in the Secret Service keyring" in result.stderr


def test_a_keyring_account_can_be_signed_out_when_the_keyring_is_out_of_reach(sfauth, server):
    """Over SSH or in cron the keyring does not answer (issue 17 §8): plain logout ends the access token
    it has and keeps the account (its refresh token only the keyring can give), pointing to
    --local-only; --local-only removes the record and names the keyring item left behind."""
    result = sfauth.run(*sfauth.login_args(), SFAUTH_STORAGE="keyring")
    assert result.returncode == OK, result.stderr
    [name] = sfauth.stored_accounts()
    record = json.loads((sfauth.home / "accounts" / name).read_text())
    assert record["refreshTokenInSecretStore"] is True
    unreachable = dict(SFAUTH_STORAGE="auto", DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/bus")

    logout = sfauth.run("logout", **unreachable)
    assert logout.returncode == 1, logout.stderr
    assert "the access token was revoked" in logout.stderr and "sfauth logout --local-only" in logout.stderr, logout.stderr
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], record["accessToken"])[0] == 401
    assert sfauth.stored_accounts() == [name]
    assert sfauth.run("token", **unreachable).returncode == LOGIN_REQUIRED     # never handed out again

    local = sfauth.run("logout", "--local-only", **unreachable)
    assert local.returncode == OK, local.stderr
    assert f"secret-tool clear xdg:schema io.sfauth.Credentials account {record['identifier']} kind refresh_token" in local.stderr, local.stderr
    assert sfauth.stored_accounts() == []
    assert secret_tool_lookup(record["identifier"]) is not None                # left behind, as said
    subprocess.run(["secret-tool", "clear", "account", record["identifier"], "kind", "refresh_token"], timeout=10)
