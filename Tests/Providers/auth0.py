"""Auth0 stand-in: one tenant (https://TENANT.auth0.com/ here http://127.0.0.1:P/), with one API
(audience API_AUDIENCE) registered.

    with Auth0() as a0:
        a0.issuer            # "http://127.0.0.1:P/"  -- with the trailing slash

Sources:
  [CLI568]  auth0/auth0-cli#568 (via the shared notes): the issuer ends with "/" and must be compared
            exactly; ID tokens carry the same iss
  [OPAQUE]  auth0.com/docs/secure/tokens/access-tokens (auth0.com/docs/tokens/access_token):
            without an audience the access token is opaque; mozilla/doorman#101,
            community.auth0.com/t/the-userinfo-endpoint-returns-401-unauthorized/6103: opaque
            tokens work only at /userinfo; with audience + openid the JWT's aud lists the API and
            https://TENANT/userinfo
  [ROTATE]  auth0.com/docs/secure/tokens/refresh-tokens/refresh-token-rotation and
            .../configure-refresh-token-rotation: each exchange returns a new refresh token;
            reusing an invalidated one revokes the whole family ("automatic reuse detection");
            a reuse interval (leeway) can be configured
  [ERR]     auth0/nextjs-auth0#333, #498, auth0/Auth0.swift#819: invalid_grant "Unknown or invalid
            refresh token."
  [DEVICE]  auth0.com/docs/quickstart/native/device: /oauth/device/code; "expired_token error is
            returned exactly once. After that, the endpoint returns the invalid_grant error";
            refresh_token only with offline_access and "Allow Offline Access" on the API
  Assumed (not in the sources read): HTTP 403 for invalid_grant / pending polls, 429 for
  slow_down, access_denied/401 "Unauthorized" for a wrong client secret, the callback-mismatch page.
"""

import secrets
import urllib.parse

from oidc import OidcStandIn
from stand_in import Client, is_loopback_host, json_response
from web_flow import error_page

NATIVE_ID = "stand-in-native-client-id"
WEB_ID = "stand-in-regular-web-client-id"
WEB_SECRET = "auth0-web-client-secret"
API_AUDIENCE = "https://api.stand-in.example"
CALLBACK = "http://127.0.0.1:3000/callback"


class Auth0(OidcStandIn):
    """Clients: NATIVE_ID (public, PKCE) and WEB_ID / WEB_SECRET, callback CALLBACK (add the
    test's with allow_redirect_uri()). Knobs: rotation (True: rotating refresh tokens with reuse
    detection; False: non-rotating), reuse_interval (seconds of leeway), api_allows_offline_access."""

    brand = "Auth0"
    login_path = "/u/login"
    consent_path = "/u/consent"
    device_path = "/activate"
    any_loopback_port = False  # Allowed Callback URLs are compared as registered (assumed)
    offline_scope = "offline_access"
    access_token_lifetime = 86400
    paths = {"discovery": "/.well-known/openid-configuration", "jwks": "/.well-known/jwks.json",
             "authorize": "/authorize", "token": "/oauth/token", "userinfo": "/userinfo",
             "revoke": "/oauth/revoke", "device": "/oauth/device/code", "end_session": "/oidc/logout"}

    def __init__(self, rotation=True, reuse_interval=0, api_allows_offline_access=True, **kw):
        super().__init__(**kw)
        self.refresh_mode = "rotate-detect-reuse" if rotation else "omit"
        self.reuse_interval = reuse_interval
        self.api_allows_offline_access = api_allows_offline_access
        self.register(Client(NATIVE_ID, None, [CALLBACK], "native", {"name": "sfauth"}))
        self.register(Client(WEB_ID, WEB_SECRET, [CALLBACK], "regular_web", {"name": "sfauth web"}))
        self.client_id = NATIVE_ID
        self.add_server("main")
        self.wire()
        self.route("main", "GET", "/api/echo", self.api_echo)

    @property
    def issuer(self):
        return self.base_url + "/"  # [CLI568]

    # -- /authorize ------------------------------------------------------------------------------

    def bad_redirect(self, req, client, redirect_uri):
        return error_page(self.brand, "Callback URL mismatch",
                          f"The provided redirect_uri is not in the list of allowed callback URLs: {redirect_uri}")

    def validate_authorize(self, client, p, scope):
        audience = p.get("audience")
        if audience and audience != API_AUDIENCE:
            return "access_denied", f'Service not found: {audience}'
        return None

    def needs_consent(self, areq, user):
        # auth0.com/docs/.../user-consent-and-third-party-applications, community.auth0.com/t/103222:
        # a grant is remembered, but on localhost consent can't be skipped.
        host = urllib.parse.urlsplit(areq.redirect_uri).hostname or ""
        return is_loopback_host(host) or super().needs_consent(areq, user)

    def new_auth_request(self, client, redirect_uri, params, scope):
        areq = super().new_auth_request(client, redirect_uri, params, scope)
        areq.extra["ctx"] = {"audience": params.get("audience")}
        return areq

    # -- /oauth/token ----------------------------------------------------------------------------

    def error(self, code, description, status=None, **extra):
        if status is None:
            status = 403 if code in ("invalid_grant", "access_denied") else 400
        return json_response({"error": code, "error_description": description, **extra}, status)

    def authenticate_client(self, req, p, grant_type):
        client_id, secret, _ = self.client_credentials(req, p)
        client = self.clients.get(client_id or "")
        if client is None:
            return None, self.error("access_denied", "Unauthorized", 401)
        if client.secret and not (secret and secrets.compare_digest(secret, client.secret)):
            return None, self.error("access_denied", "Unauthorized", 401)
        return client, None

    def check_pkce(self, code, client, p):
        challenge = code.extra.get("code_challenge")
        if challenge and not self.pkce_ok(challenge, code.extra.get("code_challenge_method") or "plain",
                                          p.get("code_verifier")):
            return self.error("invalid_grant", "Failed to verify code verifier")
        return None

    def gives_refresh(self, client, scope, ctx):
        if "offline_access" not in scope:
            return False
        return not ctx.get("audience") or self.api_allows_offline_access  # [DEVICE]

    def make_access_token(self, client, user, scope, ctx):
        audience = ctx.get("audience")
        if not audience:
            return self.new_value("", 24), self.issuer + "userinfo"  # [OPAQUE]: opaque, /userinfo only
        now = int(self.now())
        aud = [audience, self.issuer + "userinfo"] if "openid" in scope else audience
        claims = {"iss": self.issuer, "sub": self.sub(user), "aud": aud, "iat": now,
                  "exp": now + self.access_token_lifetime, "azp": client.client_id, "scope": " ".join(scope)}
        return self.sign_jwt(claims, typ="at+jwt"), aud

    def sub(self, user):
        return f"auth0|{user.id:024d}"

    def id_token_claims(self, client, user, scope, ctx):
        return {"sub": self.sub(user), "nickname": user.username, "sid": secrets.token_urlsafe(12)}

    def refresh(self, p, client):
        rt, problem = self.find(p.get("refresh_token"), "refresh")
        if problem == "used" and self.now() - rt.extra.get("used_at", 0) <= self.reuse_interval:
            rt.used = False  # [ROTATE]: within the reuse interval the previous token still works
        return super().refresh(p, client)

    def refresh_problem(self, rt, problem):
        return self.error("invalid_grant", "Unknown or invalid refresh token.")  # [ERR]

    # -- /userinfo and the API ----------------------------------------------------------------------

    def userinfo_accepts(self, grant):
        aud = grant.audience if isinstance(grant.audience, list) else [grant.audience]
        return self.issuer + "userinfo" in aud

    def userinfo_claims(self, user, grant):
        claims = super().userinfo_claims(user, grant)
        claims.update(sub=self.sub(user), nickname=user.username)
        return claims

    def api_echo(self, req):
        g = self.valid_access(req, audience=lambda aud: API_AUDIENCE in (aud if isinstance(aud, list) else [aud]))
        if g is None:
            return json_response({"error": "invalid_token"}, 401, [("WWW-Authenticate", 'Bearer error="invalid_token"')])
        return json_response({"user": g.username, "aud": g.audience})

    # -- device flow [DEVICE] -----------------------------------------------------------------------

    def device_started(self, d, p):
        d.extra["ctx"] = {"audience": p.get("audience")}

    def device_error(self, state, d):
        if state == "expired":
            if d.extra.get("expired_told"):
                return self.error("invalid_grant", "Invalid or expired device code.")
            d.extra["expired_told"] = True  # [DEVICE]: expired_token exactly once, then invalid_grant
            return self.error("expired_token", "The device_code has expired.", 403)
        code, status, text = {"pending": ("authorization_pending", 403, "User has yet to authorize device code."),
                              "slow_down": ("slow_down", 429, "You are polling faster than allowed."),
                              "denied": ("access_denied", 403, "User refused to authorize the device."),
                              "unknown": ("invalid_grant", 403, "Invalid or expired device code."),
                              "used": ("invalid_grant", 403, "Invalid or expired device code.")}[state]
        return self.error(code, text, status)
