"""The front end: the `sfauth` people run answers the credential hot paths itself when the stored
token is usable — `sfauth token`, `kube-credential`, `git-credential get` (and `store`), `exec` —
and hands everything else to the main program (`sfauth-main`), found beside it or in
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


# ---------------------------------------------------------------------------------------------------
# The other credential hot paths: kube-credential, git-credential get, exec.

GIT_HOST = "git.example"
GIT_REQUEST = f"protocol=https\nhost={GIT_HOST}\n\n"
KUBE_V1BETA1 = json.dumps({"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1beta1",
                           "spec": {"interactive": False}})


def run_with_input(sfauth, program, *args, stdin="", **env):
    return subprocess.run([str(program), *args], env=dict(sfauth.env, **env), input=stdin,
                          capture_output=True, text=True, timeout=60)


def main_program(sfauth):
    """The main program itself, run directly: what the front end must answer exactly like."""
    return pathlib.Path(sfauth.binary).parent / "sfauth-main"


def test_the_front_end_alone_answers_kubectl_as_the_main_program_does(sfauth, signed_in, lone_front):
    for info in ({}, {"KUBERNETES_EXEC_INFO": KUBE_V1BETA1}):
        alone = run(sfauth, lone_front, "kube-credential", **info)
        assert alone.returncode == OK and alone.stderr == "", alone
        assert alone.stdout == run(sfauth, main_program(sfauth), "kube-credential", **info).stdout
        credential = json.loads(alone.stdout)
        assert credential["status"]["token"] == signed_in
        assert credential["status"]["expirationTimestamp"].endswith("Z")
        assert credential["apiVersion"] == json.loads(info.get("KUBERNETES_EXEC_INFO", "{}")).get("apiVersion", "client.authentication.k8s.io/v1")
    supplied = run(sfauth, lone_front, "kube-credential", SFAUTH_ACCESS_TOKEN="from-the-environment")
    assert supplied.returncode == OK and json.loads(supplied.stdout)["status"] == {"token": "from-the-environment"}


def test_the_front_end_alone_answers_git_as_the_main_program_does(sfauth, signed_in, lone_front):
    identifier = json.loads(account_file(sfauth).read_text())["identifier"]
    helper = ["git-credential", "--account", identifier, "--host", "https://" + GIT_HOST, "get"]
    alone = run_with_input(sfauth, lone_front, *helper, stdin=GIT_REQUEST)
    assert alone.returncode == OK and alone.stderr == "", alone
    assert alone.stdout == run_with_input(sfauth, main_program(sfauth), *helper, stdin=GIT_REQUEST).stdout
    lines = alone.stdout.splitlines()
    assert lines[1] == f"password={signed_in}" and lines[2].startswith("password_expiry_utc="), lines
    # Another host: nothing, as from the main program; `store`: nothing to do.
    other = run_with_input(sfauth, lone_front, *helper, stdin="protocol=https\nhost=elsewhere.example\n\n")
    assert (other.returncode, other.stdout, other.stderr) == (OK, "", "")
    store = run_with_input(sfauth, lone_front, "git-credential", "--host", GIT_HOST, "store",
                           stdin=GIT_REQUEST.rstrip("\n") + f"\nusername=u\npassword={signed_in}\n\n")
    assert (store.returncode, store.stdout, store.stderr) == (OK, "", "")
    supplied = run_with_input(sfauth, lone_front, *helper, stdin=GIT_REQUEST, SFAUTH_ACCESS_TOKEN="from-the-environment")
    assert supplied.stdout == "username=oauth2\npassword=from-the-environment\n"
    # Without --account, whether the default account's token may go to this host is the main
    # program's to decide (only to its own server: issue 17 §6).
    assert_handed_over(run_with_input(sfauth, lone_front, "git-credential", "--host", GIT_HOST, "get", stdin=GIT_REQUEST), lone_front)


def test_the_front_end_alone_runs_exec_s_command_as_the_main_program_does(sfauth, server, signed_in, lone_front, tmp_path):
    secrets = {"SFAUTH_CLIENT_SECRET": "never-inherited", "SF_ACCESS_TOKEN": "another-token", "SF_USERNAME": "someone-else"}
    alone = run(sfauth, lone_front, "exec", "--", "env", **secrets)
    assert alone.returncode == OK, alone
    environment = dict(line.split("=", 1) for line in alone.stdout.splitlines())
    assert environment["SF_ACCESS_TOKEN"] == signed_in
    assert "SFAUTH_CLIENT_SECRET" not in environment and "SF_USERNAME" not in environment  # the account has none
    direct = run(sfauth, main_program(sfauth), "exec", "--", "env", **secrets)
    assert sorted(alone.stdout.splitlines()) == sorted(direct.stdout.splitlines())
    # The command's own exit status; a command that cannot start: 127 or 126 and the same line.
    assert run(sfauth, lone_front, "exec", "--", "sh", "-c", "exit 7").returncode == 7
    missing = run(sfauth, lone_front, "exec", "--", "no-such-command-here")
    assert (missing.returncode, missing.stderr) == (127, "sfauth: cannot run no-such-command-here: No such file or directory.\n")
    assert missing.stderr == run(sfauth, main_program(sfauth), "exec", "--", "no-such-command-here").stderr
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\n")
    assert run(sfauth, lone_front, "exec", "--", str(script)).returncode == 126


def test_a_name_is_found_through_the_stores_index_and_a_stale_index_goes_to_the_main_program(sfauth, server, signed_in, lone_front):
    again = login(sfauth, server["SFAUTH_TEST_PASSWORD_CLIENT_ID"], "--password", "--username", "alice",
                  "--alias", "work", stdin=PASSWORD, SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_PASSWORD_CLIENT_SECRET"])
    assert again.returncode == OK, again.stderr
    work = run(sfauth, lone_front, "token", "--account", "work")
    assert work.returncode == OK, work
    for name in ("alice", "work"):  # by username and by alias, through the index the store keeps
        for args in (["kube-credential", "--account", name], ["exec", f"--account={name}", "--", "printenv", "SF_ACCESS_TOKEN"]):
            alone = run(sfauth, lone_front, *args)
            assert alone.returncode == OK and work.stdout.strip() in alone.stdout, (args, alone)
    # An account file written behind the store's back (an older sfauth, a person): the index is
    # stale, so the front end hands the name over; the main program answers and rebuilds the index.
    accounts = sfauth.home / "accounts"
    [mine] = [p for p in accounts.iterdir() if json.loads(p.read_text()).get("alias") == "work"]
    copy = json.loads(mine.read_text())
    copy["identifier"], copy["alias"], copy["username"] = copy["identifier"] + "-copy", None, "copied"
    (accounts / "copy.tmp").write_text(json.dumps(copy))
    (accounts / "copy.tmp").rename(accounts / (mine.name[:-len(".json")] + "-copy.json"))
    assert_handed_over(run(sfauth, lone_front, "token", "--account", "work"), lone_front)
    assert sfauth.run("token", "--account", "copied").stdout == work.stdout
    assert run(sfauth, lone_front, "token", "--account", "work").stdout == work.stdout
    assert run(sfauth, lone_front, "token", "--account", "copied").stdout == work.stdout


HOT_PATHS = {
    "kube-credential": (["kube-credential"], ""),
    "git-credential get": (["git-credential", "--host", GIT_HOST, "get"], GIT_REQUEST),
    "exec": (["exec", "--", "true"], ""),
}


@pytest.mark.parametrize("command", sorted(HOT_PATHS))
@pytest.mark.parametrize("case", ["other arguments", "expired", "login required", "bad leeway", "bad storage",
                                  "bad timeout", "shared directory", "damaged file", "no default", "no such name",
                                  "several accounts", "malformed KUBERNETES_EXEC_INFO", "bad --host"])
def test_whatever_the_front_end_is_not_sure_of_on_the_other_hot_paths_goes_to_the_main_program(
        sfauth, server, signed_in, lone_front, command, case):
    args, stdin = HOT_PATHS[command]
    path = account_file(sfauth)
    record = json.loads(path.read_text())
    if command == "git-credential get" and case not in ("no default", "no such name", "several accounts"):
        args = args[:1] + ["--account", record["identifier"]] + args[1:]   # what setup-git writes
    env = {}
    expected = OK
    if case == "other arguments":
        args = {"kube-credential": ["kube-credential", "--account", record["identifier"], "--account", record["identifier"]],
                "git-credential get": ["git-credential", "--host", GIT_HOST, "get", "--account", record["identifier"]],
                "exec": ["exec", "true"]}[command]
    elif case == "expired":
        record["expiresAt"] = 0
    elif case == "login required":
        record["status"], expected = "login_required", 3
    elif case == "bad leeway":
        env, expected = {"SFAUTH_TOKEN_LEEWAY": "soon"}, USAGE
    elif case == "bad storage":
        env, expected = {"SFAUTH_STORAGE": "cloud"}, USAGE
    elif case == "bad timeout":
        env, expected = {"SFAUTH_HTTP_TIMEOUT": "0"}, USAGE
    elif case == "shared directory":
        os.chmod(sfauth.home, 0o770)
        expected = 1
    elif case == "damaged file":
        path.write_text("{not json")
        expected = 1
    elif case == "no default":
        (sfauth.home / "default").unlink()
        expected = USAGE
    elif case == "no such name":
        args, expected = args[:1] + ["--account", "nobody"] + args[1:], USAGE
    elif case == "several accounts":
        record["alias"] = "shared"
        path.write_text(json.dumps(record))
        twin = dict(record, identifier=record["identifier"] + "-twin")
        (path.parent / (path.name[:-len(".json")] + "-twin.json")).write_text(json.dumps(twin))
        args, expected = args[:1] + ["--account", "shared"] + args[1:], USAGE
    elif case == "malformed KUBERNETES_EXEC_INFO":
        if command != "kube-credential":
            pytest.skip("kube-credential's input")
        env, expected = {"KUBERNETES_EXEC_INFO": "{not json"}, USAGE
    elif case == "bad --host":
        if command != "git-credential get":
            pytest.skip("git-credential's input")
        args, expected = ["git-credential", "--account", record["identifier"], "--host", "https://git.example/path", "get"], USAGE
    if case not in ("damaged file", "several accounts"):
        path.write_text(json.dumps(record))

    assert_handed_over(run_with_input(sfauth, lone_front, *args, stdin=stdin, **env), lone_front)
    # The main program, beside the real front end, answers as it always did — from the same standard
    # input (git's request, read by the main program only).
    answered = run_with_input(sfauth, sfauth.binary, *args, stdin=stdin,
                              SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"], **env)
    assert answered.returncode == expected, answered
    if command == "git-credential get" and expected == OK:
        assert answered.stdout.splitlines()[1].startswith("password="), answered


# ---------------------------------------------------------------------------------------------------
# Docker's credential helper: the same program, run as docker-credential-sfauth.

def test_run_as_docker_credential_sfauth_it_is_the_docker_credential_command(sfauth, signed_in, tmp_path):
    # An installed prefix, as the .deb lays it out: bin/docker-credential-sfauth -> sfauth.
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "libexec" / "sfauth").mkdir(parents=True)
    shutil.copy2(sfauth.binary, prefix / "bin" / "sfauth")
    shutil.copy2(pathlib.Path(sfauth.binary).parent / "sfauth-main", prefix / "libexec" / "sfauth" / "sfauth-main")
    helper = prefix / "bin" / "docker-credential-sfauth"
    helper.symlink_to("sfauth")
    setup = run(sfauth, prefix / "bin" / "sfauth", "setup-docker", "--registry", "registry.example",
                "--docker-config", str(tmp_path / "docker"))
    assert setup.returncode == OK, setup.stderr
    listed = run(sfauth, helper, "list")                        # `sfauth list` is no command: it was turned into docker-credential
    assert (listed.returncode, listed.stdout) == (OK, '{"registry.example":"oauth2accesstoken"}\n'), listed
    answer = run_with_input(sfauth, helper, "get", stdin="registry.example")
    assert answer.returncode == OK, answer.stderr
    assert json.loads(answer.stdout) == {"ServerURL": "registry.example", "Username": "oauth2accesstoken", "Secret": signed_in}
    unknown = run_with_input(sfauth, helper, "get", stdin="other.example")
    assert (unknown.returncode, unknown.stdout) == (1, "credentials not found in native keychain\n")
    # The main program linked under that name answers the same way; the name alone decides.
    direct = tmp_path / "direct" / "docker-credential-sfauth"
    direct.parent.mkdir()
    direct.symlink_to(main_program(sfauth))
    assert run(sfauth, direct, "list").stdout == listed.stdout
    renamed = tmp_path / "renamed" / "docker-credential-sfauth-old"
    renamed.parent.mkdir()
    renamed.symlink_to(prefix / "bin" / "sfauth")
    other = run(sfauth, renamed, "list")
    assert other.returncode == USAGE and "there is no command 'list'" in other.stderr


def test_the_front_end_alone_answers_docker_s_get_as_the_main_program_does(sfauth, signed_in, lone_front, tmp_path):
    setup = run(sfauth, sfauth.binary, "setup-docker", "--registry", "registry.example", "--docker-config", str(tmp_path / "docker"))
    assert setup.returncode == OK, setup.stderr
    helper = lone_front.parent / "docker-credential-sfauth"
    helper.symlink_to(lone_front)
    alone = run_with_input(sfauth, helper, "get", stdin="registry.example\n")
    assert alone.returncode == OK and alone.stderr == "", alone
    direct = run_with_input(sfauth, main_program(sfauth), "docker-credential", "get", stdin="registry.example\n")
    assert alone.stdout == direct.stdout
    assert json.loads(alone.stdout) == {"ServerURL": "registry.example", "Username": "oauth2accesstoken", "Secret": signed_in}
    supplied = run_with_input(sfauth, helper, "get", stdin="registry.example", SFAUTH_ACCESS_TOKEN="from-the-environment")
    assert json.loads(supplied.stdout)["Secret"] == "from-the-environment"
    # A registry not set up, or no registry at all: the protocol's not-found answer, alone too.
    for request in ("other.example:5000", "", "ftp://registry.example"):
        answer = run_with_input(sfauth, helper, "get", stdin=request)
        assert (answer.returncode, answer.stdout, answer.stderr) == (1, "credentials not found in native keychain\n", ""), request
    # Whatever it is not sure of goes to the main program — which reads the request again.
    assert_handed_over(run_with_input(sfauth, helper, "list"), lone_front)
    path = account_file(sfauth)
    record = json.loads(path.read_text())
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))
    assert_handed_over(run_with_input(sfauth, helper, "get", stdin="registry.example"), lone_front)
    renewed = run_with_input(sfauth, sfauth.binary, "docker-credential", "get", stdin="registry.example",
                             SFAUTH_CLIENT_SECRET=sfauth.server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"])
    assert renewed.returncode == OK, renewed.stderr
    assert json.loads(renewed.stdout)["Secret"] not in ("", signed_in)
    (sfauth.home / "docker-registries.json").write_text("{damaged")
    assert_handed_over(run_with_input(sfauth, helper, "get", stdin="registry.example"), lone_front)
    damaged = run_with_input(sfauth, sfauth.binary, "docker-credential", "get", stdin="registry.example")
    assert damaged.returncode == 1 and "is not sfauth's record of Docker registries" in damaged.stderr
