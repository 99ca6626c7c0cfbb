"""The MCP test servers' own tests (no sfauth): they prove Tests/Server/mcp_server.py (and
mcp_second_server.py) do what Tests/Server/MCP.md says, with plain HTTP (requests) and, for tool
calls, the MCP SDK's own client (Tests/CLI/mcp_fixtures.py call_tool).

    .venv/bin/python -m pytest -q Tests/Server/test_mcp_servers.py
"""
import base64
import hashlib
import os
import re
import secrets
import sys
import urllib.parse

import pytest
import requests

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "CLI"))
from mcp_fixtures import (  # noqa: E402,F401
    McpHttpError, call_tool, forget_clients, mcp_second_server, mcp_server, start_server, stats, stop_server, SERVER)

REDIRECT = "http://127.0.0.1:{port}/callback"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One auto-approving server with the second resource, for the tests that do not change its state
    as a whole (each registers its own client); saves a start (~1.5 s, mostly importing the SDK) each."""
    process, values = start_server(SERVER, tmp_path_factory.mktemp("mcp-shared"),
                                   {"auto_approve": True, "second_resource": True})
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


def register(http, server, port=53682, **extra):
    body = {"redirect_uris": [REDIRECT.format(port=port)], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "client_name": "sfauth", "application_type": "native", "scope": "mcp mcp:admin", **extra}
    response = http.post(server["MCP_AS_URL"] + "/register", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def authorize(http, server, client, resource="<default>", scope="mcp", redirect_uri=None, consent=False):
    """The authorization request, as a browser that follows redirects would send it (auto-approve
    servers redirect straight back; with consent=True the consent page's "Authorize" is submitted).
    Returns (query of the redirect back, verifier)."""
    verifier, challenge = pkce()
    params = {"response_type": "code", "client_id": client["client_id"],
              "redirect_uri": redirect_uri or client["redirect_uris"][0], "state": "st-1",
              "code_challenge": challenge, "code_challenge_method": "S256", "scope": scope}
    if resource == "<default>":
        resource = server["MCP_RESOURCE_URL"]
    if resource is not None:
        params["resource"] = resource
    response = http.get(server["MCP_AS_URL"] + "/authorize", params=params, allow_redirects=False)
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    if location.startswith(server["MCP_AS_URL"] + "/consent"):
        assert consent, "a consent page, but this server was expected to auto-approve"
        page = http.get(location)
        assert 'id="authorizationForm"' in page.text and 'name="allow" value="Authorize"' in page.text
        request_id = re.search(r'name="request" value="([^"]+)"', page.text).group(1)
        response = http.post(server["MCP_AS_URL"] + "/consent", data={"request": request_id, "allow": "Authorize"},
                             allow_redirects=False)
        assert response.status_code == 302
        location = response.headers["location"]
    parts = urllib.parse.urlsplit(location)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == params["redirect_uri"], location
    return dict(urllib.parse.parse_qsl(parts.query)), verifier


def token(http, server, client, **form):
    form = {"client_id": client["client_id"], **form}
    form = {k: v for k, v in form.items() if v is not None}
    return http.post(server["MCP_AS_URL"] + "/token", data=form)


def login(http, server, client=None, resource=None, scope="mcp"):
    client = client or register(http, server)
    resource = resource or server["MCP_RESOURCE_URL"]
    query, verifier = authorize(http, server, client, resource=resource, scope=scope)
    response = token(http, server, client, grant_type="authorization_code", code=query["code"],
                     redirect_uri=client["redirect_uris"][0], code_verifier=verifier, resource=resource)
    assert response.status_code == 200, response.text
    return client, response.json()


def challenge_params(header):
    return dict(re.findall(r'(\w+)="([^"]*)"', header or ""))


# ---------------------------------------------------------------- the SDK server, as it should be

def test_discovery_documents(http, shared):
    s = shared
    probe = http.post(s["MCP_RESOURCE_URL"], json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert probe.status_code == 401
    assert probe.headers["www-authenticate"].startswith("Bearer ")
    assert challenge_params(probe.headers["www-authenticate"])["resource_metadata"] == s["MCP_PRM_URL"]
    assert s["MCP_PRM_URL"] == s["MCP_RS_ORIGIN"] + "/.well-known/oauth-protected-resource/mcp"
    prm = http.get(s["MCP_PRM_URL"]).json()
    assert prm["resource"] == s["MCP_RESOURCE_URL"]             # exactly: no trailing slash
    assert prm["authorization_servers"] == [s["MCP_ISSUER"]]      # no trailing slash either
    assert prm["scopes_supported"] == ["mcp", "mcp:admin"]
    assert http.get(s["MCP_RS_ORIGIN"] + "/.well-known/oauth-protected-resource").status_code == 404
    meta = http.get(s["MCP_AS_URL"] + "/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == s["MCP_ISSUER"] == s["MCP_AS_URL"]
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["authorization_response_iss_parameter_supported"] is True
    assert meta["registration_endpoint"] == s["MCP_AS_URL"] + "/register"
    assert meta["revocation_endpoint"] == s["MCP_AS_URL"] + "/revoke"
    assert meta["scopes_supported"] == ["mcp", "mcp:admin"]
    # The SDK lists no "none" although it registers and serves public clients.
    assert meta["token_endpoint_auth_methods_supported"] == ["client_secret_post", "client_secret_basic"]
    assert http.get(s["MCP_AS_URL"] + "/.well-known/openid-configuration").status_code == 404


def test_registration(http, shared):
    s = shared
    client = register(http, s)
    assert client["client_id"] and "client_secret" not in client
    assert client["token_endpoint_auth_method"] == "none"
    assert client["redirect_uris"] == ["http://127.0.0.1:53682/callback"]
    bad = http.post(s["MCP_AS_URL"] + "/register", json={"redirect_uris": ["http://127.0.0.1:1/cb"],
                                                          "scope": "mcp root"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_client_metadata"
    defaulted = http.post(s["MCP_AS_URL"] + "/register", json={"redirect_uris": ["http://127.0.0.1:1/cb"]}).json()
    assert defaulted["scope"] == "mcp" and defaulted["token_endpoint_auth_method"] == "client_secret_post"
    registered = [c["client_id"] for c in stats(s["MCP_AS_URL"])["registered_clients"]]
    assert client["client_id"] in registered and defaulted["client_id"] in registered


def test_flow_refresh_rotation_and_tools(http, shared):
    s = shared
    client = register(http, s)
    query, verifier = authorize(http, s, client, scope="mcp")
    assert query["state"] == "st-1" and query["iss"] == s["MCP_ISSUER"] and query["code"]
    # PKCE: a wrong verifier is refused (the SDK's check).
    wrong = token(http, s, client, grant_type="authorization_code", code=query["code"],
                  redirect_uri=client["redirect_uris"][0], code_verifier="x" * 43, resource=s["MCP_RESOURCE_URL"])
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    good = token(http, s, client, grant_type="authorization_code", code=query["code"],
                 redirect_uri=client["redirect_uris"][0], code_verifier=verifier, resource=s["MCP_RESOURCE_URL"])
    assert good.status_code == 200, good.text
    tokens = good.json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "mcp" and tokens["expires_in"] == 3600
    again = token(http, s, client, grant_type="authorization_code", code=query["code"],
                  redirect_uri=client["redirect_uris"][0], code_verifier=verifier, resource=s["MCP_RESOURCE_URL"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"    # single use
    assert call_tool(s["MCP_RESOURCE_URL"], tokens["access_token"], "whoami") == {
        "client_id": client["client_id"], "scopes": ["mcp"], "resource": s["MCP_RESOURCE_URL"], "subject": "alice"}
    # Refresh rotates: the old refresh token is then refused.
    refreshed = token(http, s, client, grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                      resource=s["MCP_RESOURCE_URL"])
    assert refreshed.status_code == 200, refreshed.text
    new = refreshed.json()
    assert new["refresh_token"] != tokens["refresh_token"] and new["access_token"] != tokens["access_token"]
    reuse = token(http, s, client, grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                  resource=s["MCP_RESOURCE_URL"])
    assert reuse.status_code == 400 and reuse.json()["error"] == "invalid_grant"
    assert call_tool(s["MCP_RESOURCE_URL"], new["access_token"], "whoami")["client_id"] == client["client_id"]
    # Revocation (RFC 7009) takes the access token and its refresh token. SDK quirk (handlers/revoke.py,
    # RevocationRequest.client_secret: `str | None` without a default, so pydantic requires it): a
    # public client's request without a client_secret field is refused 400 invalid_request.
    bare = http.post(s["MCP_AS_URL"] + "/revoke", data={"client_id": client["client_id"], "token": new["access_token"]})
    assert bare.status_code == 400 and bare.json()["error"] == "invalid_request"
    assert "client_secret" in bare.json()["error_description"]
    assert http.post(s["MCP_AS_URL"] + "/revoke", data={"client_id": client["client_id"], "client_secret": "",
                                                        "token": new["access_token"]}).status_code == 200
    with pytest.raises(McpHttpError) as refused:
        call_tool(s["MCP_RESOURCE_URL"], new["access_token"], "whoami")
    assert refused.value.status == 401
    gone = token(http, s, client, grant_type="refresh_token", refresh_token=new["refresh_token"],
                 resource=s["MCP_RESOURCE_URL"])
    assert gone.status_code == 400
    seen = stats(s["MCP_AS_URL"])
    mine = [r for r in seen["token_requests"] if r["client_id"] == client["client_id"]]
    assert [(r["grant_type"], r["resource"], r["status"]) for r in mine] == [
        ("authorization_code", s["MCP_RESOURCE_URL"], 400), ("authorization_code", s["MCP_RESOURCE_URL"], 200),
        ("authorization_code", s["MCP_RESOURCE_URL"], 400), ("refresh_token", s["MCP_RESOURCE_URL"], 200),
        ("refresh_token", s["MCP_RESOURCE_URL"], 400), ("refresh_token", s["MCP_RESOURCE_URL"], 400)]
    request = next(r for r in seen["authorize_requests"] if r["client_id"] == client["client_id"])
    assert request["redirect_uri"] == client["redirect_uris"][0] and request["resource"] == s["MCP_RESOURCE_URL"]


def test_consent_page(http, mcp_server):
    s = mcp_server()
    client = register(http, s)
    query, _ = authorize(http, s, client, consent=True)
    assert query["code"] and query["iss"] == s["MCP_ISSUER"]
    # Cancel: access_denied, with state and iss.
    verifier, challenge = pkce()
    first = http.get(s["MCP_AS_URL"] + "/authorize", allow_redirects=False, params={
        "response_type": "code", "client_id": client["client_id"], "redirect_uri": client["redirect_uris"][0],
        "state": "st-2", "code_challenge": challenge, "resource": s["MCP_RESOURCE_URL"]})
    page = http.get(first.headers["location"])
    request_id = re.search(r'name="request" value="([^"]+)"', page.text).group(1)
    denied = http.post(s["MCP_AS_URL"] + "/consent", data={"request": request_id}, allow_redirects=False)
    back = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(denied.headers["location"]).query))
    assert back == {"error": "access_denied", "error_description": "the user denied the request",
                    "state": "st-2", "iss": s["MCP_ISSUER"]}


def test_exact_redirect_uri(http, shared):
    s = shared
    client = register(http, s, port=53682)
    verifier, challenge = pkce()
    other_port = http.get(s["MCP_AS_URL"] + "/authorize", allow_redirects=False, params={
        "response_type": "code", "client_id": client["client_id"], "redirect_uri": "http://127.0.0.1:53683/callback",
        "code_challenge": challenge, "resource": s["MCP_RESOURCE_URL"]})
    assert other_port.status_code == 400 and "not registered" in other_port.json()["error_description"]


def test_resource_is_required_and_bound(http, shared):
    s = shared
    client = register(http, s)
    # authorization request without resource: redirect back with invalid_target (and iss).
    query, _ = authorize(http, s, client, resource=None)
    assert query["error"] == "invalid_target" and query["iss"] == s["MCP_ISSUER"] and query["state"] == "st-1"
    query, _ = authorize(http, s, client, resource="http://127.0.0.1:1/elsewhere")
    assert query["error"] == "invalid_target"
    # token request without resource, or with another one: 400 invalid_target; the code survives.
    query, verifier = authorize(http, s, client)
    base = dict(grant_type="authorization_code", code=query["code"], redirect_uri=client["redirect_uris"][0],
                code_verifier=verifier)
    for resource in (None, s["MCP_SECOND_RESOURCE_URL"], s["MCP_RESOURCE_URL"] + "/"):
        refused = token(http, s, client, **base, resource=resource)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_target", (resource, refused.text)
    tokens = token(http, s, client, **base, resource=s["MCP_RESOURCE_URL"]).json()
    for resource in (None, s["MCP_SECOND_RESOURCE_URL"]):
        refused = token(http, s, client, grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                        resource=resource)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_target"
    # A token for resource A is refused at resource B (same origin, another path), and the reverse.
    with pytest.raises(McpHttpError) as refused:
        call_tool(s["MCP_SECOND_RESOURCE_URL"], tokens["access_token"], "whoami")
    assert refused.value.status == 401
    assert challenge_params(refused.value.www_authenticate)["resource_metadata"] == s["MCP_SECOND_PRM_URL"]
    _, second = login(http, s, client, resource=s["MCP_SECOND_RESOURCE_URL"])
    assert call_tool(s["MCP_SECOND_RESOURCE_URL"], second["access_token"], "whoami")["resource"] == \
        s["MCP_SECOND_RESOURCE_URL"]
    with pytest.raises(McpHttpError):
        call_tool(s["MCP_RESOURCE_URL"], second["access_token"], "whoami")
    assert http.get(s["MCP_SECOND_PRM_URL"]).json()["resource"] == s["MCP_SECOND_RESOURCE_URL"]


def test_without_require_resource(http, mcp_server):
    s = mcp_server(auto_approve=True, require_resource=False)
    client = register(http, s)
    query, verifier = authorize(http, s, client, resource=None)
    tokens = token(http, s, client, grant_type="authorization_code", code=query["code"],
                   redirect_uri=client["redirect_uris"][0], code_verifier=verifier)
    assert tokens.status_code == 200
    assert call_tool(s["MCP_RESOURCE_URL"], tokens.json()["access_token"], "whoami")["resource"] == \
        s["MCP_RESOURCE_URL"]


def test_insufficient_scope_step_up(http, shared):
    s = shared
    client, tokens = login(http, s, scope="mcp")
    with pytest.raises(McpHttpError) as refused:
        call_tool(s["MCP_RESOURCE_URL"], tokens["access_token"], "admin_echo", {"text": "hi"})
    assert refused.value.status == 403
    params = challenge_params(refused.value.www_authenticate)
    assert refused.value.www_authenticate.startswith('Bearer error="insufficient_scope"')
    assert params["scope"] == "mcp mcp:admin" and params["resource_metadata"] == s["MCP_PRM_URL"]
    _, admin = login(http, s, client, scope="mcp mcp:admin")
    assert call_tool(s["MCP_RESOURCE_URL"], admin["access_token"], "admin_echo", {"text": "hi"})["echo"] == "hi"
    # A scope outside the registration: the SDK redirects back with invalid_scope (iss added by us).
    narrow = register(http, s, scope="mcp")
    query, _ = authorize(http, s, narrow, scope="mcp mcp:admin")
    assert query["error"] == "invalid_scope" and query["iss"] == s["MCP_ISSUER"]


def test_short_access_tokens_expire(http, mcp_server):
    import time
    s = mcp_server(auto_approve=True, access_token_seconds=1)
    client, tokens = login(http, s)
    assert tokens["expires_in"] == 1
    time.sleep(2.1)
    with pytest.raises(McpHttpError) as refused:
        call_tool(s["MCP_RESOURCE_URL"], tokens["access_token"], "whoami")
    assert refused.value.status == 401
    fresh = token(http, s, client, grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                  resource=s["MCP_RESOURCE_URL"]).json()
    assert call_tool(s["MCP_RESOURCE_URL"], fresh["access_token"], "whoami")["client_id"] == client["client_id"]


def test_forget_clients_endpoint(http, mcp_server):
    s = mcp_server(auto_approve=True)
    client, tokens = login(http, s)
    assert forget_clients(s["MCP_AS_URL"]) == {"forgotten": 1}
    refused = token(http, s, client, grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                    resource=s["MCP_RESOURCE_URL"])
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_client"
    verifier, challenge = pkce()
    unknown = http.get(s["MCP_AS_URL"] + "/authorize", allow_redirects=False, params={
        "response_type": "code", "client_id": client["client_id"], "redirect_uri": client["redirect_uris"][0],
        "code_challenge": challenge, "resource": s["MCP_RESOURCE_URL"]})
    assert unknown.status_code == 400 and unknown.json()["error"] == "invalid_request"
    login(http, s)            # re-registration works
    assert stats(s["MCP_AS_URL"])["registrations"] == 2


# ---------------------------------------------------------------- hostile variants

def test_hostile_resource_mismatch(http, mcp_server):
    s = mcp_server(hostile="resource-mismatch")
    prm = http.get(s["MCP_PRM_URL"]).json()
    assert prm["resource"] != s["MCP_RESOURCE_URL"] and prm["resource"].endswith("/not-this-mcp")


def test_hostile_pkce_methods(http, mcp_server):
    no_s256 = mcp_server(hostile="no-s256")
    assert http.get(no_s256["MCP_AS_METADATA_URL"]).json()["code_challenge_methods_supported"] == ["plain"]
    no_list = mcp_server(hostile="no-pkce-list")
    assert "code_challenge_methods_supported" not in http.get(no_list["MCP_AS_METADATA_URL"]).json()


def test_hostile_registration_without_client_id(http, mcp_server):
    s = mcp_server(hostile="registration-without-client-id")
    response = http.post(s["MCP_AS_URL"] + "/register", json={"redirect_uris": ["http://127.0.0.1:5/callback"],
                                                               "token_endpoint_auth_method": "none"})
    assert response.status_code == 201 and "client_id" not in response.json()
    assert response.json()["redirect_uris"] == ["http://127.0.0.1:5/callback"]


def test_hostile_foreign_metadata(http, mcp_server):
    s = mcp_server(hostile="foreign-metadata")
    probe = http.post(s["MCP_RESOURCE_URL"], json={})
    url = challenge_params(probe.headers["www-authenticate"])["resource_metadata"]
    assert url == s["MCP_AS_URL"] + "/.well-known/oauth-protected-resource/mcp"
    assert http.get(url).json()["resource"] == s["MCP_RESOURCE_URL"]
    assert http.get(s["MCP_PRM_URL"]).status_code == 200       # the right one is still there


def test_hostile_issuer_mismatch(http, mcp_server):
    s = mcp_server(hostile="issuer-mismatch")
    meta = http.get(s["MCP_AS_METADATA_URL"]).json()
    assert meta["issuer"] != s["MCP_AS_URL"] and meta["authorization_endpoint"] == s["MCP_AS_URL"] + "/authorize"


def test_hostile_forget_clients(http, mcp_server):
    s = mcp_server(auto_approve=True, hostile="forget-clients")
    client, tokens = login(http, s)
    assert stats(s["MCP_AS_URL"])["clients"] == []
    refused = token(http, s, client, grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                    resource=s["MCP_RESOURCE_URL"])
    assert refused.json()["error"] == "invalid_client"


def test_lifecycle_ttl_and_stdout(mcp_server):
    s = mcp_server(ttl=2)
    assert s["process"].wait(15) == 0
    assert s["process"].stdout.read() == b""


# ---------------------------------------------------------------- the consent page in the test browser

class Listener:
    """A loopback redirect target that records the query of each GET."""

    def __init__(self):
        import http.server
        import threading
        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                seen.append(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query)))
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.end_headers()
                self.wfile.write(b"<!doctype html><title>done</title><p>You can close this window.</p>")

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="needs Debian's chromium")
@pytest.mark.parametrize("action", ["approve", "deny"])
def test_consent_page_in_the_test_browser(http, mcp_server, action):
    """Tests/Browser/browser_driver.py (unchanged) clicks "Authorize" / "Cancel" on our consent page."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Browser"))
    from drive import run_browser
    s = mcp_server()
    listener = Listener()
    try:
        client = register(http, s, port=listener.port)
        verifier, challenge = pkce()
        url = s["MCP_AS_URL"] + "/authorize?" + urllib.parse.urlencode({
            "response_type": "code", "client_id": client["client_id"], "redirect_uri": client["redirect_uris"][0],
            "state": "st-b", "code_challenge": challenge, "code_challenge_method": "S256", "scope": "mcp",
            "resource": s["MCP_RESOURCE_URL"]})
        result = run_browser(url, action=action, timeout=60)
        assert result["ok"], result          # the driver: ok = the click happened and the redirect loaded
        back = [q for q in listener.seen if "state" in q]
        assert len(back) == 1 and back[0]["state"] == "st-b" and back[0]["iss"] == s["MCP_ISSUER"]
        if action == "approve":
            assert "code" in back[0]
            tokens = token(http, s, client, grant_type="authorization_code", code=back[0]["code"],
                           redirect_uri=client["redirect_uris"][0], code_verifier=verifier,
                           resource=s["MCP_RESOURCE_URL"])
            assert tokens.status_code == 200
        else:
            assert back[0]["error"] == "access_denied"
    finally:
        listener.close()


# ---------------------------------------------------------------- the second server (django-mcp-oauth)

@pytest.fixture(scope="module")
def second(tmp_path_factory):
    from mcp_fixtures import SECOND_SERVER
    process, values = start_server(SECOND_SERVER, tmp_path_factory.mktemp("mcp-second"), {})
    yield values
    stop_server(process)


def second_login_session(server):
    """A requests session signed in through Django's login form (as alice)."""
    session = requests.Session()
    session.trust_env = False
    page = session.get(server["MCP_AS_URL"] + "/accounts/login/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    done = session.post(server["MCP_AS_URL"] + "/accounts/login/", allow_redirects=False, data={
        "csrfmiddlewaretoken": csrf, "username": server["MCP_USERNAME"], "password": server["MCP_PASSWORD"],
        "next": "/"})
    assert done.status_code == 302
    return session


def second_register(http, server, port=53682, scope="mcp mcp:admin"):
    response = http.post(server["MCP_AS_URL"] + "/oauth/register", json={
        "redirect_uris": [REDIRECT.format(port=port)], "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "client_name": "sfauth", "application_type": "native", "scope": scope})
    assert response.status_code == 201, response.text
    return response.json()


def second_authorize(session, server, client, method="S256", redirect_uri=None, scope="mcp", resource=None,
                     decision="yes"):
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=") \
        if method == "S256" else verifier
    params = {"response_type": "code", "client_id": client["client_id"], "state": "s2", "scope": scope,
              "redirect_uri": redirect_uri or client["redirect_uris"][0], "code_challenge": challenge}
    if method:
        params["code_challenge_method"] = method
    if resource:
        params["resource"] = resource
    page = session.get(server["MCP_AS_URL"] + "/oauth/authorize", params=params, allow_redirects=False)
    if page.status_code != 200:
        return page, verifier
    assert 'id="authorizationForm"' in page.text
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    return session.post(page.url, data={"csrfmiddlewaretoken": csrf, "confirm": decision},
                        allow_redirects=False), verifier


def test_second_server_discovery(http, second):
    s = second
    probe = http.post(s["MCP_RESOURCE_URL"], json={})
    assert probe.status_code == 401
    # No error= without credentials (RFC 6750 §3.1); the pointer is the ROOT well-known URL.
    assert probe.headers["www-authenticate"] == f'Bearer resource_metadata="{s["MCP_PRM_URL"]}"'
    assert s["MCP_PRM_URL"] == s["MCP_RS_ORIGIN"] + "/.well-known/oauth-protected-resource"
    for url in (s["MCP_PRM_URL"], s["MCP_PRM_PATH_URL"]):
        assert http.get(url).json() == {"resource": s["MCP_RESOURCE_URL"], "authorization_servers": [s["MCP_ISSUER"]],
                                        "bearer_methods_supported": ["header"], "scopes_supported": ["mcp"]}
    meta = http.get(s["MCP_AS_METADATA_URL"]).json()
    assert meta["issuer"] == s["MCP_ISSUER"] and meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["registration_endpoint"] == s["MCP_AS_URL"] + "/oauth/register"
    assert "none" in meta["token_endpoint_auth_methods_supported"]
    assert "revocation_endpoint" not in meta and "authorization_response_iss_parameter_supported" not in meta
    assert http.get(s["MCP_AS_URL"] + "/.well-known/openid-configuration").status_code == 404
    client = second_register(http, s)
    assert client["client_id"] and "client_secret" not in client and "application_type" not in client


def test_second_server_flow_and_quirks(http, second):
    s = second
    session = second_login_session(s)
    client = second_register(http, s)
    done, verifier = second_authorize(session, s, client, resource="http://127.0.0.1:1/not-this-one")
    back = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(done.headers["location"]).query))
    assert set(back) == {"code", "state"}                  # no RFC 9207 iss; the bogus resource is ignored
    tokens = http.post(s["MCP_AS_URL"] + "/oauth/token", data={
        "grant_type": "authorization_code", "client_id": client["client_id"], "code": back["code"],
        "redirect_uri": client["redirect_uris"][0], "code_verifier": verifier}).json()   # no resource: fine
    assert tokens["scope"] == "mcp" and tokens["refresh_token"]
    who = call_tool(s["MCP_RESOURCE_URL"], tokens["access_token"], "whoami")
    assert who["client_id"] == client["client_id"] and who["resource"] == s["MCP_RESOURCE_URL"]
    # Refresh: django-mcp-oauth 0.1.0 answers WITHOUT a new refresh token (Authlib's RefreshTokenGrant.
    # INCLUDE_NEW_REFRESH_TOKEN is False and the library does not set it) yet marks the old one revoked;
    # the old one keeps working for MCP_OAUTH_REFRESH_GRACE (60 s) only. (--rotate-refresh-tokens fixes it.)
    form = {"grant_type": "refresh_token", "client_id": client["client_id"], "refresh_token": tokens["refresh_token"]}
    first = http.post(s["MCP_AS_URL"] + "/oauth/token", data=form).json()
    assert first["access_token"] and "refresh_token" not in first
    assert http.post(s["MCP_AS_URL"] + "/oauth/token", data=form).status_code == 200   # within the grace
    # Exact redirect URI (port included): 400 JSON, no redirect.
    other, _ = second_authorize(session, s, client, redirect_uri="http://127.0.0.1:53683/callback")
    assert other.status_code == 400 and other.json()["error"] == "invalid_request"
    # PKCE plain (and no method at all, which Authlib reads as plain) is accepted, although the
    # metadata lists S256 only.
    for method in ("plain", None):
        done, verifier = second_authorize(session, s, client, method=method)
        code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(done.headers["location"]).query))["code"]
        assert http.post(s["MCP_AS_URL"] + "/oauth/token", data={
            "grant_type": "authorization_code", "client_id": client["client_id"], "code": code,
            "redirect_uri": client["redirect_uris"][0], "code_verifier": verifier}).status_code == 200
    # Scopes: what the registration names (not checked against scopes_supported); more is clamped.
    done, verifier = second_authorize(session, s, client, scope="mcp mcp:admin")
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(done.headers["location"]).query))["code"]
    admin = http.post(s["MCP_AS_URL"] + "/oauth/token", data={
        "grant_type": "authorization_code", "client_id": client["client_id"], "code": code,
        "redirect_uri": client["redirect_uris"][0], "code_verifier": verifier}).json()
    assert admin["scope"] == "mcp mcp:admin"
    assert call_tool(s["MCP_RESOURCE_URL"], admin["access_token"], "admin_echo", {"text": "hi"})["echo"] == "hi"
    with pytest.raises(RuntimeError):       # a tool error, not an HTTP 403: no per-tool scopes
        call_tool(s["MCP_RESOURCE_URL"], tokens["access_token"], "admin_echo", {"text": "hi"})
    denied, _ = second_authorize(session, s, client, decision="no")
    assert "error=access_denied" in denied.headers["location"]
    with pytest.raises(McpHttpError) as refused:
        call_tool(s["MCP_RESOURCE_URL"], tokens["access_token"] + "x", "whoami")
    assert refused.value.status == 401 and 'error="invalid_token"' in refused.value.www_authenticate
    seen = stats(s["MCP_AS_URL"])
    assert seen["registrations"] >= 1 and seen["token_requests"][0]["grant_type"] == "authorization_code"


def test_second_server_refresh_without_grace_and_with_rotation(http, mcp_second_server):
    for rotate in (False, True):
        s = mcp_second_server(refresh_grace=0, rotate_refresh_tokens=rotate)
        session = second_login_session(s)
        client = second_register(http, s)
        done, verifier = second_authorize(session, s, client)
        code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(done.headers["location"]).query))["code"]
        tokens = http.post(s["MCP_AS_URL"] + "/oauth/token", data={
            "grant_type": "authorization_code", "client_id": client["client_id"], "code": code,
            "redirect_uri": client["redirect_uris"][0], "code_verifier": verifier}).json()
        form = {"grant_type": "refresh_token", "client_id": client["client_id"], "refresh_token": tokens["refresh_token"]}
        first = http.post(s["MCP_AS_URL"] + "/oauth/token", data=form)
        assert first.status_code == 200
        assert ("refresh_token" in first.json()) == rotate
        again = http.post(s["MCP_AS_URL"] + "/oauth/token", data=form)
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
        if rotate:
            form["refresh_token"] = first.json()["refresh_token"]
            assert http.post(s["MCP_AS_URL"] + "/oauth/token", data=form).status_code == 200


@pytest.mark.skipif(not os.path.exists("/usr/bin/chromium"), reason="needs Debian's chromium")
def test_second_server_login_and_consent_in_the_test_browser(http, second):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Browser"))
    from drive import run_browser
    s = second
    listener = Listener()
    try:
        client = second_register(http, s, port=listener.port)
        verifier, challenge = pkce()
        url = s["MCP_AS_URL"] + "/oauth/authorize?" + urllib.parse.urlencode({
            "response_type": "code", "client_id": client["client_id"], "redirect_uri": client["redirect_uris"][0],
            "state": "st-b", "code_challenge": challenge, "code_challenge_method": "S256", "scope": "mcp",
            "resource": s["MCP_RESOURCE_URL"]})
        result = run_browser(url, action="approve", timeout=60,
                             env={"SFAUTH_TEST_USERNAME": s["MCP_USERNAME"], "SFAUTH_TEST_PASSWORD": s["MCP_PASSWORD"]})
        assert result["ok"], result
        back = [q for q in listener.seen if "state" in q]
        assert len(back) == 1 and back[0]["code"]
        assert http.post(s["MCP_AS_URL"] + "/oauth/token", data={
            "grant_type": "authorization_code", "client_id": client["client_id"], "code": back[0]["code"],
            "redirect_uri": client["redirect_uris"][0], "code_verifier": verifier}).status_code == 200
    finally:
        listener.close()
