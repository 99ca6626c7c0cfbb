"""`sfauth exec` and `sfauth request`: the token handed to other programs without ever appearing in
argv, and API requests that survive a server's silent expiry (401 → renew once → retry)."""
import json
import signal
import subprocess

from stub_server import StubServer
from test_login import LOGIN_REQUIRED, OK, USAGE, call_api

CLIENT_ERROR, SERVER_ERROR, NETWORK = 7, 8, 6


def service_login(sfauth, server):
    result = sfauth.run("login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", server["SFAUTH_TEST_SERVICE_CLIENT_ID"],
                        "--client-credentials", SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"],
                        XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    assert result.returncode == OK, result.stderr


def stub_login(sfauth, stub):
    """An account whose instance is the stub (like Salesforce's instance_url), with a refresh token."""
    stub.answer("/token", 200, {"access_token": "at-1", "refresh_token": "rt-1", "instance_url": stub.url(""), "expires_in": 3600})
    login = subprocess.run([sfauth.binary, "login", "--authorize-url", stub.url("/authorize"), "--token-url", stub.url("/token"),
                            "--client-id", "c", "--password", "--username", "alice"],
                           input="pw\n", env=sfauth.env, capture_output=True, text=True, timeout=60)
    assert login.returncode == OK, login.stderr


def test_exec_passes_the_token_in_the_environment_and_the_status_through(sfauth, server):
    service_login(sfauth, server)
    token = sfauth.run("token").stdout.strip()
    script = 'test -n "$SF_ACCESS_TOKEN" || exit 90; test -z "$SFAUTH_CLIENT_SECRET" || exit 91; ' \
             'test -z "${SF_INSTANCE_URL+set}" || exit 92; printf %s "$SF_ACCESS_TOKEN"; exit 7'
    result = sfauth.run("exec", "--", "sh", "-c", script, SFAUTH_CLIENT_SECRET="secret", SF_INSTANCE_URL="https://stale.example")
    assert result.returncode == 7, result.stderr
    assert result.stdout == token
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], result.stdout)[0] == 200
    # The token is never in the command's arguments (visible to every process through ps).
    argv = sfauth.run("exec", "--", "sh", "-c", 'tr "\\0" " " < /proc/$$/cmdline')
    assert token not in argv.stdout and "sh -c" in argv.stdout


def test_exec_is_the_command_signals_included(sfauth, server):
    service_login(sfauth, server)
    killed = sfauth.run("exec", "--", "sh", "-c", "kill -TERM $$")
    assert killed.returncode == -signal.SIGTERM
    missing = sfauth.run("exec", "--", "no-such-command-here")
    assert missing.returncode == 127 and "no-such-command-here" in missing.stderr


def test_exec_without_a_token_does_not_run_the_command(sfauth, tmp_path):
    marker = tmp_path / "ran"
    result = sfauth.run("exec", "--", "touch", str(marker))
    assert result.returncode == LOGIN_REQUIRED and not marker.exists()
    assert sfauth.run("exec").returncode == USAGE


def test_request_sends_the_token_to_the_accounts_own_hosts_only(sfauth, server):
    service_login(sfauth, server)
    result = sfauth.run("request", server["SFAUTH_TEST_RESOURCE_URL"])
    assert result.returncode == OK, result.stderr
    assert json.loads(result.stdout)["username"] == "integration"
    included = sfauth.run("request", "--include", server["SFAUTH_TEST_RESOURCE_URL"])
    assert included.stdout.startswith("HTTP 200\n") and "content-type: application/json" in included.stdout.lower()
    with StubServer() as other:
        other.answer("/steal", 200, "thanks")
        refused = sfauth.run("request", other.url("/steal"))
        assert refused.returncode == USAGE and "--allow-host" in refused.stderr, refused.stderr
        # The token never goes there: at most one bare GET without it asks whether the URL is a
        # protected resource (RFC 9728 challenge) — this one is not, so the refusal stands.
        assert other.requests() in ([], [""])
        assert all("authorization" not in {name.lower() for name in headers} for headers in other.request_headers("/steal"))
        allowed = sfauth.run("request", "--allow-host", other.url("").split("://")[1].rstrip("/"), other.url("/steal"))
        assert allowed.returncode == OK and allowed.stdout == "thanks"


def test_request_renews_the_token_once_after_a_401_and_says_4xx_and_5xx_apart(sfauth):
    with StubServer() as stub:
        stub_login(sfauth, stub)
        # The org's session timeout ended the token early: the API says so only with a 401.
        stub.answer("/services/data/", 401, [{"message": "Session expired or invalid", "errorCode": "INVALID_SESSION_ID"}],
                    then=[(200, {"sobjects": "/services/data/v62.0/sobjects"})])
        stub.answer("/token", 200, {"access_token": "at-2", "refresh_token": "rt-2", "instance_url": stub.url(""), "expires_in": 3600})
        result = sfauth.run("request", "/services/data/")
        assert result.returncode == OK, result.stderr
        assert json.loads(result.stdout) == {"sobjects": "/services/data/v62.0/sobjects"}
        assert "refresh_token=rt-1" in stub.requests("/token")[-1]
        stub.answer("/services/data/missing", 404, {"error": "not found"})
        assert sfauth.run("request", "/services/data/missing").returncode == CLIENT_ERROR
        stub.answer("/services/data/broken", 503, "down")
        assert sfauth.run("request", "/services/data/broken").returncode == SERVER_ERROR
        posted = sfauth.run("request", "-X", "PATCH", "-H", "Content-Type: application/json", "-d", '{"Name":"Acme"}',
                            "/services/data/sobjects/Account/1")
        assert stub.requests("/services/data/sobjects/Account/1") == ['{"Name":"Acme"}']
        assert posted.returncode == CLIENT_ERROR  # the stub has no answer there: 404


def test_request_uses_a_supplied_token_like_token_and_exec_do(sfauth):
    """SFAUTH_ACCESS_TOKEN (with SFAUTH_INSTANCE_URL) wins over anything stored, and goes only to that
    instance's host or the allowed ones (issue 17 §18)."""
    with StubServer() as stub:
        stub.answer("/services/data/", 200, "from the instance")
        supplied = dict(SFAUTH_ACCESS_TOKEN="supplied-token", SFAUTH_INSTANCE_URL=stub.url(""))
        result = sfauth.run("request", "/services/data/", **supplied)
        assert (result.returncode, result.stdout) == (OK, "from the instance"), result.stderr
        assert stub.request_headers("/services/data/")[0]["Authorization"] == "Bearer supplied-token"
        assert sfauth.stored_accounts() == []
        with StubServer() as other:
            other.answer("/x", 200, "thanks")
            refused = sfauth.run("request", other.url("/x"), **supplied)
            assert refused.returncode == USAGE and "--allow-host" in refused.stderr
            assert other.requests() == []


def test_help_before_the_command_is_help(sfauth):
    """`sfauth exec --help` and `-h` show exec's help — they are not a command to run (issue 17 §10);
    after `--`, --help is the command's own argument."""
    for asked in (["exec", "--help"], ["exec", "-h"], ["exec", "--account", "x", "--help"]):
        result = sfauth.run(*asked)
        assert result.returncode == OK, (asked, result)
        assert "USAGE: sfauth exec" in result.stdout and "SF_ACCESS_TOKEN" in result.stdout, (asked, result.stdout)
    passed = sfauth.run("exec", "--", "sh", "-c", 'printf %s "$1"', "sh", "--help", SFAUTH_ACCESS_TOKEN="t")
    assert (passed.returncode, passed.stdout) == (OK, "--help")
