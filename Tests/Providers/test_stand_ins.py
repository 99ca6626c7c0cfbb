"""Tests of the provider stand-ins themselves: each documented quirk, driven with plain HTTP, and
for every provider at least one sign-in through the real headless browser (Tests/Browser).

    /work/main/.venv/bin/python -m pytest Tests/Providers -q
"""

import concurrent.futures
import os
import shutil
import socket
import urllib.parse

import pytest

import auth0 as a0
import cognito as cg
import entra as ms
import github as gh
import gitlab as gl
import google as gg
import keycloak as kc
import okta as ok
from stand_in import jwt_claims, jwt_header
from testkit import CallbackListener, FormBrowser, pkce_pair, run_browser, session

HTTP = session()
DEVICE = "urn:ietf:params:oauth:grant-type:device_code"
needs_chromium = pytest.mark.skipif(not (shutil.which("chromium") or os.path.exists("/usr/bin/chromium")),
                                    reason="chromium is not installed")


def form(text):
    return dict(urllib.parse.parse_qsl(text))


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def link(endpoint, **params):
    return endpoint + "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})


def browser_sign_in(stand_in, url, cb):
    """Sign in through headless Chromium; returns the query the listener received."""
    result = run_browser(url)
    assert result["ok"], (result["error"], result["steps"], result["stdio"][-2000:])
    path, query = cb.wait(5)
    assert stand_in.errors == []
    return query


# --------------------------------------------------------------------------------------------
# The base


def test_a_stand_in_stops_on_exit_and_records_requests():
    with gl.GitLab() as s:
        port = int(s.base_url.rsplit(":", 1)[1])
        r = HTTP.get(s.discovery_url, headers={"X-Probe": "1"}, params={"q": "v"})
        assert r.status_code == 200
        recorded = s.last("/.well-known/openid-configuration")
        assert recorded.method == "GET" and recorded.query == {"q": "v"} and recorded.headers["X-Probe"] == "1"
        HTTP.post(s.endpoint("token"), data={"grant_type": "x"})
        assert s.last("/oauth/token").form == {"grant_type": "x"}
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


# --------------------------------------------------------------------------------------------
# GitHub


def github_code(hub, cb, redirect_path="/callback", **extra):
    out = FormBrowser(hub).authorize(hub.authorize_link(cb.url(redirect_path), **extra))
    assert out.redirected, out.page
    return out


def test_github_token_answer_is_form_encoded_unless_accept_json():
    with gh.GitHub() as hub, CallbackListener() as cb:
        code = github_code(hub, cb).query["code"]
        r = HTTP.post(hub.token_url, data={"client_id": hub.client_id, "client_secret": hub.client_secret,
                                           "code": code})
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/x-www-form-urlencoded")
        token = form(r.text)
        assert token["token_type"] == "bearer" and token["access_token"].startswith("gho_")
        assert "expires_in" not in token and "refresh_token" not in token  # OAuth apps: never expire
        code2 = github_code(hub, cb).query["code"]
        r = HTTP.post(hub.token_url, headers={"Accept": "application/json"},
                      data={"client_id": hub.client_id, "client_secret": hub.client_secret, "code": code2})
        assert r.headers["Content-Type"].startswith("application/json") and "access_token" in r.json()


def test_github_errors_arrive_with_http_200():
    with gh.GitHub() as hub, CallbackListener() as cb:
        code = github_code(hub, cb).query["code"]
        r = HTTP.post(hub.token_url, data={"client_id": hub.client_id, "code": code})  # no secret
        assert r.status_code == 200 and form(r.text)["error"] == "incorrect_client_credentials"
        r = HTTP.post(hub.token_url, headers={"Accept": "application/json"},
                      data={"client_id": hub.client_id, "client_secret": hub.client_secret, "code": "nope"})
        assert r.status_code == 200 and r.json()["error"] == "bad_verification_code"
        r = HTTP.post(hub.token_url, data={"client_id": hub.client_id, "client_secret": hub.client_secret,
                                           "code": code, "redirect_uri": cb.url("/elsewhere")})
        assert r.status_code == 200 and form(r.text)["error"] == "redirect_uri_mismatch"


def test_github_identity_comes_from_get_user_and_oauth_app_tokens_never_expire():
    with gh.GitHub() as hub, CallbackListener() as cb:
        assert HTTP.get(hub.base_url + "/.well-known/openid-configuration").status_code == 404  # no OIDC
        code = github_code(hub, cb, scope="repo gist").query["code"]
        token = form(HTTP.post(hub.token_url, data={"client_id": hub.client_id, "client_secret": hub.client_secret,
                                                    "code": code}).text)
        assert token["scope"] == "repo,gist"  # comma-separated
        hub.advance(10 * 365 * 24 * 3600)
        r = HTTP.get(hub.api_url + "/user", headers=bearer(token["access_token"]))
        user = r.json()
        assert r.status_code == 200 and user["login"] == "alice" and user["id"] == 1001 and "sub" not in user
        assert r.headers["X-OAuth-Scopes"] == "repo, gist"
        assert HTTP.get(hub.api_url + "/user", headers=bearer("gho_wrong")).status_code == 401
        assert hub.requests_to("/user", server="api")  # github.com: the API is its own host


def test_github_app_user_tokens_expire_and_refresh_tokens_rotate():
    with gh.GitHub(mode="github-app") as hub, CallbackListener() as cb:
        code = github_code(hub, cb).query["code"]
        r = HTTP.post(hub.token_url, headers={"Accept": "application/json"},
                      data={"client_id": hub.client_id, "client_secret": hub.client_secret, "code": code})
        t = r.json()
        assert t["expires_in"] == 28800 and t["refresh_token_expires_in"] == 15897600 and t["scope"] == ""
        assert t["access_token"].startswith("ghu_") and t["refresh_token"].startswith("ghr_")
        refresh = {"client_id": hub.client_id, "grant_type": "refresh_token", "refresh_token": t["refresh_token"]}
        r = HTTP.post(hub.token_url, headers={"Accept": "application/json"}, data=refresh)  # no secret
        assert r.status_code == 200 and r.json()["error"] == "incorrect_client_credentials"
        r = HTTP.post(hub.token_url, headers={"Accept": "application/json"},
                      data={**refresh, "client_secret": hub.client_secret})
        t2 = r.json()
        assert "access_token" in t2 and t2["refresh_token"] != t["refresh_token"]
        assert HTTP.get(hub.api_url + "/user", headers=bearer(t["access_token"])).status_code == 401  # old one dies
        assert HTTP.get(hub.api_url + "/user", headers=bearer(t2["access_token"])).status_code == 200
        r = HTTP.post(hub.token_url, headers={"Accept": "application/json"},
                      data={**refresh, "client_secret": hub.client_secret})
        assert r.status_code == 200 and r.json()["error"] == "bad_refresh_token"  # single use
        hub.expire_access_tokens()
        assert HTTP.get(hub.api_url + "/user", headers=bearer(t2["access_token"])).status_code == 401


def test_github_redirect_rules():
    with gh.GitHub() as hub, CallbackListener() as cb:
        assert github_code(hub, cb).url.startswith(cb.url("/callback"))  # any loopback port
        assert github_code(hub, cb, "/callback/sub").query["code"]  # OAuth app: a subdirectory is fine
        out = FormBrowser(hub).authorize(hub.authorize_link(cb.url("/other"), state="s9"))
        parts = urllib.parse.urlsplit(out.url)
        assert (parts.netloc, parts.path) == ("127.0.0.1", "/callback")  # the *registered* callback URL
        assert out.query["error"] == "redirect_uri_mismatch" and out.query["state"] == "s9"
    with gh.GitHub(mode="github-app") as hub, CallbackListener() as cb:
        out = FormBrowser(hub).authorize(hub.authorize_link(cb.url("/callback/")))
        assert out.query["error"] == "redirect_uri_mismatch"  # GitHub Apps: exact, trailing slash counts


def test_github_pkce_s256_is_verified():
    with gh.GitHub() as hub, CallbackListener() as cb:
        verifier, challenge = pkce_pair()
        code = github_code(hub, cb, code_challenge=challenge, code_challenge_method="S256").query["code"]
        base = {"client_id": hub.client_id, "client_secret": hub.client_secret, "code": code}
        assert form(HTTP.post(hub.token_url, data={**base, "code_verifier": "x" * 43}).text)["error"] == \
            "bad_verification_code"
        code = github_code(hub, cb, code_challenge=challenge, code_challenge_method="S256").query["code"]
        r = HTTP.post(hub.token_url, data={**base, "code": code, "code_verifier": verifier})
        assert "access_token" in form(r.text)


def test_github_device_flow():
    with gh.GitHub() as hub:
        r = HTTP.post(hub.base_url + "/login/device/code", data={"client_id": hub.client_id, "scope": "repo"})
        d = form(r.text)  # form-encoded by default too
        assert len(d["device_code"]) == 40 and len(d["user_code"]) == 9 and d["user_code"][4] == "-"
        assert d["verification_uri"] == hub.base_url + "/login/device" and d["interval"] == "5"
        assert "verification_uri_complete" not in d
        poll = {"client_id": hub.client_id, "device_code": d["device_code"], "grant_type": DEVICE}
        r = HTTP.post(hub.token_url, data=poll)
        assert r.status_code == 200 and form(r.text)["error"] == "authorization_pending"
        r = HTTP.post(hub.token_url, data=poll)  # again at once: faster than the interval
        assert r.status_code == 200 and form(r.text)["error"] == "slow_down" and form(r.text)["interval"] == "10"
        FormBrowser(hub).device(d["verification_uri"], d["user_code"])
        hub.advance(11)
        token = form(HTTP.post(hub.token_url, data=poll).text)
        assert token["access_token"].startswith("gho_")  # no client_secret needed for the device flow
        assert form(HTTP.post(hub.token_url, data=poll).text)["error"] == "incorrect_device_code"
        d2 = form(HTTP.post(hub.base_url + "/login/device/code", data={"client_id": hub.client_id}).text)
        FormBrowser(hub, approve=False).device(d2["verification_uri"], d2["user_code"])
        assert form(HTTP.post(hub.token_url, data={**poll, "device_code": d2["device_code"]}).text)["error"] == \
            "access_denied"
        d3 = form(HTTP.post(hub.base_url + "/login/device/code", data={"client_id": hub.client_id}).text)
        hub.expire_device_codes()
        assert form(HTTP.post(hub.token_url, data={**poll, "device_code": d3["device_code"]}).text)["error"] == \
            "expired_token"


def test_github_app_device_tokens_refresh_without_the_secret():
    with gh.GitHub(mode="github-app") as hub:
        accept = {"Accept": "application/json"}
        d = HTTP.post(hub.base_url + "/login/device/code", headers=accept, data={"client_id": hub.client_id}).json()
        FormBrowser(hub).device(d["verification_uri"], d["user_code"])
        t = HTTP.post(hub.token_url, headers=accept, data={"client_id": hub.client_id, "grant_type": DEVICE,
                                                           "device_code": d["device_code"]}).json()
        assert t["expires_in"] == 28800
        r = HTTP.post(hub.token_url, headers=accept, data={"client_id": hub.client_id, "grant_type": "refresh_token",
                                                           "refresh_token": t["refresh_token"]})
        assert "access_token" in r.json()  # "Required unless the user access token was generated using the device flow"


def test_github_revocation_is_delete_applications_token():
    with gh.GitHub() as hub, CallbackListener() as cb:
        code = github_code(hub, cb).query["code"]
        token = form(HTTP.post(hub.token_url, data={"client_id": hub.client_id, "client_secret": hub.client_secret,
                                                    "code": code}).text)["access_token"]
        url = f"{hub.api_url}/applications/{hub.client_id}/token"
        assert HTTP.delete(url, auth=(hub.client_id, "wrong"), json={"access_token": token}).status_code == 401
        assert HTTP.delete(url, auth=(hub.client_id, hub.client_secret), json={"access_token": token}).status_code == 204
        assert HTTP.get(hub.api_url + "/user", headers=bearer(token)).status_code == 401
        assert HTTP.delete(url, auth=(hub.client_id, hub.client_secret), json={}).status_code == 422


def test_github_enterprise_server_layout():
    with gh.GitHub(enterprise=True) as hub, CallbackListener() as cb:
        assert hub.api_url == hub.base_url + "/api/v3" and list(hub._servers) == ["main"]
        code = github_code(hub, cb).query["code"]
        token = form(HTTP.post(hub.token_url, data={"client_id": hub.client_id, "client_secret": hub.client_secret,
                                                    "code": code}).text)["access_token"]
        assert HTTP.get(hub.base_url + "/api/v3/user", headers=bearer(token)).json()["login"] == "alice"
        assert HTTP.get(hub.base_url + "/user", headers=bearer(token)).status_code == 404


@needs_chromium
def test_github_browser_sign_in_and_deny():
    with gh.GitHub() as hub, CallbackListener() as cb:
        query = browser_sign_in(hub, hub.authorize_link(cb.url("/callback"), state="b1"), cb)
        assert query["state"] == "b1" and query["code"]
        assert "access_token" in form(HTTP.post(hub.token_url, data={
            "client_id": hub.client_id, "client_secret": hub.client_secret, "code": query["code"]}).text)
    with gh.GitHub() as hub, CallbackListener() as cb:
        result = run_browser(hub.authorize_link(cb.url("/callback"), state="b2"), action="deny")
        assert result["ok"], result
        assert cb.wait(5)[1]["error"] == "access_denied"


@needs_chromium
def test_github_browser_device_verification():
    with gh.GitHub() as hub:
        d = HTTP.post(hub.base_url + "/login/device/code", headers={"Accept": "application/json"},
                      data={"client_id": hub.client_id}).json()
        result = run_browser(d["verification_uri"], user_code=d["user_code"])
        assert result["ok"] and result["device_status"] == "authorized", result
        r = HTTP.post(hub.token_url, headers={"Accept": "application/json"},
                      data={"client_id": hub.client_id, "device_code": d["device_code"], "grant_type": DEVICE})
        assert "access_token" in r.json()
        result = run_browser(d["verification_uri"], user_code="BBBB-CCCC")
        assert not result["ok"] and "Incorrect user code" in result["error"]


# --------------------------------------------------------------------------------------------
# Microsoft Entra ID


def entra_code(m, cb, client_id=None, redirect=None, **extra):
    verifier, challenge = pkce_pair()
    redirect = redirect or cb.url("", host="localhost")
    out = FormBrowser(m).authorize(m.authorize_link(redirect, client_id=client_id, code_challenge=challenge,
                                                    code_challenge_method="S256", **extra))
    assert out.redirected, out.page
    return out.query["code"], verifier, redirect


def test_entra_metadata_issuer_templates_and_missing_fields():
    with ms.Entra() as m:
        for tenant, issuer in (("common", m.base_url + "/{tenantid}/v2.0"),
                               ("organizations", m.base_url + "/{tenantid}/v2.0"),
                               ("consumers", f"{m.base_url}/{ms.MSA_TENANT}/v2.0"),
                               (ms.ORG_TENANT, f"{m.base_url}/{ms.ORG_TENANT}/v2.0")):
            md = HTTP.get(m.metadata_url(tenant)).json()
            assert md["issuer"] == issuer
            assert md["authorization_endpoint"] == f"{m.base_url}/{tenant}/oauth2/v2.0/authorize"
            assert "code_challenge_methods_supported" not in md and "revocation_endpoint" not in md
            assert md["userinfo_endpoint"] == m.url("graph") + "/oidc/userinfo"
        r = HTTP.get(m.metadata_url("no-such-tenant"))
        assert r.status_code == 400 and r.json()["error_codes"] == [90002]


def test_entra_tokens_carry_the_real_tenant_and_one_resource():
    with ms.Entra() as m, CallbackListener() as cb:
        code, verifier, redirect = entra_code(m, cb)
        r = HTTP.post(m.token_url(), data={"grant_type": "authorization_code", "client_id": m.client_id, "code": code,
                                           "redirect_uri": redirect, "code_verifier": verifier})
        t = r.json()
        idt = jwt_claims(t["id_token"])
        assert idt["tid"] == ms.ORG_TENANT and idt["iss"] == f"{m.base_url}/{ms.ORG_TENANT}/v2.0"
        assert jwt_claims(t["access_token"])["aud"] == ms.GRAPH_AUD and t["ext_expires_in"] == t["expires_in"]
        assert HTTP.get(m.url("graph") + "/oidc/userinfo", headers=bearer(t["access_token"])).status_code == 200
        assert HTTP.get(m.url("graph") + "/api/echo", headers=bearer(t["access_token"])).status_code == 401
        # A refresh for the test API: a token for that resource only (first-scope rule).
        r = HTTP.post(m.token_url(), data={"grant_type": "refresh_token", "client_id": m.client_id,
                                           "refresh_token": t["refresh_token"],
                                           "scope": f"{ms.TEST_API}/read https://graph.microsoft.com/User.Read"})
        assert r.status_code == 400 and r.json()["error_codes"] == [65001]  # never consented to the test API


def test_entra_two_resources_in_one_token_request_is_aadsts28000():
    with ms.Entra() as m, CallbackListener() as cb:
        scope = f"openid offline_access User.Read {ms.TEST_API}/read"
        code, verifier, redirect = entra_code(m, cb, scope=scope)  # /authorize may span resources
        data = {"grant_type": "authorization_code", "client_id": m.client_id, "code": code, "redirect_uri": redirect,
                "code_verifier": verifier}
        r = HTTP.post(m.token_url(), data=data)
        assert r.status_code == 400 and r.json()["error_codes"] == [28000]
        assert r.json()["error_description"].startswith("AADSTS28000: ") and r.json()["trace_id"]
        t = HTTP.post(m.token_url(), data={**data, "scope": f"{ms.TEST_API}/read offline_access"}).json()
        assert jwt_claims(t["access_token"])["aud"] == ms.TEST_API
        assert HTTP.get(m.url("graph") + "/api/echo", headers=bearer(t["access_token"])).status_code == 200
        r = HTTP.post(m.token_url(), data={"grant_type": "refresh_token", "client_id": m.client_id,
                                           "refresh_token": t["refresh_token"], "scope": "User.Read"})
        assert jwt_claims(r.json()["access_token"])["aud"] == ms.GRAPH_AUD  # consented at /authorize
        again = HTTP.post(m.token_url(), data={"grant_type": "refresh_token", "client_id": m.client_id,
                                               "refresh_token": t["refresh_token"]})
        assert again.status_code == 200  # refresh tokens aren't revoked when used


def test_entra_refresh_token_only_with_offline_access_and_string_expires_in():
    with ms.Entra(expires_in_as_string=True) as m, CallbackListener() as cb:
        code, verifier, redirect = entra_code(m, cb, scope="openid User.Read")
        t = HTTP.post(m.token_url(), data={"grant_type": "authorization_code", "client_id": m.client_id, "code": code,
                                           "redirect_uri": redirect, "code_verifier": verifier}).json()
        assert "refresh_token" not in t and t["expires_in"] == "3599"


def test_entra_client_authentication_errors():
    with ms.Entra() as m, CallbackListener() as cb:
        code, verifier, redirect = entra_code(m, cb, client_id=ms.WEB_CLIENT_ID, redirect=cb.url("/callback", "localhost"))
        data = {"grant_type": "authorization_code", "client_id": ms.WEB_CLIENT_ID, "code": code,
                "redirect_uri": redirect, "code_verifier": verifier}
        r = HTTP.post(m.token_url(), data=data)
        assert r.status_code == 401 and r.json()["error"] == "invalid_client" and r.json()["error_codes"] == [7000218]
        assert HTTP.post(m.token_url(), data={**data, "client_secret": ms.WEB_CLIENT_SECRET}).status_code == 200
        r = HTTP.post(m.token_url(), data={"grant_type": "refresh_token", "client_id": m.client_id,
                                           "client_secret": "x", "refresh_token": "y"})
        assert r.json()["error_codes"] == [700025]  # a public client must not send a secret
        code, verifier, redirect = entra_code(m, cb)
        r = HTTP.post(m.token_url(), data={"grant_type": "authorization_code", "client_id": m.client_id, "code": code,
                                           "redirect_uri": redirect, "code_verifier": "w" * 43})
        assert r.json()["error_codes"] == [50148]  # PKCE enforced when sent


def test_entra_unregistered_redirect_is_an_error_page_not_a_redirect():
    with ms.Entra() as m, CallbackListener() as cb:
        out = FormBrowser(m).authorize(m.authorize_link(cb.url("/")))  # 127.0.0.1 is not registered
        assert not out.redirected and out.status == 400 and "AADSTS50011" in out.page
        assert cb.hits == []


def test_entra_device_flow():
    with ms.Entra() as m:
        d = HTTP.post(f"{m.base_url}/organizations/oauth2/v2.0/devicecode",
                      data={"client_id": m.client_id, "scope": "openid offline_access User.Read"}).json()
        assert "verification_uri_complete" not in d and d["verification_uri"] == m.base_url + "/devicelogin"
        assert d["user_code"] in d["message"]
        poll = {"grant_type": DEVICE, "client_id": m.client_id, "device_code": d["device_code"]}
        assert HTTP.post(m.token_url("organizations"), data=poll).json()["error"] == "authorization_pending"
        FormBrowser(m, approve=False).device(d["verification_uri"], d["user_code"])
        assert HTTP.post(m.token_url("organizations"), data=poll).json()["error"] == "authorization_declined"


@needs_chromium
def test_entra_browser_sign_in_and_unregistered_redirect_page():
    with ms.Entra() as m, CallbackListener() as cb:
        verifier, challenge = pkce_pair()
        redirect = cb.url("", host="localhost")
        query = browser_sign_in(m, m.authorize_link(redirect, code_challenge=challenge,
                                                    code_challenge_method="S256"), cb)
        t = HTTP.post(m.token_url(), data={"grant_type": "authorization_code", "client_id": m.client_id,
                                           "code": query["code"], "redirect_uri": redirect,
                                           "code_verifier": verifier}).json()
        assert jwt_claims(t["id_token"])["tid"] == ms.ORG_TENANT
        result = run_browser(m.authorize_link(cb.url("/")))
        assert not result["ok"] and "AADSTS50011" in result["error"], result


# --------------------------------------------------------------------------------------------
# Google


def google_code(g, cb, browser=None, **extra):
    verifier, challenge = pkce_pair()
    md = HTTP.get(g.discovery_url).json()
    url = link(md["authorization_endpoint"], client_id=g.client_id, redirect_uri=cb.url("/"), response_type="code",
               scope="openid email", code_challenge=challenge, code_challenge_method="S256", **extra)
    out = (browser or FormBrowser(g)).authorize(url)
    assert out.redirected, out.page
    return out.query["code"], verifier


def google_exchange(g, cb, code, verifier, secret=True):
    data = {"grant_type": "authorization_code", "client_id": g.client_id, "code": code,
            "redirect_uri": cb.url("/"), "code_verifier": verifier}
    if secret:
        data["client_secret"] = g.client_secret
    return HTTP.post(g.endpoint("token"), data=data)


def test_google_discovery_points_at_other_hosts():
    with gg.Google() as g:
        md = HTTP.get(g.discovery_url).json()
        assert md["issuer"] == g.base_url and md["code_challenge_methods_supported"] == ["S256", "plain"]
        assert md["token_endpoint"] == g.url("oauth2") + "/token" != g.base_url + "/token"
        assert md["userinfo_endpoint"] == g.url("apis") + "/v1/userinfo"
        assert md["device_authorization_endpoint"] == g.url("oauth2") + "/device/code"
        for redirect_uri, error in (("urn:ietf:wg:oauth:2.0:oob", "invalid_request"),
                                    ("https://example.com/cb", "redirect_uri_mismatch")):
            out = FormBrowser(g).authorize(link(md["authorization_endpoint"], client_id=g.client_id,
                                                redirect_uri=redirect_uri, response_type="code", scope="openid"))
            assert not out.redirected and f"Error: {error}" in out.page


def test_google_desktop_client_needs_its_secret_at_exchange_and_refresh():
    with gg.Google() as g, CallbackListener() as cb:
        code, verifier = google_code(g, cb, access_type="offline")
        r = google_exchange(g, cb, code, verifier, secret=False)
        assert r.status_code == 400 and r.json() == {"error": "invalid_request",
                                                     "error_description": "client_secret is missing."}
        t = google_exchange(g, cb, code, verifier).json()
        assert t["refresh_token"] and t["expires_in"] == 3599
        assert t["scope"] == "openid https://www.googleapis.com/auth/userinfo.email"
        assert jwt_claims(t["id_token"])["iss"] == g.base_url and jwt_claims(t["id_token"])["email"]
        refresh = {"grant_type": "refresh_token", "client_id": g.client_id, "refresh_token": t["refresh_token"]}
        r = HTTP.post(g.endpoint("token"), data=refresh)
        assert r.status_code == 400 and r.json()["error_description"] == "client_secret is missing."
        r = HTTP.post(g.endpoint("token"), data={**refresh, "client_secret": g.client_secret})
        assert r.status_code == 200 and "refresh_token" not in r.json()
        info = HTTP.get(g.endpoint("userinfo"), headers=bearer(r.json()["access_token"])).json()
        assert info["email"] == "alice@example.com" and info["sub"]


def test_google_refresh_token_only_offline_and_with_consent_shown():
    with gg.Google() as g, CallbackListener() as cb:
        code, verifier = google_code(g, cb)  # online access
        assert "refresh_token" not in google_exchange(g, cb, code, verifier).json()
        code, verifier = google_code(g, cb, access_type="offline")  # consent not shown again
        assert "refresh_token" not in google_exchange(g, cb, code, verifier).json()
        code, verifier = google_code(g, cb, access_type="offline", prompt="consent")
        assert "refresh_token" in google_exchange(g, cb, code, verifier).json()


def test_google_testing_mode_refresh_tokens_die_after_seven_days_and_revoke():
    with gg.Google(publishing_status="testing") as g, CallbackListener() as cb:
        code, verifier = google_code(g, cb, access_type="offline")
        t = google_exchange(g, cb, code, verifier).json()
        refresh = {"grant_type": "refresh_token", "client_id": g.client_id, "client_secret": g.client_secret,
                   "refresh_token": t["refresh_token"]}
        g.advance(6 * 24 * 3600)
        assert HTTP.post(g.endpoint("token"), data=refresh).status_code == 200
        g.advance(2 * 24 * 3600)
        r = HTTP.post(g.endpoint("token"), data=refresh)
        assert r.status_code == 400 and r.json() == {"error": "invalid_grant",
                                                     "error_description": "Token has been expired or revoked."}
    with gg.Google() as g, CallbackListener() as cb:
        code, verifier = google_code(g, cb, access_type="offline")
        t = google_exchange(g, cb, code, verifier).json()
        assert HTTP.post(g.endpoint("revoke"), data={"token": t["refresh_token"]}).status_code == 200
        assert HTTP.get(g.endpoint("userinfo"), headers=bearer(t["access_token"])).status_code == 401
        assert HTTP.post(g.endpoint("revoke"), data={"token": t["refresh_token"]}).status_code == 400


def test_google_device_flow_says_verification_url():
    with gg.Google() as g:
        r = HTTP.post(g.endpoint("device"), data={"client_id": g.client_id, "scope": "email"})
        assert r.status_code == 401 and r.json()["error"] == "invalid_client"  # Desktop clients can't
        d = HTTP.post(g.endpoint("device"), data={"client_id": gg.TV_ID, "scope": "openid email"}).json()
        assert d["verification_url"] == g.base_url + "/device" and "verification_uri" not in d
        poll = {"client_id": gg.TV_ID, "device_code": d["device_code"], "grant_type": DEVICE}
        assert HTTP.post(g.endpoint("token"), data=poll).json()["error_description"] == "client_secret is missing."
        poll["client_secret"] = gg.TV_SECRET
        r = HTTP.post(g.endpoint("token"), data=poll)
        assert r.status_code == 428 and r.json()["error"] == "authorization_pending"
        FormBrowser(g).device(d["verification_url"], d["user_code"])
        g.advance(10)
        assert "refresh_token" in HTTP.post(g.endpoint("token"), data=poll).json()


@needs_chromium
def test_google_browser_sign_in():
    with gg.Google() as g, CallbackListener() as cb:
        verifier, challenge = pkce_pair()
        url = link(g.endpoint("authorize"), client_id=g.client_id, redirect_uri=cb.url("/"), response_type="code",
                   scope="openid email", access_type="offline", code_challenge=challenge,
                   code_challenge_method="S256")
        query = browser_sign_in(g, url, cb)
        assert "refresh_token" in google_exchange(g, cb, query["code"], verifier).json()


# --------------------------------------------------------------------------------------------
# GitLab


def gitlab_code(lab, cb, client_id=gl.PUBLIC_ID):
    verifier, challenge = pkce_pair()
    url = link(lab.endpoint("authorize"), client_id=client_id, redirect_uri=cb.url("/"), response_type="code",
               scope="openid read_user", state="g1", code_challenge=challenge, code_challenge_method="S256")
    out = FormBrowser(lab).authorize(url)
    assert out.redirected, out.page
    return out.query["code"], verifier


def test_gitlab_pkce_public_client_rotating_refresh_and_apis():
    with gl.GitLab() as lab, CallbackListener() as cb:
        md = HTTP.get(lab.discovery_url).json()
        assert md["issuer"] == lab.base_url and "code_challenge_methods_supported" not in md
        assert md["device_authorization_endpoint"] == lab.base_url + "/oauth/authorize_device"
        code, verifier = gitlab_code(lab, cb)
        t = HTTP.post(lab.endpoint("token"), data={"grant_type": "authorization_code", "client_id": gl.PUBLIC_ID,
                                                   "code": code, "redirect_uri": cb.url("/"),
                                                   "code_verifier": verifier}).json()
        assert t["expires_in"] == 7200 and t["created_at"] and jwt_claims(t["id_token"])["sub"] == "1001"
        r = HTTP.post(lab.endpoint("token"), data={"grant_type": "refresh_token", "client_id": gl.PUBLIC_ID,
                                                   "refresh_token": t["refresh_token"]})
        t2 = r.json()
        assert HTTP.get(lab.base_url + "/api/v4/user", headers=bearer(t["access_token"])).status_code == 401
        assert HTTP.get(lab.base_url + "/api/v4/user", headers=bearer(t2["access_token"])).json()["username"] == "alice"
        r = HTTP.post(lab.endpoint("token"), data={"grant_type": "refresh_token", "client_id": gl.PUBLIC_ID,
                                                   "refresh_token": t["refresh_token"]})
        assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
        assert HTTP.get(lab.endpoint("userinfo"), headers=bearer(t2["access_token"])).json()["nickname"] == "alice"
        r = HTTP.post(lab.endpoint("revoke"), data={"client_id": gl.PUBLIC_ID, "token": t2["access_token"]})
        assert r.status_code == 200 and r.json() == {}
        assert HTTP.get(lab.endpoint("userinfo"), headers=bearer(t2["access_token"])).status_code == 401
        lab.expire_refresh_tokens()
        r = HTTP.post(lab.endpoint("token"), data={"grant_type": "refresh_token", "client_id": gl.PUBLIC_ID,
                                                   "refresh_token": t2["refresh_token"]})
        assert r.status_code == 400 and r.json()["error"] == "invalid_grant"


def test_gitlab_confidential_client_needs_its_secret():
    with gl.GitLab() as lab, CallbackListener() as cb:
        code, verifier = gitlab_code(lab, cb, gl.CONFIDENTIAL_ID)
        data = {"grant_type": "authorization_code", "client_id": gl.CONFIDENTIAL_ID, "code": code,
                "redirect_uri": cb.url("/"), "code_verifier": verifier}
        r = HTTP.post(lab.endpoint("token"), data=data)
        assert r.status_code == 401 and r.json()["error"] == "invalid_client"
        assert HTTP.post(lab.endpoint("token"), data=data, auth=(gl.CONFIDENTIAL_ID, gl.CONFIDENTIAL_SECRET)).ok


@needs_chromium
def test_gitlab_browser_sign_in():
    with gl.GitLab() as lab, CallbackListener() as cb:
        url = link(lab.endpoint("authorize"), client_id=gl.PUBLIC_ID, redirect_uri=cb.url("/"), response_type="code",
                   scope="read_user", state="gb")
        assert browser_sign_in(lab, url, cb)["state"] == "gb"


# --------------------------------------------------------------------------------------------
# Okta


def okta_tokens(o, cb, scope="openid profile offline_access"):
    verifier, challenge = pkce_pair()
    o.allow_redirect_uri(cb.url("/callback"))
    url = link(o.endpoint("authorize"), client_id=o.client_id, redirect_uri=cb.url("/callback"),
               response_type="code", scope=scope, state="o1", code_challenge=challenge, code_challenge_method="S256")
    out = FormBrowser(o).authorize(url)
    assert out.redirected, out.page
    return HTTP.post(o.endpoint("token"), data={"grant_type": "authorization_code", "client_id": o.client_id,
                                                "code": out.query["code"], "redirect_uri": cb.url("/callback"),
                                                "code_verifier": verifier}).json()


def test_okta_custom_authorization_server():
    with ok.Okta(server="default") as o, CallbackListener() as cb:
        md = HTTP.get(o.discovery_url).json()
        assert md["issuer"] == o.base_url + "/oauth2/default"
        assert md["token_endpoint"] == o.base_url + "/oauth2/default/v1/token"
        t = okta_tokens(o, cb)
        at = jwt_claims(t["access_token"])
        assert at["aud"] == "api://default" and jwt_header(t["access_token"])["kid"] in \
            [k["kid"] for k in HTTP.get(md["jwks_uri"]).json()["keys"]]
        assert HTTP.get(o.base_url + "/api/echo", headers=bearer(t["access_token"])).status_code == 200
        assert HTTP.get(o.base_url + "/api/v1/users/me", headers=bearer(t["access_token"])).status_code == 401
        r = HTTP.post(o.endpoint("token"), data={"grant_type": "refresh_token", "client_id": o.client_id,
                                                 "refresh_token": t["refresh_token"]})
        assert r.json()["refresh_token"] == t["refresh_token"]  # not rotated by default


def test_okta_org_authorization_server_tokens_are_for_okta_apis_only():
    with ok.Okta(server="org") as o, CallbackListener() as cb:
        md = HTTP.get(o.discovery_url).json()
        assert md["issuer"] == o.base_url and md["authorization_endpoint"] == o.base_url + "/oauth2/v1/authorize"
        t = okta_tokens(o, cb)
        assert jwt_claims(t["access_token"])["aud"] == o.base_url
        published = [k["kid"] for k in HTTP.get(md["jwks_uri"]).json()["keys"]]
        assert jwt_header(t["access_token"])["kid"] not in published  # can't be validated by you
        assert jwt_header(t["id_token"])["kid"] in published
        assert HTTP.get(o.base_url + "/api/v1/users/me", headers=bearer(t["access_token"])).status_code == 200
        assert HTTP.get(o.base_url + "/api/echo", headers=bearer(t["access_token"])).status_code == 401
        assert HTTP.get(o.endpoint("userinfo"), headers=bearer(t["access_token"])).status_code == 200


def test_okta_offline_access_pkce_and_strict_redirects():
    with ok.Okta() as o, CallbackListener() as cb:
        assert "refresh_token" not in okta_tokens(o, cb, scope="openid profile")
        out = FormBrowser(o).authorize(link(o.endpoint("authorize"), client_id=o.client_id,
                                            redirect_uri=cb.url("/callback"), response_type="code", scope="openid"))
        assert out.query["error"] == "invalid_request" and "PKCE" in out.query["error_description"]
        out = FormBrowser(o).authorize(link(o.endpoint("authorize"), client_id=o.client_id, response_type="code",
                                            redirect_uri=cb.url("/callback").replace(str(cb.port), "1"),
                                            scope="openid", code_challenge="x" * 43, code_challenge_method="S256"))
        assert not out.redirected and "Login redirect URI" in out.page  # the port counts


@needs_chromium
def test_okta_browser_sign_in():
    with ok.Okta() as o, CallbackListener() as cb:
        verifier, challenge = pkce_pair()
        o.allow_redirect_uri(cb.url("/callback"))
        url = link(o.endpoint("authorize"), client_id=o.client_id, redirect_uri=cb.url("/callback"),
                   response_type="code", scope="openid", state="ob", code_challenge=challenge,
                   code_challenge_method="S256")
        assert browser_sign_in(o, url, cb)["state"] == "ob"


# --------------------------------------------------------------------------------------------
# Auth0


def auth0_tokens(z, cb, scope="openid profile offline_access", audience=None):
    verifier, challenge = pkce_pair()
    z.allow_redirect_uri(cb.url("/callback"))
    url = link(z.endpoint("authorize"), client_id=z.client_id, redirect_uri=cb.url("/callback"), response_type="code",
               scope=scope, audience=audience, code_challenge=challenge, code_challenge_method="S256")
    out = FormBrowser(z).authorize(url)
    assert out.redirected, out.page
    return HTTP.post(z.endpoint("token"), data={"grant_type": "authorization_code", "client_id": z.client_id,
                                                "code": out.query["code"], "redirect_uri": cb.url("/callback"),
                                                "code_verifier": verifier}).json()


def test_auth0_issuer_ends_with_slash_and_audience_decides_the_token_format():
    with a0.Auth0() as z, CallbackListener() as cb:
        md = HTTP.get(z.discovery_url).json()
        assert md["issuer"] == z.base_url + "/" and md["token_endpoint"] == z.base_url + "/oauth/token"
        t = auth0_tokens(z, cb)
        assert jwt_claims(t["id_token"])["iss"] == z.base_url + "/"
        assert t["access_token"].count(".") == 0  # opaque
        assert HTTP.get(z.endpoint("userinfo"), headers=bearer(t["access_token"])).status_code == 200
        assert HTTP.get(z.base_url + "/api/echo", headers=bearer(t["access_token"])).status_code == 401
        t = auth0_tokens(z, cb, audience=a0.API_AUDIENCE)
        assert jwt_claims(t["access_token"])["aud"] == [a0.API_AUDIENCE, z.base_url + "/userinfo"]
        assert HTTP.get(z.base_url + "/api/echo", headers=bearer(t["access_token"])).status_code == 200
        assert "refresh_token" not in auth0_tokens(z, cb, scope="openid")  # offline_access needed


def test_auth0_refresh_token_reuse_revokes_the_family():
    with a0.Auth0() as z, CallbackListener() as cb:
        t = auth0_tokens(z, cb)
        refresh = {"grant_type": "refresh_token", "client_id": z.client_id}
        t2 = HTTP.post(z.endpoint("token"), data={**refresh, "refresh_token": t["refresh_token"]}).json()
        assert t2["refresh_token"] != t["refresh_token"]
        r = HTTP.post(z.endpoint("token"), data={**refresh, "refresh_token": t["refresh_token"]})  # reuse
        assert r.status_code == 403 and r.json() == {"error": "invalid_grant",
                                                     "error_description": "Unknown or invalid refresh token."}
        r = HTTP.post(z.endpoint("token"), data={**refresh, "refresh_token": t2["refresh_token"]})
        assert r.status_code == 403  # the newest one died with the family


def test_auth0_device_flow_expired_token_once_then_invalid_grant():
    with a0.Auth0() as z:
        d = HTTP.post(z.endpoint("device"), data={"client_id": z.client_id, "scope": "openid"}).json()
        assert d["verification_uri_complete"].startswith(z.base_url + "/activate?user_code=")
        poll = {"grant_type": DEVICE, "client_id": z.client_id, "device_code": d["device_code"]}
        assert HTTP.post(z.endpoint("token"), data=poll).json()["error"] == "authorization_pending"
        z.expire_device_codes()
        assert HTTP.post(z.endpoint("token"), data=poll).json()["error"] == "expired_token"
        assert HTTP.post(z.endpoint("token"), data=poll).json()["error"] == "invalid_grant"


@needs_chromium
def test_auth0_browser_sign_in():
    with a0.Auth0() as z, CallbackListener() as cb:
        z.allow_redirect_uri(cb.url("/callback"))
        url = link(z.endpoint("authorize"), client_id=z.client_id, redirect_uri=cb.url("/callback"),
                   response_type="code", scope="openid", state="ab")
        assert browser_sign_in(z, url, cb)["state"] == "ab"


# --------------------------------------------------------------------------------------------
# Keycloak


def keycloak_tokens(k, cb, scope="openid"):
    url = link(k.endpoint("authorize"), client_id=k.client_id, redirect_uri=cb.url("/cb"), response_type="code",
               scope=scope, state="k1")
    out = FormBrowser(k).authorize(url)
    assert out.redirected, out.page
    t = HTTP.post(k.endpoint("token"), data={"grant_type": "authorization_code", "client_id": k.client_id,
                                             "code": out.query["code"], "redirect_uri": cb.url("/cb")}).json()
    return out, t


def test_keycloak_realm_paths_and_rfc9207_by_version():
    with kc.Keycloak() as k, CallbackListener() as cb:
        md = HTTP.get(k.discovery_url).json()
        assert md["issuer"] == k.base_url + "/realms/sfauth"
        assert md["token_endpoint"] == k.base_url + "/realms/sfauth/protocol/openid-connect/token"
        assert md["authorization_response_iss_parameter_supported"] is True
        out, t = keycloak_tokens(k, cb)
        assert out.query["iss"] == md["issuer"]
        assert t["refresh_expires_in"] == 1800 and t["expires_in"] == 300 and "not-before-policy" in t
        assert t["scope"] == "openid profile email"  # default client scopes come along
    with kc.Keycloak(version=22) as k, CallbackListener() as cb:
        assert "authorization_response_iss_parameter_supported" not in HTTP.get(k.discovery_url).json()
        out, _ = keycloak_tokens(k, cb)
        assert "iss" not in out.query
        out = FormBrowser(k).authorize(link(k.endpoint("authorize"), client_id=k.client_id, response_type="code",
                                            redirect_uri=cb.url("/cb", host="localhost"), scope="openid"))
        assert not out.redirected and "Invalid parameter: redirect_uri" in out.page
    with kc.Keycloak(version=16) as k:
        assert HTTP.get(k.discovery_url).json()["issuer"] == k.base_url + "/auth/realms/sfauth"


def test_keycloak_offline_tokens_and_refresh_token_revocation_setting():
    with kc.Keycloak() as k, CallbackListener() as cb:
        _, t = keycloak_tokens(k, cb, scope="openid offline_access")
        assert t["refresh_expires_in"] == 0
        refresh = {"grant_type": "refresh_token", "client_id": k.client_id, "refresh_token": t["refresh_token"]}
        assert HTTP.post(k.endpoint("token"), data=refresh).ok
        assert HTTP.post(k.endpoint("token"), data=refresh).ok  # "Revoke Refresh Token" is off by default
    with kc.Keycloak(revoke_refresh_token=True) as k, CallbackListener() as cb:
        _, t = keycloak_tokens(k, cb)
        refresh = {"grant_type": "refresh_token", "client_id": k.client_id, "refresh_token": t["refresh_token"]}
        assert HTTP.post(k.endpoint("token"), data=refresh).ok
        r = HTTP.post(k.endpoint("token"), data=refresh)
        assert r.status_code == 400 and r.json()["error"] == "invalid_grant"


@needs_chromium
def test_keycloak_browser_sign_in():
    with kc.Keycloak() as k, CallbackListener() as cb:
        url = link(k.endpoint("authorize"), client_id=k.client_id, redirect_uri=cb.url("/cb"), response_type="code",
                   scope="openid", state="kb")
        query = browser_sign_in(k, url, cb)
        assert query["state"] == "kb" and query["iss"] == k.issuer


# --------------------------------------------------------------------------------------------
# Amazon Cognito


def cognito_tokens(c, cb):
    verifier, challenge = pkce_pair()
    c.allow_redirect_uri(cb.url("/callback"))
    md = HTTP.get(c.discovery_url).json()
    url = link(md["authorization_endpoint"], client_id=c.client_id, redirect_uri=cb.url("/callback"),
               response_type="code", scope="openid email", code_challenge=challenge, code_challenge_method="S256")
    out = FormBrowser(c).authorize(url)
    assert out.redirected, out.page
    return md, HTTP.post(md["token_endpoint"], data={"grant_type": "authorization_code", "client_id": c.client_id,
                                                     "code": out.query["code"], "redirect_uri": cb.url("/callback"),
                                                     "code_verifier": verifier}).json()


def test_cognito_issuer_host_differs_from_the_domain():
    with cg.Cognito() as c, CallbackListener() as cb:
        md, t = cognito_tokens(c, cb)
        assert md["issuer"] == f"{c.base_url}/{cg.POOL_ID}"
        assert md["authorization_endpoint"] == c.domain_url + "/oauth2/authorize"
        assert md["token_endpoint"] == c.domain_url + "/oauth2/token" and md["userinfo_endpoint"].endswith("/oauth2/userInfo")
        assert HTTP.get(c.domain_url + "/.well-known/openid-configuration").status_code == 404
        assert c.last("/login", server="domain") is not None  # the hosted UI is on the domain
        out = FormBrowser(c).authorize(link(md["authorization_endpoint"], client_id=c.client_id, response_type="code",
                                            redirect_uri="http://localhost:9/callback", scope="openid"))
        assert not out.redirected and out.status == 400  # only the registered port


def test_cognito_access_tokens_have_no_aud():
    with cg.Cognito() as c, CallbackListener() as cb:
        md, t = cognito_tokens(c, cb)
        at, idt = jwt_claims(t["access_token"]), jwt_claims(t["id_token"])
        assert "aud" not in at and at["client_id"] == c.client_id and at["token_use"] == "access"
        assert idt["aud"] == c.client_id and idt["token_use"] == "id" and idt["iss"] == md["issuer"]
        assert HTTP.get(md["userinfo_endpoint"], headers=bearer(t["access_token"])).json()["username"] == "alice"
        r = HTTP.post(md["token_endpoint"], data={"grant_type": "refresh_token", "client_id": c.client_id,
                                                  "refresh_token": t["refresh_token"]})
        assert r.ok and "refresh_token" not in r.json()
        assert HTTP.post(md["revocation_endpoint"], data={"client_id": c.client_id,
                                                          "token": t["refresh_token"]}).status_code == 200
        assert HTTP.get(md["userinfo_endpoint"], headers=bearer(t["access_token"])).status_code == 401


@needs_chromium
def test_cognito_browser_sign_in():
    with cg.Cognito() as c, CallbackListener() as cb:
        c.allow_redirect_uri(cb.url("/callback"))
        md = HTTP.get(c.discovery_url).json()
        url = link(md["authorization_endpoint"], client_id=c.client_id, redirect_uri=cb.url("/callback"),
                   response_type="code", scope="openid", state="cb")
        assert browser_sign_in(c, url, cb)["state"] == "cb"


@needs_chromium
def test_browser_device_verification_pages():
    """The device pages of the other stand-ins, driven by the real browser (two at a time): with
    the complete URI where the provider has one, else the plain URI and the typed user code
    (Entra's 9-character codes, Google's verification_url)."""
    def one(make):
        with make() as s:
            client_id = gg.TV_ID if isinstance(s, gg.Google) else s.client_id
            url = f"{s.base_url}/common/oauth2/v2.0/devicecode" if isinstance(s, ms.Entra) else s.endpoint("device")
            d = HTTP.post(url, data={"client_id": client_id, "scope": "openid"}).json()
            if "verification_uri_complete" in d:
                result = run_browser(d["verification_uri_complete"])
            else:
                result = run_browser(d.get("verification_uri") or d["verification_url"], user_code=d["user_code"])
            approved = s.device_grants[d["device_code"]].status == "approved"
            return type(s).__name__, result["ok"] and result["device_status"] == "authorized" and approved \
                and s.errors == [], result

    makers = [gl.GitLab, kc.Keycloak, gg.Google, ms.Entra, ok.Okta, a0.Auth0]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(one, makers))
    assert [name for name, ok_, _ in outcomes if not ok_] == [], outcomes


def test_every_stand_in_answers_only_on_loopback():
    for cls in (gh.GitHub, gl.GitLab, gg.Google, ms.Entra, ok.Okta, a0.Auth0, kc.Keycloak, cg.Cognito):
        with cls() as s:
            assert all(server.server_address[0] == "127.0.0.1" for server in s._servers.values())
            assert s.errors == []
