"""Examples/acme: a tool of its own that embeds SFAuth, signing in through the real browser path
(xdg-open, $BROWSER = the headless test browser) against the test server — and being `acme`
everywhere: its directory, its keyring items, its messages, its browser page.

`scripts/test` builds it and exports ACME_BINARY.
"""
import json
import os
import subprocess

import pytest

from test_login import OK, call_api
from test_logout import refresh_with

LOGIN_REQUIRED = 3
ACME_SCHEMA = "io.sfauth.app.acme.Credentials"


def keyring_refresh_token(identifier):
    """acme's refresh token for the account, as the test keyring holds it (None when there is none)."""
    result = subprocess.run(["secret-tool", "lookup", "xdg:schema", ACME_SCHEMA, "account", identifier, "kind", "refresh_token"],
                            capture_output=True, text=True, timeout=10)
    return result.stdout if result.returncode == 0 and result.stdout else None


@pytest.fixture
def acme(sfauth, server, tmp_path):
    binary = os.environ.get("ACME_BINARY")
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail(f"ACME_BINARY ({binary!r}) is not an executable: run these tests through scripts/test")
    data = tmp_path / "data"
    # One machine, one XDG data directory and one keyring for both tools; no SFAUTH_* settings.
    env = {k: v for k, v in sfauth.env.items() if not k.startswith("SFAUTH_") or k.startswith("SFAUTH_TEST_")}
    env.update(XDG_DATA_HOME=str(data), XDG_CACHE_HOME=str(tmp_path / "cache"),
               ACME_ISSUER=server["SFAUTH_TEST_ISSUER"], ACME_CLIENT_ID=server["SFAUTH_TEST_CLIENT_ID"])

    def run(*args, program=binary):
        return subprocess.run([program, *args], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=120)
    run.data = data
    run.env = env
    return run


def test_acme_signs_in_through_the_browser_under_its_own_name(acme, sfauth, server):
    login = acme("login")
    assert login.returncode == OK, login.stderr
    assert login.stdout.startswith("Welcome, ") and "acme: opening your browser" in login.stderr
    # (The test server's client is called sfauth-public: its id may appear in the URL shown.)
    shown = (login.stdout + login.stderr).replace(server["SFAUTH_TEST_CLIENT_ID"], "client")
    assert "sfauth" not in shown.lower(), shown
    report = sfauth.browser_report()
    assert report["ok"] is True, report
    assert "Acme CLI" in (report["page_text"] or "") + (report["title"] or ""), report
    assert "sfauth" not in (report["page_text"] or "").lower()

    # Its own directory; its refresh token in the keyring (its own schema), not in the file.
    [account] = list((acme.data / "acme" / "accounts").iterdir())
    record = json.loads(account.read_text())
    assert record["refreshTokenInSecretStore"] is True and "refreshToken" not in record
    assert not (acme.data / "sfauth").exists()
    # sfauth on the same machine sees none of it.
    theirs = subprocess.run([sfauth.binary, "accounts", "--json"], env=acme.env, capture_output=True, text=True, timeout=60)
    assert theirs.returncode == OK and json.loads(theirs.stdout)["accounts"] == [], theirs

    whoami = acme("whoami")
    assert whoami.returncode == OK and whoami.stdout.strip().startswith(record["username"]), whoami
    api = acme("get", server["SFAUTH_TEST_RESOURCE_URL"])
    assert api.returncode == OK, api.stderr
    assert record["username"] in api.stdout

    # Expired: the same path as `sfauth token` renews it (one refresh, the keyring's refresh token).
    record["expiresAt"] = 0
    account.write_text(json.dumps(record))
    renewed = acme("whoami")
    assert renewed.returncode == OK and "acme: renewing your session" in renewed.stderr, renewed
    assert json.loads(account.read_text())["accessToken"] != record["accessToken"]

    # Errors come in acme's words.
    assert acme("logout").returncode == OK
    gone = acme("whoami")
    assert gone.returncode == LOGIN_REQUIRED, gone
    assert gone.stderr.strip() == "acme: nobody is signed in. Run `acme login`.", gone.stderr


def test_acme_logout_revokes_the_refresh_token_kept_in_the_keyring_at_the_server(acme, server):
    """acme signs out through AccountBook.forget: the refresh token that only the keyring holds (the
    account file has none) must be dead at the server afterwards, not merely forgotten here."""
    if os.environ.get("SFAUTH_TEST_KEYRING") != "1":
        pytest.fail("no test keyring: run this test under scripts/with-keyring (scripts/test does)")
    assert acme("login").returncode == OK
    [account] = list((acme.data / "acme" / "accounts").iterdir())
    record = json.loads(account.read_text())
    assert record["refreshTokenInSecretStore"] is True and "refreshToken" not in record
    refresh_token = keyring_refresh_token(record["identifier"])
    assert refresh_token, "acme's refresh token is not in the keyring"

    logout = acme("logout")
    assert logout.returncode == OK, logout.stderr
    assert logout.stdout.startswith("Signed out of ") and "revoked the refresh token" in logout.stdout, logout

    # At the server: a refresh with the token the keyring held is refused (a token only forgotten
    # here would still be accepted, and rotated), and the access token no longer opens the API.
    assert refresh_with(server, refresh_token, record["clientId"]) == 400
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], record["accessToken"])[0] == 401
    # Here: nothing is left, in the keyring or in acme's directory.
    assert keyring_refresh_token(record["identifier"]) is None
    assert list((acme.data / "acme" / "accounts").iterdir()) == []
