"""The test server configured as strict deployments are: an RFC 9207 `iss` on every redirect (as
Keycloak does) and access tokens that live 5 seconds (real ones: 60 s, 5 min). A private instance,
so the other tests keep the server without `iss`."""
import concurrent.futures
import json
import subprocess
import time
import urllib.request

import pytest

from conftest import Sfauth
from private_server import private_test_server
from test_login import NETWORK, OK, call_api


@pytest.fixture(scope="module")
def strict_server():
    with private_test_server("strict-server", SFAUTH_TEST_ISS_PARAMETER="1", SFAUTH_TEST_SHORT_TOKEN_SECONDS="5") as values:
        yield values


@pytest.fixture
def strict(binary, strict_server, tmp_path):
    return Sfauth(binary, strict_server, tmp_path)


def refreshes(server):
    with urllib.request.urlopen(server["SFAUTH_TEST_STATS_URL"], timeout=10) as response:
        return json.loads(response.read())["token_requests"].get("refresh_token", 0)


def only_account(sfauth):
    [path] = sorted((sfauth.home / "accounts").glob("*.json"))
    return path, json.loads(path.read_text())


def test_explicit_endpoints_accept_the_iss_and_record_it(strict, strict_server):
    login = strict.run(*strict.login_args())
    assert login.returncode == OK, login.stderr
    _, stored = only_account(strict)
    assert stored["authorizationResponseIssuer"] == strict_server["SFAUTH_TEST_ISSUER"]
    # Signing in to the same account again: the same issuer, accepted.
    again = strict.run(*strict.login_args())
    assert again.returncode == OK, again.stderr


def test_an_issuer_given_with_explicit_endpoints_is_what_iss_must_say(strict, strict_server):
    wrong = strict.run(*strict.login_args(extra=["--issuer", "http://127.0.0.1:1/o"]))
    assert wrong.returncode == NETWORK, wrong.stderr
    assert "names the issuer" in wrong.stderr and "RFC 9207" in wrong.stderr
    assert not (strict.home / "accounts").exists() or not list((strict.home / "accounts").iterdir())
    right = strict.run(*strict.login_args(extra=["--issuer", strict_server["SFAUTH_TEST_ISSUER"]]))
    assert right.returncode == OK, right.stderr


def test_discovery_with_iss_on_every_redirect(strict, strict_server):
    login = strict.run("login", "--issuer", strict_server["SFAUTH_TEST_ISSUER"], "--client-id", strict_server["SFAUTH_TEST_CLIENT_ID"],
                       "--scope", "openid profile")
    assert login.returncode == OK, login.stderr


def test_five_second_tokens_are_not_refreshed_on_every_use(strict, strict_server):
    login = strict.run(*strict.login_args(client_id=strict_server["SFAUTH_TEST_SHORT_CLIENT_ID"]))
    assert login.returncode == OK, login.stderr
    before = refreshes(strict_server)
    # Right after sign-in, with the default 60 s leeway: the 5 s token is handed out as it is.
    first = strict.run("token")
    second = strict.run("token")
    assert first.returncode == second.returncode == OK
    assert first.stdout == second.stdout
    assert refreshes(strict_server) == before


def test_fifty_processes_with_five_second_tokens_share_one_refresh_and_every_token_works(strict, strict_server):
    login = strict.run(*strict.login_args(client_id=strict_server["SFAUTH_TEST_SHORT_CLIENT_ID"]))
    assert login.returncode == OK, login.stderr
    path, stored = only_account(strict)
    time.sleep(max(0.0, stored["expiresAt"] - time.time()) + 1.2)
    before = refreshes(strict_server)

    def run_one(_):
        # The default leeway (60 s): more than the tokens' whole lifetime.
        return subprocess.run([strict.binary, "token"], env=strict.env, capture_output=True, text=True, timeout=60)

    with concurrent.futures.ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(run_one, range(50)))
    assert [r.returncode for r in results] == [OK] * 50, [r.stderr for r in results if r.returncode]
    assert refreshes(strict_server) == before + 1
    # Every token a script was handed is accepted by the server.
    for token in {r.stdout.strip() for r in results}:
        assert call_api(strict_server["SFAUTH_TEST_RESOURCE_URL"], token)[0] == 200
