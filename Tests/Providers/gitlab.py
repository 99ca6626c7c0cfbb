"""GitLab stand-in (gitlab.com or a self-managed instance: same layout, base URL = issuer).

    with GitLab() as gl:
        gl.discovery_url                  # http://127.0.0.1:P/.well-known/openid-configuration

Sources:
  [API]  docs.gitlab.com/ee/api/oauth2.html (gitlabhq/gitlabhq doc/api/oauth2.md): PKCE for public
         clients, expires_in 7200, refresh "Invalidates the existing access_token and
         refresh_token", device grant at /oauth/authorize_device (GitLab 17.1+, GA 17.9),
         /oauth/revoke answers 200 with an empty JSON hash, GET /api/v4/user with the token
  [GCM]  git-ecosystem/git-credential-manager docs/gitlab.md: register "http://127.0.0.1/",
         untick Confidential -- GCM then listens on a random port (any loopback port accepted)
  [K282] int128/kubelogin#282: GitLab's discovery document has no code_challenge_methods_supported
  [DK]   doorkeeper-gem/doorkeeper (GitLab's OAuth server per [API]): error descriptions
"""

from oidc import OidcStandIn
from stand_in import Client, json_response

CONFIDENTIAL_ID = "gitlab-confidential-app"
CONFIDENTIAL_SECRET = "gitlab-confidential-secret"
PUBLIC_ID = "gitlab-public-app"
CALLBACK = "http://127.0.0.1/"

# [DK] locale strings (config/locales/en.yml of doorkeeper)
INVALID_GRANT = ("The provided authorization grant is invalid, expired, revoked, does not match the redirection "
                 "URI used in the authorization request, or was issued to another client.")
INVALID_CLIENT = ("Client authentication failed due to unknown client, no client authentication included, "
                  "or unsupported authentication method.")


class GitLab(OidcStandIn):
    """Clients: gitlab-confidential-app (secret gitlab-confidential-secret) and gitlab-public-app
    (not confidential: no secret, PKCE), both with redirect URI http://127.0.0.1/ (any port).
    Knobs: advertise_pkce (False per [K282]), plus the StandIn ones."""

    brand = "GitLab"
    login_path = "/users/sign_in"
    consent_path = "/oauth/authorize/consent"
    device_path = "/oauth/device"
    paths = {"discovery": "/.well-known/openid-configuration", "jwks": "/oauth/discovery/keys",
             "authorize": "/oauth/authorize", "token": "/oauth/token", "userinfo": "/oauth/userinfo",
             "revoke": "/oauth/revoke", "device": "/oauth/authorize_device"}
    refresh_mode = "rotate"  # [API]: a refresh invalidates the existing access and refresh token
    offline_scope = None  # GitLab always issues refresh tokens [API]
    access_token_lifetime = 7200  # [API] "expires_in": 7200
    device_lifetime = 300  # [API] device example: "expires_in": 300
    token_type = "Bearer"

    def __init__(self, advertise_pkce=False, **kw):
        super().__init__(**kw)
        self.advertise_pkce = advertise_pkce
        self.register(Client(CONFIDENTIAL_ID, CONFIDENTIAL_SECRET, [CALLBACK], "confidential", {"name": "sfauth"}))
        self.register(Client(PUBLIC_ID, None, [CALLBACK], "public", {"name": "sfauth (public)"}))
        self.client_id, self.client_secret = PUBLIC_ID, None
        self.add_server("main")
        self.wire()
        self.route("main", "GET", "/api/v4/user", self.api_user)

    def metadata(self):
        m = super().metadata()
        if not self.advertise_pkce:
            m.pop("code_challenge_methods_supported")  # [K282]
        m["scopes_supported"] = ["api", "read_api", "read_user", "read_repository", "write_repository",
                                 "openid", "profile", "email"]
        return m

    def error(self, code, description, status=400, **extra):
        description = {"invalid_grant": INVALID_GRANT, "invalid_client": INVALID_CLIENT}.get(code, description)
        return json_response({"error": code, "error_description": description, **extra}, status)

    def token_response(self, client, username, scope, ctx, family=None):
        out = super().token_response(client, username, scope, ctx, family)
        out["created_at"] = int(self.now())  # [API] examples carry created_at
        return out

    def id_token_claims(self, client, user, scope, ctx):
        return {"sub_legacy": f"legacy-{user.id}"}

    def userinfo_claims(self, user, grant):
        return {"sub": user.sub, "name": user.name, "nickname": user.username,
                "preferred_username": user.username, "email": user.email, "email_verified": True,
                "profile": f"{self.base_url}/{user.username}", "groups": []}

    def revoke(self, req):
        resp = super().revoke(req)
        if resp.status == 200:
            return json_response({})  # [API]: "a 200 response code and an empty JSON hash"
        return resp

    def api_user(self, req):
        g = self.valid_access(req)
        if g is None:
            return json_response({"message": "401 Unauthorized"}, 401)
        user = self.users[g.username]
        return json_response({"id": user.id, "username": user.username, "name": user.name, "state": "active",
                              "email": user.email, "web_url": f"{self.base_url}/{user.username}"})
