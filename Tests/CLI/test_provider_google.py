"""`sfauth login --preset google` against the Google stand-in (Tests/Providers/google.py, which
reproduces Google's documented behaviour and cites it), its issuer pointed at the stand-in.

- A Desktop client sends its client secret at the code exchange and at every refresh; the token
  endpoint answers `invalid_request: client_secret is missing.` otherwise: the account keeps the
  secret and refreshes with nothing in the environment (test_a_desktop_client_signs_in_and_refreshes).
- whoami names the user (the ID token's email); logout revokes at `/revoke` (same test).
- A refresh token only with `access_type=offline`, and on a later sign-in only with a consent shown
  (`prompt=consent`): the preset asks for both (same test: the authorization request carries them
  and a refresh token is stored).
"""
import json
import pathlib
import sys
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Providers"))
from google import Google  # noqa: E402

from test_login import OK  # noqa: E402


@pytest.fixture
def google():
    with Google() as g:
        yield g


def userinfo(g, token):
    url = g.endpoint("userinfo")
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, None


def test_a_desktop_client_signs_in_and_refreshes(sfauth, google, tmp_path):
    g = google
    secret = tmp_path / "client-secret"
    secret.write_text(g.client_secret + "\n")
    secret.chmod(0o600)
    result = sfauth.run("login", "--preset", "google", "--issuer", g.base_url, "--client-id", g.client_id,
                        "--client-secret-file", str(secret))
    assert result.returncode == OK, result.stderr
    secret.unlink()
    [authorize] = [r for r in g.requests if r.query.get("client_id") == g.client_id and "redirect_uri" in r.query]
    assert authorize.query.get("access_type") == "offline" and authorize.query.get("prompt") == "consent"
    assert authorize.query.get("code_challenge_method") == "S256"

    [name] = sfauth.stored_accounts()
    path = sfauth.home / "accounts" / name
    record = json.loads(path.read_text())
    assert record["refreshToken"] and record["clientSecret"] == g.client_secret
    assert record["email"] == "alice@example.com"

    record["expiresAt"] = 0
    path.write_text(json.dumps(record))
    renewed = sfauth.run("token")
    assert renewed.returncode == OK, renewed.stderr
    refreshes = [r for r in g.requests if r.form.get("grant_type") == "refresh_token"]
    assert len(refreshes) == 1 and refreshes[0].form.get("client_secret") == g.client_secret
    status, claims = userinfo(g, renewed.stdout.strip())
    assert status == 200 and claims["email"] == "alice@example.com"

    whoami = sfauth.run("whoami")
    assert whoami.returncode == OK and "alice@example.com" in whoami.stdout, whoami.stdout + whoami.stderr
    logout = sfauth.run("logout")
    assert logout.returncode == OK, logout.stderr
    assert g.requests_to("/revoke"), "logout sent no revocation to Google's /revoke"
    assert userinfo(g, renewed.stdout.strip())[0] == 401
    assert sfauth.stored_accounts() == []


def test_the_downloaded_client_file_gives_the_client_and_its_secret(sfauth, google, tmp_path):
    """`--client-file client_secret_….json` (the Cloud console's download for a Desktop app) fills the
    client id and secret and implies the google preset; the secret is kept for refreshes."""
    g = google
    downloaded = tmp_path / "client_secret_123-standin.apps.googleusercontent.com.json"
    downloaded.write_text(json.dumps({"installed": {
        "client_id": g.client_id, "project_id": "stand-in", "auth_uri": g.endpoint("authorize"),
        "token_uri": g.endpoint("token"), "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_secret": g.client_secret, "redirect_uris": ["http://localhost"]}}))
    result = sfauth.run("login", "--client-file", str(downloaded), "--issuer", g.base_url)
    assert result.returncode == OK, result.stderr
    [name] = sfauth.stored_accounts()
    record = json.loads((sfauth.home / "accounts" / name).read_text())
    assert record["clientId"] == g.client_id and record["clientSecret"] == g.client_secret
    [authorize] = [r for r in g.requests if r.query.get("client_id") == g.client_id and "redirect_uri" in r.query]
    assert authorize.query.get("access_type") == "offline"  # the google preset, implied by the file


def test_a_web_client_file_is_refused_with_what_to_create(sfauth, google, tmp_path):
    web = tmp_path / "client_secret_web.json"
    web.write_text(json.dumps({"web": {"client_id": "x.apps.googleusercontent.com", "client_secret": "s"}}))
    result = sfauth.run("login", "--client-file", str(web))
    assert result.returncode == 2, result.stderr
    assert "Desktop app" in result.stderr
    assert sfauth.stored_accounts() == []


def test_a_testing_apps_expired_refresh_token_is_explained(sfauth, tmp_path):
    """Apps in "Testing" status: Google ends refresh tokens after 7 days with `invalid_grant` "Token
    has been expired or revoked."; sfauth says why and what to do, and asks for a new sign-in."""
    with Google(publishing_status="testing") as g:
        secret = tmp_path / "client-secret"
        secret.write_text(g.client_secret + "\n")
        result = sfauth.run("login", "--preset", "google", "--issuer", g.base_url, "--client-id", g.client_id,
                            "--client-secret-file", str(secret))
        assert result.returncode == OK, result.stderr
        g.advance(8 * 24 * 3600)
        [name] = sfauth.stored_accounts()
        path = sfauth.home / "accounts" / name
        record = json.loads(path.read_text())
        record["expiresAt"] = 0
        path.write_text(json.dumps(record))
        renewed = sfauth.run("token")
        assert renewed.returncode == 3, renewed.stderr
        assert '"Testing"' in renewed.stderr and "publish the app" in renewed.stderr
        assert "sfauth login" in renewed.stderr
