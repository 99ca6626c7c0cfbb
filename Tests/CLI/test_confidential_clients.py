"""An account signed in with a client secret renews with it, with nothing in the environment.

A confidential client's refresh must authenticate the client (RFC 6749 §6, §2.3.1): Google's
Desktop clients and GitHub Apps are confidential in this sense, and accounts signed in through them
died at their first refresh when the secret went only with the code exchange. The secret is kept
where the refresh token is kept — the 0600 record, or the keyring beside it — and goes with every
refresh and revocation. The test server's `sfauth-confidential` client refuses a refresh without it.
"""
import json
import os
import stat
import subprocess

import pytest

from test_lifecycle import refresh_count
from test_login import OK, call_api

CLIENT_ID = "sfauth-confidential"
SECRET = "sfauth-confidential-secret"


def sign_in(sfauth, tmp_path, **env):
    secret_file = tmp_path / "client-secret"
    secret_file.write_text(SECRET + "\n")
    secret_file.chmod(0o600)
    result = sfauth.run(*sfauth.login_args(client_id=CLIENT_ID, extra=["--client-secret-file", str(secret_file)]), **env)
    assert result.returncode == OK, result.stderr
    secret_file.unlink()  # gone: renewals must not need it
    [name] = sfauth.stored_accounts()
    return sfauth.home / "accounts" / name


def expire(path):
    record = json.loads(path.read_text())
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))


def renew(sfauth, server, **env):
    before = refresh_count(server)
    token = sfauth.run("token", **env)
    assert token.returncode == OK, token.stderr
    assert refresh_count(server) == before + 1
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], token.stdout.strip())[0] == 200
    return token.stdout.strip()


def test_the_secret_is_kept_in_the_private_record_and_sent_on_every_refresh(sfauth, server, tmp_path):
    path = sign_in(sfauth, tmp_path)
    record = json.loads(path.read_text())
    assert record["clientSecret"] == SECRET
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    for _ in range(2):  # and again with the rotated refresh token
        expire(path)
        renew(sfauth, server)
    assert json.loads(path.read_text())["clientSecret"] == SECRET

    # Its logout authenticates the client too: the server revokes (it refuses a confidential
    # client's revocation without its secret).
    logout = sfauth.run("logout")
    assert logout.returncode == OK, logout.stderr
    assert "revoked the refresh token" in logout.stderr


def test_without_the_kept_secret_a_refresh_fails_as_the_server_says(sfauth, server, tmp_path):
    """The control: the same account with its kept secret removed is refused by the server, so the
    test above proves the secret made the difference."""
    path = sign_in(sfauth, tmp_path)
    record = json.loads(path.read_text())
    del record["clientSecret"]
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))
    token = sfauth.run("token")
    assert token.returncode != OK
    assert "invalid_client" in token.stderr, token.stderr


def test_a_keyring_account_keeps_the_secret_in_the_keyring_beside_its_refresh_token(sfauth, server, tmp_path):
    if os.environ.get("SFAUTH_TEST_KEYRING") != "1":
        if os.environ.get("SFAUTH_REQUIRE_KEYRING") == "1":
            pytest.fail("no test keyring: run the suite under scripts/with-keyring (scripts/test does)")
        pytest.skip("no test keyring (run under scripts/with-keyring)")
    path = sign_in(sfauth, tmp_path, SFAUTH_STORAGE="keyring")
    record = json.loads(path.read_text())
    assert "clientSecret" not in record and "refreshToken" not in record
    lookup = subprocess.run(["secret-tool", "lookup", "account", record["identifier"], "kind", "client_secret"],
                            capture_output=True, text=True, timeout=10)
    assert lookup.returncode == 0 and lookup.stdout == SECRET
    expire(path)
    renew(sfauth, server, SFAUTH_STORAGE="keyring")

    logout = sfauth.run("logout", SFAUTH_STORAGE="keyring")
    assert logout.returncode == OK, logout.stderr
    gone = subprocess.run(["secret-tool", "lookup", "account", record["identifier"], "kind", "client_secret"],
                          capture_output=True, text=True, timeout=10)
    assert gone.returncode != 0 or gone.stdout == ""
