"""Microsoft Entra ID stand-in: login.microsoftonline.com (per-tenant paths) plus a Graph-like
server (graph.microsoft.com: /oidc/userinfo, /v1.0/me) that also hosts a test API
(api://sfauth-test-api at /api/echo).

    with Entra() as ms:
        ms.metadata_url("common")     # http://127.0.0.1:P/common/v2.0/.well-known/openid-configuration
        ms.tenant_id                  # alice's tenant (a GUID); bob is a personal account (consumers)

Sources:
  [CODE]   learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow
           (MicrosoftDocs/entra-docs docs/identity-platform/v2-oauth2-auth-code-flow.md): tenants
           common/organizations/consumers/GUID; token-request scopes "must all be from a single
           resource"; refresh_token "Only provided if offline_access scope was requested";
           refresh tokens "aren't revoked when used"; a refresh spanning resources gets "a token
           for the resource specified in the first scope"; public clients "must not use secrets";
           PKCE "plain and S256"; the error JSON (error_codes, timestamp, trace_id, correlation_id)
  [REPLY]  learn.microsoft.com/entra/identity-platform/reply-url: localhost exceptions -- the port
           is ignored; paths case-sensitive; a URI without path is answered with a trailing slash
  [DEVICE] learn.microsoft.com/entra/identity-platform/v2-oauth2-device-code: /devicecode, no
           verification_uri_complete, errors authorization_pending / authorization_declined /
           bad_verification_code / expired_token
  [ISS]    coreos/go-oidc#212 and #121, pomerium/pomerium#1605: /common and /organizations
           metadata say issuer "https://login.microsoftonline.com/{tenantid}/v2.0" literally;
           personal accounts have tenant 9188040d-6c67-4c5b-b112-36a304b66dad
  [PKCE]   int128/kubelogin#440, #858; Drenso/symfony-oidc#93 (a real metadata document): no
           code_challenge_methods_supported, no revocation_endpoint
  [28000]  Azure-Samples/active-directory-aspnetcore-webapp-openidconnect-v2#271,
           AzureAD/microsoft-authentication-library-for-js#1487: AADSTS28000 at the token endpoint
           when the scope names two resources
  [7000218] Azure/azure-sdk-for-go#22386 (401, the JSON body), harishkrupo/oauth2ms#19 (AADSTS700025)
  [50011]  unoplatform/uno.todo#180: "Sorry, but we're having trouble signing you in. AADSTS50011:
           ..." shown on Microsoft's page (no redirect)
  [65001]  MicrosoftDocs/azure-docs#39189: invalid_grant AADSTS65001 with suberror consent_required
  [V1]     MicrosoftDocs/azure-docs#54997, openid/AppAuth-iOS#228: expires_in as a string ("3599")
           from the v1 endpoint
"""

import hashlib
import secrets
import threading
import time
import urllib.parse
import uuid

from oidc import OidcStandIn
from stand_in import Client, Response, b64url, json_response, redirect_matches
from web_flow import error_page

ORG_TENANT = "6f2a3b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
MSA_TENANT = "9188040d-6c67-4c5b-b112-36a304b66dad"  # [ISS]: personal Microsoft accounts
PUBLIC_CLIENT_ID = "5f1b8e2a-0c3d-4e6f-9a8b-7c6d5e4f3a2b"  # "Allow public client flows": yes
WEB_CLIENT_ID = "c3a1b2d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"  # a confidential ("Web") client
WEB_CLIENT_SECRET = "entra-web-client-secret"
GRAPH = "https://graph.microsoft.com"
GRAPH_AUD = "00000003-0000-0000-c000-000000000000"
TEST_API = "api://sfauth-test-api"
OIDC_SCOPES = {"openid", "profile", "email", "offline_access"}

AADSTS = {
    28000: ("invalid_scope", "Provided value for the input parameter scope is not valid because it contains more "
            "than one resource. Scope {scope} is not valid."),
    50011: ("invalid_request", "The redirect URI '{redirect_uri}' specified in the request does not match the "
            "redirect URIs configured for the application '{client_id}'. Make sure the redirect URI sent in the "
            "request matches one added to your application in the Azure portal. Navigate to "
            "https://aka.ms/redirectUriMismatchError to learn more about how to fix this."),
    # At the token endpoint the mismatch comes as invalid_client (alexandrtovmach/react-microsoft-login#121).
    500111: ("invalid_client", "The redirect URI '{redirect_uri}' specified in the request does not match the "
             "redirect URI used to obtain the authorization code."),
    50020: ("invalid_request", "User account '{email}' from identity provider does not exist in tenant "
            "'{tenant}' and cannot access the application '{client_id}' in that tenant."),
    50148: ("invalid_grant", "The code_verifier does not match the code_challenge supplied in the authorization "
            "request for PKCE."),
    54005: ("invalid_grant", "OAuth2 Authorization code was already redeemed, please retry with a new valid code "
            "or use an existing refresh token."),
    65001: ("invalid_grant", "The user or administrator has not consented to use the application with ID "
            "'{client_id}' named '{name}'. Send an interactive authorization request for this user and resource."),
    # The device flow's authorization_declined [DEVICE]; its AADSTS number is not documented there (assumed).
    70000: ("authorization_declined", "The user denied the authorization request."),
    70008: ("invalid_grant", "The provided authorization code or refresh token has expired due to inactivity. "
            "Send a new interactive authorization request for this user and resource."),
    70016: ("authorization_pending", "OAuth 2.0 device flow error. Authorization is pending. Continue polling."),
    70019: ("bad_verification_code", "Verification code expired."),
    70020: ("expired_token", "The provided value for the input parameter 'device_code' is not valid. The device "
            "code has expired."),
    90002: ("invalid_tenant", "Tenant '{tenant}' not found. Check to make sure you have the correct tenant ID and "
            "are signing into the correct cloud."),
    700016: ("unauthorized_client", "Application with identifier '{client_id}' was not found in the directory "
             "'{tenant}'."),
    700025: ("invalid_client", "Client is public so neither 'client_assertion' nor 'client_secret' should be "
             "presented."),
    700082: ("invalid_grant", "The refresh token has expired due to inactivity."),
    7000215: ("invalid_client", "Invalid client secret provided. Ensure the secret being sent in the request is "
              "the client secret value, not the client secret ID, for a secret added to app '{client_id}'."),
    7000218: ("invalid_client", "The request body must contain the following parameter: 'client_assertion' or "
              "'client_secret'."),
    9002313: ("invalid_grant", "Invalid request. Request is malformed or invalid."),
}


def resource_of(scope):
    """The resource a scope belongs to (None for the OIDC scopes); bare names are Graph's."""
    if scope in OIDC_SCOPES:
        return None
    if "://" in scope:
        return scope.rsplit("/", 1)[0]
    return GRAPH


class Entra(OidcStandIn):
    """Clients: PUBLIC_CLIENT_ID (public client flows allowed, redirect http://localhost -- any
    port, no 127.0.0.1) and WEB_CLIENT_ID / WEB_CLIENT_SECRET (confidential, redirect
    http://localhost/callback). Users: alice in tenant ORG_TENANT, bob a personal account.
    Knobs: expires_in_as_string [V1]; require_pkce (False: [CODE] requires PKCE only of SPAs)."""

    brand = "Microsoft"
    login_path = "/common/login"
    consent_path = "/common/Consent/Set"
    device_path = "/devicelogin"
    access_token_lifetime = 3599
    refresh_mode = "new-keep-old"  # [CODE]: "Refresh tokens aren't revoked when used"
    device_lifetime = 900

    def __init__(self, expires_in_as_string=False, require_pkce=False, **kw):
        super().__init__(**kw)
        self.expires_in_as_string = expires_in_as_string
        self.require_pkce = require_pkce
        self.tenant_id = ORG_TENANT
        self.home_tenant = {"alice": ORG_TENANT, "bob": MSA_TENANT}
        self.register(Client(PUBLIC_CLIENT_ID, None, ["http://localhost"], "public", {"name": "sfauth"}))
        self.register(Client(WEB_CLIENT_ID, WEB_CLIENT_SECRET, ["http://localhost/callback"], "web",
                             {"name": "sfauth web"}))
        self.client_id = PUBLIC_CLIENT_ID
        self._local = threading.local()
        self.add_server("main")
        self.add_server("graph")
        t = r"/([^/]+)"
        self.route("main", "GET", t + r"/v2\.0/\.well-known/openid-configuration", self.t_discovery)
        self.route("main", "GET", t + r"/discovery/v2\.0/keys", self.with_tenant(self.jwks_endpoint))
        self.route("main", "GET", t + r"/oauth2/v2\.0/authorize", self.with_tenant(self.authorize))
        self.route("main", "POST", t + r"/oauth2/v2\.0/token", self.with_tenant(self.token))
        self.route("main", "POST", t + r"/oauth2/v2\.0/devicecode", self.with_tenant(self.device_authorization))
        self.route("main", "GET", t + r"/oauth2/v2\.0/logout", self.with_tenant(self.end_session))
        self.add_ui_routes()
        self.route("graph", "GET", "/oidc/userinfo", self.userinfo)
        self.route("graph", "GET", "/v1.0/me", self.graph_me)
        self.route("graph", "GET", "/api/echo", self.api_echo)

    # -- tenants and metadata ----------------------------------------------------------------------

    def metadata_url(self, tenant="common"):
        return f"{self.base_url}/{tenant}/v2.0/.well-known/openid-configuration"

    def known_tenant(self, tenant):
        return tenant in ("common", "organizations", "consumers", ORG_TENANT, MSA_TENANT)

    def with_tenant(self, fn):
        def handler(req, tenant):
            if not self.known_tenant(tenant):
                return self.aad(90002, 400, tenant=tenant)
            self._local.tenant = tenant
            return fn(req)
        return handler

    @property
    def tenant(self):
        return getattr(self._local, "tenant", "common")

    def issuer_for(self, tenant):
        # [ISS]: the template is literal for common/organizations; consumers is the MSA tenant.
        if tenant in ("common", "organizations"):
            return f"{self.base_url}/{{tenantid}}/v2.0"
        return f"{self.base_url}/{MSA_TENANT if tenant == 'consumers' else tenant}/v2.0"

    def t_discovery(self, req, tenant):
        if not self.known_tenant(tenant):
            return self.aad(90002, 400, tenant=tenant)
        b = f"{self.base_url}/{tenant}"
        # Field set as in Drenso/symfony-oidc#93; [PKCE]: no code_challenge_methods_supported,
        # no revocation_endpoint.
        return json_response({
            "token_endpoint": f"{b}/oauth2/v2.0/token",
            "token_endpoint_auth_methods_supported": ["client_secret_post", "private_key_jwt", "client_secret_basic"],
            "jwks_uri": f"{b}/discovery/v2.0/keys",
            "response_modes_supported": ["query", "fragment", "form_post"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "issuer": self.issuer_for(tenant),
            "request_uri_parameter_supported": False,
            "userinfo_endpoint": self.url("graph") + "/oidc/userinfo",
            "authorization_endpoint": f"{b}/oauth2/v2.0/authorize",
            "device_authorization_endpoint": f"{b}/oauth2/v2.0/devicecode",
            "http_logout_supported": True, "frontchannel_logout_supported": True,
            "end_session_endpoint": f"{b}/oauth2/v2.0/logout",
            "claims_supported": ["sub", "iss", "cloud_instance_name", "cloud_instance_host_name", "cloud_graph_host_name",
                                 "msgraph_host", "aud", "exp", "iat", "auth_time", "acr", "nonce",
                                 "preferred_username", "name", "tid", "ver", "at_hash", "c_hash", "email"],
            "tenant_region_scope": None, "cloud_instance_name": "microsoftonline.com",
            "cloud_graph_host_name": "graph.windows.net", "msgraph_host": "graph.microsoft.com",
            "rbac_url": "https://pas.windows.net"})

    # -- errors ---------------------------------------------------------------------------------------

    def aad(self, number, status=400, suberror=None, **fmt):
        """An Entra error answer [CODE] "Error response" (an AADSTS code and its text)."""
        error, text = AADSTS[number]
        stamp = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())
        trace, corr = str(uuid.uuid4()), str(uuid.uuid4())
        body = {"error": error,
                "error_description": f"AADSTS{number}: {text.format(**fmt)}\r\nTrace ID: {trace}\r\n"
                                     f"Correlation ID: {corr}\r\nTimestamp: {stamp}",
                "error_codes": [number], "timestamp": stamp, "trace_id": trace, "correlation_id": corr,
                "error_uri": f"https://login.microsoftonline.com/error?code={number}"}
        if suberror:
            body["suberror"] = suberror
        return json_response(body, status)

    def aad_page(self, number, **fmt):
        _, text = AADSTS[number]
        # [50011]: Microsoft's own page, no redirect back to the application.
        return error_page(self.brand, f"AADSTS{number}", f"AADSTS{number}: {text.format(**fmt)}", 400,
                          "<h1>Sign in</h1><p>Sorry, but we're having trouble signing you in.</p>")

    # -- /authorize -----------------------------------------------------------------------------------

    def redirect_ok(self, client, redirect_uri):
        # [REPLY]: port ignored for localhost; no path == "/"; paths case-sensitive.
        def norm(u):
            parts = urllib.parse.urlsplit(u)
            return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))
        return any(redirect_matches(norm(r), norm(redirect_uri), loopback_hosts=("localhost",))
                   for r in client.redirect_uris)

    def bad_client(self, req):
        return self.aad_page(700016, client_id=req.query.get("client_id", ""), tenant=self.tenant)

    def bad_redirect(self, req, client, redirect_uri):
        return self.aad_page(50011, redirect_uri=redirect_uri, client_id=client.client_id)

    def validate_authorize(self, client, p, scope):
        if self.require_pkce and client.secret is None and not p.get("code_challenge"):
            return "invalid_request", "AADSTS9002325: Proof Key for Code Exchange is required."
        return None

    def new_auth_request(self, client, redirect_uri, params, scope):
        areq = super().new_auth_request(client, redirect_uri, params, scope)
        parts = urllib.parse.urlsplit(redirect_uri)
        if not parts.path:  # [REPLY]: "returned with a trailing slash"
            areq.redirect_uri = urllib.parse.urlunsplit((parts.scheme, parts.netloc, "/", parts.query, ""))
        areq.extra["ctx"] = {"tenant": self.tenant}
        return areq

    def _consent_get_for(self, req, areq, user):
        tenant = areq.extra["ctx"]["tenant"]
        home = self.home_tenant[user.username]
        if (tenant == "organizations" and home == MSA_TENANT) or (tenant == "consumers" and home != MSA_TENANT) or \
                (tenant not in ("common", "organizations", "consumers") and tenant != home):
            return self.aad_page(50020, email=user.email, tenant=tenant, client_id=areq.client_id)
        return super()._consent_get_for(req, areq, user)

    def consent_scopes(self, areq):
        return [s for s in areq.scope if s != "openid"] or ["Sign you in"]

    # -- /token ---------------------------------------------------------------------------------------

    def authenticate_client(self, req, p, grant_type):
        client_id, secret, _ = self.client_credentials(req, p)
        client = self.clients.get(client_id or "")
        if client is None:
            return None, self.aad(700016, 400, client_id=client_id, tenant=self.tenant)
        if client.secret is None:
            if secret:  # [7000218]: AADSTS700025
                return None, self.aad(700025, 401)
            return client, None
        if not secret:  # [7000218]: not a public client, no secret
            return None, self.aad(7000218, 401)
        if not secrets.compare_digest(secret, client.secret):
            return None, self.aad(7000215, 401, client_id=client.client_id)
        return client, None

    def exchange(self, p, client):
        code, problem = self.find(p.get("code"), "code")
        if problem == "used":
            return self.aad(54005)
        if problem or code.client_id != client.client_id:
            return self.aad(70008)
        same = lambda a, b: (a or "").rstrip("/") == (b or "").rstrip("/")  # noqa: E731
        if not same(p.get("redirect_uri"), code.extra.get("redirect_uri")):
            return self.aad(500111, 400, redirect_uri=p.get("redirect_uri"))
        challenge = code.extra.get("code_challenge")
        if challenge and not self.pkce_ok(challenge, code.extra.get("code_challenge_method") or "plain",
                                          p.get("code_verifier")):
            return self.aad(50148)
        scope = self.token_scope(code.scope, p, {})
        if isinstance(scope, Response):
            return scope
        code.used = True
        ctx = {"nonce": code.extra.get("nonce"), "via": "code", **code.extra.get("ctx", {})}
        return self.tokens_or_error(client, code.username, scope, ctx)

    def token_scope(self, granted, p, ctx):
        requested = p.get("scope", "").split() or granted
        if len({resource_of(s) for s in requested} - {None}) > 1:
            return self.aad(28000, scope=" ".join(requested))  # [28000]
        return requested

    def refresh_scope(self, rt, p):
        requested = p.get("scope", "").split() or rt.scope
        resources = [resource_of(s) for s in requested if resource_of(s)]
        if resources:  # [CODE]: spanning resources -> a token for the first scope's resource
            requested = [s for s in requested if resource_of(s) in (None, resources[0])]
        consented = set().union(*[s for (u, c, s) in self.consents if u == rt.username and c == rt.client_id] or [set()])
        consented |= set(rt.scope)
        if not set(requested) - OIDC_SCOPES <= consented:
            client = self.clients[rt.client_id]
            return self.aad(65001, suberror="consent_required", client_id=client.client_id,
                            name=self.app_name(client))  # [65001]
        return requested

    def refresh_problem(self, rt, problem):
        return self.aad(700082 if problem == "expired" else 9002313)

    def make_access_token(self, client, user, scope, ctx):
        resources = [resource_of(s) for s in scope if resource_of(s)]
        resource = resources[0] if resources else GRAPH
        aud = GRAPH_AUD if resource == GRAPH else resource
        now = int(self.now())
        tid = self.home_tenant[user.username]
        claims = {"aud": aud, "iss": f"https://sts.windows.net/{tid}/", "iat": now, "nbf": now,
                  "exp": now + self.access_token_lifetime, "appid": client.client_id, "oid": self.oid(user),
                  "scp": " ".join(s.rsplit("/", 1)[-1] for s in scope if resource_of(s)), "tid": tid,
                  "upn": user.email, "ver": "1.0"}
        return self.sign_jwt(claims), aud

    def gives_refresh(self, client, scope, ctx):
        return "offline_access" in scope  # [CODE]: "Only provided if offline_access scope was requested"

    def token_response(self, client, username, scope, ctx, family=None):
        out = super().token_response(client, username, scope, ctx, family)
        out["ext_expires_in"] = out["expires_in"]
        if self.expires_in_as_string:
            out["expires_in"] = str(out["expires_in"])  # [V1]
            out["ext_expires_in"] = str(out["ext_expires_in"])
        return out

    def oid(self, user):
        return str(uuid.UUID(hashlib.sha256(f"oid:{user.username}".encode()).hexdigest()[:32]))

    def id_token(self, client, user, scope, ctx, access_token=None):
        now = int(self.now())
        tid = self.home_tenant[user.username]
        claims = {"aud": client.client_id, "iss": f"{self.base_url}/{tid}/v2.0", "iat": now, "nbf": now,
                  "exp": now + self.id_token_lifetime, "oid": self.oid(user),
                  "sub": self.pairwise_sub(user, client.client_id), "tid": tid, "ver": "2.0"}
        if ctx.get("nonce"):
            claims["nonce"] = ctx["nonce"]
        if "profile" in scope:
            claims.update(name=user.name, preferred_username=user.email)
        if "email" in scope:
            claims["email"] = user.email
        return self.sign_jwt(claims)

    # -- device flow [DEVICE] ---------------------------------------------------------------------------

    def new_user_code(self):
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
        return "".join(secrets.choice(alphabet) for _ in range(9))

    def device_response(self, d):
        uri = self.verification_uri()
        return {"user_code": d.user_code, "device_code": d.device_code, "verification_uri": uri,
                "expires_in": self.device_lifetime, "interval": d.interval,
                "message": f"To sign in, use a web browser to open the page {uri} and enter the code "
                           f"{d.user_code} to authenticate."}

    def device_error(self, state, d):
        if state == "pending" or state == "slow_down":
            return self.aad(70016)
        if state == "denied":
            return self.aad(70000)
        if state == "expired":
            return self.aad(70020)
        return self.aad(70019)  # bad_verification_code

    # -- Graph: userinfo, /me, and the test API --------------------------------------------------------

    def graph_401(self):
        return json_response({"error": {"code": "InvalidAuthenticationToken",
                                        "message": "Access token validation failure. Invalid audience."}}, 401,
                             [("WWW-Authenticate", 'Bearer realm="", authorization_uri='
                               '"https://login.microsoftonline.com/common/oauth2/authorize"')])

    def userinfo(self, req):
        g = self.valid_access(req, audience=GRAPH_AUD)  # a token for another resource does not work here
        if g is None:
            return self.graph_401()
        user = self.users[g.username]
        given, _, family = user.name.partition(" ")
        return json_response({"sub": self.pairwise_sub(user, g.client_id), "name": user.name,
                              "family_name": family, "given_name": given, "email": user.email,
                              "picture": self.url("graph") + "/v1.0/me/photo/$value"})

    def pairwise_sub(self, user, client_id):
        """ID tokens' sub is pairwise (subject_types_supported: ["pairwise"]): per user and app."""
        return b64url(hashlib.sha256(f"{user.username}:{client_id}".encode()).digest())

    def graph_me(self, req):
        g = self.valid_access(req, audience=GRAPH_AUD)
        if g is None:
            return self.graph_401()
        user = self.users[g.username]
        return json_response({"id": self.oid(user), "displayName": user.name, "userPrincipalName": user.email,
                              "mail": user.email})

    def api_echo(self, req):
        g = self.valid_access(req, audience=TEST_API)
        if g is None:
            return json_response({"error": "invalid_token"}, 401, [("WWW-Authenticate", 'Bearer error="invalid_token"')])
        return json_response({"user": g.username, "aud": g.audience, "scope": g.scope})

    # -- test convenience ---------------------------------------------------------------------------

    def authorize_link(self, redirect_uri, tenant="common", scope="openid profile offline_access User.Read",
                       state="st", client_id=None, **extra):
        params = {"client_id": client_id or self.client_id, "response_type": "code", "redirect_uri": redirect_uri,
                  "scope": scope, "state": state, **extra}
        return f"{self.base_url}/{tenant}/oauth2/v2.0/authorize?" + urllib.parse.urlencode(params)

    def token_url(self, tenant="common"):
        return f"{self.base_url}/{tenant}/oauth2/v2.0/token"
