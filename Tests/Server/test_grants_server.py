"""The test server's non-browser grants, exercised over plain HTTP (and the headless browser where a
person approves a device): the device authorization grant with RFC 8628's polling rules, client
credentials, the password grant, the JWT bearer grant (RFC 7523), and discovery.

    .venv/bin/python -m pytest -q Tests/Server/test_grants_server.py

conftest.py starts a private server (device interval 1 s, slow_down adds 2 s).
"""

import base64
import json
import os
import subprocess
import time
import uuid

import pytest
from drive import run_browser
from jwcrypto import jwk, jws

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def error_of(response):
    """(status, error, error_description) of an OAuth error response."""
    body = response.json()
    return response.status_code, body.get("error"), body.get("error_description", "")


def browser_env(server):
    return {k: v for k, v in server.items() if k.startswith("SFAUTH_TEST_")}


def me(http, server, access_token):
    response = http.get(server["SFAUTH_TEST_RESOURCE_URL"], headers={"Authorization": f"Bearer {access_token}"})
    assert response.status_code == 200, response.text
    return response.json()


# ------------------------------------------------------------------ device authorization grant

def start_device(http, server, scope="openid profile", client_id=None):
    response = http.post(server["SFAUTH_TEST_DEVICE_AUTHORIZATION_URL"],
                         data={"client_id": client_id or server["SFAUTH_TEST_DEVICE_CLIENT_ID"], "scope": scope})
    assert response.status_code == 200, response.text
    return response.json()


def poll(http, server, device_code, client_id=None):
    return http.post(server["SFAUTH_TEST_TOKEN_URL"], data={
        "grant_type": DEVICE_GRANT,
        "device_code": device_code,
        "client_id": client_id or server["SFAUTH_TEST_DEVICE_CLIENT_ID"],
    })


def device_status(http, server, device_code):
    response = http.get(server["SFAUTH_TEST_DEVICE_STATUS_URL"], params={"device_code": device_code})
    assert response.status_code == 200, response.text
    return response.json()


def test_device_authorization_response_follows_rfc_8628(http, server):
    response = http.post(server["SFAUTH_TEST_DEVICE_AUTHORIZATION_URL"],
                         data={"client_id": server["SFAUTH_TEST_DEVICE_CLIENT_ID"], "scope": "openid"})
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    data = response.json()
    assert data["verification_uri"] == server["SFAUTH_TEST_DEVICE_VERIFICATION_URL"]
    assert data["verification_uri_complete"] == f"{data['verification_uri']}?user_code={data['user_code']}"
    assert data["expires_in"] == int(server["SFAUTH_TEST_DEVICE_CODE_SECONDS"]) == 300
    assert data["interval"] == int(server["SFAUTH_TEST_DEVICE_INTERVAL"]) == 1
    assert len(data["device_code"]) >= 20 and len(data["user_code"]) == 8


def test_device_authorization_accepts_a_charset_parameter(http, server):
    response = http.post(server["SFAUTH_TEST_DEVICE_AUTHORIZATION_URL"],
                         data=f"client_id={server['SFAUTH_TEST_DEVICE_CLIENT_ID']}",
                         headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
    assert response.status_code == 200, response.text


def test_device_authorization_refuses_a_client_of_another_grant(http, server):
    response = http.post(server["SFAUTH_TEST_DEVICE_AUTHORIZATION_URL"],
                         data={"client_id": server["SFAUTH_TEST_CLIENT_ID"]})
    status, error, description = error_of(response)
    assert (status, error) == (400, "unauthorized_client")
    assert server["SFAUTH_TEST_CLIENT_ID"] in description


def test_device_pending_slow_down_then_browser_approval_then_token_once(http, server):
    base, step = int(server["SFAUTH_TEST_DEVICE_INTERVAL"]), int(server["SFAUTH_TEST_DEVICE_SLOW_DOWN_SECONDS"])
    grant = start_device(http, server)
    code = grant["device_code"]

    assert error_of(poll(http, server, code))[:2] == (400, "authorization_pending")
    status, error, description = error_of(poll(http, server, code))  # at once: too soon
    assert (status, error) == (400, "slow_down")
    assert f"the interval is now {base + step} s" in description
    assert device_status(http, server, code)["interval"] == base + step

    # Waiting the new interval is fine; the old one is now too soon (the increase sticks).
    time.sleep(base + step + 0.3)
    assert error_of(poll(http, server, code))[1] == "authorization_pending"
    time.sleep(base + 0.3)
    assert error_of(poll(http, server, code))[1] == "slow_down"
    assert device_status(http, server, code)["interval"] == base + 2 * step

    # A person approves in the browser (sign in, Verify the prefilled code, Accept).
    result = run_browser(grant["verification_uri_complete"], action="approve", env=browser_env(server))
    assert result["ok"] and result["device_status"] == "authorized", result
    state = device_status(http, server, code)
    assert (state["status"], state["username"], state["slow_downs"]) == ("authorized", "alice", 2)

    # Approved: the next poll gets the tokens, whatever the interval (slow_down means "still pending").
    response = poll(http, server, code)
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "openid profile" and tokens["refresh_token"]
    assert me(http, server, tokens["access_token"])["username"] == "alice"
    assert me(http, server, tokens["access_token"])["client_id"] == server["SFAUTH_TEST_DEVICE_CLIENT_ID"]

    # A device code redeems once.
    status, error, description = error_of(poll(http, server, code))
    assert (status, error) == (400, "invalid_grant") and "already been redeemed" in description
    assert device_status(http, server, code)["status"] == "redeemed"

    # The refresh token the device grant issued works.
    refreshed = http.post(server["SFAUTH_TEST_TOKEN_URL"], data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
        "client_id": server["SFAUTH_TEST_DEVICE_CLIENT_ID"]})
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["access_token"] != tokens["access_token"]


def test_device_denied_in_the_browser_via_the_browser_script_with_a_typed_user_code(http, server, tmp_path):
    grant = start_device(http, server)
    # As a person types it: lower case, with a dash.
    typed = grant["user_code"][:4].lower() + "-" + grant["user_code"][4:].lower()
    report = tmp_path / "browser.json"
    env = dict(os.environ, **browser_env(server), SFAUTH_TEST_BROWSER_ACTION="deny",
               SFAUTH_TEST_DEVICE_USER_CODE=typed, SFAUTH_TEST_BROWSER_LOG=str(report))
    # Used as $BROWSER: returns at once, the detached driver writes its report.
    started = subprocess.run([server["SFAUTH_TEST_BROWSER"], grant["verification_uri"]], env=env, timeout=10)
    assert started.returncode == 0
    deadline = time.monotonic() + 60
    while not report.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    result = json.loads(report.read_text())
    assert result["ok"] and result["device_status"] == "denied", result

    for _ in range(2):  # stays denied (and at once: access_denied is no "pending" to slow down)
        assert error_of(poll(http, server, grant["device_code"]))[:2] == (400, "access_denied")


def test_device_wrong_user_code_is_refused_on_the_page(http, server):
    grant = start_device(http, server)
    result = run_browser(grant["verification_uri"], action="approve", user_code="WRONG000", env=browser_env(server))
    assert not result["ok"] and "Incorrect user code" in result["error"], result
    assert device_status(http, server, grant["device_code"])["status"] == "authorization-pending"


def test_device_code_expires(http, server):
    grant = start_device(http, server)
    assert error_of(poll(http, server, grant["device_code"]))[1] == "authorization_pending"
    expired = http.post(server["SFAUTH_TEST_DEVICE_EXPIRE_URL"], data={"user_code": grant["user_code"]})
    assert expired.status_code == 200 and expired.json()["expires_in"] == 0
    status, error, description = error_of(poll(http, server, grant["device_code"]))
    assert (status, error) == (400, "expired_token") and "expired" in description
    # Approving it now is refused too.
    decided = http.post(server["SFAUTH_TEST_DEVICE_DECIDE_URL"], data={"user_code": grant["user_code"]})
    assert decided.status_code == 409


def test_device_approved_then_expired_is_expired(http, server):
    grant = start_device(http, server)
    assert http.post(server["SFAUTH_TEST_DEVICE_DECIDE_URL"], data={"user_code": grant["user_code"]}).ok
    http.post(server["SFAUTH_TEST_DEVICE_EXPIRE_URL"], data={"device_code": grant["device_code"]})
    assert error_of(poll(http, server, grant["device_code"]))[:2] == (400, "expired_token")


def test_device_token_request_errors(http, server):
    grant = start_device(http, server)
    url = server["SFAUTH_TEST_TOKEN_URL"]
    client_id = server["SFAUTH_TEST_DEVICE_CLIENT_ID"]

    missing = http.post(url, data={"grant_type": DEVICE_GRANT, "client_id": client_id})
    assert error_of(missing)[:2] == (400, "invalid_request")
    anonymous = http.post(url, data={"grant_type": DEVICE_GRANT, "device_code": grant["device_code"]})
    assert error_of(anonymous)[:2] == (401, "invalid_client")
    assert error_of(poll(http, server, "no-such-device-code"))[:2] == (400, "invalid_grant")
    other_client = poll(http, server, grant["device_code"], client_id=server["SFAUTH_TEST_CLIENT_ID"])
    assert error_of(other_client)[:2] == (400, "invalid_grant")
    # None of these counted as the device's polls.
    assert device_status(http, server, grant["device_code"])["polls"] == 0


def test_device_grant_with_the_client_in_basic_authentication(http, server):
    grant = start_device(http, server)
    basic = base64.b64encode(f"{server['SFAUTH_TEST_DEVICE_CLIENT_ID']}:".encode()).decode()
    response = http.post(server["SFAUTH_TEST_TOKEN_URL"], headers={"Authorization": f"Basic {basic}"},
                         data={"grant_type": DEVICE_GRANT, "device_code": grant["device_code"]})
    assert error_of(response)[:2] == (400, "authorization_pending")


# ------------------------------------------------------------------ client credentials

def client_credentials(http, server, client_id, secret, in_body=False, **extra):
    data = {"grant_type": "client_credentials", **extra}
    if in_body:
        return http.post(server["SFAUTH_TEST_TOKEN_URL"], data=dict(data, client_id=client_id, client_secret=secret))
    return http.post(server["SFAUTH_TEST_TOKEN_URL"], data=data, auth=(client_id, secret))


@pytest.mark.parametrize("in_body", [False, True], ids=["basic", "post"])
def test_client_credentials_token_acts_as_the_service_user(http, server, in_body):
    response = client_credentials(http, server, server["SFAUTH_TEST_SERVICE_CLIENT_ID"],
                                  server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"], in_body=in_body, scope="api")
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["scope"] == "api" and "refresh_token" not in tokens
    identity = me(http, server, tokens["access_token"])
    assert identity["username"] == server["SFAUTH_TEST_SERVICE_USERNAME"]
    assert identity["client_id"] == server["SFAUTH_TEST_SERVICE_CLIENT_ID"]


def test_client_credentials_refusals(http, server):
    wrong_secret = client_credentials(http, server, server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "wrong")
    assert error_of(wrong_secret)[:2] == (401, "invalid_client")
    other_grant = client_credentials(http, server, server["SFAUTH_TEST_CONFIDENTIAL_CLIENT_ID"],
                                     server["SFAUTH_TEST_CONFIDENTIAL_CLIENT_SECRET"])
    assert error_of(other_grant)[:2] == (400, "unauthorized_client")


# ------------------------------------------------------------------ password grant

def password_grant(http, server, username, password, client_id=None, secret=None, **extra):
    return http.post(server["SFAUTH_TEST_TOKEN_URL"],
                     data={"grant_type": "password", "username": username, "password": password, **extra},
                     auth=(client_id or server["SFAUTH_TEST_PASSWORD_CLIENT_ID"],
                           secret or server["SFAUTH_TEST_PASSWORD_CLIENT_SECRET"]))


def test_password_grant(http, server):
    response = password_grant(http, server, "alice", "alice-password", scope="openid api")
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["scope"] == "openid api" and tokens["refresh_token"]
    assert me(http, server, tokens["access_token"])["username"] == "alice"
    refreshed = http.post(server["SFAUTH_TEST_TOKEN_URL"],
                          data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
                          auth=(server["SFAUTH_TEST_PASSWORD_CLIENT_ID"], server["SFAUTH_TEST_PASSWORD_CLIENT_SECRET"]))
    assert refreshed.status_code == 200, refreshed.text
    assert me(http, server, refreshed.json()["access_token"])["username"] == "alice"


def test_password_grant_refusals(http, server):
    assert error_of(password_grant(http, server, "alice", "wrong"))[:2] == (400, "invalid_grant")
    assert error_of(password_grant(http, server, "carol", "carol-password"))[:2] == (400, "invalid_grant")
    bad_secret = password_grant(http, server, "alice", "alice-password", secret="wrong")
    assert error_of(bad_secret)[:2] == (401, "invalid_client")
    # Any other client: still refused (COMPLIANT_BCP_RFC9700_PASSWORD_GRANT).
    other = password_grant(http, server, "alice", "alice-password", client_id=server["SFAUTH_TEST_CONFIDENTIAL_CLIENT_ID"],
                           secret=server["SFAUTH_TEST_CONFIDENTIAL_CLIENT_SECRET"])
    assert error_of(other)[:2] == (400, "unauthorized_client")


# ------------------------------------------------------------------ JWT bearer grant

def load_key(path):
    with open(path, "rb") as f:
        return jwk.JWK.from_pem(f.read())


def claims_for(server, **changes):
    now = int(time.time())
    claims = {"iss": server["SFAUTH_TEST_JWT_CLIENT_ID"], "sub": "alice", "aud": server["SFAUTH_TEST_JWT_AUDIENCE"],
              "iat": now, "exp": now + 180, "jti": uuid.uuid4().hex}
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def sign(claims, key, alg="RS256"):
    token = jws.JWS(json.dumps(claims))
    token.add_signature(key, alg=alg, protected=json.dumps({"alg": alg, "typ": "JWT"}))
    return token.serialize(compact=True)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt_grant(http, server, assertion, **extra):
    return http.post(server["SFAUTH_TEST_TOKEN_URL"],
                     data={"grant_type": JWT_GRANT, "assertion": assertion, **extra})


@pytest.mark.parametrize("key_var,alg", [
    ("SFAUTH_TEST_JWT_RSA_KEY", "RS256"),
    ("SFAUTH_TEST_JWT_RSA_KEY_PKCS1", "RS256"),
    ("SFAUTH_TEST_JWT_EC_KEY", "ES256"),
    ("SFAUTH_TEST_JWT_EC_KEY_SEC1", "ES256"),
])
def test_jwt_bearer_grant(http, server, key_var, alg):
    with open(server[key_var]) as f:
        pem = f.read()
    assert ("BEGIN RSA PRIVATE KEY" in pem or "BEGIN EC PRIVATE KEY" in pem) == key_var.endswith(("PKCS1", "SEC1"))
    response = jwt_grant(http, server, sign(claims_for(server), load_key(server[key_var]), alg))
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    tokens = response.json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "openid" and tokens["expires_in"] == 3600
    assert "refresh_token" not in tokens
    identity = me(http, server, tokens["access_token"])
    assert (identity["username"], identity["client_id"]) == ("alice", server["SFAUTH_TEST_JWT_CLIENT_ID"])


@pytest.mark.parametrize("audience", ["token", "token-no-slash", "issuer-slash", "array"])
def test_jwt_bearer_audiences(http, server, audience):
    token_url = server["SFAUTH_TEST_TOKEN_URL"]
    aud = {"token": token_url, "token-no-slash": token_url.rstrip("/"),
           "issuer-slash": server["SFAUTH_TEST_ISSUER"] + "/", "array": ["https://elsewhere.example", token_url]}[audience]
    key = load_key(server["SFAUTH_TEST_JWT_RSA_KEY"])
    response = jwt_grant(http, server, sign(claims_for(server, aud=aud, sub="bob"), key), scope="api web")
    assert response.status_code == 200, response.text
    assert response.json()["scope"] == "api web"
    assert me(http, server, response.json()["access_token"])["username"] == "bob"


def test_jwt_bearer_replayed_jti_is_refused(http, server):
    assertion = sign(claims_for(server), load_key(server["SFAUTH_TEST_JWT_EC_KEY"]), "ES256")
    assert jwt_grant(http, server, assertion).status_code == 200
    status, error, description = error_of(jwt_grant(http, server, assertion))
    assert (status, error) == (400, "invalid_grant") and "already been used" in description


def test_jwt_bearer_without_jti_may_be_sent_twice(http, server):
    assertion = sign(claims_for(server, jti=None), load_key(server["SFAUTH_TEST_JWT_RSA_KEY"]))
    assert jwt_grant(http, server, assertion).status_code == 200
    assert jwt_grant(http, server, assertion).status_code == 200


def unsigned(claims, alg):
    header = b64url(json.dumps({"alg": alg, "typ": "JWT"}).encode())
    return f"{header}.{b64url(json.dumps(claims).encode())}."


def tampered(server):
    good = sign(claims_for(server), load_key(server["SFAUTH_TEST_JWT_RSA_KEY"]))
    header, _, signature = good.split(".")
    return f"{header}.{b64url(json.dumps(claims_for(server, sub='bob')).encode())}.{signature}"


REJECTIONS = {
    # name: (build assertion from server, rsa key, unregistered key) -> expected description fragment
    "not a JWS": (lambda s, k, o: "not-a-jwt", "not a compact JWS"),
    "claims not JSON": (lambda s, k, o: "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln", "claims set is not base64url-encoded JSON"),
    "alg none": (lambda s, k, o: unsigned(claims_for(s), "none"), "alg 'none' is not accepted"),
    "alg HS256": (lambda s, k, o: sign(claims_for(s), jwk.JWK(kty="oct", k=b64url(b"0" * 32)), "HS256"),
                  "alg 'HS256' is not accepted"),
    "unknown iss": (lambda s, k, o: sign(claims_for(s, iss="nobody"), k), "iss 'nobody' is not a client registered"),
    "iss of another grant": (lambda s, k, o: sign(claims_for(s, iss="sfauth-public"), k),
                             "iss 'sfauth-public' is not a client registered"),
    "no iss": (lambda s, k, o: sign(claims_for(s, iss=None), k), "no iss claim"),
    "unregistered key": (lambda s, k, o: sign(claims_for(s), o), "signature does not verify"),
    "tampered claims": (lambda s, k, o: tampered(s), "signature does not verify"),
    "no exp": (lambda s, k, o: sign(claims_for(s, exp=None), k), "no exp claim"),
    "exp not a number": (lambda s, k, o: sign(claims_for(s, exp="tomorrow"), k), "exp must be a NumericDate"),
    "expired": (lambda s, k, o: sign(claims_for(s, iat=int(time.time()) - 200, exp=int(time.time()) - 10), k),
                "expired"),
    "exp too far": (lambda s, k, o: sign(claims_for(s, iat=None, exp=int(time.time()) + 400), k),
                    "at most 300 s are allowed"),
    "lifetime too long": (lambda s, k, o: sign(claims_for(s, iat=int(time.time()) - 200,
                                                          exp=int(time.time()) + 200), k), "lifetime (exp - iat)"),
    "iat in the future": (lambda s, k, o: sign(claims_for(s, iat=int(time.time()) + 60), k), "iat is"),
    "nbf in the future": (lambda s, k, o: sign(claims_for(s, nbf=int(time.time()) + 60), k), "nbf is"),
    "no aud": (lambda s, k, o: sign(claims_for(s, aud=None), k), "no aud claim"),
    "wrong aud": (lambda s, k, o: sign(claims_for(s, aud="https://login.salesforce.com"), k),
                  "names neither the token endpoint"),
    "no sub": (lambda s, k, o: sign(claims_for(s, sub=None), k), "no sub claim"),
    "unknown sub": (lambda s, k, o: sign(claims_for(s, sub="nobody"), k), "sub 'nobody' is not a user"),
    "inactive sub": (lambda s, k, o: sign(claims_for(s, sub="carol"), k), "sub 'carol' is not an active user"),
}


@pytest.mark.parametrize("name", list(REJECTIONS))
def test_jwt_bearer_rejections(http, server, name):
    build, fragment = REJECTIONS[name]
    assertion = build(server, load_key(server["SFAUTH_TEST_JWT_RSA_KEY"]),
                      load_key(server["SFAUTH_TEST_JWT_UNREGISTERED_KEY"]))
    status, error, description = error_of(jwt_grant(http, server, assertion))
    assert (status, error) == (400, "invalid_grant"), description
    assert fragment in description


def test_jwt_bearer_request_errors(http, server):
    key = load_key(server["SFAUTH_TEST_JWT_RSA_KEY"])
    missing = http.post(server["SFAUTH_TEST_TOKEN_URL"], data={"grant_type": JWT_GRANT})
    assert error_of(missing)[:2] == (400, "invalid_request")
    mismatch = jwt_grant(http, server, sign(claims_for(server), key), client_id=server["SFAUTH_TEST_CLIENT_ID"])
    assert error_of(mismatch)[:2] == (400, "invalid_grant") and "is not the assertion's iss" in error_of(mismatch)[2]
    bad_scope = jwt_grant(http, server, sign(claims_for(server), key), scope="openid no-such-scope")
    assert error_of(bad_scope)[:2] == (400, "invalid_scope")
    matching = jwt_grant(http, server, sign(claims_for(server), key), client_id=server["SFAUTH_TEST_JWT_CLIENT_ID"])
    assert matching.status_code == 200, matching.text


def test_jwt_client_can_use_no_other_grant(http, server):
    response = http.post(server["SFAUTH_TEST_TOKEN_URL"],
                         data={"grant_type": "client_credentials", "client_id": server["SFAUTH_TEST_JWT_CLIENT_ID"]})
    assert response.status_code in (400, 401) and response.json()["error"] in ("invalid_client", "unauthorized_client")


# ------------------------------------------------------------------ discovery

def test_discovery_lists_the_device_endpoint_and_every_grant(http, server):
    document = http.get(server["SFAUTH_TEST_DISCOVERY_URL"]).json()
    assert document["device_authorization_endpoint"] == server["SFAUTH_TEST_DEVICE_AUTHORIZATION_URL"]
    assert document["grant_types_supported"] == [
        "authorization_code", "refresh_token", DEVICE_GRANT, "client_credentials", "password", JWT_GRANT]


def test_statistics_count_the_new_grants(http, server):
    stats = http.get(server["SFAUTH_TEST_STATS_URL"]).json()
    # Whatever ran before: the counters exist per grant type once used; use one now to be sure.
    jwt_grant(http, server, "not-a-jwt")
    after = http.get(server["SFAUTH_TEST_STATS_URL"]).json()
    before = stats["token_requests"].get(JWT_GRANT, 0)
    assert after["token_requests"][JWT_GRANT] == before + 1
    assert after["token_responses"][JWT_GRANT]["400"] >= 1
