"""`sfauth git-credential` as the real git's credential helper, and `sfauth setup-git`.

Real git (clone over plain http from 127.0.0.1) against a loopback smart-HTTP server
(git_server.py: `git http-backend` behind Basic authentication) that accepts only passwords that
are access tokens the test authorization server accepts. Accounts are signed in with the client
credentials grant, so no browser is involved. git runs with a private HOME (its global config is
the one setup-git writes), no system config and no terminal prompts.
"""
import json
import os
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from git_server import GitServer

LOGIN_REQUIRED = 3


@pytest.fixture
def git_server(server, tmp_path):
    root = tmp_path / "repos"
    root.mkdir()
    stand_in = GitServer(root, server["SFAUTH_TEST_RESOURCE_URL"])
    stand_in.repository = stand_in.create_repository("project.git", {"README": "hello from the test server\n"})
    yield stand_in
    stand_in.stop()


def git_env(sfauth, **extra):
    env = dict(sfauth.env, HOME=str(sfauth.home.parent), GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    for name in ("GIT_ASKPASS", "SSH_ASKPASS", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"):
        env.pop(name, None)
    env.update(extra)
    return env


def git(sfauth, *args, input=None, **extra):
    started = time.monotonic()
    result = subprocess.run(["git", *args], env=git_env(sfauth, **extra), capture_output=True, text=True,
                            input=input, stdin=None if input is not None else subprocess.DEVNULL, timeout=60)
    return result, time.monotonic() - started


def sfauth_git(sfauth, *args, input="", **extra):
    return subprocess.run([sfauth.binary, *args], env=git_env(sfauth, **extra), input=input,
                          capture_output=True, text=True, timeout=60)


def sign_in(sfauth, alias="svc"):
    result = sfauth.run("login", "--issuer", sfauth.server["SFAUTH_TEST_ISSUER"],
                        "--client-id", sfauth.server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "--client-credentials",
                        "--alias", alias, SFAUTH_CLIENT_SECRET=sfauth.server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"],
                        XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    assert result.returncode == 0, result.stderr
    return sfauth.run("token", "--account", alias).stdout.strip()


def setup_git(sfauth, host, *extra):
    result = sfauth_git(sfauth, "setup-git", "--host", host, *extra)
    assert result.returncode == 0, result.stderr
    return result


def revoke(server, token):
    data = urllib.parse.urlencode({"token": token, "client_id": server["SFAUTH_TEST_SERVICE_CLIENT_ID"],
                                   "client_secret": server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"]}).encode()
    with urllib.request.urlopen(urllib.request.Request(server["SFAUTH_TEST_REVOKE_URL"], data=data), timeout=10) as r:
        assert r.status == 200


def identifier_of(sfauth, alias):
    [record] = [r for r in map(lambda p: json.loads(p.read_text()), (sfauth.home / "accounts").iterdir()) if r.get("alias") == alias]
    return record["identifier"]


def test_setup_git_writes_a_quoted_helper_for_the_url(sfauth, tmp_path):
    sign_in(sfauth, alias="it's")
    identifier = identifier_of(sfauth, "it's")
    config = tmp_path / "gitconfig"
    setup_git(sfauth, "127.0.0.1:8080", "--scheme", "http", "--account", "it's", "--file", str(config))
    done = setup_git(sfauth, "http://127.0.0.1:8080/", "--account", "it's", "--file", str(config))  # again: replaced
    assert "with the account it's" in done.stdout
    values = subprocess.run(["git", "config", "--file", str(config), "--get-all", "credential.http://127.0.0.1:8080.helper"],
                            capture_output=True, text=True, check=True).stdout.split("\n")
    binary = os.path.realpath(sfauth.binary)
    # The account by its identifier, which no alias can take over (issue 17 §6).
    assert values == ["", f"!'{binary}' 'git-credential' '--account' '{identifier}' '--host' 'http://127.0.0.1:8080'", ""]
    # The global configuration by default; https when no scheme is given; the default account.
    setup_git(sfauth, "git.example")
    listed = subprocess.run(["git", "config", "--global", "--get-all", "credential.https://git.example.helper"],
                            env=git_env(sfauth), capture_output=True, text=True, check=True).stdout
    assert f"'--account' '{identifier}' '--host' 'https://git.example'" in listed
    for bad in ("ssh://git.example", "https://git.example/some/path", "user@git.example", "http://git.example"):
        refused = sfauth_git(sfauth, "setup-git", "--host", bad, "--file", str(config))
        assert refused.returncode == 2 and "sfauth:" in refused.stderr, bad
    unknown = sfauth_git(sfauth, "setup-git", "--host", "git.example", "--account", "nobody", "--file", str(config))
    assert unknown.returncode == 2 and "there is no stored account 'nobody'" in unknown.stderr


def test_setup_git_needs_an_account_to_name(sfauth, tmp_path):
    result = sfauth_git(sfauth, "setup-git", "--host", "git.example", "--file", str(tmp_path / "gitconfig"))
    assert result.returncode == LOGIN_REQUIRED and "no account is stored" in result.stderr
    assert not (tmp_path / "gitconfig").exists()


def test_a_helper_without_an_account_gives_the_default_only_to_its_own_server(sfauth, git_server):
    """A helper configured by hand without --account: every sign-in may change the default, so the
    default account's token goes only to the host that is its own server (issue 17 §6)."""
    token = sign_in(sfauth)
    server = urllib.parse.urlsplit(sfauth.server["SFAUTH_TEST_ISSUER"])
    own = f"{server.scheme}://{server.netloc}"
    answer = sfauth_git(sfauth, "git-credential", "--host", own, "get", input=f"protocol={server.scheme}\nhost={server.netloc}\n\n")
    assert answer.returncode == 0 and f"password={token}" in answer.stdout, answer
    refused = sfauth_git(sfauth, "git-credential", "--host", git_server.url, "get", input=f"protocol=http\nhost={git_server.host}\n\n")
    assert refused.returncode == 2 and refused.stdout == "quit=1\n"
    [line] = refused.stderr.splitlines()
    assert f"the default account (svc) is not that server's" in line and f"--host {git_server.url} --account NAME" in line, line
    # Through git: no password goes to the git host, and git does not ask for one.
    binary = os.path.realpath(sfauth.binary)
    result, _ = git(sfauth, "-c", f"credential.helper=!'{binary}' git-credential --host {git_server.url}",
                    "credential", "fill", input=f"protocol=http\nhost={git_server.host}\n\n")
    assert result.returncode != 0 and token not in result.stdout
    # erase without an account leaves another host's business alone.
    erase = sfauth_git(sfauth, "git-credential", "--host", git_server.url, "erase",
                       input=f"protocol=http\nhost={git_server.host}\nusername=oauth2\npassword={token}\n\n")
    assert (erase.returncode, erase.stdout, erase.stderr) == (0, "", "")


def test_git_s_request_is_read_as_git_reads_it(sfauth, git_server):
    """A key sent twice: git keeps the last, so does the helper; CRLF line ends are read as LF."""
    token = sign_in(sfauth)
    helper = ["git-credential", "--account", "svc", "--host", git_server.url, "get"]
    twice = sfauth_git(sfauth, *helper, input=f"protocol=http\nhost=elsewhere.example\nhost={git_server.host}\n\n")
    assert f"password={token}" in twice.stdout, twice
    other = sfauth_git(sfauth, *helper, input=f"protocol=http\nhost={git_server.host}\nhost=elsewhere.example\n\n")
    assert (other.returncode, other.stdout) == (0, "")
    crlf = sfauth_git(sfauth, *helper, input=f"protocol=http\r\nhost={git_server.host}\r\n\r\n")
    assert f"password={token}" in crlf.stdout, crlf


def test_git_clone_gets_the_token_from_the_helper(sfauth, git_server, tmp_path):
    token = sign_in(sfauth)
    setup_git(sfauth, git_server.url, "--account", "svc")
    result, _ = git(sfauth, "clone", "-q", git_server.repository, str(tmp_path / "checkout"))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "checkout" / "README").read_text() == "hello from the test server\n"
    assert git_server.unauthenticated >= 1                      # git asked the helper only after a 401
    assert git_server.attempts and all(a == ("oauth2", token, 200) for a in git_server.attempts)


def test_a_refused_token_is_renewed_for_the_next_git_command(sfauth, git_server, tmp_path):
    """The server refuses a token sfauth still thinks valid (revoked): git gets 401, sends `erase`,
    which renews the token (never signs out); the next git command gets the new one."""
    first = sign_in(sfauth)
    setup_git(sfauth, git_server.url, "--account", "svc")
    revoke(sfauth.server, first)
    renewing = {"SFAUTH_CLIENT_SECRET": sfauth.server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"]}
    failed, _ = git(sfauth, "clone", "-q", git_server.repository, str(tmp_path / "one"), **renewing)
    assert failed.returncode != 0
    assert "Authentication failed" in failed.stderr
    assert ("oauth2", first, 401) in git_server.attempts
    second = sfauth.run("token", "--account", "svc").stdout.strip()
    assert second and second != first                           # erase renewed it; the account is still there
    result, _ = git(sfauth, "clone", "-q", git_server.repository, str(tmp_path / "two"), **renewing)
    assert result.returncode == 0, result.stderr
    assert git_server.attempts[-1] == ("oauth2", second, 200)


def test_erase_says_when_only_a_new_sign_in_helps(sfauth, git_server):
    """git says only "Authentication failed": when the refused token cannot be renewed, erase says
    what to run (issue 17 §18) — and still signs nothing out."""
    token = sign_in(sfauth)
    request = f"protocol=http\nhost={git_server.host}\nusername=oauth2\npassword={token}\n\n"
    result = sfauth_git(sfauth, "git-credential", "--account", "svc", "--host", git_server.url, "erase", input=request)
    assert result.returncode == 0 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("sfauth: the git server refused the token: ") and "SFAUTH_CLIENT_SECRET" in line, line
    assert sfauth.stored_accounts() != []


def test_store_and_erase_of_other_passwords_change_nothing(sfauth, git_server):
    token = sign_in(sfauth)
    request = f"protocol=http\nhost={git_server.host}\nusername=oauth2\npassword=%s\n\n"
    for operation, password in (("store", token), ("erase", "some-older-token")):
        result = sfauth_git(sfauth, "git-credential", "--account", "svc", "--host", git_server.url, operation,
                            input=request % password)
        assert result.returncode == 0 and result.stdout == "" and result.stderr == "", (operation, result)
    assert sfauth.run("token", "--account", "svc").stdout.strip() == token


def test_get_answers_only_for_the_configured_host(sfauth, git_server):
    token = sign_in(sfauth)
    helper = ["git-credential", "--account", "svc", "--host", git_server.url, "get"]
    answer = sfauth_git(sfauth, *helper, input=f"protocol=http\nhost={git_server.host}\n\n")
    assert answer.returncode == 0, answer.stderr
    lines = answer.stdout.splitlines()
    assert lines[:2] == ["username=oauth2", f"password={token}"]
    assert lines[2].startswith("password_expiry_utc=") and int(lines[2].split("=")[1]) > time.time()
    assert len(lines) == 3 and answer.stderr == ""
    other_port = git_server.port + 1 if git_server.port < 65535 else git_server.port - 1
    for request in (f"protocol=https\nhost={git_server.host}\n\n", f"protocol=http\nhost=127.0.0.1:{other_port}\n\n",
                    "protocol=http\nhost=git.example\n\n"):
        nothing = sfauth_git(sfauth, *helper, input=request)
        assert (nothing.returncode, nothing.stdout, nothing.stderr) == (0, "", ""), request
    # Through git, with the helper configured for every URL: another host still gets nothing.
    binary = os.path.realpath(sfauth.binary)
    result, _ = git(sfauth, "-c", f"credential.helper=!'{binary}' git-credential --account svc --host {git_server.url}",
                    "credential", "fill", input=f"protocol=http\nhost=127.0.0.1:{other_port}\n\n")
    assert result.returncode != 0 and "password=" not in result.stdout
    same, _ = git(sfauth, "-c", f"credential.helper=!'{binary}' git-credential --account svc --host {git_server.url}",
                  "credential", "fill", input=f"protocol=http\nhost={git_server.host}\n\n")
    assert same.returncode == 0 and f"password={token}" in same.stdout


def test_login_required_stops_git_with_the_command_to_run(sfauth, git_server, tmp_path):
    direct = sfauth_git(sfauth, "git-credential", "--host", git_server.url, "get",
                        input=f"protocol=http\nhost={git_server.host}\n\n")
    assert direct.returncode == LOGIN_REQUIRED
    assert direct.stdout == "quit=1\n"
    assert direct.stderr.count("\n") == 1 and "Run `sfauth login` first." in direct.stderr
    binary = os.path.realpath(sfauth.binary)
    result, elapsed = git(sfauth, "-c", f"credential.helper=!'{binary}' git-credential --host {git_server.url}",
                          "clone", "-q", git_server.repository, str(tmp_path / "checkout"))
    assert result.returncode != 0
    assert "sfauth: git needs a token: Not signed in: no account is stored. Run `sfauth login` first." in result.stderr
    assert "told us to quit" in result.stderr                    # no password prompt after the helper's answer
    assert elapsed < 20
    assert git_server.attempts == []
