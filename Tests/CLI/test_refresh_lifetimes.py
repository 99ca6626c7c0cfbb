"""When a new sign-in will be needed (issue 18): the refresh token's lifetime, where the server says
it — GitHub Apps' `refresh_token_expires_in`, Keycloak's `refresh_expires_in` (0 for an offline
token) — recorded at sign-in and at each refresh, shown by `accounts`, `whoami` and `token --json`,
and said by `sfauth token` on stderr once a day when it is within 7 days. Also: a GitHub OAuth-app
token, which never expires, is handed out without an expiry (no year 4001)."""
import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Providers"))
from github import GitHub  # noqa: E402
from keycloak import Keycloak  # noqa: E402

from test_login import OK  # noqa: E402
from test_provider_github import sign_in as github_sign_in  # noqa: E402

DAY = 86400
REMINDER = "expires on"


def accounts(sfauth):
    result = sfauth.run("accounts", "--json")
    assert result.returncode == OK, result.stderr
    [account] = json.loads(result.stdout)["accounts"]
    return account


def whoami(sfauth):
    result = sfauth.run("whoami", "--json")
    assert result.returncode == OK, result.stderr
    return json.loads(result.stdout)


def table_row(sfauth):
    result = sfauth.run("accounts")
    assert result.returncode == OK, result.stderr
    header, row = result.stdout.splitlines()
    assert header.split()[-2:] == ["SIGN-IN", "NEEDED"]
    return row


def utc_minute(seconds):
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


def test_a_github_app_refresh_token_lifetime_is_recorded_shown_and_said_once_a_day(sfauth, tmp_path):
    with GitHub(mode="github-app", enterprise=True) as gh:
        gh.refresh_token_lifetime = 30 * DAY
        path = github_sign_in(sfauth, gh, tmp_path)
        record = json.loads(path.read_text())
        assert record["refreshTokenLifetime"] == 30 * DAY
        assert record["refreshTokenExpiresAt"] == pytest.approx(time.time() + 30 * DAY, abs=30)

        # A month away: shown, not due, not said.
        expiry = record["refreshTokenExpiresAt"]
        account = accounts(sfauth)
        assert account["state"] == "valid"
        assert account["refresh_token_expires_at"] == expiry
        assert account["refresh_token_expires"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expiry))
        assert table_row(sfauth).endswith(utc_minute(expiry))
        assert whoami(sfauth)["refresh_token_expires"] == account["refresh_token_expires"]
        assert f"refresh_token_expires  {utc_minute(expiry)}" in sfauth.run("whoami").stdout
        token = sfauth.run("token")
        assert token.returncode == OK and token.stderr == "", token.stderr
        as_json = json.loads(sfauth.run("token", "--json").stdout)
        assert as_json["refresh_token_expires_at"] == expiry and as_json["expires_at"] == record["expiresAt"]

        # Three weeks later (the record moved back as time would): within 7 days.
        record["refreshTokenExpiresAt"] = expiry = int(time.time()) + 3 * DAY
        path.write_text(json.dumps(record))
        account = accounts(sfauth)
        assert account["state"] == "sign-in-due" and account["refresh_token_expires_at"] == expiry
        assert "sign-in-due" in table_row(sfauth) and table_row(sfauth).endswith(utc_minute(expiry))
        assert whoami(sfauth)["state"] == "sign-in-due"

        # `sfauth token` (the front end) says so on stderr once; stdout stays the token alone.
        first = sfauth.run("token")
        assert first.returncode == OK
        assert first.stdout == token.stdout
        [line] = first.stderr.splitlines()
        assert line.startswith("sfauth: the refresh token of ") and f"expires on {utc_minute(expiry)}" in line
        assert "`sfauth login --account " in line and "without a browser" in line
        second = sfauth.run("token")
        assert second.returncode == OK and second.stdout == token.stdout and second.stderr == ""
        assert sfauth.run("token", "--json").stderr == ""

        # A day later (the marker moved back): said again — by the main program this time, which
        # answers when the token must be renewed; the refresh brings a new lifetime, so not again.
        marker = sfauth.home / "reminders" / path.stem
        assert marker.exists()
        os.utime(marker, (time.time() - DAY - 60, time.time() - DAY - 60))
        main_program = sfauth.run("token", "--json")
        assert main_program.returncode == OK and REMINDER in main_program.stderr
        assert json.loads(main_program.stdout)["refresh_token_expires_at"] == expiry

        # The refresh: GitHub rotates the refresh token and sends its lifetime again (updated);
        # then a rotation without one (unknown).
        gh.refresh_token_lifetime = 180 * DAY
        record = json.loads(path.read_text())
        record["expiresAt"] = 0
        path.write_text(json.dumps(record))
        renewed = sfauth.run("token")
        assert renewed.returncode == OK and renewed.stderr == "", renewed.stderr
        record = json.loads(path.read_text())
        assert record["refreshTokenExpiresAt"] == pytest.approx(time.time() + 180 * DAY, abs=30)
        assert record["refreshTokenLifetime"] == 180 * DAY
        assert accounts(sfauth)["state"] == "valid"

        gh.refresh_token_lifetime = None  # (the stand-in then sends refresh_token_expires_in null)
        record["expiresAt"] = 0
        path.write_text(json.dumps(record))
        assert sfauth.run("token").returncode == OK
        record = json.loads(path.read_text())
        assert "refreshTokenExpiresAt" not in record and "refreshTokenLifetime" not in record
        account = accounts(sfauth)
        assert account["refresh_token_expires_at"] is None and account["state"] == "valid"
        assert table_row(sfauth).endswith(" -")


def test_a_refresh_token_past_its_expiry_needs_a_new_sign_in(sfauth, tmp_path):
    with GitHub(mode="github-app", enterprise=True) as gh:
        path = github_sign_in(sfauth, gh, tmp_path)
        record = json.loads(path.read_text())
        record["refreshTokenExpiresAt"] = int(time.time()) - 60
        path.write_text(json.dumps(record))
        # The access token still works: due, not yet required.
        assert accounts(sfauth)["state"] == "sign-in-due"
        assert "(expired: sign in again)" in sfauth.run("whoami").stdout
        token = sfauth.run("token")
        assert token.returncode == OK and "expired on" in token.stderr, token.stderr
        record["expiresAt"] = 0
        path.write_text(json.dumps(record))
        assert accounts(sfauth)["state"] == "login-required"
        assert whoami(sfauth)["state"] == "login-required"


@pytest.fixture
def keycloak():
    with Keycloak() as kc:
        yield kc


def keycloak_sign_in(sfauth, kc, scope):
    result = sfauth.run("login", "--issuer", kc.issuer, "--client-id", "sfauth-cli", "--scope", scope)
    assert result.returncode == OK, result.stderr
    [name] = sfauth.stored_accounts()
    return sfauth.home / "accounts" / name


def test_keycloak_session_idle_is_recorded_but_is_no_deadline_to_remind_of(sfauth, keycloak):
    path = keycloak_sign_in(sfauth, keycloak, "openid profile")
    record = json.loads(path.read_text())
    assert record["refreshTokenLifetime"] == 1800
    assert record["refreshTokenExpiresAt"] == pytest.approx(time.time() + 1800, abs=30)
    # 30 minutes that every refresh renews: shown, but neither due nor said.
    account = accounts(sfauth)
    assert account["state"] == "valid" and account["refresh_token_expires_at"] == record["refreshTokenExpiresAt"]
    assert table_row(sfauth).endswith(utc_minute(record["refreshTokenExpiresAt"]))
    token = sfauth.run("token")
    assert token.returncode == OK and token.stderr == ""
    # A refresh (Keycloak sends a new refresh token and refresh_expires_in again) updates it.
    record["expiresAt"] = 0
    record["refreshTokenExpiresAt"] = int(time.time()) + 60
    path.write_text(json.dumps(record))
    renewed = sfauth.run("token")
    assert renewed.returncode == OK, renewed.stderr
    record = json.loads(path.read_text())
    assert record["refreshTokenExpiresAt"] == pytest.approx(time.time() + 1800, abs=30)
    # Idle past its expiry with an expired access token: only a sign-in helps.
    record["expiresAt"] = 0
    record["refreshTokenExpiresAt"] = int(time.time()) - 60
    path.write_text(json.dumps(record))
    assert accounts(sfauth)["state"] == "login-required"


def test_a_keycloak_offline_token_has_no_fixed_expiry(sfauth, keycloak):
    path = keycloak_sign_in(sfauth, keycloak, "openid offline_access")
    record = json.loads(path.read_text())
    assert record["refreshTokenLifetime"] == 0 and "refreshTokenExpiresAt" not in record
    account = accounts(sfauth)
    assert account["state"] == "valid" and account["refresh_token_expires_at"] is None
    assert table_row(sfauth).endswith("no fixed date")
    assert "refresh_token_expires  no fixed expiry" in sfauth.run("whoami").stdout
    assert whoami(sfauth)["refresh_token_expires"] is None
    assert sfauth.run("token").stderr == ""


def test_a_github_oauth_app_token_is_handed_out_without_an_expiry(sfauth, tmp_path):
    """GitHub OAuth-app tokens never expire: no year-4001 date anywhere."""
    with GitHub(mode="oauth-app", enterprise=True) as gh:
        github_sign_in(sfauth, gh, tmp_path)
        # The front end, and the main program (which answers whatever the front end does not).
        for program in (sfauth.binary, str(sfauth.binary) + "-main"):
            kube = subprocess.run([program, "kube-credential"], env=sfauth.env, capture_output=True, text=True, timeout=60)
            assert kube.returncode == OK, kube.stderr
            assert set(json.loads(kube.stdout)["status"]) == {"token"}, kube.stdout
        as_json = json.loads(sfauth.run("token", "--json").stdout)
        assert as_json["expires_at"] is None and as_json["expires"] is None
        assert as_json["refresh_token_expires_at"] is None
        account = accounts(sfauth)
        assert account["expires_at"] is None and account["expires"] is None and account["state"] == "valid"
        assert table_row(sfauth).endswith("never")
        assert [line.split() for line in sfauth.run("whoami").stdout.splitlines() if line.startswith("expires")] == [["expires", "never"]]
        assert whoami(sfauth)["expires"] is None
        for command in (["token", "--json"], ["kube-credential"], ["accounts", "--json"], ["whoami", "--json"]):
            assert "4001" not in sfauth.run(*command).stdout, command
