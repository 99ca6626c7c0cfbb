"""OpenID Connect discovery and the RFC 9207 `iss` check, end to end against the real server."""
import json
import os
import pathlib
import subprocess

import pytest

from test_login import OK, USAGE, call_api

REPO = pathlib.Path(__file__).resolve().parents[2]


def issuer_login(sfauth, issuer, *extra, **env):
    return sfauth.run("login", "--issuer", issuer, "--client-id", sfauth.server["SFAUTH_TEST_CLIENT_ID"],
                      "--scope", "openid profile", *extra, **env)


def test_login_with_an_issuer_uses_the_discovered_endpoints(sfauth, server):
    cache = sfauth.home.parent / "cache"
    login = issuer_login(sfauth, server["SFAUTH_TEST_ISSUER"], XDG_CACHE_HOME=str(cache))
    assert login.returncode == OK, login.stderr
    token = sfauth.run("token").stdout.strip()
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], token)[0] == 200
    assert list((cache / "sfauth" / "discovery").iterdir())          # cached for the next command
    # The discovered revocation endpoint is used by logout.
    logout = sfauth.run("logout")
    assert "revoked the refresh token" in logout.stderr
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], token)[0] == 401


def test_an_issuer_that_is_not_exactly_the_one_in_the_metadata_is_refused(sfauth, server):
    login = issuer_login(sfauth, server["SFAUTH_TEST_ISSUER"] + "/", "--no-browser", XDG_CACHE_HOME=str(sfauth.home.parent / "c"))
    assert login.returncode == USAGE
    assert f"is for the issuer '{server['SFAUTH_TEST_ISSUER']}'" in login.stderr


def test_an_issuer_without_metadata_is_a_clear_error(sfauth, server):
    login = issuer_login(sfauth, server["SFAUTH_TEST_SERVER_URL"] + "/nothing-here", "--no-browser",
                         XDG_CACHE_HOME=str(sfauth.home.parent / "c"))
    assert login.returncode == USAGE
    assert "metadata" in login.stderr


@pytest.fixture
def iss_server(tmp_path):
    """A second test server whose authorization responses carry `iss` (RFC 9207) and say so."""
    env = dict(os.environ, SFAUTH_TEST_RUN_DIR=str(tmp_path / "iss-server"), SFAUTH_TEST_ISS_PARAMETER="1",
               SFAUTH_TEST_PARENT_PID=str(os.getpid()), SFAUTH_TEST_SERVER_TTL="600")
    subprocess.run([REPO / "scripts" / "test-server", "start"], env=env, check=True, timeout=60)
    try:
        lines = subprocess.run([REPO / "scripts" / "test-server", "env"], env=env, check=True, capture_output=True,
                               text=True).stdout.splitlines()
        yield dict(line.removeprefix("export ").split("=", 1) for line in lines if line.startswith("export "))
    finally:
        subprocess.run([REPO / "scripts" / "test-server", "stop"], env=env, timeout=30)


def test_rfc9207_issuer_in_the_response_is_checked_and_accepted(sfauth, iss_server):
    with_iss = dict(sfauth.server, **iss_server)
    sfauth.server = with_iss
    metadata = json.loads(subprocess.run(["curl", "-s", with_iss["SFAUTH_TEST_DISCOVERY_URL"]], capture_output=True,
                                         text=True).stdout)
    assert metadata["authorization_response_iss_parameter_supported"] is True
    # The server promises `iss`, so the login succeeds only if the redirect carried exactly this issuer
    # (a missing or different one is refused: see DiscoveryDocumentTests and OAuthCoordinatorTests).
    login = issuer_login(sfauth, with_iss["SFAUTH_TEST_ISSUER"], XDG_CACHE_HOME=str(sfauth.home.parent / "c"))
    assert login.returncode == OK, login.stderr
    assert call_api(with_iss["SFAUTH_TEST_RESOURCE_URL"], sfauth.run("token").stdout.strip())[0] == 200


def test_a_slow_issuer_is_named_while_sfauth_waits_for_it(sfauth):
    """Before discovery sfauth says what it waits for: a hung server is not 30 silent seconds (issue 17 §18)."""
    from stub_server import StubServer
    with StubServer() as stub:
        stub.answer("/.well-known/openid-configuration", 503, "busy", delay=6)
        process = sfauth.start("login", "--issuer", stub.url(""), "--client-id", "cli", "--no-browser",
                               SFAUTH_HTTP_TIMEOUT="8", XDG_CACHE_HOME=str(sfauth.home.parent / "c"))
        first = process.stderr.readline()
        stub.wait_for_request("/.well-known/openid-configuration")
        assert process.poll() is None, "sfauth ended before the server answered"
        assert first.strip() == f"Reading the endpoints of {stub.url('')} from its metadata…"
        process.kill()
        process.communicate()
