"""`sfauth login --preset github` against the GitHub stand-in (Tests/Providers/github.py, which
reproduces GitHub's documented behaviour and cites it), in the Enterprise Server layout so that
`--host` points at it: the REST API under /api/v3 on the same host.

Each quirk and the test that proves sfauth handles it:
- no OpenID Connect, identity from `GET /api/v3/user` (`login`, numeric `id`):
  test_a_github_app_signs_in_refreshes_names_the_user_and_revokes (whoami, the account's id);
- the client secret at the code exchange and at every refresh (GitHub Apps): same test, the
  refresh request carries it although the environment has none;
- GitHub-App user tokens: 8 hours and a rotating refresh token: same test (the rotated one is kept);
- revocation is `DELETE /api/v3/applications/{client_id}/token` with HTTP Basic: same test, and the
  token is refused by the API afterwards;
- OAuth-app tokens carry no `expires_in` and never expire:
  test_an_oauth_app_token_without_expiry_is_never_renewed;
- errors with HTTP 200 (`bad_refresh_token`): test_a_refused_refresh_token_at_http_200_asks_for_a_new_sign_in.
"""
import json
import pathlib
import sys
import time
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Providers"))
from github import GitHub  # noqa: E402

from test_login import OK  # noqa: E402


def api_status(gh, token):
    request = urllib.request.Request(gh.api_url + "/user", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, None


def sign_in(sfauth, gh, tmp_path):
    secret = tmp_path / "github-secret"
    secret.write_text(gh.client_secret + "\n")
    secret.chmod(0o600)
    result = sfauth.run("login", "--preset", "github", "--host", gh.base_url, "--client-id", gh.client_id,
                        "--client-secret-file", str(secret))
    assert result.returncode == OK, result.stderr
    secret.unlink()
    [name] = sfauth.stored_accounts()
    return sfauth.home / "accounts" / name


@pytest.fixture
def github_app():
    with GitHub(mode="github-app", enterprise=True) as gh:
        yield gh


@pytest.fixture
def oauth_app():
    with GitHub(mode="oauth-app", enterprise=True) as gh:
        yield gh


def test_a_github_app_signs_in_refreshes_names_the_user_and_revokes(sfauth, github_app, tmp_path):
    gh = github_app
    path = sign_in(sfauth, gh, tmp_path)
    record = json.loads(path.read_text())
    assert record["server"]["flavor"] == "github"
    assert record["userId"] == "1001" and record["username"] == "alice"
    assert record["expiresAt"] - record["issuedAt"] == pytest.approx(28800, abs=5)

    token = sfauth.run("token")
    assert token.returncode == OK, token.stderr
    status, user = api_status(gh, token.stdout.strip())
    assert status == 200 and user["login"] == "alice"
    whoami = sfauth.run("whoami")
    assert whoami.returncode == OK and "alice" in whoami.stdout, whoami.stdout + whoami.stderr

    # Expiry: the refresh carries the kept secret (GitHub Apps require it) and keeps the rotated token.
    first_refresh_token = record["refreshToken"]
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))
    renewed = sfauth.run("token")
    assert renewed.returncode == OK, renewed.stderr
    refresh = [r for r in gh.requests_to("/login/oauth/access_token") if r.form.get("grant_type") == "refresh_token"]
    assert len(refresh) == 1 and refresh[0].form.get("client_secret") == gh.client_secret
    assert api_status(gh, renewed.stdout.strip())[0] == 200
    rotated = json.loads(path.read_text())["refreshToken"]
    assert rotated != first_refresh_token

    logout = sfauth.run("logout")
    assert logout.returncode == OK, logout.stderr
    [deleted] = gh.requests_to(f"/api/v3/applications/{gh.client_id}/token", method="DELETE")
    assert deleted.json == {"access_token": renewed.stdout.strip()}
    assert api_status(gh, renewed.stdout.strip())[0] == 401
    assert sfauth.stored_accounts() == []


def test_an_oauth_app_token_without_expiry_is_never_renewed(sfauth, oauth_app, tmp_path):
    gh = oauth_app
    path = sign_in(sfauth, gh, tmp_path)
    record = json.loads(path.read_text())
    assert "expiresAt" not in record and "refreshToken" not in record
    # A month later — far past the two hours assumed for other servers' tokens without expiry.
    record["issuedAt"] = time.time() - 30 * 86400
    path.write_text(json.dumps(record))
    before = len(gh.requests_to("/login/oauth/access_token"))
    for command in (["token"], ["token", "--json"]):
        result = sfauth.run(*command)
        assert result.returncode == OK, result.stderr
    assert len(gh.requests_to("/login/oauth/access_token")) == before
    assert api_status(gh, sfauth.run("token").stdout.strip())[0] == 200
    [account] = json.loads(sfauth.run("accounts", "--json").stdout)["accounts"]
    assert account["state"] == "valid"


def test_a_refused_refresh_token_at_http_200_asks_for_a_new_sign_in(sfauth, github_app, tmp_path):
    gh = github_app
    path = sign_in(sfauth, gh, tmp_path)
    gh.expire_refresh_tokens()
    record = json.loads(path.read_text())
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))
    result = sfauth.run("token")
    assert result.returncode == 3, result.stderr  # login required, not "the server may be failing"
    assert "bad_refresh_token" in result.stderr
    assert "sfauth login" in result.stderr


def test_the_device_flow_polls_through_pending_and_slow_down_answered_with_http_200(sfauth, oauth_app, tmp_path):
    """GitHub's device flow (`/login/device/code`, no verification_uri_complete): every poll answer
    is HTTP 200, `authorization_pending` and `slow_down` included; sfauth keeps polling (slower after
    slow_down) until the person approves, and needs no client secret for it. Without the secret the
    token cannot be revoked through the API: logout says where to revoke it by hand."""
    import re
    import threading

    from testkit import run_browser

    gh = oauth_app
    gh.device_interval = 1
    gh.force_slow_down()
    process = sfauth.start("login", "--preset", "github", "--host", gh.base_url, "--client-id", gh.client_id, "--device")
    process.stdin.close()
    process.stdin = None
    shown, code = [], None
    deadline = time.time() + 30
    while time.time() < deadline and code is None:
        line = process.stderr.readline()
        if not line:
            break
        shown.append(line)
        found = re.fullmatch(r"\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*", line)  # the code, on a line of its own
        code = found and found.group(1)
    assert code, "no user code on stderr:\n" + "".join(shown)
    assert gh.base_url + "/login/device" in "".join(shown)
    time.sleep(2.5)  # a few polls: authorization_pending, then the forced slow_down
    approved = {}
    browser = threading.Thread(target=lambda: approved.update(run_browser(gh.base_url + "/login/device", user_code=code)))
    browser.start()
    stdout, stderr = process.communicate(timeout=90)
    browser.join(timeout=60)
    assert process.returncode == OK, "".join(shown) + stderr
    polls = [r for r in gh.requests_to("/login/oauth/access_token")
             if r.form.get("grant_type") == "urn:ietf:params:oauth:grant-type:device_code"]
    assert len(polls) >= 2 and not any(r.form.get("client_secret") for r in polls)
    [name] = sfauth.stored_accounts()
    record = json.loads((sfauth.home / "accounts" / name).read_text())
    assert record["username"] == "alice"
    token = sfauth.run("token")
    assert api_status(gh, token.stdout.strip())[0] == 200
    # Signed in without the secret, the token cannot be revoked here: logout says where to do it.
    logout = sfauth.run("logout")
    assert logout.returncode == 2, logout.stderr  # removed here; revoking needs what only the person can do
    assert gh.base_url + "/settings/applications" in logout.stdout + logout.stderr
    assert sfauth.stored_accounts() == []
