"""Per-call targets (issue 20): `sfauth token --scope "A B"`, `--audience A`, `--resource URL`, `--exchange`,
`--min-valid DURATION` -- a token for another target obtained from the account's refresh token (a narrower
`scope` on refresh, RFC 6749 §6; `resource` on refresh, RFC 8707 §2.2; Entra's `<resource>/.default`) or by
token exchange (RFC 8693) where the server lists it, without touching the account's own token.

Servers, each the real thing (what each gives is in Tests/Server/IDPY.md and NANOIDP.md):
  idpyoidc 5.0.0 (Tests/Server/idpy_server.py): narrower scope on refresh; token exchange with `audience`;
      ignores `resource`/`audience` on refresh and drops a lone `resource` on exchange.
  NanoIDP 3.4.0 (client sfauth-resource-cli): `resource` on refresh, enforced; no token exchange.
  The Entra stand-in (Tests/Providers/entra.py): a refresh with `scope=<resource>/.default` gives that
      resource's token ([CODE] in entra.py).

"""
import json
import pathlib
import re
import subprocess
import sys
import time

import pytest

from exchange_fixtures import (  # noqa: F401  (pytest fixtures)
    audiences, idpy_account, idpy_server, jwt_claims, nanoidp_resource_login_args)
from nanoidp import nanoidp, nsfauth  # noqa: F401  (pytest fixtures)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Providers"))
from entra import TEST_API, Entra  # noqa: E402

OK, LOGIN_REQUIRED, REFUSED = 0, 3, 5
FULL = {"openid", "offline_access", "read", "write"}


def error_line(result):
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines, "nothing on stderr"
    return lines[-1]


def claims_of(result):
    assert result.returncode == OK, result.stderr
    claims = jwt_claims(result.stdout.strip())
    assert claims is not None, f"not a JWT on stdout: {result.stdout[:80]!r}"
    return claims


def grants(account):
    return [r.get("grant_type") for r in account.requests()]


# ---------------------------------------------------------------- --scope: a narrower scope by refresh

def test_a_narrower_scope_by_refresh_leaves_the_accounts_token_alone_and_is_cached(idpy_account):
    account = idpy_account()
    own_before = account.token()
    assert set(claims_of(own_before)["scope"].split()) == FULL
    before = len(account.requests())

    narrow = account.token("--scope", "read")
    assert claims_of(narrow)["scope"] == "read"
    [asked] = account.requests()[before:]
    assert asked["grant_type"] == "refresh_token" and asked["scope"] == "read"

    # the account's own token is unchanged, and still has the full scope
    own_after = account.token()
    assert own_after.stdout == own_before.stdout and set(claims_of(own_after)["scope"].split()) == FULL
    # within its life the narrower token is reused: no new request
    again = account.token("--scope", "read")
    assert again.stdout == narrow.stdout
    assert len(account.requests()) == before + 1


def test_a_scope_wider_than_granted_is_refused_and_says_to_sign_in_for_it(idpy_account):
    account = idpy_account(scope="openid offline_access read")
    result = account.token("--scope", "read write")
    assert result.returncode == REFUSED, result.stderr
    line = error_line(result)
    assert "sfauth login" in line and "write" in line, line
    assert result.stdout == ""
    # idpyoidc says invalid_request "Invalid refresh scopes" (IDPY.md); the account still works
    assert account.requests()[-1]["error"] == "invalid_request"
    assert claims_of(account.token())["scope"].split() == ["openid", "offline_access", "read"]


# ---------------------------------------------------------------- --audience: by token exchange (idpyoidc)

def test_an_audience_is_obtained_by_token_exchange(idpy_account):
    account = idpy_account()
    result = account.token("--audience", "downstream-api")
    assert audiences(claims_of(result)) == ["downstream-api"]
    asked = account.requests()[-1]
    assert asked["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert asked["audience"] == ["downstream-api"]
    assert asked["subject_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
    assert audiences(claims_of(account.token())) == ["public-cli"]        # the account's own token


def test_an_unknown_audience_is_refused_with_invalid_target(idpy_account):
    account = idpy_account()
    own = account.token().stdout
    result = account.token("--audience", "unknown-api")
    assert result.returncode == REFUSED and result.stdout == ""
    line = error_line(result)
    assert "invalid_target" in line and "unknown-api" in line, line
    assert account.token().stdout == own


def test_exchange_forces_token_exchange_for_a_scope(idpy_account):
    account = idpy_account()
    result = account.token("--exchange", "--audience", "other-api", "--scope", "read")
    claims = claims_of(result)
    assert audiences(claims) == ["other-api"] and claims["scope"] == "read"
    assert grants(account)[-1] == "urn:ietf:params:oauth:grant-type:token-exchange"
    narrow = account.token("--exchange", "--scope", "read")
    assert claims_of(narrow)["scope"] == "read"
    assert grants(account)[-1] == "urn:ietf:params:oauth:grant-type:token-exchange"


def test_a_resource_idpyoidc_does_not_honour_is_refused_not_passed_off(idpy_account):
    """idpyoidc ignores `resource` on refresh and drops a lone `resource` on exchange (IDPY.md): both answer
    200 with aud ["public-cli"]. sfauth reads the JWT's aud and refuses rather than hand out that token."""
    account = idpy_account()
    result = account.token("--resource", "https://api.example/")
    assert result.returncode == REFUSED and result.stdout == ""
    line = error_line(result)
    assert "https://api.example/" in line and "did not honour the resource" in line, line


# ---------------------------------------------------------------- --resource by refresh (NanoIDP)

def nanoidp_account(nsfauth, nanoidp):
    result = nsfauth.run(*nanoidp_resource_login_args(nanoidp))
    assert result.returncode == OK, result.stderr
    return "resources"


def test_a_resource_by_refresh_at_nanoidp(nsfauth, nanoidp):
    name = nanoidp_account(nsfauth, nanoidp)
    own = claims_of(nsfauth.run("token", "--account", name))
    # Both `resource` parameters reached /authorize (RFC 8707 §2 repeats it): a repeated --param keeps every value.
    assert sorted(audiences(own)) == ["https://api.example/", "https://other.example/"], \
        "login --param resource=A --param resource=B sent only the last resource"
    result = nsfauth.run("token", "--account", name, "--resource", "https://api.example/")
    assert audiences(claims_of(result)) == ["https://api.example/"]
    other = nsfauth.run("token", "--account", name, "--resource", "https://other.example/")
    assert audiences(claims_of(other)) == ["https://other.example/"]
    # the rotated refresh token was kept: the account still refreshes
    assert nsfauth.run("token", "--account", name, "--refresh").returncode == OK


def test_a_resource_nanoidp_refuses_is_invalid_target_and_its_burnt_refresh_token_is_said(nsfauth, nanoidp):
    """NanoIDP has used up the refresh token by the time it answers invalid_target (NANOIDP.md): the next
    refresh gets invalid_grant. sfauth names invalid_target first, then asks for a new sign-in."""
    name = nanoidp_account(nsfauth, nanoidp)
    result = nsfauth.run("token", "--account", name, "--resource", "https://evil.example/")
    assert result.returncode == REFUSED and result.stdout == ""
    line = error_line(result)
    assert "invalid_target" in line and "https://evil.example/" in line, line
    after = nsfauth.run("token", "--account", name, "--refresh")
    assert after.returncode == LOGIN_REQUIRED, after.stderr
    assert "sfauth login" in error_line(after)


# ---------------------------------------------------------------- --min-valid

def test_min_valid_longer_than_the_servers_lifetime_renews_and_says_so(idpy_account):
    account = idpy_account(access_token_lifetime=5)
    first = account.token()
    time.sleep(3)            # past half its life: a 10-minute wish cannot be met, so it is renewed at half-life
    before = len(account.requests())
    result = account.token("--min-valid", "10m")
    assert result.returncode == OK, result.stderr
    assert result.stdout != first.stdout and len(account.requests()) == before + 1
    assert re.search(r"\b10 ?m(in|inutes)?\b", result.stderr) and re.search(r"\b[1-5] ?(s|sec|seconds?)\b", result.stderr), result.stderr


def test_min_valid_within_the_tokens_life_does_not_renew(idpy_account):
    account = idpy_account()
    first = account.token()
    before = len(account.requests())
    again = account.token("--min-valid", "2s")
    assert again.returncode == OK and again.stdout == first.stdout
    assert len(account.requests()) == before


def test_a_short_token_is_renewed_for_a_target_too(idpy_account):
    account = idpy_account(access_token_lifetime=5)
    narrow = account.token("--scope", "read")
    assert claims_of(narrow)["scope"] == "read"
    time.sleep(6)
    later = account.token("--scope", "read")
    assert claims_of(later)["scope"] == "read" and later.stdout != narrow.stdout


# ---------------------------------------------------------------- Entra: <resource>/.default on refresh

def test_entra_resource_by_refresh_with_dot_default(sfauth):
    with Entra() as ms:
        login = sfauth.run("login", "--preset", "entra", "--authority", ms.base_url, "--client-id", ms.client_id)
        assert login.returncode == OK, login.stderr
        # As if an administrator had consented to the API for alice (else AADSTS65001 consent_required).
        ms.consents.add(("alice", ms.client_id, frozenset({f"{TEST_API}/.default"})))
        result = sfauth.run("token", "--resource", TEST_API)
        assert audiences(claims_of(result)) == [TEST_API]
        [refresh] = [r for r in ms.requests if r.form.get("grant_type") == "refresh_token"][-1:]
        assert f"{TEST_API}/.default" in refresh.form["scope"].split()
        # Graph's token is still the account's own
        assert audiences(claims_of(sfauth.run("token"))) != [TEST_API]


# ---------------------------------------------------------------- every command that hands out a token

def test_exec_gives_its_command_the_per_call_token(idpy_account):
    account = idpy_account()
    result = account.sfauth.run(
        "exec", "--account", account.name, "--audience", "downstream-api", "--", sys.executable, "-c",
        "import os; print(os.environ['SF_ACCESS_TOKEN'])")
    assert audiences(claims_of(result)) == ["downstream-api"]


def test_kube_credential_and_kubeconfig_carry_the_target(idpy_account):
    account = idpy_account()
    result = account.sfauth.run("kube-credential", "--account", account.name, "--scope", "read",
                                KUBERNETES_EXEC_INFO=json.dumps({
                                    "apiVersion": "client.authentication.k8s.io/v1", "spec": {"interactive": False}}))
    assert result.returncode == OK, result.stderr
    credential = json.loads(result.stdout)
    assert claims_of_token(credential["status"]["token"])["scope"] == "read"
    assert credential["status"]["expirationTimestamp"]
    stanza = account.sfauth.run("kubeconfig", "--account", account.name, "--audience", "prod-cluster", "--min-valid", "5m")
    assert stanza.returncode == OK, stanza.stderr
    assert '- "--audience"\n  - "prod-cluster"\n  - "--min-valid"\n  - "5m"' in stanza.stdout, stanza.stdout


def test_git_credential_renews_for_min_valid(idpy_account):
    account = idpy_account(access_token_lifetime=20)
    answer = subprocess.run(
        [account.sfauth.binary, "git-credential", "--account", account.name, "--host", "git.example", "--min-valid", "1h", "get"],
        input="protocol=https\nhost=git.example\n\n", env=account.sfauth.env, capture_output=True, text=True, timeout=60)
    assert answer.returncode == OK, answer.stderr
    # 20 s tokens never last an hour: renewed at half their life, said on stderr, and git gets a token
    assert "password=" in answer.stdout and "less than the 60 min of --min-valid" in answer.stderr, answer.stderr


def test_request_sends_the_per_call_token_only_to_the_accounts_own_hosts(idpy_account):
    account = idpy_account()
    refused = account.sfauth.run("request", "--account", account.name, "--audience", "downstream-api",
                                 "https://elsewhere.example/api")
    assert refused.returncode == 2 and "elsewhere.example" in error_line(refused), refused.stderr
    # the token goes to the account's own server (its userinfo endpoint accepts idpyoidc's access tokens)
    ok = account.sfauth.run("request", "--account", account.name, "--scope", "openid read",
                            account.server["IDPY_URL"] + "/userinfo")
    assert ok.returncode == OK, ok.stderr
    assert json.loads(ok.stdout)["sub"]


def claims_of_token(token):
    claims = jwt_claims(token)
    assert claims is not None, f"not a JWT: {token[:40]!r}"
    return claims


# ---------------------------------------------------------------- what is refused before any request

@pytest.mark.parametrize("arguments, said", [
    (["--exchange"], "--exchange needs --audience, --resource or --scope"),
    (["--min-valid", "soon"], "--min-valid takes a duration"),
    (["--min-valid", "30d"], "--min-valid takes a duration"),
    (["--resource", "https://api.example/#part"], "fragment"),
    (["--resource", "not a uri"], "not an absolute URI"),
])
def test_bad_target_options_are_usage_errors_and_send_nothing(idpy_account, arguments, said):
    account = idpy_account()
    stored = account.stored()
    before = len(account.requests())
    result = account.token(*arguments)
    assert result.returncode == 2 and said in result.stderr, result.stderr
    assert len(account.requests()) == before and account.stored() == stored


def test_a_supplied_token_cannot_be_narrowed(idpy_account):
    account = idpy_account()
    result = account.token("--scope", "read", SFAUTH_ACCESS_TOKEN="supplied")
    assert result.returncode == 2 and "SFAUTH_ACCESS_TOKEN is set" in result.stderr, result.stderr


# ---------------------------------------------------------------- the test server (django-oauth-toolkit)

def test_the_test_server_narrows_scope_on_refresh_and_the_front_end_reads_the_record(sfauth):
    """DOT (oauthlib) grants a narrower scope on refresh (RFC 6749 §6) and rotates the refresh token with
    reuse detection: the rotated one is the account's, and the account's own token still renews after it."""
    assert sfauth.run(*sfauth.login_args(scope="openid profile")).returncode == OK
    own = sfauth.run("token").stdout
    narrow = sfauth.run("token", "--scope", "openid")
    assert narrow.returncode == OK, narrow.stderr
    assert narrow.stdout != own and narrow.stdout.strip()
    [record] = [json.loads(p.read_text()) for p in (sfauth.home / "accounts").glob("*.json")]
    [kept] = record["targetedTokens"]
    assert kept["target"]["scopes"] == ["openid"] and kept["scopes"] == ["openid"] and kept["obtainedBy"] == "refresh"
    # the front end still answers the account's own token from that record, and it is the one it was
    assert sfauth.run("token").stdout == own
    # after the per-call refresh rotated the refresh token, the account's own refresh still works (no reuse)
    again = sfauth.run("token", "--refresh")
    assert again.returncode == OK and again.stdout != own, again.stderr
    wider = sfauth.run("token", "--scope", "openid profile email")
    assert wider.returncode == REFUSED and "sfauth login" in error_line(wider), wider.stderr
