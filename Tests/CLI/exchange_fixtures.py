"""Fixtures and helpers for tests of per-call targets (`sfauth token --scope/--audience/--resource/--exchange`,
issue 20) against the token-exchange test server, idpyoidc (Tests/Server/idpy_server.py, Tests/Server/IDPY.md),
and NanoIDP's client with allowed resources (Tests/Server/NANOIDP.md):

    from exchange_fixtures import idpy_server, idpy_account, jwt_claims  # noqa: F401

`idpy_server(**options)` (function-scoped factory): starts a private Tests/Server/idpy_server.py with the
flags the options name (`rotate=True` -> --rotate, `access_token_lifetime=5`, `redirect_uri=[...]`,
`audience=[...]`, `resource=[...]`) and returns its IDPY_* variables as a dict (IDPY_URL, IDPY_ISSUER,
IDPY_TOKEN_URL, IDPY_CLIENT_ID, IDPY_CONFIDENTIAL_CLIENT_SECRET, ...) plus `process`. Every instance is
stopped at the end of the test; each also watches this pytest process (--parent-pid) and has a TTL.

`idpy_account(scope=..., alias=..., **server_options)` (function-scoped factory): starts an idpy server
whose public client's redirect URI is on a free port, and signs a fresh sfauth account in to it with the
real binary (`sfauth login --issuer URL --client-id public-cli --scope ... --port P --param prompt=consent`;
the "browser" is Tests/Browser/follow-redirects: idpyoidc answers the authorization request with a 302,
it has no login page). Returns an IdpyAccount: `name` (the alias, for --account), `url` (the issuer),
`server` (the IDPY_* dict), `sfauth` (the conftest Sfauth runner with a private SFAUTH_HOME), `login`
(the completed login process) and `port` (the redirect port).

`idpy_module_server` (module-scoped): one default server for a module; `sign_in_to_idpy(binary, directory,
server, port, scope, alias)` signs an account in to any idpy server (returns an IdpyAccount).

`nanoidp_resource_login_args(n)`: `sfauth login` arguments for NanoIDP's client with allowed resources
(sfauth-resource-cli; use with nanoidp.py's `nsfauth` runner, whose browser is the headless Chromium).

`jwt_claims(token)`: the payload of a JWT (no signature check: tests read what a token is for -- `aud`,
`scope`, `exp`), or None when the token is not a JWT.
"""
import base64
import binascii
import dataclasses
import json
import pathlib
import subprocess

import pytest

from mcp_fixtures import start_server, stop_server  # the same start/env-file/stop protocol
from nanoidp import Sfauth, free_port  # conftest's Sfauth and free_port, loaded by path

REPO = pathlib.Path(__file__).resolve().parents[2]
IDPY_SERVER = REPO / "Tests" / "Server" / "idpy_server.py"
FOLLOW_REDIRECTS = REPO / "Tests" / "Browser" / "follow-redirects"
# offline_access for a refresh token (idpyoidc issues one only then); read/write to narrow on refresh.
IDPY_SCOPE = "openid offline_access read write"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


def jwt_claims(token):
    """The claims of a JWT's payload (unverified), None when `token` is not a JWT."""
    parts = token.strip().split(".")
    if len(parts) != 3:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        return json.loads(base64.urlsafe_b64decode(payload))
    except (ValueError, binascii.Error):
        return None


def audiences(claims):
    """`aud` as a list (RFC 7519 §4.1.3 allows a string or an array)."""
    aud = claims.get("aud")
    return [aud] if isinstance(aud, str) else list(aud or [])


@pytest.fixture
def idpy_server(tmp_path):
    started = []

    def start(**options):
        run_dir = tmp_path / f"idpy-server-{len(started)}"
        process, values = start_server(IDPY_SERVER, run_dir, options)
        values = dict(values, process=process, log=str(run_dir / "server.log"))
        started.append(values)
        return values
    yield start
    for values in started:
        out = stop_server(values["process"])
        assert not out, f"idpy_server.py printed on stdout: {out[:200]!r}"


@dataclasses.dataclass
class IdpyAccount:
    name: str
    url: str
    server: dict
    sfauth: Sfauth
    login: subprocess.CompletedProcess
    port: int

    def token(self, *arguments, **env):
        """`sfauth token --account NAME ARGUMENTS...` (the completed process)."""
        return self.sfauth.run("token", "--account", self.name, *arguments, **env)

    def requests(self, path="/token"):
        """What the server was asked, oldest first (its --verbose log: method, path, status, grant_type,
        scope, resource, audience, error)."""
        log = pathlib.Path(self.server["log"]).read_text()
        seen = [json.loads(line.split(" request ", 1)[1]) for line in log.splitlines()
                if line.startswith("idpy-server: request ")]
        return [r for r in seen if path is None or r["path"] == path]

    def stored(self):
        """The account's stored record (the JSON file under SFAUTH_HOME/accounts)."""
        [path] = (self.sfauth.home / "accounts").glob("*.json")
        return json.loads(path.read_text())


def idpy_login_args(server, port, scope=IDPY_SCOPE, alias=None, extra=()):
    """The `sfauth login` arguments that sign in to an idpy server: prompt=consent because idpyoidc
    refuses offline_access without it (OIDC Core §11; IDPY.md)."""
    args = ["login", "--issuer", server["IDPY_ISSUER"], "--client-id", server["IDPY_CLIENT_ID"],
            "--scope", scope, "--port", str(port), "--param", "prompt=consent",
            "--browser-command", str(FOLLOW_REDIRECTS), "--timeout", "30"]
    return args + (["--alias", alias] if alias else []) + list(extra)


def idpy_runner(binary, tmp_path):
    """conftest's Sfauth, with nothing of the DOT server: private home, cache and configuration."""
    runner = Sfauth(binary, {"SFAUTH_TEST_BROWSER": str(FOLLOW_REDIRECTS)}, tmp_path)
    runner.env.update({"XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config")})
    for name in ("SFAUTH_CLIENT_SECRET", "SFAUTH_PROFILE", "SFAUTH_ISSUER", "SFAUTH_CLIENT_ID", "SFAUTH_SCOPES",
                 "SFAUTH_CONFIG", "SFAUTH_PRESET", "SFAUTH_ACCOUNT"):
        runner.env.pop(name, None)
    return runner


def sign_in_to_idpy(binary, directory, server, port, scope=IDPY_SCOPE, alias="idpy"):
    """Signs a fresh sfauth home (under `directory`) in to `server`, whose redirect URI is on `port`."""
    runner = idpy_runner(binary, pathlib.Path(directory))
    login = runner.run(*idpy_login_args(server, port, scope, alias))
    assert login.returncode == 0, f"sfauth login to idpyoidc failed ({login.returncode}): {login.stderr}"
    return IdpyAccount(alias, server["IDPY_URL"], server, runner, login, port)


def idpy_options(port, options):
    options = dict(options)
    options.setdefault("redirect_uri", [f"http://127.0.0.1:{port}/callback"])
    options.setdefault("verbose", True)      # IdpyAccount.requests() reads its log
    return options


@pytest.fixture
def idpy_account(binary, tmp_path, idpy_server):
    count = [0]

    def sign_in(scope=IDPY_SCOPE, alias="idpy", **server_options):
        port = free_port()
        server = idpy_server(**idpy_options(port, server_options))
        count[0] += 1
        return sign_in_to_idpy(binary, tmp_path / f"idpy-account-{count[0]}", server, port, scope, alias)
    return sign_in


@pytest.fixture(scope="module")
def idpy_module_server(tmp_path_factory):
    """One default idpy server (600 s tokens, no rotation) for a whole module, its redirect URI on a free
    port: the IDPY_* dict plus `redirect_port` and `log`. Sign accounts in with sign_in_to_idpy(binary,
    tmp_path, server, server["redirect_port"])."""
    port = free_port()
    run_dir = tmp_path_factory.mktemp("idpy-module-server")
    process, values = start_server(IDPY_SERVER, run_dir, idpy_options(port, {}))
    yield dict(values, redirect_port=port, log=str(run_dir / "server.log"))
    stop_server(process)


def nanoidp_resource_login_args(n, scope="openid profile email offline_access", alias="resources", extra=()):
    """`sfauth login` to NanoIDP's client with allowed resources (SFAUTH_NANOIDP_RESOURCE_CLIENT_ID, rotating
    refresh tokens), asking for every allowed resource at /authorize (`resource`, RFC 8707 §2, by --param):
    NanoIDP lets a refresh name only a resource of the original grant ("was not part of the original grant
    and cannot be added on refresh", observed), so a sign-in without them could never narrow to one.
    The access token of the sign-in is then for all of them (`aud` a list)."""
    resources = [f"resource={r}" for r in n["SFAUTH_NANOIDP_ALLOWED_RESOURCES"].split()]
    params = [arg for r in resources for arg in ("--param", r)]
    return ["login", "--issuer", n["SFAUTH_NANOIDP_ISSUER"], "--client-id", n["SFAUTH_NANOIDP_RESOURCE_CLIENT_ID"],
            "--scope", scope, "--alias", alias, "--timeout", "60", *params, *extra]
