"""Many accounts end to end: keyed by who signed in, aliases, default selection, script output."""
import json
import shlex
import subprocess
import time

from test_login import LOGIN_REQUIRED, OK, USAGE, call_api

BOB = {"SFAUTH_TEST_USERNAME": "bob", "SFAUTH_TEST_PASSWORD": "bob-password"}


def login(sfauth, *extra, **env):
    result = sfauth.run(*sfauth.login_args(scope="openid profile email", extra=list(extra)), **env)
    assert result.returncode == OK, result.stderr
    return result


def accounts(sfauth):
    result = sfauth.run("accounts", "--json")
    assert result.returncode == OK, result.stderr
    return json.loads(result.stdout)["accounts"]


def test_same_account_twice_is_one_account(sfauth):
    login(sfauth)
    first = sfauth.run("token").stdout
    login(sfauth)
    assert len(accounts(sfauth)) == 1
    assert sfauth.run("token").stdout != first


def test_two_accounts_aliases_and_default(sfauth, server):
    login(sfauth, "--alias", "main")
    login(sfauth, "--alias", "other", **BOB)
    listed = accounts(sfauth)
    assert sorted(a["username"] for a in listed) == ["alice", "bob"]
    assert [a["alias"] for a in listed if a["default"]] == ["other"]   # the latest login is the default
    assert all(a["state"] == "valid" for a in listed)

    table = sfauth.run("accounts").stdout.splitlines()
    assert table[0].split() == ["NAME", "USER", "SERVER", "STATE", "REFRESH", "TOKEN", "SIGN-IN", "NEEDED"]
    assert any(line.startswith("*") and "bob" in line and "other" in line for line in table[1:])

    resource = server["SFAUTH_TEST_RESOURCE_URL"]
    assert call_api(resource, sfauth.run("token").stdout.strip())[1]["username"] == "bob"
    assert call_api(resource, sfauth.run("token", "--account", "main").stdout.strip())[1]["username"] == "alice"
    assert call_api(resource, sfauth.run("token", "--account", "alice").stdout.strip())[1]["username"] == "alice"

    use = sfauth.run("use", "main")
    assert use.returncode == OK and "The default account is now main." in use.stderr
    assert call_api(resource, sfauth.run("token").stdout.strip())[1]["username"] == "alice"

    # A name that matches no account is a mistake on the command line (2), not an expired sign-in (3):
    # the message lists the accounts there are, or the one probably meant.
    missing = sfauth.run("token", "--account", "nobody")
    assert missing.returncode == USAGE and "the accounts are: main" in missing.stderr, missing.stderr
    for command in (["use", "nobody"], ["whoami", "nobody"], ["logout", "nobody"]):
        result = sfauth.run(*command)
        assert result.returncode == USAGE and "the accounts are: main" in result.stderr, (command, result.stderr)
    typo = sfauth.run("use", "mian")
    assert typo.returncode == USAGE and "did you mean 'main'?" in typo.stderr, typo.stderr
    assert sfauth.run("whoami", "main").returncode == OK


def test_alias_moves_to_the_account_that_claims_it(sfauth):
    login(sfauth, "--alias", "work")
    login(sfauth, "--alias", "work", **BOB)
    by_user = {a["username"]: a["alias"] for a in accounts(sfauth)}
    assert by_user == {"alice": None, "bob": "work"}
    # A re-login without --alias keeps the alias.
    login(sfauth, **BOB)
    assert {a["username"]: a["alias"] for a in accounts(sfauth)}["bob"] == "work"


def test_an_exact_alias_wins_over_a_username(sfauth, server):
    """alice aliased bob, then bob signs in: `--account bob` keeps meaning the account aliased bob —
    in the front end, the main program and every helper — instead of matching two (issue 17 §13)."""
    login(sfauth, "--alias", "bob")
    login(sfauth, **BOB)
    resource = server["SFAUTH_TEST_RESOURCE_URL"]
    main_program = str(sfauth.binary) + "-main"
    for program in (sfauth.binary, main_program):
        token = subprocess.run([program, "token", "--account", "bob"], env=sfauth.env, capture_output=True, text=True, timeout=60)
        assert token.returncode == OK, token.stderr
        assert call_api(resource, token.stdout.strip())[1]["username"] == "alice"
    kube = sfauth.run("kube-credential", "--account", "bob")
    assert kube.returncode == OK and call_api(resource, json.loads(kube.stdout)["status"]["token"])[1]["username"] == "alice"
    assert json.loads(sfauth.run("whoami", "bob", "--json").stdout)["username"] == "alice"
    # bob's own account is still reached by its identifier, or by an alias of its own.
    [bobs] = [a["identifier"] for a in accounts(sfauth) if a["username"] == "bob"]
    assert call_api(resource, sfauth.run("token", "--account", bobs).stdout.strip())[1]["username"] == "bob"


def test_token_json_and_env_output(sfauth):
    login(sfauth)
    as_json = json.loads(sfauth.run("token", "--json").stdout)
    assert set(as_json) == {"version", "access_token", "token_type", "expires_at", "expires", "refresh_token_expires_at",
                            "refresh_token_expires", "instance_url", "account", "username"}
    assert as_json["username"] == "alice" and as_json["token_type"] == "Bearer"
    env = sfauth.run("token", "--env").stdout
    assert env.startswith("export SF_ACCESS_TOKEN=")
    shell = subprocess.run(["bash", "-c", env + '\nprintf %s "$SF_ACCESS_TOKEN"'], capture_output=True, text=True)
    assert shell.stdout == as_json["access_token"]
    assert sfauth.run("token", "--json", "--env").returncode == USAGE


def test_environment_token_wins(sfauth):
    supplied = sfauth.run("token", SFAUTH_ACCESS_TOKEN="ci-token", SFAUTH_INSTANCE_URL="https://ci.example")
    assert supplied.returncode == OK and supplied.stdout == "ci-token\n"
    env = sfauth.run("token", "--env", SFAUTH_ACCESS_TOKEN="it's", SFAUTH_INSTANCE_URL="https://ci.example").stdout
    assert shlex.split(env.splitlines()[0].removeprefix("export ")) == ["SF_ACCESS_TOKEN=it's"]
    assert "SF_INSTANCE_URL='https://ci.example'" in env


def test_accounts_when_empty(sfauth):
    result = sfauth.run("accounts")
    assert result.returncode == OK and result.stdout == "" and "sfauth login" in result.stderr
    assert accounts(sfauth) == []


def test_whoami_says_the_state_of_the_token(sfauth):
    """whoami shows what accounts shows: valid, expired-refreshable, login-required (issue 17 §18)."""
    login(sfauth, "--alias", "main")
    shown = json.loads(sfauth.run("whoami", "--json").stdout)
    assert shown["state"] == "valid" and shown["username"] == "alice"
    assert [line.split() for line in sfauth.run("whoami").stdout.splitlines() if line.startswith("state")] == [["state", "valid"]]
    [name] = sfauth.stored_accounts()
    path = sfauth.home / "accounts" / name
    record = json.loads(path.read_text())
    record["expiresAt"] = record["issuedAt"] = time.time() - 10   # expired, and it has a refresh token
    path.write_text(json.dumps(record))
    assert json.loads(sfauth.run("whoami", "--json").stdout)["state"] == "expired-refreshable"
    record["status"] = "login_required"
    path.write_text(json.dumps(record))
    assert json.loads(sfauth.run("whoami", "--json").stdout)["state"] == "login-required"


def test_signing_in_again_to_bob_as_alice_is_said_and_changes_nothing_of_bobs(sfauth):
    """`login --account bob` where the browser signs in alice: alice's sign-in is kept as her own
    account, bob keeps the default and his state, and sfauth says so and exits 3 (issue 17 §12)."""
    login(sfauth, "--alias", "a")
    login(sfauth, "--alias", "b", **BOB)
    default_before = (sfauth.home / "default").read_text()
    for record_path in (sfauth.home / "accounts").iterdir():
        record = json.loads(record_path.read_text())
        if record["username"] == "bob":
            record["status"] = "login_required"
            record_path.write_text(json.dumps(record))
    again = sfauth.run("login", "--account", "b")                 # the browser signs in alice
    assert again.returncode == LOGIN_REQUIRED, again.stderr
    assert "signed in alice, not bob" in again.stderr and "sfauth login --account b" in again.stderr, again.stderr
    assert (sfauth.home / "default").read_text() == default_before
    by_user = {a["username"]: a for a in accounts(sfauth)}
    assert by_user["bob"]["state"] == "login-required" and by_user["bob"]["alias"] == "b"
    assert by_user["alice"]["alias"] == "a"
