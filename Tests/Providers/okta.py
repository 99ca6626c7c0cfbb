"""Okta stand-in: one org (https://ORG here http://127.0.0.1:P) with either its org authorization
server or the custom authorization server "default".

    with Okta(server="default") as okta:   # issuer http://127.0.0.1:P/oauth2/default, /oauth2/default/v1/...
    with Okta(server="org") as okta:       # issuer http://127.0.0.1:P, endpoints /oauth2/v1/...

Sources:
  [AS]    developer.okta.com/docs/concepts/auth-servers: the org authorization server's issuer is
          https://{yourOktaDomain}, its access tokens are for Okta's APIs only and can't be
          validated by your own resource server; a custom server (default: /oauth2/default) mints
          tokens for your APIs (audience api://default)
  [HELP]  help.okta.com/en/prod/Content/Topics/Security/api-build-oauth-servers.htm: "Use a custom
          server if you need to protect non-Okta resources"
  [OIDC]  developer.okta.com/docs/api/openapi/okta-oauth/oauth/tag/CustomAS: /v1/authorize,
          /v1/token, /v1/userinfo, /v1/keys, /v1/revoke, /v1/logout, /v1/device/authorize;
          offline_access for a refresh token
  Not found in the sources: how Okta matches loopback ports (strict here: register the exact
  URI with allow_redirect_uri), and the exact error texts (Okta's usual wording is used).
"""

import secrets

from oidc import OidcStandIn
from stand_in import Client, json_response, signing_key
from web_flow import error_page

NATIVE_ID = "0oastandinnative"  # an OIDC "Native" app: public, PKCE
WEB_ID = "0oastandinweb"
WEB_SECRET = "okta-web-client-secret"
CALLBACK = "http://localhost:8080/authorization-code/callback"


class Okta(OidcStandIn):
    """Clients: NATIVE_ID (public, PKCE required) and WEB_ID / WEB_SECRET; both redirect to
    CALLBACK; add more with allow_redirect_uri(). Knobs: server "org" | "default";
    refresh_rotation (False: the same refresh token comes back; True: rotate)."""

    brand = "Okta"
    login_path = "/login/login.htm"
    consent_path = "/oauth2/v1/consent"
    device_path = "/activate"
    any_loopback_port = False  # not documented; strict
    pkce_methods = ("S256",)

    def __init__(self, server="default", refresh_rotation=False, **kw):
        super().__init__(**kw)
        assert server in ("org", "default")
        self.server = server
        self.refresh_mode = "rotate" if refresh_rotation else "same"
        prefix = "/oauth2/v1" if server == "org" else "/oauth2/default/v1"
        well_known = "/.well-known/openid-configuration" if server == "org" else \
            "/oauth2/default/.well-known/openid-configuration"
        self.paths = {"discovery": well_known, "authorize": prefix + "/authorize", "token": prefix + "/token",
                      "userinfo": prefix + "/userinfo", "jwks": prefix + "/keys", "revoke": prefix + "/revoke",
                      "end_session": prefix + "/logout", "device": prefix + "/device/authorize"}
        self.register(Client(NATIVE_ID, None, [CALLBACK], "native", {"name": "sfauth"}))
        self.register(Client(WEB_ID, WEB_SECRET, [CALLBACK], "web", {"name": "sfauth web"}))
        self.client_id = NATIVE_ID
        self.org_key = signing_key("okta-org-access-tokens")  # never published: see make_access_token
        self.add_server("main")
        self.wire()
        self.route("main", "GET", "/api/v1/users/me", self.okta_api_me)
        self.route("main", "GET", "/api/echo", self.api_echo)

    @property
    def issuer(self):
        return self.base_url if self.server == "org" else self.base_url + "/oauth2/default"

    @property
    def audience(self):
        return self.base_url if self.server == "org" else "api://default"  # [AS]

    # -- answers ------------------------------------------------------------------------------------

    def bad_redirect(self, req, client, redirect_uri):
        return error_page(self.brand, "invalid_request",
                          "The 'redirect_uri' parameter must be a Login redirect URI in the client app settings")

    def validate_authorize(self, client, p, scope):
        if client.secret is None and not p.get("code_challenge"):
            return ("invalid_request",
                    "PKCE code challenge is required when the token endpoint authentication method is 'NONE'.")
        return None

    def needs_consent(self, areq, user):
        return False  # Okta asks for consent only when the app is set to require it

    def error(self, code, description, status=400, **extra):
        texts = {"invalid_client": "Client authentication failed. Either the client or the client credentials are "
                                   "invalid."}
        return json_response({"error": code, "error_description": texts.get(code, description), **extra}, status)

    def refresh_problem(self, rt, problem):
        return self.error("invalid_grant", "The refresh token is invalid or expired.")

    # -- tokens -------------------------------------------------------------------------------------

    def make_access_token(self, client, user, scope, ctx):
        now = int(self.now())
        claims = {"ver": 1, "jti": "AT." + secrets.token_urlsafe(16), "iss": self.issuer, "aud": self.audience,
                  "iat": now, "exp": now + self.access_token_lifetime, "cid": client.client_id,
                  "uid": f"00u{user.id}", "scp": scope, "sub": user.email}
        if self.server == "org":
            # [AS]: org-server access tokens are for Okta's APIs; your resource server can't
            # validate them -- signed here with a key that /oauth2/v1/keys does not list.
            return self.sign_jwt(claims, key=self.org_key, kid="org-access-token-key"), self.audience
        return self.sign_jwt(claims), self.audience

    def id_token_claims(self, client, user, scope, ctx):
        return {"sub": f"00u{user.id}", "ver": 1, "amr": ["pwd"]}

    def userinfo_claims(self, user, grant):
        claims = super().userinfo_claims(user, grant)
        claims["sub"] = f"00u{user.id}"
        return claims

    # -- resources ----------------------------------------------------------------------------------

    def okta_api_me(self, req):
        """An Okta API (Users): accepts only org-server tokens [AS]."""
        g = self.valid_access(req, audience=self.base_url)
        if g is None or self.server != "org":
            return json_response({"errorCode": "E0000011", "errorSummary": "Invalid token provided",
                                  "errorLink": "E0000011", "errorCauses": []}, 401)
        user = self.users[g.username]
        return json_response({"id": f"00u{user.id}", "status": "ACTIVE",
                              "profile": {"login": user.email, "email": user.email, "firstName": user.name.split()[0],
                                          "lastName": user.name.split()[-1]}})

    def api_echo(self, req):
        """Your own API: protected by the custom server's tokens (aud api://default) [HELP]."""
        g = self.valid_access(req, audience="api://default")
        if g is None:
            return json_response({"error": "invalid_token"}, 401, [("WWW-Authenticate", 'Bearer error="invalid_token"')])
        return json_response({"user": g.username, "aud": g.audience, "scope": g.scope})
