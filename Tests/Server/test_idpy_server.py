"""The token-exchange test server's own tests (no sfauth): they prove Tests/Server/idpy_server.py
(idpyoidc 5.0.0) does what Tests/Server/IDPY.md says, with plain HTTP (requests): discovery, the code
flow with PKCE and no browser, refresh with a narrower scope, token exchange (RFC 8693) with
audience/resource, invalid_target, rotation, lifecycle. Its quirks are asserted as they are.

    .venv/bin/python -m pytest -q Tests/Server/test_idpy_server.py
"""
import base64
import hashlib
import os
import re
import secrets
import signal
import sys
import time
import urllib.parse

import pytest
import requests

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "CLI"))
from exchange_fixtures import IDPY_SERVER, TOKEN_EXCHANGE, audiences, idpy_server, jwt_claims  # noqa: E402,F401
from mcp_fixtures import start_server, stop_server  # noqa: E402

REDIRECT = "http://127.0.0.1:45871/callback"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
REFRESH_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:refresh_token"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One default server (no rotation, 600 s tokens) for the tests that only add sessions to it."""
    process, values = start_server(IDPY_SERVER, tmp_path_factory.mktemp("idpy-shared"), {"redirect_uri": [REDIRECT]})
    yield values
    stop_server(process)


@pytest.fixture
def http():
    session = requests.Session()
    session.trust_env = False
    yield session
    session.close()


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


def authorize(http, server, scope="openid offline_access read write", redirect_uri=REDIRECT, **extra):
    """The authorization request; NoAuthn answers with a 302 straight away. Returns (response, query of Location, verifier)."""
    verifier, challenge = pkce()
    params = {"response_type": "code", "client_id": server["IDPY_CLIENT_ID"], "redirect_uri": redirect_uri,
              "scope": scope, "state": "st-" + secrets.token_hex(8), "code_challenge": challenge,
              "code_challenge_method": "S256", "nonce": secrets.token_hex(8)}
    if "offline_access" in scope:
        params["prompt"] = "consent"
    params.update(extra)
    params = {k: v for k, v in params.items() if v is not None}
    response = http.get(server["IDPY_AUTHORIZE_URL"], params=params, allow_redirects=False)
    location = response.headers.get("location", "")
    query = {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(location).query).items()}
    return response, query, verifier


def sign_in(http, server, scope="openid offline_access read write", client_id=None, auth=None):
    response, query, verifier = authorize(http, server, scope)
    assert response.status_code == 302 and "code" in query, (response.status_code, response.text[:300])
    form = {"grant_type": "authorization_code", "code": query["code"], "redirect_uri": REDIRECT,
            "code_verifier": verifier}
    if auth is None:
        form["client_id"] = client_id or server["IDPY_CLIENT_ID"]
    tokens = http.post(server["IDPY_TOKEN_URL"], data=form, auth=auth)
    assert tokens.status_code == 200, tokens.text
    return tokens.json()


def token_request(http, server, **form):
    form.setdefault("client_id", server["IDPY_CLIENT_ID"])
    return http.post(server["IDPY_TOKEN_URL"], data=form)


def refresh(http, server, refresh_token, **form):
    return token_request(http, server, grant_type="refresh_token", refresh_token=refresh_token, **form)


def exchange(http, server, subject_token, subject_token_type=ACCESS_TOKEN_TYPE, **form):
    return token_request(http, server, grant_type=TOKEN_EXCHANGE, subject_token=subject_token,
                         subject_token_type=subject_token_type, **form)


def error_of(response):
    assert response.status_code == 400, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    return response.json()["error"], response.json().get("error_description", "")


# ---------------------------------------------------------------- discovery and the code flow

def test_discovery_lists_token_exchange_and_s256_only(http, shared):
    for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
        metadata = http.get(shared["IDPY_URL"] + path).json()
        assert metadata["issuer"] == shared["IDPY_ISSUER"] == shared["IDPY_URL"]
        assert metadata["grant_types_supported"] == ["authorization_code", "refresh_token", TOKEN_EXCHANGE]
        assert metadata["code_challenge_methods_supported"] == ["S256"]
        assert metadata["token_endpoint"] == shared["IDPY_TOKEN_URL"]
        assert metadata["authorization_endpoint"] == shared["IDPY_AUTHORIZE_URL"]
        assert set(metadata["scopes_supported"]) == set(shared["IDPY_SCOPES"].split())
    assert shared["IDPY_URL"].startswith("http://127.0.0.1:")


def test_code_flow_with_pkce_and_no_browser(http, shared):
    response, query, verifier = authorize(http, shared)
    assert response.status_code == 302
    assert response.headers["location"].startswith(REDIRECT + "?")
    assert query["iss"] == shared["IDPY_ISSUER"] and query["state"].startswith("st-")   # RFC 9207
    wrong = token_request(http, shared, grant_type="authorization_code", code=query["code"], redirect_uri=REDIRECT,
                          code_verifier=secrets.token_urlsafe(48))
    assert error_of(wrong)[0] == "invalid_grant"
    _, query, verifier = authorize(http, shared)
    tokens = token_request(http, shared, grant_type="authorization_code", code=query["code"], redirect_uri=REDIRECT,
                           code_verifier=verifier)
    assert tokens.status_code == 200, tokens.text
    body = tokens.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] in (599, 600)
    assert {"access_token", "refresh_token", "id_token"} <= set(body)
    claims = jwt_claims(body["access_token"])
    assert audiences(claims) == ["public-cli"] and claims["scope"].split() == ["openid", "offline_access", "read", "write"]
    assert claims["iss"] == shared["IDPY_ISSUER"] and claims["sub"] == "diana"
    # userinfo answers the access token (sfauth asks it who signed in)
    me = http.get(shared["IDPY_USERINFO_URL"], headers={"Authorization": f"Bearer {body['access_token']}"})
    assert me.status_code == 200 and "sub" in me.json()


@pytest.mark.parametrize("change, says", [
    ({"code_challenge": None, "code_challenge_method": None}, "Missing required code_challenge"),
    ({"code_challenge_method": "plain"}, "Unsupported code_challenge_method=plain"),
])
def test_pkce_is_required_and_s256_only(http, shared, change, says):
    response, query, _ = authorize(http, shared, **change)
    assert response.status_code == 400 and says in response.text


def test_offline_access_without_prompt_consent_is_refused(http, shared):
    response, _, _ = authorize(http, shared, prompt=None)
    assert response.status_code == 400 and "consent in prompt" in response.text


def test_a_redirect_uri_on_another_port_is_refused(http, shared):
    response, _, _ = authorize(http, shared, redirect_uri="http://127.0.0.1:45872/callback")
    assert response.status_code == 400 and response.headers.get("location") is None


# ---------------------------------------------------------------- refresh

def test_refresh_with_a_narrower_scope(http, shared):
    tokens = sign_in(http, shared)
    narrower = refresh(http, shared, tokens["refresh_token"], scope="read")
    assert narrower.status_code == 200, narrower.text
    assert jwt_claims(narrower.json()["access_token"])["scope"] == "read"
    assert "refresh_token" not in narrower.json()     # only with offline_access in the new scope
    # the refresh token keeps the full grant: the whole scope again
    full = refresh(http, shared, tokens["refresh_token"])
    assert set(jwt_claims(full.json()["access_token"])["scope"].split()) == {"openid", "offline_access", "read", "write"}


def test_refresh_with_a_wider_scope_is_invalid_request_not_invalid_scope(http, shared):
    tokens = sign_in(http, shared, scope="openid offline_access read")
    error, description = error_of(refresh(http, shared, tokens["refresh_token"], scope="read write"))
    assert (error, description) == ("invalid_request", "Invalid refresh scopes")


def test_refresh_ignores_resource_and_audience(http, shared):
    tokens = sign_in(http, shared)
    for form in ({"resource": "https://api.example/"}, {"resource": "https://evil.example/"},
                 {"audience": "downstream-api"}):
        answer = refresh(http, shared, tokens["refresh_token"], **form)
        assert answer.status_code == 200, (form, answer.text)
        assert audiences(jwt_claims(answer.json()["access_token"])) == ["public-cli"], form


# ---------------------------------------------------------------- token exchange

def test_exchange_with_audience_gives_that_audience(http, shared):
    tokens = sign_in(http, shared)
    answer = exchange(http, shared, tokens["access_token"], audience="downstream-api")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["issued_token_type"] == ACCESS_TOKEN_TYPE and body["token_type"] == "Bearer"
    assert audiences(jwt_claims(body["access_token"])) == ["downstream-api"]
    narrower = exchange(http, shared, tokens["access_token"], audience="other-api", scope="read")
    claims = jwt_claims(narrower.json()["access_token"])
    assert audiences(claims) == ["other-api"] and claims["scope"] == "read"


def test_exchange_drops_a_lone_resource_but_keeps_it_beside_an_audience(http, shared):
    tokens = sign_in(http, shared)
    alone = exchange(http, shared, tokens["access_token"], resource="https://api.example/")
    assert alone.status_code == 200
    assert audiences(jwt_claims(alone.json()["access_token"])) == ["public-cli"]       # the quirk (IDPY.md)
    both = exchange(http, shared, tokens["access_token"], resource="https://api.example/", audience="other-api")
    assert sorted(audiences(jwt_claims(both.json()["access_token"]))) == ["https://api.example/", "other-api"]


@pytest.mark.parametrize("form, says", [
    ({"audience": "unknown-api"}, "Unknown audience"),
    ({"resource": "https://evil.example/"}, "Unknown resource"),
])
def test_exchange_for_an_unknown_target_is_invalid_target(http, shared, form, says):
    tokens = sign_in(http, shared)
    assert error_of(exchange(http, shared, tokens["access_token"], **form)) == ("invalid_target", says)


def test_exchange_of_a_refresh_token_for_another_audience_is_refused(http, shared):
    tokens = sign_in(http, shared)
    error = error_of(exchange(http, shared, tokens["refresh_token"], REFRESH_TOKEN_TYPE, audience="downstream-api"))
    assert error == ("invalid_target", "Refresh token has single owner")
    plain = exchange(http, shared, tokens["refresh_token"], REFRESH_TOKEN_TYPE)
    assert plain.status_code == 200 and jwt_claims(plain.json()["access_token"])["token_class"] == "access_token"


def test_the_confidential_client_signs_in_and_exchanges_with_its_secret(http, shared):
    auth = (shared["IDPY_CONFIDENTIAL_CLIENT_ID"], shared["IDPY_CONFIDENTIAL_CLIENT_SECRET"])
    response, query, verifier = authorize(http, dict(shared, IDPY_CLIENT_ID=auth[0]))
    assert response.status_code == 302, response.text
    form = {"grant_type": "authorization_code", "code": query["code"], "redirect_uri": REDIRECT, "code_verifier": verifier}
    assert http.post(shared["IDPY_TOKEN_URL"], data=form, auth=(auth[0], "wrong")).status_code in (400, 401)
    _, query, verifier = authorize(http, dict(shared, IDPY_CLIENT_ID=auth[0]))
    form.update(code=query["code"], code_verifier=verifier)
    tokens = http.post(shared["IDPY_TOKEN_URL"], data=form, auth=auth)
    assert tokens.status_code == 200, tokens.text
    exchanged = http.post(shared["IDPY_TOKEN_URL"], auth=auth, data={
        "grant_type": TOKEN_EXCHANGE, "subject_token": tokens.json()["access_token"],
        "subject_token_type": ACCESS_TOKEN_TYPE, "audience": "downstream-api"})
    assert exchanged.status_code == 200, exchanged.text
    assert audiences(jwt_claims(exchanged.json()["access_token"])) == ["downstream-api"]


# ---------------------------------------------------------------- options

def test_rotation_under_rotate(http, idpy_server):
    server = idpy_server(rotate=True, redirect_uri=[REDIRECT])
    assert server["IDPY_ROTATE"] == "1"
    tokens = sign_in(http, server)
    first = refresh(http, server, tokens["refresh_token"])
    assert first.status_code == 200 and first.json()["refresh_token"] != tokens["refresh_token"]
    assert error_of(refresh(http, server, tokens["refresh_token"])) == ("invalid_request", "Refresh token inactive")
    assert refresh(http, server, first.json()["refresh_token"]).status_code == 200    # no family revocation


def test_without_rotate_a_refresh_token_is_used_again(http, shared):
    tokens = sign_in(http, shared)
    assert refresh(http, shared, tokens["refresh_token"]).status_code == 200
    assert refresh(http, shared, tokens["refresh_token"]).status_code == 200


def test_short_access_tokens_and_chosen_targets(http, idpy_server):
    server = idpy_server(access_token_lifetime=5, redirect_uri=[REDIRECT], audience=["only-api"],
                         resource=["https://only.example/"])
    tokens = sign_in(http, server)
    claims = jwt_claims(tokens["access_token"])
    assert tokens["expires_in"] in (4, 5) and claims["exp"] - claims["iat"] == 5
    assert error_of(exchange(http, server, tokens["access_token"], audience="downstream-api"))[0] == "invalid_target"
    exchanged = exchange(http, server, tokens["access_token"], audience="only-api")
    assert audiences(jwt_claims(exchanged.json()["access_token"])) == ["only-api"]
    # the exchanged token ends with its subject (token_exchange.py copies expires_at)
    assert exchanged.json()["expires_in"] <= 5
    time.sleep(5.5)
    renewed = refresh(http, server, tokens["refresh_token"])
    assert renewed.status_code == 200 and renewed.json()["expires_in"] in (4, 5)


def test_it_stops_when_its_parent_is_gone_and_removes_its_state(tmp_path):
    import subprocess
    env_file = tmp_path / "env.json"
    parent = subprocess.Popen(["sleep", "30"])
    server = subprocess.Popen([sys.executable, str(IDPY_SERVER), "--parent-pid", str(parent.pid),
                               "--write-env", str(env_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not env_file.exists() and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.05)
        assert env_file.exists(), server.stderr.read().decode()[-2000:]
        parent.send_signal(signal.SIGTERM)
        parent.wait()
        assert server.wait(10) == 0
        out, err = server.communicate()
        assert out == b"" and b"parent process" in err
        assert not env_file.exists()
        state_dir = re.search(r"state (/\S+)\)", err.decode()).group(1)
        assert "idpy_state-" in state_dir and not os.path.exists(state_dir)
    finally:
        for process in (parent, server):
            if process.poll() is None:
                process.kill()
                process.wait()
