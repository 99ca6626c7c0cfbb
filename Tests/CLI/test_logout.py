"""Revocation end to end: logout revokes at the server and forgets locally; re-login and --force
revoke what they replace."""
import json

from conftest import free_port
from test_accounts import BOB, accounts, login
from test_login import NETWORK, OK, LOGIN_REQUIRED, USAGE, call_api


def stored(sfauth):
    [name] = sfauth.stored_accounts()
    return json.loads((sfauth.home / "accounts" / name).read_text())


def refresh_with(server, refresh_token, client_id):
    import urllib.error
    import urllib.parse
    import urllib.request
    body = urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": refresh_token,
                                   "client_id": client_id}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(server["SFAUTH_TEST_TOKEN_URL"], data=body), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as error:
        return error.code


def test_logout_revokes_at_the_server(sfauth, server):
    login(sfauth)
    old = stored(sfauth)
    logout = sfauth.run("logout")
    assert logout.returncode == OK, logout.stderr
    assert "revoked the refresh token" in logout.stderr
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], old["accessToken"])[0] == 401
    assert refresh_with(server, old["refreshToken"], old["clientId"]) == 400
    assert sfauth.stored_accounts() == []


def test_unreachable_server_still_forgets_and_says_so(sfauth, server):
    dead = f"http://127.0.0.1:{free_port()}/o/revoke_token/"
    result = sfauth.run(*sfauth.login_args(scope="openid profile", revoke_url=dead))
    assert result.returncode == OK, result.stderr
    old = stored(sfauth)
    logout = sfauth.run("logout")
    assert logout.returncode == NETWORK, logout.stderr          # not revoked: said, and not a success (issue 17 §18)
    assert "could not reach" in logout.stderr and "only forgotten locally" in logout.stderr
    assert logout.stderr.splitlines()[-1].startswith("sfauth: the server did not confirm the revocation")
    assert sfauth.stored_accounts() == []
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], old["accessToken"])[0] == 200   # honestly not revoked


def test_local_only_does_not_contact_the_server(sfauth, server):
    login(sfauth)
    old = stored(sfauth)
    logout = sfauth.run("logout", "--local-only")
    assert logout.returncode == OK and "--local-only" in logout.stderr
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], old["accessToken"])[0] == 200


def test_logout_of_default_selects_first_remaining_and_all_removes_everything(sfauth):
    login(sfauth, "--alias", "a")
    login(sfauth, "--alias", "b", **BOB)             # bob is now the default
    logout = sfauth.run("logout")
    assert logout.returncode == OK and "Logged out of b" in logout.stderr
    assert "The default account is now a" in logout.stderr
    assert [a["alias"] for a in accounts(sfauth) if a["default"]] == ["a"]
    login(sfauth, "--alias", "b", **BOB)
    other = sfauth.run("logout", "a")                # not the default: the default stays, and says nothing
    assert other.returncode == OK and "The default account is now" not in other.stderr
    assert [a["alias"] for a in accounts(sfauth) if a["default"]] == ["b"]
    login(sfauth, "--alias", "a")
    sfauth.run("use", "b")
    everything = sfauth.run("logout", "--all")
    assert everything.returncode == OK and everything.stderr.count("Logged out of") == 2
    assert accounts(sfauth) == []
    assert sfauth.run("token").returncode == LOGIN_REQUIRED


def test_logout_of_a_named_account(sfauth):
    login(sfauth, "--alias", "a")
    login(sfauth, "--alias", "b", **BOB)
    assert sfauth.run("logout", "a").returncode == OK
    assert [a["alias"] for a in accounts(sfauth)] == ["b"]
    assert sfauth.run("logout", "nobody").returncode == USAGE


def test_relogin_revokes_the_replaced_refresh_token(sfauth, server):
    login(sfauth)
    old = stored(sfauth)
    login(sfauth)
    new = stored(sfauth)
    assert new["refreshToken"] != old["refreshToken"]
    assert refresh_with(server, old["refreshToken"], old["clientId"]) == 400
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], new["accessToken"])[0] == 200


def test_force_signs_in_again_and_then_revokes_the_old_tokens(sfauth, server):
    login(sfauth)
    old = stored(sfauth)
    sfauth.browser_report()                            # wait for the first login's report, then drop it
    sfauth.browser_log.unlink()
    forced = login(sfauth, "--force")
    assert forced.returncode == OK, forced.stderr
    assert "prompt=login" in sfauth.browser_report()["url"]
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], old["accessToken"])[0] == 401
    assert refresh_with(server, old["refreshToken"], old["clientId"]) == 400
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], stored(sfauth)["accessToken"])[0] == 200


def test_plain_force_signs_in_to_the_accounts_own_server_not_salesforce(sfauth, server):
    # An --issuer account: `login --force` with no options must go back to that issuer.
    first = sfauth.run("login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", server["SFAUTH_TEST_CLIENT_ID"],
                       "--scope", "openid profile email offline_access", XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    assert first.returncode == OK, first.stderr
    old = stored(sfauth)
    sfauth.browser_report()
    sfauth.browser_log.unlink()
    forced = sfauth.run("login", "--force")
    assert forced.returncode == OK, forced.stderr
    url = sfauth.browser_report()["url"]
    assert url.startswith(server["SFAUTH_TEST_AUTHORIZE_URL"]) and "prompt=login" in url, url
    assert "salesforce" not in forced.stderr
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], old["accessToken"])[0] == 401
    # Options that name another server are refused, and nothing is touched.
    other = sfauth.run("login", "--force", "--sandbox")
    assert other.returncode == USAGE and "leave out --account and --force" in other.stderr, other.stderr
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], stored(sfauth)["accessToken"])[0] == 200


def test_login_account_signs_in_again_with_the_accounts_recipe(sfauth, server):
    assert login(sfauth, "--alias", "work").returncode == OK
    sfauth.browser_report()
    sfauth.browser_log.unlink()
    again = sfauth.run("login", "--account", "work")
    assert again.returncode == OK, again.stderr
    url = sfauth.browser_report()["url"]
    assert url.startswith(server["SFAUTH_TEST_AUTHORIZE_URL"]) and "scope=openid%20profile%20email" in url, url
    assert [a["alias"] for a in accounts(sfauth)] == ["work"]


def test_whoami_shows_the_identity_from_the_server(sfauth):
    login(sfauth)
    who = sfauth.run("whoami")
    assert who.returncode == OK
    lines = dict(line.split(None, 1) for line in who.stdout.splitlines())
    assert lines["username"] == "alice" and lines["email"] == "alice@example.test" and lines["name"] == "Alice Example"
    as_json = json.loads(sfauth.run("whoami", "--json").stdout)
    assert as_json["user_id"] == "1" and as_json["organization_id"] is None


def test_force_then_a_failed_sign_in_keeps_the_working_session(sfauth, server):
    login(sfauth)
    old = stored(sfauth)
    sfauth.browser_report()
    sfauth.browser_log.unlink()
    denied = sfauth.run(*sfauth.login_args(scope="openid profile email", extra=["--force"]), SFAUTH_TEST_BROWSER_ACTION="deny")
    assert denied.returncode == 4, denied.stderr
    # Nothing was revoked before the new sign-in succeeded: the old session still works.
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], old["accessToken"])[0] == 200
    token = sfauth.run("token")
    assert token.returncode == OK and token.stdout.strip() == old["accessToken"]
    assert stored(sfauth) == old


def test_a_plain_login_signs_the_lapsed_default_account_in_again(sfauth, server):
    """`sfauth login` with nothing named, when the default account's sign-in lapsed, signs that account in
    again at its own server — it does not open Salesforce and take the default away (issue 17 §11) —
    and asks the login page for that account's user (login_hint, issue 17 §12)."""
    first = sfauth.run("login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", server["SFAUTH_TEST_CLIENT_ID"],
                       "--scope", "openid profile email offline_access", XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    assert first.returncode == OK, first.stderr
    [name] = sfauth.stored_accounts()
    path = sfauth.home / "accounts" / name
    record = json.loads(path.read_text())
    record["status"] = "login_required"
    path.write_text(json.dumps(record))
    sfauth.browser_report()
    sfauth.browser_log.unlink()
    again = sfauth.run("login")
    assert again.returncode == OK, again.stderr
    assert "Signing in again to alice, the default account, whose sign-in is no longer valid" in again.stderr
    url = sfauth.browser_report()["url"]
    assert url.startswith(server["SFAUTH_TEST_AUTHORIZE_URL"]) and "login_hint=alice" in url, url
    assert "salesforce" not in again.stderr
    assert sfauth.stored_accounts() == [name]
    assert sfauth.run("token").returncode == OK
