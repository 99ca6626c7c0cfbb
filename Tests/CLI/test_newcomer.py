"""A newcomer's first ten minutes (issue 9): hints that are right, exit codes that match the README's
table, accounts that remember how to sign in again, quiet and consistent output. Each test failed
against the build before these fixes."""
import json
import os
import subprocess
import time

from stub_server import StubServer
from test_accounts import BOB, accounts, login
from test_login import CANCELLED, LOGIN_REQUIRED, OK, STORAGE, USAGE


def password_login(sfauth, stub, *extra, **env):
    return subprocess.run([sfauth.binary, "login", "--authorize-url", stub.url("/authorize"), "--token-url", stub.url("/token"),
                           "--client-id", "stub-client", "--password", "--username", "alice", *extra],
                          input="pw\n", env=dict(sfauth.env, **env), capture_output=True, text=True, timeout=60)


def test_token_env_leaves_no_earlier_value_behind(sfauth):
    with StubServer() as stub:
        stub.answer("/token", 200, {"access_token": "at-1", "expires_in": 3600})
        assert password_login(sfauth, stub).returncode == OK
        env = sfauth.run("token", "--env").stdout
        # This account has no instance URL: an earlier account's value must not survive `eval`.
        shell = subprocess.run(["bash", "-c", 'export SF_INSTANCE_URL=https://old.example; eval "$1"; echo "${SF_INSTANCE_URL-unset}"',
                                "-", env], capture_output=True, text=True)
        assert shell.stdout.strip() == "unset", (env, shell.stdout)
        assert "unset SF_INSTANCE_URL" in env and "export SF_ACCESS_TOKEN='at-1'" in env


def test_the_device_grant_waits_as_long_as_its_code_is_valid(sfauth):
    with StubServer() as stub:
        stub.answer("/device", 200, {"device_code": "d", "user_code": "WXYZ", "verification_uri": stub.url("/verify"),
                                     "expires_in": 3, "interval": 1})
        stub.answer("/token", 400, {"error": "authorization_pending"})
        started = time.time()
        result = sfauth.run("login", "--authorize-url", stub.url("/authorize"), "--token-url", stub.url("/token"),
                            "--client-id", "c", "--device", "--device-authorization-url", stub.url("/device"))
        assert result.returncode == CANCELLED, result.stderr
        assert "Timed out after 3 s" in result.stderr and "WXYZ" in result.stderr
        assert time.time() - started < 20
    help_text = sfauth.run("login", "--help").stdout
    assert "as long as the server keeps the code valid" in " ".join(help_text.split())


def test_hints_are_true_for_the_command_and_the_situation(sfauth, server):
    # A client-credentials account asked to refresh: its token has not expired; it cannot be renewed.
    service = sfauth.run("login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", server["SFAUTH_TEST_SERVICE_CLIENT_ID"],
                         "--client-credentials", SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"],
                         XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    assert service.returncode == OK, service.stderr
    refresh = sfauth.run("token", "--refresh")
    assert refresh.returncode == LOGIN_REQUIRED
    assert "cannot be renewed" in refresh.stderr and "has expired" not in refresh.stderr, refresh.stderr
    assert "sfauth login --account" in refresh.stderr
    assert "--storage" not in refresh.stderr
    # Accounts exist but none is the default: say that, and how to choose.
    (sfauth.home / "default").unlink()
    token = sfauth.run("token")
    assert token.returncode == USAGE, token.stderr
    assert "no account is the default" in token.stderr and "sfauth use" in token.stderr
    assert "no stored credentials" not in token.stderr


def test_errors_have_one_style(sfauth):
    for args in (["nosuch"], ["token", "--json", "--env"], ["login", "--timeout", "0"], ["help", "nosuch"]):
        result = sfauth.run(*args)
        assert result.returncode == USAGE, (args, result.stderr)
        first = result.stderr.splitlines()[0]
        assert first.startswith("sfauth: ") and first.endswith("."), (args, result.stderr)
        assert "Error:" not in result.stderr


def test_a_mistyped_command_gets_a_suggestion(sfauth):
    """Did you mean, for commands as for accounts and configuration keys (issue 17 §18)."""
    for args, meant in ((["logn"], "login"), (["help", "tokn"], "token"), (["acounts", "--json"], "accounts")):
        result = sfauth.run(*args)
        assert result.returncode == USAGE, (args, result.stderr)
        assert f"did you mean '{meant}'?" in result.stderr, (args, result.stderr)
    assert "did you mean" not in sfauth.run("nosuch").stderr


def test_the_store_is_checked_before_the_browser_opens(sfauth, tmp_path):
    not_a_directory = tmp_path / "store-file"
    not_a_directory.write_text("x")
    result = sfauth.run(*sfauth.login_args(), SFAUTH_HOME=str(not_a_directory))
    assert result.returncode == STORAGE, result.stderr
    assert "not a directory" in result.stderr
    assert "Opening your browser" not in result.stderr and not sfauth.browser_log.exists()


def test_one_damaged_account_file_breaks_nothing_else(sfauth):
    login(sfauth, "--alias", "a")
    login(sfauth, "--alias", "b", **BOB)
    damaged = sfauth.home / "accounts" / "broken.example%2Fx.json"
    damaged.write_text("{ not json")
    listing = sfauth.run("accounts", "--json")
    assert listing.returncode == OK, listing.stderr
    rows = {row["identifier"]: row for row in json.loads(listing.stdout)["accounts"]}
    assert rows["broken.example/x"]["state"] == "unreadable" and rows["broken.example/x"]["file"] == str(damaged)
    assert sorted(row["alias"] for row in rows.values() if row["alias"]) == ["a", "b"]
    table = sfauth.run("accounts")
    assert table.returncode == OK and "unreadable" in table.stdout and str(damaged) in table.stderr
    assert sfauth.run("use", "a").returncode == OK
    everything = sfauth.run("logout", "--all", "--local-only")
    assert everything.returncode == OK, everything.stderr
    assert sfauth.stored_accounts() == []
    # Without --local-only a damaged file is kept (it holds nothing to revoke) and the others go.
    login(sfauth, "--alias", "a")
    damaged.write_text("{ not json")
    kept = sfauth.run("logout", "--all")
    assert kept.returncode == STORAGE and "logout --local-only broken.example/x" in kept.stderr, kept.stderr
    assert sfauth.stored_accounts() == ["broken.example%2Fx.json"]
    assert sfauth.run("logout", "--local-only", "broken.example/x").returncode == OK
    assert sfauth.stored_accounts() == []


def test_the_success_line_is_short_and_verbose_says_where(sfauth):
    result = login(sfauth, "--alias", "work")
    lines = [line for line in result.stderr.splitlines() if line.startswith("Signed in")]
    assert lines == ["Signed in as alice at " + lines[0].split(" at ", 1)[1]], result.stderr
    assert "(account work)" in lines[0] and ".json" not in result.stderr and len(lines[0]) < 120
    verbose = login(sfauth, "--verbose")
    assert "Saved in " + str(sfauth.home / "accounts") in verbose.stderr


def test_signing_in_again_keeps_the_alias_and_a_moved_alias_is_announced(sfauth):
    login(sfauth, "--alias", "work")
    login(sfauth)                                              # the same account again: its alias stays
    assert [a["alias"] for a in accounts(sfauth)] == ["work"]
    moved = login(sfauth, "--alias", "work", **BOB)
    assert "The alias work now names bob; it no longer names alice" in moved.stderr, moved.stderr


def test_accounts_name_every_row_and_the_client_of_a_service_account(sfauth, server):
    service = sfauth.run("login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", server["SFAUTH_TEST_SERVICE_CLIENT_ID"],
                         "--client-credentials", SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"],
                         XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    assert service.returncode == OK, service.stderr
    [row] = accounts(sfauth)
    assert row["name"] == row["identifier"] and row["user"] == f"client {server['SFAUTH_TEST_SERVICE_CLIENT_ID']}"
    host_and_path = server["SFAUTH_TEST_ISSUER"].split("://", 1)[1]
    assert row["server"] == host_and_path                      # port and path tell servers apart
    table = sfauth.run("accounts").stdout
    assert "- " not in table.splitlines()[1].split(host_and_path)[0], table
    assert sfauth.run("use", row["name"]).returncode == OK


def test_a_sign_in_without_a_name_says_user_n_with_a_hint(sfauth):
    result = sfauth.run(*sfauth.login_args(scope="openid"))
    assert result.returncode == OK, result.stderr
    assert "Signed in as user 1 at" in result.stderr and "profile" in result.stderr, result.stderr


def test_json_outputs_have_a_version_and_rfc3339_times(sfauth):
    login(sfauth)
    token = json.loads(sfauth.run("token", "--json").stdout)
    assert token["version"] == 1 and token["expires"].endswith("Z")
    assert time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(token["expires_at"])) == token["expires"]
    listing = json.loads(sfauth.run("accounts", "--json").stdout)
    assert listing["version"] == 1 and listing["accounts"][0]["expires"] == token["expires"]
    assert json.loads(sfauth.run("whoami", "--json").stdout)["version"] == 1
    assert json.loads(sfauth.run("config", "--json").stdout)["version"] == 1


def test_the_keyring_notice_is_one_line_once_per_store_and_only_when_a_file_kept_a_refresh_token(sfauth, server):
    no_keyring = dict(SFAUTH_STORAGE="auto", DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/bus")
    # A grant without a refresh token: nothing was kept in a file, nothing to say.
    service = sfauth.run("login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", server["SFAUTH_TEST_SERVICE_CLIENT_ID"],
                         "--client-credentials", SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"],
                         XDG_CACHE_HOME=str(sfauth.home.parent / "cache"), **no_keyring)
    assert service.returncode == OK and "keyring" not in service.stderr, service.stderr
    first = login(sfauth, **no_keyring)
    notices = [line for line in first.stderr.splitlines() if "keyring" in line]
    assert len(notices) == 1 and "sfauth accounts" in notices[0], first.stderr
    second = login(sfauth, **no_keyring)
    assert "keyring" not in second.stderr, second.stderr
    assert {a["refresh_token"] for a in accounts(sfauth) if a["user"] == "alice"} == {"file"}


def test_config_is_a_dry_run_of_login_and_shows_what_is_missing(sfauth):
    result = sfauth.run("config", "--issuer", "https://idp.example", "--device", "--timeout", "30", "--alias", "w",
                        "--storage", "file", "--no-browser")
    assert result.returncode == OK, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert "(missing)" in rows["client_id"] and "--client-id" in rows["client_id"]
    assert "device" in rows["grant"] and "30" in rows["timeout"] and "file" in rows["storage"] and "flag --no-browser" in rows["browser"]
    assert "client_id is missing" in result.stderr
    as_json = json.loads(sfauth.run("config", "--issuer", "https://idp.example", "--json").stdout)
    assert as_json["missing"][0]["name"] == "client_id" and as_json["settings"]["grant"]["value"] == "browser"
    # Its help points to login's instead of repeating every option.
    assert len(sfauth.run("config", "--help").stdout.splitlines()) < 60
    assert "sfauth login --help" in " ".join(sfauth.run("config", "--help").stdout.split())


def test_with_no_display_the_url_is_printed_once(sfauth):
    result = sfauth.run(*sfauth.login_args(extra=["--timeout", "2"]), BROWSER="")
    assert result.returncode == CANCELLED, result.stderr
    url_lines = [line for line in result.stderr.splitlines() if "/authorize/?" in line]
    assert len(url_lines) == 1, result.stderr


def test_every_login_required_message_names_the_command_that_works_for_that_account(sfauth, server):
    from test_logout import stored
    cache = str(sfauth.home.parent / "cache")
    first = sfauth.run("login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", server["SFAUTH_TEST_CLIENT_ID"],
                       "--scope", "openid profile email", "--alias", "idp", XDG_CACHE_HOME=cache)
    assert first.returncode == OK, first.stderr
    # The server forgets the sign-in (its refresh token revoked): only a new sign-in helps.
    import urllib.parse
    import urllib.request
    body = urllib.parse.urlencode({"token": stored(sfauth)["refreshToken"], "client_id": server["SFAUTH_TEST_CLIENT_ID"]}).encode()
    urllib.request.urlopen(urllib.request.Request(server["SFAUTH_TEST_REVOKE_URL"], data=body), timeout=10).read()
    token = sfauth.run("token", "--refresh")
    assert token.returncode == LOGIN_REQUIRED
    assert "Run `sfauth login --account idp`" in token.stderr, token.stderr
    # That command, as printed, signs in again at the account's own server (not Salesforce).
    sfauth.browser_report()
    sfauth.browser_log.unlink()
    again = sfauth.run("login", "--account", "idp", XDG_CACHE_HOME=cache)
    assert again.returncode == OK, again.stderr
    assert sfauth.browser_report()["url"].startswith(server["SFAUTH_TEST_AUTHORIZE_URL"])
    assert sfauth.run("token").returncode == OK


def test_logout_says_what_it_revoked_even_when_the_files_cannot_be_removed(sfauth, server):
    login(sfauth, "--alias", "a")
    default = sfauth.home / "default"
    default.unlink()
    default.mkdir()                                   # the store cannot finish the removal
    result = sfauth.run("logout", "a")
    assert result.returncode == STORAGE, result.stderr
    assert "revoked the refresh token" in result.stderr and "could not be removed here" in result.stderr, result.stderr
