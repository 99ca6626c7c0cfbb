"""The front end: the `sfauth` people run answers `sfauth token` itself when the stored token is
usable and hands everything else to the main program (`sfauth-main`), found beside it or in
`../libexec/sfauth/`.

The proof that an answer came from the front end alone: a copy of it with no main program anywhere
near still prints the token, and exits 9 ("sfauth itself is broken") for whatever it hands over.
"""
import json
import os
import pathlib
import shutil
import subprocess
import time

import pytest

from test_grants import login
from test_login import OK, USAGE

LOCAL_FAULT = 9
PASSWORD = "alice-password\n"  # the test server's password for alice


@pytest.fixture
def signed_in(sfauth, server):
    """A client-credentials account (no browser needed) and its token."""
    result = login(sfauth, server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "--client-credentials",
                   SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"])
    assert result.returncode == OK, result.stderr
    token = sfauth.run("token")
    assert token.returncode == OK, token.stderr
    return token.stdout.strip()


@pytest.fixture
def lone_front(sfauth, tmp_path):
    """A copy of the front end with no main program to hand anything to."""
    path = tmp_path / "lone" / "sfauth"
    path.parent.mkdir()
    shutil.copy2(sfauth.binary, path)
    return path


def run(sfauth, program, *args, **env):
    return subprocess.run([str(program), *args], env=dict(sfauth.env, **env), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


def account_file(sfauth):
    [name] = sfauth.stored_accounts()
    return sfauth.home / "accounts" / name


def assert_handed_over(result, lone_front):
    """The front end did not answer: it looked for the main program and said so, in one line."""
    assert result.returncode == LOCAL_FAULT, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("sfauth: Its main program could not be started")
    assert str(lone_front.parent / "sfauth-main") in lines[0] and "reinstall sfauth" in lines[0]


def test_the_front_end_alone_prints_a_usable_token(sfauth, signed_in, lone_front):
    alone = run(sfauth, lone_front, "token")
    assert alone.returncode == OK, alone.stderr
    assert alone.stdout == signed_in + "\n" and alone.stderr == ""
    # A supplied token wins over the stored one there too.
    supplied = run(sfauth, lone_front, "token", SFAUTH_ACCESS_TOKEN="from-the-environment")
    assert (supplied.returncode, supplied.stdout) == (OK, "from-the-environment\n")


def test_the_front_end_alone_finds_an_account_by_name(sfauth, server, signed_in, lone_front):
    # A second account, the default now; the first is selected by its alias or its identifier.
    first = json.loads(account_file(sfauth).read_text())
    again = login(sfauth, server["SFAUTH_TEST_PASSWORD_CLIENT_ID"], "--password", "--username", "alice",
                  "--alias", "alice", stdin=PASSWORD,
                  SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_PASSWORD_CLIENT_SECRET"])
    assert again.returncode == OK, again.stderr
    assert (sfauth.home / "default").read_text().strip() != first["identifier"]
    alice = run(sfauth, lone_front, "token", "--account", "alice")
    assert alice.returncode == OK and alice.stdout.strip() not in ("", signed_in), alice
    for args in (["token", "--account", first["identifier"]], ["token", f"--account={first['identifier']}"]):
        alone = run(sfauth, lone_front, *args)
        assert (alone.returncode, alone.stdout) == (OK, signed_in + "\n"), (args, alone)
    # A name that selects nothing, or an option the parser would read differently: the main program's.
    for args in (["token", "--account", "nobody"], ["token", "--account", "-x"], ["token", "--account="]):
        assert_handed_over(run(sfauth, lone_front, *args), lone_front)


@pytest.mark.parametrize("case", ["other arguments", "expired", "within the leeway", "login required",
                                  "bad leeway", "bad storage", "bad timeout", "shared directory",
                                  "damaged file", "no default"])
def test_whatever_the_front_end_is_not_sure_of_goes_to_the_main_program(sfauth, server, signed_in, lone_front, case):
    path = account_file(sfauth)
    record = json.loads(path.read_text())
    args, env = ["token"], {}
    if case == "other arguments":
        args = ["token", "--json"]
    elif case == "expired":
        record["expiresAt"] = 0
    elif case == "within the leeway":
        # An hour-long token with 30 s left: within the default leeway (60 s).
        record["issuedAt"], record["expiresAt"] = int(time.time()) - 3570, int(time.time()) + 30
    elif case == "login required":
        record["status"] = "login_required"
    elif case == "bad leeway":
        env = {"SFAUTH_TOKEN_LEEWAY": "soon"}
    elif case == "bad storage":
        env = {"SFAUTH_STORAGE": "cloud"}
    elif case == "bad timeout":
        env = {"SFAUTH_HTTP_TIMEOUT": "0"}
    elif case == "shared directory":
        os.chmod(sfauth.home, 0o770)
    elif case == "damaged file":
        path.write_text("{not json")
    elif case == "no default":
        (sfauth.home / "default").unlink()
    if case != "damaged file":
        path.write_text(json.dumps(record))

    assert_handed_over(run(sfauth, lone_front, *args, **env), lone_front)
    # The main program, beside the real front end, answers as it always did (the secret renews a
    # client-credentials account's token).
    answered = sfauth.run(*args, SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"], **env)
    expected = {"other arguments": OK, "expired": OK, "within the leeway": OK, "login required": 3,
                "bad leeway": USAGE, "bad storage": USAGE, "bad timeout": USAGE, "shared directory": 1,
                "damaged file": 1, "no default": USAGE}[case]
    assert answered.returncode == expected, answered.stderr


def test_every_other_command_runs_the_main_program_with_the_front_ends_path(sfauth, signed_in, tmp_path):
    # An installed prefix: bin/sfauth and libexec/sfauth/sfauth-main, reached through a symbolic link
    # (as from /usr/local/bin), named by the path people call in what sfauth writes for other tools.
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "libexec" / "sfauth").mkdir(parents=True)
    shutil.copy2(sfauth.binary, prefix / "bin" / "sfauth")
    shutil.copy2(pathlib.Path(sfauth.binary).parent / "sfauth-main", prefix / "libexec" / "sfauth" / "sfauth-main")
    link = tmp_path / "on-path" / "sfauth"
    link.parent.mkdir()
    link.symlink_to(prefix / "bin" / "sfauth")

    version = run(sfauth, link, "--version")
    assert version.returncode == OK and version.stdout.strip(), version
    token = run(sfauth, link, "token")
    assert (token.returncode, token.stdout.strip()) == (OK, signed_in)
    stanza = run(sfauth, link, "kubeconfig", "--name", "u")
    assert stanza.returncode == OK, stanza.stderr
    assert f'command: "{prefix / "bin" / "sfauth"}"' in stanza.stdout
    # Usage errors and their exit codes come from the main program, unchanged.
    wrong = run(sfauth, link, "token", "--json", "--env")
    assert wrong.returncode == USAGE and wrong.stderr.startswith("sfauth: ")
