"""Findings of the security review (issue 17 §5), each shown closed against the built program:
the token never goes to a host other than the one checked, a server's words never drive the
terminal, an SFDX auth URL cannot name one host and send its secrets to another, and children
(git) never inherit sfauth's secrets."""
import json
import os
import stat
import subprocess

import pytest

from stub_server import StubServer
from test_exec_and_request import stub_login
from test_login import OK, USAGE


def test_request_refuses_a_host_header(sfauth):
    with StubServer() as stub:
        stub_login(sfauth, stub)
        stub.answer("/services/data/", 200, "ok")
        result = sfauth.run("request", "-H", "Host: other.example", "/services/data/")
        assert result.returncode == USAGE, result
        assert "cannot set Host" in result.stderr
        assert stub.requests("/services/data/") == []


def test_request_include_escapes_the_servers_headers(sfauth):
    with StubServer() as stub:
        stub_login(sfauth, stub)
        stub.answer("/services/data/", 200, "body", headers={"X-Note": "\x1b]0;owned\x07title"})
        result = sfauth.run("request", "--include", "/services/data/")
        assert result.returncode == OK, result.stderr
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout
        assert "x-note: " in result.stdout.lower() and "title" in result.stdout
        assert result.stdout.endswith("\n\nbody")  # the body is data: as it came


def sfdx_login(sfauth, url):
    return subprocess.run([sfauth.binary, "login", "--sfdx-url-file", "-"], input=url + "\n", env=sfauth.env,
                          capture_output=True, text=True, timeout=60)


def test_an_sfdx_auth_url_cannot_smuggle_another_host(sfauth):
    with StubServer() as stub:
        stub.answer("/services/oauth2/token", 200, {"access_token": "stolen"})
        host = stub.url("").split("://")[1].rstrip("/")
        for url in (f"force://PlatformCLI::5Aep861-secret@acme.my.salesforce.com#@{host}",
                    f"force://PlatformCLI::5Aep861-secret@acme.my.salesforce.com?@{host}"):
            result = sfdx_login(sfauth, url)
            assert result.returncode == USAGE, result
            assert "5Aep861-secret" not in result.stderr
        assert stub.requests() == []
        assert sfauth.stored_accounts() == []


def test_an_sfdx_auth_url_at_another_host_is_said_before_its_secrets_go_there(sfauth):
    with StubServer() as stub:
        base = stub.url("")
        stub.answer("/services/oauth2/token", 200, {"access_token": "00D!at", "instance_url": base, "token_type": "Bearer",
                                                     "id": base + "/id/00D000000000001EAA/005000000000001AAA"})
        result = sfdx_login(sfauth, f"force://PlatformCLI::5Aep861@{base}")
        assert result.returncode == OK, result.stderr
        first = result.stderr.splitlines()[0]
        assert "which is not a Salesforce domain: its refresh token goes there" in first


def test_setup_git_runs_git_without_sfauths_secrets(sfauth, tmp_path):
    with StubServer() as stub:
        stub_login(sfauth, stub)   # setup-git names an account that exists
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "git-env"
    fake = bin_dir / "git"
    fake.write_text(f"#!/bin/sh\necho run >> '{seen}.runs'\nenv >> '{seen}'\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    result = sfauth.run("setup-git", "--host", "git.example", "--file", str(tmp_path / "gitconfig"),
                        PATH=f"{bin_dir}:{os.environ['PATH']}", SFAUTH_CLIENT_SECRET="s3cret", SFAUTH_ACCESS_TOKEN="at",
                        SF_ACCESS_TOKEN="exported")
    assert result.returncode == OK, result.stderr
    environment = seen.read_text()
    assert (tmp_path / "git-env.runs").read_text().count("run") == 3  # --unset-all, then two --add
    for secret in ("s3cret", "SFAUTH_ACCESS_TOKEN", "exported"):
        assert secret not in environment


def test_a_client_secret_goes_only_to_the_account_it_signed_in(sfauth):
    """SFAUTH_CLIENT_SECRET renews a client-credentials account only when it is the secret that
    account signed in with: another client's secret is never sent to its server (issue 17 §2)."""
    with StubServer() as stub:
        stub.answer("/token", 200, {"access_token": "at-1", "expires_in": 3600})
        login = sfauth.run("login", "--authorize-url", stub.url("/authorize"), "--token-url", stub.url("/token"),
                           "--client-id", "svc", "--client-credentials", SFAUTH_CLIENT_SECRET="svc-secret")
        assert login.returncode == OK, login.stderr
        [name] = sfauth.stored_accounts()
        record = (sfauth.home / "accounts" / name).read_text()
        assert "svc-secret" not in record and "clientSecretBinding" in record   # bound, never stored
        sent = len(stub.requests("/token"))
        other = sfauth.run("token", "--refresh", SFAUTH_CLIENT_SECRET="another-clients-secret")
        assert other.returncode == 3, other.stderr
        assert "not the one it signed in with" in other.stderr
        assert len(stub.requests("/token")) == sent                            # nothing went to the server
        right = sfauth.run("token", "--refresh", SFAUTH_CLIENT_SECRET="svc-secret")
        assert right.returncode == OK, right.stderr
        assert "client_secret=svc-secret" in stub.requests("/token")[-1]


def test_a_stored_token_that_no_server_could_have_issued_is_never_printed(sfauth):
    """A record edited or damaged outside sfauth, its token holding a terminal escape: both programs
    refuse it as damaged (exit 1) and print nothing of it (issue 17 §5)."""
    with StubServer() as stub:
        stub_login(sfauth, stub)
    [name] = sfauth.stored_accounts()
    path = sfauth.home / "accounts" / name
    record = json.loads(path.read_text())
    record["accessToken"] = "at\x1b]0;owned\x07"
    path.write_text(json.dumps(record))
    for program in (sfauth.binary, str(sfauth.binary) + "-main"):
        for command in (["token"], ["kube-credential"], ["exec", "--", "true"]):
            result = subprocess.run([program, *command], env=sfauth.env, capture_output=True, text=True, timeout=60)
            assert result.returncode == 1, (program, command, result)
            assert "\x1b" not in result.stdout + result.stderr and "\x07" not in result.stdout + result.stderr
            assert "holds characters no token may hold" in result.stderr, result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make a home that belongs to another user here")
def test_sudo_e_creates_nothing_in_the_users_home(sfauth, tmp_path):
    """`sudo -E sfauth login` keeps the user's HOME: sfauth, running as root, must not create a
    root-owned ~/.local/share/sfauth (and ~/.local) there, which would lock the user out (§4)."""
    home = tmp_path / "alice-home"
    home.mkdir()
    os.chown(home, 4242, 4242)
    env = {k: v for k, v in sfauth.env.items() if k not in ("SFAUTH_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
    env["HOME"] = str(home)
    with StubServer() as stub:
        stub.answer("/token", 200, {"access_token": "at-1", "expires_in": 3600})
        result = subprocess.run([sfauth.binary, "login", "--authorize-url", stub.url("/authorize"), "--token-url", stub.url("/token"),
                                 "--client-id", "svc", "--client-credentials"], env=dict(env, SFAUTH_CLIENT_SECRET="s"),
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result
    line = result.stderr.splitlines()[-1]
    assert f"{home} belongs to user id 4242" in line and "sudo -H" in line, line
    assert list(home.iterdir()) == []                                   # nothing created, nothing root-owned
    # The user's own sfauth (as the user) is unaffected; root's own home still works.
    own = subprocess.run([sfauth.binary, "token"], env=dict(env, HOME=str(tmp_path / "root-home")),
                         capture_output=True, text=True, timeout=60)
    assert own.returncode == 3 and "no account is stored" in own.stderr
