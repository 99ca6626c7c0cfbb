"""`sfauth login --preset NAME` for GitLab, Microsoft Entra ID, Okta, Auth0, Keycloak and Amazon
Cognito, each against its stand-in (Tests/Providers/*.py: each reproduces its provider's documented
behaviour and cites it), pointed there through the preset's own key (`--host`, `--authority`,
`--issuer`, `--domain`).

Every preset: signs in through the browser, prints a token the stand-in's API accepts, refreshes
(keeping a rotated refresh token), names the user in `whoami`, and logs out — revoking where the
provider has a revocation endpoint (test_<provider>_signs_in_refreshes_names_the_user_and_logs_out).

The quirks, and the test that proves each is handled:
- GitLab: metadata without `code_challenge_methods_supported` — PKCE is sent anyway; refresh
  rotates both tokens; `http://127.0.0.1/` on any port (test_gitlab_…).
- Entra: `/organizations` metadata names the issuer `…/{tenantid}/v2.0`, the ID token its own
  tenant (test_entra_…, and test_entra_refuses_an_id_token_of_another_issuer…); no PKCE methods
  listed — PKCE sent anyway; a refresh token only with `offline_access`; `http://localhost` on any
  port; no revocation endpoint; `expires_in` as a string (test_entra_reads_expires_in_as_a_string);
  AADSTS7000218 and AADSTS28000 translated into the next step (test_entra_refusals_say_the_next_step).
- Okta: an org URL means its `default` custom authorization server, and sfauth says so (test_okta_…).
- Auth0: the issuer's trailing `/` (given without it), `audience` for a JWT access token, rotation
  with reuse detection (test_auth0_…); without --audience a notice (test_auth0_without_audience_says_so).
- Keycloak: `refresh_expires_in: 0` offline tokens; RFC 9207 `iss` on redirects from version 23, none before (test_keycloak_…[22], [26]).
- Cognito: the hosted-UI domain is not the issuer's host; access tokens carry no `aud` (test_cognito_…).
- Bring your own client: each of these presets without a client id says what to register and
  exits 2 (test_a_preset_without_a_client_says_what_to_register).
"""
import json
import pathlib
import sys
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Providers"))
from auth0 import API_AUDIENCE, Auth0  # noqa: E402
from cognito import Cognito  # noqa: E402
from entra import GRAPH_AUD, Entra, WEB_CLIENT_ID  # noqa: E402
from gitlab import GitLab  # noqa: E402
from keycloak import Keycloak  # noqa: E402
from okta import Okta  # noqa: E402

from conftest import free_port  # noqa: E402
from test_login import OK  # noqa: E402

USAGE, LOGIN_REQUIRED, REFUSED = 2, 3, 5


def get(url, token):
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, None


def the_record(sfauth):
    [name] = sfauth.stored_accounts()
    path = sfauth.home / "accounts" / name
    return path, json.loads(path.read_text())


def login(sfauth, *args):
    result = sfauth.run("login", *args)
    assert result.returncode == OK, result.stderr
    return result


def fixed_port(stand_in):
    """A free port, registered with a stand-in that matches redirect URIs exactly, port included."""
    port = free_port()
    stand_in.allow_redirect_uri(f"http://localhost:{port}/callback")
    return port


def check_lifecycle(sfauth, api_url, rotates, revokes, revocations=None):
    """token → accepted by the API; an expired token refreshes (keeping a rotated refresh token);
    whoami names alice; logout revokes (or says it only forgot locally) and removes the account."""
    path, record = the_record(sfauth)
    token = sfauth.run("token")
    assert token.returncode == OK, token.stderr
    status, _ = get(api_url, token.stdout.strip())
    assert status == 200, f"{api_url} refused the token"

    first_refresh_token = record["refreshToken"]
    record["expiresAt"] = 0
    path.write_text(json.dumps(record))
    renewed = sfauth.run("token")
    assert renewed.returncode == OK, renewed.stderr
    assert json.loads(path.read_text())["expiresAt"] > record["issuedAt"]  # renewed (a JWT may come out the same within a second)
    assert get(api_url, renewed.stdout.strip())[0] == 200
    kept = json.loads(path.read_text())["refreshToken"]
    assert (kept != first_refresh_token) == rotates

    whoami = sfauth.run("whoami")
    assert whoami.returncode == OK and "alice" in whoami.stdout, whoami.stdout + whoami.stderr

    logout = sfauth.run("logout")
    assert logout.returncode == OK, logout.stderr
    if revokes:
        assert revocations and revocations(), "no revocation request reached the server"
        assert "only" not in logout.stderr.lower(), logout.stderr
    else:
        assert "revoc" in (logout.stdout + logout.stderr).lower(), logout.stdout + logout.stderr
    assert sfauth.stored_accounts() == []
    return renewed.stdout.strip()


# -- GitLab ---------------------------------------------------------------------------------------


def test_gitlab_signs_in_refreshes_names_the_user_and_logs_out(sfauth):
    with GitLab() as gl:
        login(sfauth, "--preset", "gitlab", "--host", gl.base_url, "--client-id", gl.client_id)
        [authorize] = [r for r in gl.requests if "redirect_uri" in r.query]
        assert authorize.query["code_challenge_method"] == "S256"  # though the metadata lists no methods
        assert authorize.query["redirect_uri"].startswith("http://127.0.0.1:")
        assert authorize.query["redirect_uri"].endswith("/") and authorize.query["redirect_uri"].count("/") == 3
        assert set(authorize.query["scope"].split()) >= {"openid", "read_repository", "write_repository"}
        _, record = the_record(sfauth)
        assert record["username"] == "alice"
        token = check_lifecycle(sfauth, gl.base_url + "/api/v4/user", rotates=True, revokes=True,
                                revocations=lambda: gl.requests_to("/oauth/revoke"))
        assert get(gl.base_url + "/api/v4/user", token)[0] == 401


# -- Microsoft Entra ID ---------------------------------------------------------------------------


def test_entra_signs_in_refreshes_names_the_user_and_logs_out(sfauth):
    with Entra() as ms:
        result = login(sfauth, "--preset", "entra", "--authority", ms.base_url, "--client-id", ms.client_id)
        assert "AADSTS50011" in result.stderr  # said before the browser opens: what Microsoft's page would mean
        [authorize] = [r for r in ms.requests if "redirect_uri" in r.query]
        assert authorize.path == "/organizations/oauth2/v2.0/authorize"
        assert authorize.query["redirect_uri"].startswith("http://localhost:")  # Entra's loopback exception
        assert authorize.query["code_challenge_method"] == "S256"  # though the metadata lists no methods
        assert "offline_access" in authorize.query["scope"].split()
        _, record = the_record(sfauth)
        assert record["server"]["issuer"] == ms.base_url + "/{tenantid}/v2.0"
        assert record["username"] == "alice@example.com"
        check_lifecycle(sfauth, ms.url("graph") + "/v1.0/me", rotates=True, revokes=False)


def test_entra_reads_expires_in_as_a_string(sfauth):
    with Entra(expires_in_as_string=True) as ms:
        login(sfauth, "--preset", "entra", "--authority", ms.base_url, "--tenant", ms.tenant_id, "--client-id", ms.client_id)
        _, record = the_record(sfauth)
        assert record["server"]["issuer"] == f"{ms.base_url}/{ms.tenant_id}/v2.0"
        assert record["expiresAt"] - record["issuedAt"] == pytest.approx(3599, abs=5)


def test_entra_refusals_say_the_next_step(sfauth):
    with Entra() as ms:
        # A confidential ("Web") app without its secret: AADSTS7000218 at the code exchange.
        web = sfauth.run("login", "--preset", "entra", "--authority", ms.base_url, "--client-id", WEB_CLIENT_ID,
                         "--callback-path", "/callback")
        assert web.returncode == REFUSED, web.stderr
        assert "AADSTS7000218" in web.stderr and "Allow public client flows" in web.stderr
        assert "Trace ID" not in web.stderr
        # Two resources in one request: AADSTS28000.
        mixed = sfauth.run("login", "--preset", "entra", "--authority", ms.base_url, "--client-id", ms.client_id,
                           "--scope", "openid offline_access https://graph.microsoft.com/User.Read api://sfauth-test-api/read")
        assert mixed.returncode == REFUSED, mixed.stderr
        assert "AADSTS28000" in mixed.stderr and "one resource" in mixed.stderr
        assert sfauth.stored_accounts() == []


def test_entra_refuses_an_id_token_of_another_issuer_than_its_tenant(sfauth):
    with Entra() as ms:
        original = ms.id_token

        def another_tenants_issuer(client, user, scope, ctx, access_token=None):
            # Signed by Entra's key, but its iss names another tenant than its tid.
            claims = ms.verify_jwt(original(client, user, scope, ctx, access_token))
            claims["iss"] = ms.base_url + "/00000000-0000-0000-0000-000000000000/v2.0"
            return ms.sign_jwt(claims)
        ms.id_token = another_tenants_issuer
        result = sfauth.run("login", "--preset", "entra", "--authority", ms.base_url, "--client-id", ms.client_id)
        assert result.returncode == REFUSED, result.stderr
        assert "{tenantid}" in result.stderr and "tid" in result.stderr
        assert sfauth.stored_accounts() == []


# -- Okta -----------------------------------------------------------------------------------------


def test_okta_signs_in_at_the_default_authorization_server_and_says_so(sfauth):
    with Okta(server="default") as okta:
        port = fixed_port(okta)
        result = login(sfauth, "--preset", "okta", "--issuer", okta.base_url, "--client-id", okta.client_id, "--port", str(port))
        assert okta.base_url + "/oauth2/default" in result.stderr and "org authorization server" in result.stderr
        _, record = the_record(sfauth)
        assert record["server"]["issuer"] == okta.issuer
        check_lifecycle(sfauth, okta.base_url + "/api/echo", rotates=False, revokes=True,
                        revocations=lambda: okta.requests_to("/oauth2/default/v1/revoke"))


# -- Auth0 ----------------------------------------------------------------------------------------


def test_auth0_signs_in_with_an_audience_and_keeps_the_rotated_refresh_token(sfauth):
    with Auth0() as a0:
        port = fixed_port(a0)
        # The tenant domain as people write it, without the trailing slash Auth0's issuer has.
        login(sfauth, "--preset", "auth0", "--issuer", a0.base_url, "--audience", API_AUDIENCE,
              "--client-id", a0.client_id, "--port", str(port))
        [authorize] = [r for r in a0.requests if "redirect_uri" in r.query]
        assert authorize.query["audience"] == API_AUDIENCE
        _, record = the_record(sfauth)
        assert record["server"]["issuer"] == a0.base_url + "/"
        # Rotation with reuse detection: reusing the first refresh token would revoke the family, so
        # the renewed token working after the refresh proves the rotated one was kept and used.
        check_lifecycle(sfauth, a0.base_url + "/api/echo", rotates=True, revokes=True,
                        revocations=lambda: a0.requests_to("/oauth/revoke"))


def test_auth0_without_audience_says_so(sfauth):
    with Auth0() as a0:
        port = fixed_port(a0)
        result = login(sfauth, "--preset", "auth0", "--issuer", a0.base_url, "--client-id", a0.client_id, "--port", str(port))
        assert "--audience" in result.stderr and "opaque" in result.stderr
        token = sfauth.run("token").stdout.strip()
        assert get(a0.base_url + "/api/echo", token)[0] == 401  # opaque: not for the API
        assert get(a0.base_url + "/userinfo", token)[0] == 200


# -- Keycloak -------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [22, 26])  # before 23 no RFC 9207 iss on the redirect (none advertised); from 23 both
def test_keycloak_signs_in_with_an_offline_token_refreshes_and_logs_out(sfauth, version):
    with Keycloak(version=version) as kc:
        login(sfauth, "--preset", "keycloak", "--issuer", kc.issuer, "--client-id", kc.client_id)
        [token_request] = [r for r in kc.requests if r.form.get("grant_type") == "authorization_code"]
        assert token_request.form.get("code_verifier")
        _, record = the_record(sfauth)
        assert record["username"] == "alice"
        assert record["refreshTokenLifetime"] == 0  # offline_access: an offline token, refresh_expires_in 0
        check_lifecycle(sfauth, kc.base_url + "/api/echo", rotates=True, revokes=True,
                        revocations=lambda: [r for r in kc.requests if r.path.endswith("/revoke")])


# -- Amazon Cognito -------------------------------------------------------------------------------


def test_cognito_signs_in_on_the_domain_refreshes_and_revokes(sfauth):
    with Cognito() as c:
        port = fixed_port(c)
        login(sfauth, "--preset", "cognito", "--issuer", c.issuer, "--domain", c.domain_url, "--client-id", c.client_id,
              "--port", str(port))
        [authorize] = [r for r in c.requests if "redirect_uri" in r.query]
        assert authorize.server == "domain"  # the hosted UI, not the issuer's host
        _, record = the_record(sfauth)
        assert record["server"]["issuer"] == c.issuer
        assert record["server"]["tokenEndpoint"].startswith(c.domain_url)
        check_lifecycle(sfauth, c.base_url + "/api/echo", rotates=False, revokes=True,
                        revocations=lambda: c.requests_to("/oauth2/revoke"))


# -- Bring your own client ------------------------------------------------------------------------


@pytest.mark.parametrize("preset, words", [
    ("github", ["http://127.0.0.1/callback", "github.com/settings/applications/new"]),
    ("gitlab", ["http://127.0.0.1/", "Confidential"]),
    ("google", ["Desktop app", "console.cloud.google.com"]),
    ("entra", ["http://localhost", "Allow public client flows"]),
    ("okta", ["http://localhost:8400/callback", "Native Application"]),
    ("auth0", ["http://localhost:8400/callback", "--audience"]),
    ("keycloak", ["http://127.0.0.1/*", "Client authentication: Off"]),
    ("cognito", ["http://localhost:8400/callback", "Public client"]),
])
def test_a_preset_without_a_client_says_what_to_register(sfauth, preset, words):
    result = sfauth.run("login", "--preset", preset)
    assert result.returncode == USAGE, result.stderr
    assert "--client-id" in result.stderr
    for word in words:
        assert word in result.stderr
    assert sfauth.stored_accounts() == []
