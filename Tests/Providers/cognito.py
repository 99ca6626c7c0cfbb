"""Amazon Cognito user pool stand-in: the issuer host (cognito-idp.REGION.amazonaws.com/POOL_ID,
here server "main") serves discovery and the JWKS; the user pool domain
(DOMAIN.auth.REGION.amazoncognito.com, here server "domain", another port) serves the OAuth
endpoints and the hosted sign-in pages.

    with Cognito() as c:
        c.issuer          # http://127.0.0.1:P1/us-east-1_StandIn1
        c.domain_url      # http://127.0.0.1:P2   (authorize, token, revoke, userInfo, login, logout)

Sources:
  [ENDPOINTS] docs.aws.amazon.com/cognito/latest/developerguide/cognito-userpools-server-contract-reference.html:
              /oauth2/authorize, /oauth2/token, /oauth2/revoke, /oauth2/userInfo, /login, /logout on
              the user pool domain (simov/grant#163, nextauthjs/next-auth#2905 for the URL shapes)
  [ISSUER]    n8n-io/n8n-docs#3725, aws-solutions-library-samples/...#114: discovery is at
              https://cognito-idp.{region}.amazonaws.com/{user-pool-id}/.well-known/openid-configuration;
              jkroepke/openvpn-auth-oauth2#313: the domain has no discovery document
  [TOKENS]    docs.aws.amazon.com/verifiedpermissions/latest/userguide/cognito-validation.html:
              "ID tokens have an aud claim that contains the app client ID. Access tokens have a
              client_id claim"; ghdna/cognito-express#11
  Assumed (not in the sources read): exact redirect matching (register the test listener's URI),
  error bodies {"error": code} with HTTP 400, no consent page, refresh answers without a new
  refresh token, the userInfo claim set, /oauth2/revoke only for refresh tokens.
"""

import uuid

from oidc import OidcStandIn
from stand_in import Client, json_response
from web_flow import error_page

REGION = "us-east-1"
POOL_ID = "us-east-1_StandIn1"
PUBLIC_ID = "4standinpublicappclient0"
CONFIDENTIAL_ID = "5standinconfidentialclient"
CONFIDENTIAL_SECRET = "cognito-app-client-secret"
CALLBACK = "http://localhost:8080/callback"


class Cognito(OidcStandIn):
    """App clients PUBLIC_ID (no secret) and CONFIDENTIAL_ID / CONFIDENTIAL_SECRET, callback
    CALLBACK (add the test's with allow_redirect_uri()). No device flow (Cognito has none)."""

    brand = "Amazon Cognito"
    ui_server = "domain"
    login_path = "/login"
    consent_path = "/oauth2/consent"
    pkce_methods = ("S256",)
    offline_scope = None  # the code grant always returns a refresh token
    refresh_mode = "omit"
    any_loopback_port = False
    refresh_token_lifetime = 30 * 24 * 3600
    paths = {"discovery": f"/{POOL_ID}/.well-known/openid-configuration", "jwks": f"/{POOL_ID}/.well-known/jwks.json",
             "authorize": "/oauth2/authorize", "token": "/oauth2/token", "revoke": "/oauth2/revoke",
             "userinfo": "/oauth2/userInfo", "end_session": "/logout"}
    endpoint_server = {"authorize": "domain", "token": "domain", "revoke": "domain", "userinfo": "domain",
                       "end_session": "domain"}

    def __init__(self, **kw):
        super().__init__(**kw)
        self.register(Client(PUBLIC_ID, None, [CALLBACK], "public", {"name": "sfauth"}))
        self.register(Client(CONFIDENTIAL_ID, CONFIDENTIAL_SECRET, [CALLBACK], "confidential",
                             {"name": "sfauth (confidential)"}))
        self.client_id = PUBLIC_ID
        self.add_server("main")
        self.add_server("domain")
        self.wire()
        self.route("domain", "GET", r"/\.well-known/openid-configuration", self.no_discovery_here)
        self.route("main", "GET", "/api/echo", self.api_echo)

    @property
    def issuer(self):
        return f"{self.base_url}/{POOL_ID}"

    @property
    def domain_url(self):
        return self.url("domain")

    def metadata(self):
        m = super().metadata()
        m.pop("code_challenge_methods_supported")  # not in the documents read; left out
        m["scopes_supported"] = ["openid", "email", "phone", "profile"]
        m["token_endpoint_auth_methods_supported"] = ["client_secret_basic", "client_secret_post"]
        return m

    def no_discovery_here(self, req):
        return json_response({"error": "This URL doesn't exist on the authorization server."}, 404)  # [ISSUER]

    def bad_redirect(self, req, client, redirect_uri):
        return error_page(self.brand, "redirect_mismatch", "An error was encountered with the requested page.")

    def needs_consent(self, areq, user):
        return False

    def error(self, code, description, status=400, **extra):
        return json_response({"error": code}, 400)

    def make_access_token(self, client, user, scope, ctx):
        now = int(self.now())
        # [TOKENS]: no aud in Cognito access tokens -- client_id and token_use instead.
        claims = {"sub": self.sub(user), "iss": self.issuer, "version": 2, "client_id": client.client_id,
                  "origin_jti": ctx.setdefault("origin_jti", str(uuid.uuid4())), "event_id": str(uuid.uuid4()),
                  "token_use": "access", "scope": " ".join(scope), "auth_time": now, "exp": now + self.access_token_lifetime,
                  "iat": now, "jti": str(uuid.uuid4()), "username": user.username}
        return self.sign_jwt(claims), None

    def sub(self, user):
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"cognito:{user.username}"))

    def id_token_claims(self, client, user, scope, ctx):
        # [TOKENS]: ID tokens do carry aud (the app client id).
        return {"sub": self.sub(user), "token_use": "id", "cognito:username": user.username,
                "origin_jti": ctx.get("origin_jti"), "email": user.email, "email_verified": True}

    def userinfo_accepts(self, grant):
        return "openid" in grant.scope

    def userinfo_claims(self, user, grant):
        return {"sub": self.sub(user), "email_verified": "true", "email": user.email, "username": user.username}

    def revoke(self, req):
        client, problem = self.authenticate_client(req, dict(req.form), "revoke")
        if problem:
            return problem
        g = self.grants.get(req.form.get("token", ""))
        if g is not None and g.kind != "refresh":
            return json_response({"error": "unsupported_token_type"}, 400)
        if g is not None and g.client_id == client.client_id:
            self.revoke_family(g.family)  # the refresh token and the access tokens it issued
        return json_response({})

    def api_echo(self, req):
        """An API that checks the access token's client_id (no aud to check) [TOKENS]."""
        g = self.valid_access(req)
        if g is None:
            return json_response({"message": "Unauthorized"}, 401)
        return json_response({"user": g.username, "client_id": g.client_id})

    def authenticate_client(self, req, p, grant_type):
        client, problem = super().authenticate_client(req, p, grant_type)
        if problem:
            return None, self.error("invalid_client", "")
        return client, None
