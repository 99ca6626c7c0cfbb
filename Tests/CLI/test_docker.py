"""`docker-credential-sfauth` as the real skopeo's credential helper, and `sfauth setup-docker`.

Real skopeo (Debian's; containers/image reads `credHelpers` from `$DOCKER_CONFIG/config.json`)
inspects `team/app:latest` on a loopback registry stand-in (registry_server.py: a token-auth
registry that accepts only access tokens the test authorization server accepts), finding
`docker-credential-sfauth` — a link to the built `sfauth` — on its PATH, as Docker clients do.
HOME, XDG_CONFIG_HOME, XDG_RUNTIME_DIR and DOCKER_CONFIG point at scratch directories:
containers/image also reads `$XDG_RUNTIME_DIR/containers/auth.json`, `~/.docker/config.json` and
`~/.dockercfg`, and nothing of whoever runs the tests may leak in. Accounts are signed in with the
client credentials grant, so no browser is involved.
"""
import json
import os
import shutil
import stat
import subprocess
import urllib.request

import pytest

from registry_server import MANIFEST_DIGEST, RegistryServer

OK, STORE, USAGE, LOGIN_REQUIRED = 0, 1, 2, 3
NOT_FOUND = "credentials not found in native keychain"
HELPER = "docker-credential-sfauth"

@pytest.fixture
def registry(server):
    stand_in = RegistryServer(server["SFAUTH_TEST_RESOURCE_URL"])
    yield stand_in
    stand_in.stop()


class Docker:
    """A scratch user for Docker clients: their directories, and a PATH with the helper link."""

    def __init__(self, sfauth, tmp_path):
        self.sfauth = sfauth
        self.user = tmp_path / "user"
        self.config_dir = tmp_path / "docker-config"
        self.config = self.config_dir / "config.json"
        self.bin = tmp_path / "bin"
        runtime = tmp_path / "runtime"
        for directory in (self.user, self.bin, runtime, tmp_path / "xdg-config", tmp_path / "cache"):
            directory.mkdir(mode=0o700)
        (self.bin / HELPER).symlink_to(sfauth.binary)
        self.env = dict(sfauth.env, HOME=str(self.user), XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
                        XDG_RUNTIME_DIR=str(runtime), DOCKER_CONFIG=str(self.config_dir),
                        XDG_CACHE_HOME=str(tmp_path / "cache"), PATH=f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}")
        for name in ("REGISTRY_AUTH_FILE", "CONTAINERS_REGISTRIES_CONF", "CONTAINERS_CONF"):
            self.env.pop(name, None)

    def sfauth_run(self, *args, input="", **extra):
        return subprocess.run([self.sfauth.binary, *args], env=dict(self.env, **extra), input=input,
                              capture_output=True, text=True, timeout=90)

    def helper(self, operation, input="", **extra):
        """The helper as a client runs it: by name, found on PATH."""
        return subprocess.run([HELPER, operation], env=dict(self.env, **extra), input=input,
                              capture_output=True, text=True, timeout=90)

    def skopeo(self, *args, **extra):
        # Not a skip: scripts/install-test-deps installs it, and a missing client is a failure.
        assert shutil.which("skopeo", path=self.env["PATH"]), "skopeo is not installed: run scripts/install-test-deps"
        return subprocess.run(["skopeo", *args], env=dict(self.env, **extra), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=120)

    def inspect(self, registry, **extra):
        return self.skopeo("inspect", "--tls-verify=false", registry.image, **extra)

    def sign_in(self, alias="svc"):
        result = self.sfauth_run("login", "--issuer", self.sfauth.server["SFAUTH_TEST_ISSUER"],
                                 "--client-id", self.sfauth.server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "--client-credentials",
                                 "--alias", alias, SFAUTH_CLIENT_SECRET=self.sfauth.server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"])
        assert result.returncode == OK, result.stderr
        token = self.sfauth_run("token", "--account", alias)
        assert token.returncode == OK, token.stderr
        return token.stdout.strip()

    def setup(self, *args, expect=OK):
        result = self.sfauth_run("setup-docker", *args)
        assert result.returncode == expect, (result.stdout, result.stderr)
        return result

    def registrations(self):
        path = self.sfauth.home / "docker-registries.json"
        return json.loads(path.read_text())["registries"] if path.exists() else {}

    def account_file(self, alias="svc"):
        for path in (self.sfauth.home / "accounts").iterdir():
            if json.loads(path.read_text()).get("alias") == alias:
                return path
        raise AssertionError(f"no account {alias}")


@pytest.fixture
def docker(sfauth, tmp_path):
    return Docker(sfauth, tmp_path)


def identifier_of(docker, alias="svc"):
    return json.loads(docker.account_file(alias).read_text())["identifier"]


# ---------------------------------------------------------------------------------------------------
# setup-docker

DOCKERS_OWN = ('{\n\t"auths": {\n\t\t"other.example": {\n\t\t\t"auth": "dXNlcjpwYXNz"\n\t\t}\n\t},\n'
               '\t"credHelpers": {\n\t\t"gcr.example": "gcloud"\n\t},\n\t"psFormat": "table {{.ID}}",\n'
               '\t"proxies": {"default": {"httpProxy": "http://127.0.0.1:3128"}},\n\t"number": 1.50e+3\n}\n')


def test_setup_docker_adds_its_cred_helper_and_keeps_everything_else(docker, registry):
    docker.sign_in()
    docker.config_dir.mkdir()
    docker.config.write_text(DOCKERS_OWN)
    docker.config.chmod(0o640)
    done = docker.setup("--registry", registry.host, "--account", "svc")
    assert f"ask docker-credential-sfauth for {registry.host}, with the account svc" in done.stdout
    assert f"skopeo inspect docker://{registry.host}/" in done.stdout and "docker pull" in done.stdout
    assert done.stderr == ""                                   # the helper is on PATH: no warning
    text = docker.config.read_text()
    # Spliced in, in Docker's own layout; not a byte of the rest changed.
    assert text == DOCKERS_OWN.replace('"gcloud"\n', f'"gcloud",\n\t\t"{registry.host}": "sfauth"\n')
    assert json.loads(text)["credHelpers"] == {"gcr.example": "gcloud", registry.host: "sfauth"}
    assert stat.S_IMODE(docker.config.stat().st_mode) == 0o640  # the mode is kept
    # The account pinned by its identifier (no alias can take it over), beside the accounts, 0600.
    assert docker.registrations() == {registry.host: {"account": identifier_of(docker), "username": "oauth2accesstoken"}}
    assert stat.S_IMODE((docker.sfauth.home / "docker-registries.json").stat().st_mode) == 0o600
    # Again, as an identity token: the same key, the mode changes, nothing else.
    docker.setup("--registry", f"http://{registry.host}/", "--identity-token")
    assert docker.config.read_text() == text
    assert docker.registrations()[registry.host]["username"] == "<token>"


def test_a_new_config_json_is_private_and_docker_hub_gets_both_keys(docker):
    docker.sign_in()
    docker.setup("--registry", "docker.io")
    assert stat.S_IMODE(docker.config_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(docker.config.stat().st_mode) == 0o600
    assert json.loads(docker.config.read_text()) == {
        "credHelpers": {"docker.io": "sfauth", "https://index.docker.io/v1/": "sfauth"}}
    # The Docker CLI asks by its name for Docker Hub: the same record answers.
    answer = docker.helper("get", input="https://index.docker.io/v1/")
    assert answer.returncode == OK and json.loads(answer.stdout)["ServerURL"] == "https://index.docker.io/v1/"
    # --docker-config instead of DOCKER_CONFIG; the default place is ~/.docker.
    elsewhere = docker.user / "elsewhere"
    docker.setup("--registry", "r.example:5000", "--docker-config", str(elsewhere))
    assert json.loads((elsewhere / "config.json").read_text()) == {"credHelpers": {"r.example:5000": "sfauth"}}
    no_variable = docker.sfauth_run("setup-docker", "--registry", "r.example", DOCKER_CONFIG="")
    assert no_variable.returncode == OK, no_variable.stderr
    assert json.loads((docker.user / ".docker" / "config.json").read_text()) == {"credHelpers": {"r.example": "sfauth"}}


@pytest.mark.parametrize("content", ["{not json", "[]", '{"credHelpers": ["x"]}', '{"a": 1} trailing', "\ufeff{}"])
def test_a_config_json_that_is_not_a_json_object_is_refused_and_left_as_it_is(docker, registry, content):
    docker.sign_in()
    docker.config_dir.mkdir()
    docker.config.write_text(content)
    before = docker.config.read_bytes()
    refused = docker.setup("--registry", registry.host, expect=USAGE)
    assert refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"sfauth: {docker.config} cannot be changed: ") and "nothing was changed" in line, line
    assert docker.config.read_bytes() == before
    assert docker.registrations() == {}


def test_setup_docker_refuses_what_is_not_a_registry_or_an_account(docker, registry):
    docker.sign_in()
    for bad in (f"{registry.host}/team", "ssh://r.example", "user@r.example", "r.example:99999"):
        refused = docker.setup("--registry", bad, expect=USAGE)
        assert len(refused.stderr.splitlines()) == 1 and refused.stderr.startswith("sfauth: "), refused.stderr
    repository = docker.setup("--registry", f"{registry.host}/team", expect=USAGE)
    assert "give the registry alone" in repository.stderr
    both = docker.setup("--registry", registry.host, "--identity-token", "--username", "u", expect=USAGE)
    assert "--identity-token or --username" in both.stderr
    unknown = docker.setup("--registry", registry.host, "--account", "nobody", expect=USAGE)
    assert "there is no stored account 'nobody'" in unknown.stderr
    assert not docker.config.exists() and docker.registrations() == {}


def test_setup_docker_needs_an_account(docker, registry):
    refused = docker.setup("--registry", registry.host, expect=LOGIN_REQUIRED)
    assert "no account is stored" in refused.stderr
    assert not docker.config.exists()


def test_setup_docker_says_how_to_put_the_helper_on_path(docker, registry):
    docker.sign_in()
    result = docker.sfauth_run("setup-docker", "--registry", registry.host, PATH="/usr/bin:/bin")
    assert result.returncode == OK, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("sfauth: warning: there is no docker-credential-sfauth on your PATH") and "ln -s " in line, line
    assert os.path.realpath(docker.sfauth.binary) in line


def test_remove_takes_out_sfauths_entry_and_record_only(docker, registry):
    token = docker.sign_in()
    docker.config_dir.mkdir()
    docker.config.write_text(DOCKERS_OWN)
    docker.setup("--registry", registry.host)
    assert docker.inspect(registry).returncode == OK
    removed = docker.setup("--registry", registry.host, "--remove")
    assert "no longer ask sfauth" in removed.stdout
    assert json.loads(docker.config.read_text())["credHelpers"] == {"gcr.example": "gcloud"}
    assert docker.registrations() == {}
    again = docker.setup("--registry", registry.host, "--remove")
    assert "Nothing to undo" in again.stdout
    # Another helper's entry is left alone.
    other = docker.setup("--registry", "gcr.example", "--remove")
    assert "names another helper (gcloud)" in other.stdout
    assert json.loads(docker.config.read_text())["credHelpers"] == {"gcr.example": "gcloud"}
    # The account stays signed in; skopeo no longer gets its token.
    assert docker.sfauth_run("token", "--account", "svc").stdout.strip() == token
    anonymous = docker.inspect(registry)
    assert anonymous.returncode != OK and "no anonymous access" in anonymous.stderr


# ---------------------------------------------------------------------------------------------------
# skopeo through the helper

@pytest.mark.parametrize("mode", ["password", "username", "identity token"])
def test_skopeo_inspects_the_image_with_the_accounts_token(docker, registry, mode):
    token = docker.sign_in()
    args = {"password": [], "username": ["--username", "robot"], "identity token": ["--identity-token"]}[mode]
    if mode == "username":
        registry.username = "robot"
    docker.setup("--registry", registry.host, "--account", "svc", *args)
    result = docker.inspect(registry)
    assert result.returncode == OK, result.stderr
    inspected = json.loads(result.stdout)
    assert inspected["Digest"] == MANIFEST_DIGEST and inspected["RepoTags"] == ["latest"]
    assert token not in result.stdout + result.stderr            # never shown
    requests = registry.token_requests()
    assert requests, "skopeo never asked the registry's token endpoint"
    if mode == "identity token":
        # Traded at the token endpoint as an OAuth 2 refresh_token (POST, chunked form).
        assert all(r == ("POST", "identity-token", None, token, 200) for r in requests), requests
    else:
        user = "robot" if mode == "username" else "oauth2accesstoken"
        assert all(r == ("GET", "basic", user, token, 200) for r in requests), requests


def test_the_registry_refuses_a_wrong_username(docker, registry):
    """The stand-in checks the name as GCR does: a test of the username that can fail."""
    docker.sign_in()
    docker.setup("--registry", registry.host, "--username", "someone-else")
    result = docker.inspect(registry)
    assert result.returncode != OK
    assert registry.token_requests()[-1][1:3] == ("basic", "someone-else") and registry.token_requests()[-1][4] == 401


def test_an_expired_token_is_renewed_by_get(docker, registry):
    first = docker.sign_in()
    docker.setup("--registry", registry.host)
    path = docker.account_file()
    record = json.loads(path.read_text())
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))
    # The client-credentials account renews itself with its secret, as sfauth token would.
    result = docker.inspect(registry, SFAUTH_CLIENT_SECRET=docker.sfauth.server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"])
    assert result.returncode == OK, result.stderr
    renewed = json.loads(path.read_text())["accessToken"]
    assert renewed != first
    assert {r[3] for r in registry.token_requests()} == {renewed}
    assert registry.accepts(renewed)


def test_an_unconfigured_registry_gets_no_credentials(docker, registry):
    """credHelpers names sfauth, but sfauth has no account for the registry: the protocol's not-found
    answer, and skopeo goes on anonymously — to the registry's own 401."""
    docker.sign_in()
    docker.setup("--registry", "other.example:5000")
    docker.config.write_text(json.dumps({"credHelpers": {registry.host: "sfauth"}}))
    answer = docker.helper("get", input=registry.host)
    assert (answer.returncode, answer.stdout, answer.stderr) == (STORE, NOT_FOUND + "\n", "")
    result = docker.inspect(registry)
    assert result.returncode != OK
    assert "no anonymous access" in result.stderr, result.stderr
    assert [r[:2] for r in registry.token_requests()] == [("GET", "anonymous")] * len(registry.token_requests())
    # Nothing on stdin, or no registry at all in it: not found either.
    for request in ("", "not a registry\n", "ftp://x.example"):
        answer = docker.helper("get", input=request)
        assert (answer.returncode, answer.stdout) == (STORE, NOT_FOUND + "\n"), request


def test_when_a_sign_in_is_needed_skopeo_shows_the_command(docker, registry):
    token = docker.sign_in()
    docker.setup("--registry", registry.host)
    path = docker.account_file()
    record = json.loads(path.read_text())
    record["status"] = "login_required"
    path.write_text(json.dumps(record))
    answer = docker.helper("get", input=registry.host)
    assert answer.returncode == LOGIN_REQUIRED
    [line] = answer.stderr.splitlines()
    assert line.startswith(f"sfauth: docker-credential-sfauth has no token for {registry.host}: ") and "sfauth login" in line, line
    assert answer.stdout == line + "\n"                         # clients show stdout
    result = docker.inspect(registry)
    assert result.returncode != OK
    assert "sfauth login" in result.stderr and f"no token for {registry.host}" in result.stderr, result.stderr
    assert registry.token_requests() == []                      # no credentials went out
    assert token not in result.stderr


def test_an_account_signed_out_since_setup_asks_for_a_sign_in(docker, registry):
    docker.sign_in()
    docker.setup("--registry", registry.host)
    assert docker.sfauth_run("logout", "svc", "--local-only").returncode == OK
    answer = docker.helper("get", input=registry.host)
    assert answer.returncode == LOGIN_REQUIRED
    assert "is no longer stored" in answer.stderr and f"sfauth setup-docker --registry {registry.host}" in answer.stderr


# ---------------------------------------------------------------------------------------------------
# store, erase, list, and anything else

def test_store_is_refused_without_showing_the_secret(docker, registry):
    token = docker.sign_in()
    docker.setup("--registry", registry.host)
    request = json.dumps({"ServerURL": registry.host, "Username": "alice", "Secret": "s3cret-password"})
    refused = docker.helper("store", input=request + " " * 200_000)   # all of it is read
    assert refused.returncode == USAGE
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"sfauth: store refused: sfauth keeps no registry passwords (for {registry.host} too)") and "setup-docker" in line, line
    assert refused.stdout == line + "\n"
    assert "s3cret-password" not in refused.stdout + refused.stderr and token not in refused.stdout + refused.stderr
    # What get handed out, stored back (docker login does that): nothing to keep, so yes.
    same = json.dumps({"ServerURL": registry.host, "Username": "oauth2accesstoken", "Secret": token})
    stored = docker.helper("store", input=same)
    assert (stored.returncode, stored.stdout, stored.stderr) == (OK, "", "")


def test_erase_stops_answering_for_the_registry_and_list_shows_what_answers(docker, registry):
    token = docker.sign_in()
    docker.setup("--registry", registry.host, "--identity-token")
    docker.setup("--registry", "r.example")
    listed = docker.helper("list")
    assert listed.returncode == OK
    assert json.loads(listed.stdout) == {registry.host: "<token>", "r.example": "oauth2accesstoken"}
    # skopeo logout sends erase for the registry.
    logout = docker.skopeo("logout", registry.host)
    assert logout.returncode == OK, logout.stderr
    assert registry.host not in docker.registrations() and "r.example" in docker.registrations()
    assert json.loads(docker.helper("list").stdout) == {"r.example": "oauth2accesstoken"}
    assert docker.sfauth_run("token", "--account", "svc").stdout.strip() == token   # still signed in
    erased = docker.helper("erase", input="r.example\n")
    assert erased.returncode == OK and erased.stdout == ""
    [line] = erased.stderr.splitlines()
    assert "r.example gets no more tokens from sfauth (the account stays signed in)" in line
    assert f"sfauth setup-docker --registry r.example --account {identifier_of(docker)}" in line
    again = docker.helper("erase", input="r.example")
    assert (again.returncode, again.stdout) == (STORE, NOT_FOUND + "\n")
    assert docker.helper("list").stdout == "{}\n"


@pytest.mark.parametrize("args", [["version"], ["GET"], [], ["get", "extra"]])
def test_anything_else_is_a_usage_error(docker, args):
    result = subprocess.run([HELPER, *args], env=docker.env, input="", capture_output=True, text=True, timeout=60)
    assert result.returncode == USAGE, result
    assert result.stderr.startswith("sfauth: ") and result.stdout in ("", result.stderr.splitlines()[0] + "\n")


def test_a_registry_can_get_a_per_call_token_narrower_than_the_accounts(docker, registry):
    """setup-docker --scope: the registry gets a token for that scope from the account's refresh token
    (the test server narrows scope on refresh, RFC 6749 §6), the same one `sfauth token --scope` gives,
    never the account's own; the front end leaves such a registry to the main program."""
    login = docker.sfauth_run(*docker.sfauth.login_args(scope="openid profile"))
    assert login.returncode == OK, login.stderr
    own = docker.sfauth_run("token").stdout.strip()
    done = docker.setup("--registry", registry.host, "--scope", "openid")
    assert "a token for scope 'openid' from its sign-in as the password" in done.stdout
    [entry] = docker.registrations().values()
    assert entry["target"] == {"scopes": ["openid"]}
    result = docker.inspect(registry)
    assert result.returncode == OK, result.stderr
    sent = {r[3] for r in registry.token_requests()}
    narrow = docker.sfauth_run("token", "--scope", "openid").stdout.strip()
    assert sent == {narrow} and narrow != own
    request = urllib.request.Request(docker.sfauth.server["SFAUTH_TEST_RESOURCE_URL"], headers={"Authorization": f"Bearer {narrow}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.loads(response.read())["scope"] == "openid"
    # Never wider than the sign-in: refused by the server (5), with the sign-in that would grant it.
    docker.setup("--registry", registry.host, "--scope", "openid email")
    refused = docker.helper("get", input=registry.host)
    assert refused.returncode == 5 and "sfauth login" in refused.stdout and refused.stdout == refused.stderr, refused
