"""Google stand-in: accounts.google.com (issuer, /authorize, the sign-in pages, /device) plus the
API hosts the discovery document points at: oauth2.googleapis.com (token, revoke, device/code) and
www.googleapis.com / openidconnect.googleapis.com (JWKS, /v1/userinfo) -- here three servers.

    with Google() as g:                         # a Desktop ("installed") client, publishing status In production
    with Google(publishing_status="testing") as g:   # refresh tokens live 7 days

Sources:
  [NATIVE] developers.google.com/identity/protocols/oauth2/native-app: loopback redirect
           http://127.0.0.1:port / http://[::1]:port for Desktop clients; client_secret at the code
           exchange and at refresh; access_type=offline for a refresh token; prompt=consent
  [SECRET] googleapis/google-api-dotnet-client#1827, taylorwilsdon/google_workspace_mcp#1008,
           openid/AppAuth-JS#91: without client_secret the token endpoint answers
           400 {"error": "invalid_request", "error_description": "client_secret is missing."}, PKCE or not
  [TESTING] developers.google.com/google-ads/api/docs/get-started/common-errors: consent screen in
           "Testing" with external users -> refresh tokens expire in 7 days; invalid_grant
           "Token has been expired or revoked."
  [DEVICE] developers.google.com/identity/protocols/oauth2/limited-input-device; cli/oauth#24:
           the answer names verification_url (not verification_uri) and polling needs client_secret
  [LOOP]   developers.google.com/identity/protocols/oauth2/resources/loopback-migration: loopback
           stays supported for Desktop clients; OOB is blocked
  [K282]   int128/kubelogin#282: the discovery document lists code_challenge_methods_supported
           ["plain", "S256"]
"""

import secrets
import urllib.parse

from oidc import OidcStandIn
from stand_in import Client, is_loopback_host, json_response
from web_flow import error_page

DESKTOP_ID = "1234567890-standin.apps.googleusercontent.com"
DESKTOP_SECRET = "GOCSPX-stand-in-desktop-secret"
TV_ID = "1234567890-tvstandin.apps.googleusercontent.com"
TV_SECRET = "GOCSPX-stand-in-tv-secret"

# "email" and "profile" come back under their long names in the token answer's scope.
SCOPE_NAMES = {"email": "https://www.googleapis.com/auth/userinfo.email",
               "profile": "https://www.googleapis.com/auth/userinfo.profile"}


class Google(OidcStandIn):
    """Clients: the Desktop client DESKTOP_ID / DESKTOP_SECRET (.client_id / .client_secret) and
    a "TVs and Limited Input devices" client TV_ID / TV_SECRET (the only type allowed the device
    flow). Knobs: publishing_status "production" | "testing" (7-day refresh tokens)."""

    brand = "Google"
    login_path = "/signin/v2/identifier"
    consent_path = "/signin/oauth/consent"
    device_path = "/device"
    paths = {"discovery": "/.well-known/openid-configuration", "authorize": "/o/oauth2/v2/auth",
             "token": "/token", "revoke": "/revoke", "device": "/device/code",
             "jwks": "/oauth2/v3/certs", "userinfo": "/v1/userinfo"}
    endpoint_server = {"token": "oauth2", "revoke": "oauth2", "device": "oauth2", "jwks": "apis",
                       "userinfo": "apis"}
    refresh_mode = "omit"  # a refresh answer carries no new refresh token; the old one stays valid
    access_token_lifetime = 3599
    device_lifetime = 1800

    def __init__(self, publishing_status="production", **kw):
        super().__init__(**kw)
        self.publishing_status = publishing_status
        # [TESTING]: 7 days while the consent screen is in "Testing".
        self.refresh_token_lifetime = 7 * 24 * 3600 if publishing_status == "testing" else None
        self.register(Client(DESKTOP_ID, DESKTOP_SECRET, [], "desktop", {"name": "sfauth"}))
        self.register(Client(TV_ID, TV_SECRET, [], "tv", {"name": "sfauth (TV)"}))
        self.client_id, self.client_secret = DESKTOP_ID, DESKTOP_SECRET
        for name in ("main", "oauth2", "apis"):
            self.add_server(name)
        self.wire()

    def metadata(self):
        m = super().metadata()
        m["scopes_supported"] = ["openid", "email", "profile"]
        m["token_endpoint_auth_methods_supported"] = ["client_secret_post", "client_secret_basic"]
        return m

    # -- /authorize ------------------------------------------------------------------------------

    def redirect_ok(self, client, redirect_uri):
        # [NATIVE]: Desktop clients use http://127.0.0.1:port or http://[::1]:port (localhost
        # works too); nothing is registered for loopback.
        parts = urllib.parse.urlsplit(redirect_uri)
        return client.kind == "desktop" and parts.scheme == "http" and is_loopback_host(parts.hostname or "")

    def bad_redirect(self, req, client, redirect_uri):
        if redirect_uri.startswith("urn:ietf:wg:oauth:2.0:oob"):
            return error_page(self.brand, "invalid_request",
                              "The out-of-band (OOB) flow has been blocked in order to keep users secure.")  # [LOOP]
        return error_page(self.brand, "redirect_uri_mismatch",
                          "You can't sign in to this app because it doesn't comply with Google's OAuth 2.0 policy.")

    def bad_client(self, req):
        return error_page(self.brand, "invalid_client", "The OAuth client was not found.", 401)

    def needs_consent(self, areq, user):
        if areq.params.get("prompt") == "consent":
            return True
        granted = [set(s) for (u, c, s) in self.consents if u == user.username and c == areq.client_id]
        return not granted or not set(areq.scope) <= set().union(*granted)

    # -- /token ------------------------------------------------------------------------------------

    def error(self, code, description, status=400, **extra):
        return json_response({"error": code, "error_description": description, **extra}, status)

    def authenticate_client(self, req, p, grant_type):
        client_id, secret, _ = self.client_credentials(req, p)
        client = self.clients.get(client_id or "")
        if client is None:
            return None, self.error("invalid_client", "The OAuth client was not found.", 401)
        if grant_type == "revoke":
            return client, None
        if grant_type == "device":  # the device authorization request: client_id and scope only [DEVICE]
            if client.kind != "tv":
                return None, self.error("invalid_client", "Invalid client type.", 401)
            return client, None
        if not secret:
            # [SECRET]: Desktop clients too, at the code exchange and at every refresh, PKCE or not.
            return None, self.error("invalid_request", "client_secret is missing.")
        if not secrets.compare_digest(secret, client.secret):
            return None, self.error("invalid_client", "Unauthorized", 401)
        return client, None

    def check_pkce(self, code, client, p):
        challenge = code.extra.get("code_challenge")
        if challenge and not self.pkce_ok(challenge, code.extra.get("code_challenge_method") or "plain",
                                          p.get("code_verifier")):
            return self.error("invalid_grant", "Invalid code verifier.")
        return None

    def gives_refresh(self, client, scope, ctx):
        if ctx.get("via") == "device":
            return True
        # [NATIVE]: access_type=offline, and only when the consent screen was shown (the first
        # time, or prompt=consent).
        return ctx.get("params", {}).get("access_type") == "offline" and bool(ctx.get("consent_shown"))

    def token_response(self, client, username, scope, ctx, family=None):
        out = super().token_response(client, username, scope, ctx, family)
        out["scope"] = " ".join(SCOPE_NAMES.get(s, s) for s in scope)
        return out

    def make_access_token(self, client, user, scope, ctx):
        return self.new_value("ya29.", 48), client.client_id

    def refresh_problem(self, rt, problem):
        return self.error("invalid_grant", "Token has been expired or revoked.")  # [TESTING]

    def exchange(self, p, client):
        if not p.get("redirect_uri"):
            return self.error("invalid_request", "Missing required parameter: redirect_uri")
        code, problem = self.find(p.get("code"), "code")
        if problem is None and p.get("redirect_uri") != code.extra.get("redirect_uri"):
            return self.error("redirect_uri_mismatch", "Bad Request")
        if problem:
            return self.error("invalid_grant", "Bad Request")
        return super().exchange(p, client)

    def id_token_claims(self, client, user, scope, ctx):
        return {"azp": client.client_id}

    def userinfo_claims(self, user, grant):
        claims = {"sub": user.sub}
        if "email" in grant.scope:
            claims.update(email=user.email, email_verified=True)
        if "profile" in grant.scope:
            given, _, family = user.name.partition(" ")
            claims.update(name=user.name, given_name=given, family_name=family)
        return claims

    def revoke(self, req):
        token = req.form.get("token") or req.query.get("token", "")
        g = self.grants.get(token)
        if g is None or g.revoked or (g.expires_at is not None and g.expires_at <= self.now()):
            return self.error("invalid_token", "Token expired or revoked")
        # Revoking either token of a grant revokes the refresh token and its access tokens.
        self.revoke_family(g.family)
        return json_response({})

    # -- device flow [DEVICE] ---------------------------------------------------------------------------

    def device_response(self, d):
        return {"device_code": d.device_code, "user_code": d.user_code,
                "verification_url": self.verification_uri(), "expires_in": self.device_lifetime,
                "interval": d.interval}

    def device_error(self, state, d):
        # HTTP statuses as listed in [DEVICE]'s "Poll Google's authorization server" section.
        code, status = {"pending": ("authorization_pending", 428), "slow_down": ("slow_down", 403),
                        "denied": ("access_denied", 403), "expired": ("expired_token", 400),
                        "unknown": ("invalid_grant", 400), "used": ("invalid_grant", 400)}[state]
        return json_response({"error": code, "error_description": "Precondition Required" if status == 428
                              else "Forbidden" if status == 403 else "Bad Request"}, status)
