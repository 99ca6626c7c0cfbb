"""Keycloak stand-in: one realm.

    with Keycloak() as kc:                 # Keycloak 26: issuer http://127.0.0.1:P/realms/sfauth
    with Keycloak(version=22) as kc:       # before RFC 9207 support: no iss on redirects
    with Keycloak(version=16) as kc:       # the old /auth prefix: .../auth/realms/sfauth

Sources:
  [KC]     keycloak.org/docs/latest/securing_apps (OIDC endpoints under
           /realms/{realm}/protocol/openid-connect/: auth, token, userinfo, certs, logout, revoke,
           auth/device; issuer /realms/{realm}; /auth/realms/... before Keycloak 17)
  [9207]   keycloak/keycloak#16525 (the request), #23609 ("#20621 added support for RFC 9207"),
           #25584 ("since KC 23, Keycloak advertises support for RFC 9207"): before 23 no `iss` on
           authorization responses and no authorization_response_iss_parameter_supported
  [OFF]    keycloak/keycloak#8919, #48063, keycloakify/oidc-spa#91: with offline_access the answer
           says refresh_expires_in 0 (when Offline Session Max Limited is off, the default)
  [REVOKE] keycloak/keycloak#20928 (server admin guide "Revoke Refresh Token"): off by default, so
           a refresh token stays usable after a refresh; on: each is usable once
  [PKCE]   keycloak/keycloak#1470 of int128/kubelogin: with PKCE required the device request
           without code_challenge fails "Missing parameter: code_challenge_method"
  Assumed (not in the sources read): any port for loopback redirect URIs, the error texts
  (Keycloak's usual wording), default client scopes profile + email added to every token.
"""

import urllib.parse
import uuid

from oidc import OidcStandIn
from stand_in import Client, is_loopback_host, json_response, redirect_matches
from web_flow import error_page

PUBLIC_ID = "sfauth-cli"
CONFIDENTIAL_ID = "sfauth-confidential"
CONFIDENTIAL_SECRET = "keycloak-client-secret"
CALLBACK = "http://127.0.0.1/*"  # Keycloak's wildcard: anything below http://127.0.0.1/


class Keycloak(OidcStandIn):
    """Clients: sfauth-cli (public) and sfauth-confidential / CONFIDENTIAL_SECRET, valid redirect
    URI http://127.0.0.1/* . Knobs: realm, version (26; <23 no RFC 9207; <17 /auth prefix),
    revoke_refresh_token, consent_required, sso_session_idle (refresh_expires_in, 1800)."""

    brand = "Keycloak"
    access_token_lifetime = 300  # Keycloak's default access token lifespan (5 min)
    device_lifetime = 600
    offline_scope = None  # a refresh token always; offline_access makes it an offline token

    def __init__(self, realm="sfauth", version=26, revoke_refresh_token=False, consent_required=False,
                 sso_session_idle=1800, **kw):
        super().__init__(**kw)
        self.realm, self.version = realm, version
        self.consent_required = consent_required
        self.refresh_mode = "rotate" if revoke_refresh_token else "new-keep-old"  # [REVOKE]
        self.refresh_token_lifetime = sso_session_idle
        self.prefix = ("/auth" if version < 17 else "") + f"/realms/{realm}"  # [KC]
        oidc = self.prefix + "/protocol/openid-connect"
        self.paths = {"discovery": self.prefix + "/.well-known/openid-configuration", "authorize": oidc + "/auth",
                      "token": oidc + "/token", "userinfo": oidc + "/userinfo", "jwks": oidc + "/certs",
                      "end_session": oidc + "/logout", "revoke": oidc + "/revoke", "device": oidc + "/auth/device"}
        self.login_path = self.prefix + "/login-actions/authenticate"
        self.consent_path = self.prefix + "/login-actions/consent"
        self.device_path = self.prefix + "/device"
        self.register(Client(PUBLIC_ID, None, [CALLBACK], "public", {"name": "sfauth"}))
        self.register(Client(CONFIDENTIAL_ID, CONFIDENTIAL_SECRET, [CALLBACK], "confidential",
                             {"name": "sfauth (confidential)"}))
        self.client_id = PUBLIC_ID
        self.add_server("main")
        self.wire()
        self.route("main", "GET", "/api/echo", self.api_echo)

    @property
    def issuer(self):
        return self.base_url + self.prefix

    def metadata(self):
        m = super().metadata()
        if self.version >= 23:
            m["authorization_response_iss_parameter_supported"] = True  # [9207]
        m["scopes_supported"] = ["openid", "profile", "email", "offline_access", "roles", "web-origins"]
        return m

    def iss_param(self):
        return {"iss": self.issuer} if self.version >= 23 else {}  # [9207]

    # -- /auth -----------------------------------------------------------------------------------

    def redirect_ok(self, client, redirect_uri):
        for registered in client.redirect_uris:
            if registered.endswith("*"):  # Keycloak's trailing wildcard: any path below the prefix
                reg, req = urllib.parse.urlsplit(registered[:-1]), urllib.parse.urlsplit(redirect_uri)
                same_port = reg.port == req.port or (reg.scheme == "http" and is_loopback_host(reg.hostname or ""))
                if (reg.scheme, reg.hostname) == (req.scheme, req.hostname) and same_port \
                        and req.path.startswith(reg.path or "/") and not req.fragment:
                    return True
            elif redirect_matches(registered, redirect_uri):
                return True
        return False

    def bad_redirect(self, req, client, redirect_uri):
        return error_page(self.brand, "invalid_request", "Invalid parameter: redirect_uri")

    def needs_consent(self, areq, user):
        return self.consent_required and super().needs_consent(areq, user)

    # -- /token ---------------------------------------------------------------------------------

    def error(self, code, description, status=400, **extra):
        texts = {"invalid_client": "Invalid client or Invalid client credentials"}
        return json_response({"error": code, "error_description": texts.get(code, description), **extra}, status)

    def exchange(self, p, client):
        code, problem = self.find(p.get("code"), "code")
        if problem or code.client_id != client.client_id:
            return self.error("invalid_grant", "Code not valid")
        if p.get("redirect_uri") != code.extra.get("redirect_uri"):
            return self.error("invalid_grant", "Incorrect redirect_uri")
        challenge = code.extra.get("code_challenge")
        if challenge and not self.pkce_ok(challenge, code.extra.get("code_challenge_method") or "plain",
                                          p.get("code_verifier")):
            return self.error("invalid_grant", "PKCE verification failed: Invalid code verifier")
        return super().exchange(p, client)

    def token_scope(self, granted, p, ctx):
        return list(dict.fromkeys([*granted, "profile", "email"]))  # default client scopes

    def refresh_problem(self, rt, problem):
        return self.error("invalid_grant", "Token is not active" if problem == "expired" else "Invalid refresh token")

    def make_access_token(self, client, user, scope, ctx):
        now = int(self.now())
        claims = {"exp": now + self.access_token_lifetime, "iat": now, "jti": str(uuid.uuid4()), "iss": self.issuer,
                  "aud": "account", "sub": self.sub(user), "typ": "Bearer", "azp": client.client_id,
                  "sid": ctx.setdefault("session_state", str(uuid.uuid4())), "scope": " ".join(scope),
                  "preferred_username": user.username, "email": user.email}
        return self.sign_jwt(claims), "account"

    def sub(self, user):
        return str(uuid.UUID(int=user.id))

    def id_token_claims(self, client, user, scope, ctx):
        return {"sub": self.sub(user), "typ": "ID", "azp": client.client_id, "sid": ctx.get("session_state")}

    def token_response(self, client, username, scope, ctx, family=None):
        out = super().token_response(client, username, scope, ctx, family)
        offline = "offline_access" in scope
        # [OFF]: an offline token says refresh_expires_in 0.
        out["refresh_expires_in"] = 0 if offline else self.refresh_token_lifetime
        out["not-before-policy"] = 0
        out["session_state"] = ctx.get("session_state")
        return out

    def store(self, kind, value, client_id, username, scope, lifetime, **kw):
        if kind == "refresh" and "offline_access" in scope:
            lifetime = None  # offline tokens don't expire with the SSO session
        return super().store(kind, value, client_id, username, scope, lifetime, **kw)

    def userinfo_claims(self, user, grant):
        given, _, family = user.name.partition(" ")
        return {"sub": self.sub(user), "email_verified": True, "name": user.name,
                "preferred_username": user.username, "given_name": given, "family_name": family,
                "email": user.email}

    def api_echo(self, req):
        g = self.valid_access(req)
        if g is None:
            return json_response({"error": "invalid_token"}, 401, [("WWW-Authenticate", 'Bearer error="invalid_token"')])
        return json_response({"user": g.username, "aud": g.audience})
