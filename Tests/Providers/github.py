"""GitHub stand-in: github.com (web host + a separate API host) or GitHub Enterprise Server
(one host, REST API under /api/v3).

    with GitHub(mode="oauth-app") as gh:              # github.com layout
        gh.base_url, gh.api_url                        # http://127.0.0.1:P1, http://127.0.0.1:P2
    with GitHub(mode="github-app", enterprise=True) as ghes:
        ghes.api_url                                   # http://127.0.0.1:P/api/v3

Sources (quoted next to each quirk below):
  [AUTH]   docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
           (github/docs content/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps.md)
  [TOKERR] docs.github.com/en/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-oauth-app-access-token-request-errors
  [AUTHERR] docs.github.com/en/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-authorization-request-errors
  [GHAPP]  docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-user-access-token-for-a-github-app
  [REFRESH] docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens
  [RESP]   github/docs data/reusables/apps/user-access-token-response-parameters.md
  [PKCE]   github.blog/changelog/2025-07-14-pkce-support-for-oauth-and-github-app-authentication
  [REST]   docs.github.com/en/rest/apps/oauth-applications#delete-an-app-token
  [200]    octokit/auth-oauth-app.js#13, golang/oauth2#274, panva/oauth4webapi#16 (errors with HTTP 200)
"""

import html
import secrets
import urllib.parse

from stand_in import Client, Response, add_query, form_response, json_response, redirect, redirect_matches
from web_flow import WebStandIn, error_page

OAUTH_APP_ID = "Ov23liStandInOAuthApp"
OAUTH_APP_SECRET = "oauth-app-secret"
GITHUB_APP_ID = "Iv23liStandInGitHubApp"
GITHUB_APP_SECRET = "github-app-secret"
CALLBACK = "http://127.0.0.1/callback"
DOCS = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/"

# [TOKERR] and [AUTH] "Error codes for the device flow": the documented error texts.
ERRORS = {
    "incorrect_client_credentials": ("The client_id and/or client_secret passed are incorrect.",
                                     DOCS + "#incorrect-client-credentials"),
    "redirect_uri_mismatch": ("The redirect_uri MUST match the registered callback URL for this application.",
                              DOCS + "#redirect-uri-mismatch2"),
    "bad_verification_code": ("The code passed is incorrect or expired.", DOCS + "#bad-verification-code"),
    "bad_refresh_token": ("The refresh token passed is incorrect or expired.", DOCS + "#bad-refresh-token"),
    "unsupported_grant_type": ("The grant type must be urn:ietf:params:oauth:grant-type:device_code.",
                               "https://docs.github.com/developers/apps/authorizing-oauth-apps#error-codes-for-the-device-flow"),
    "authorization_pending": ("The authorization request is still pending.",
                              "https://docs.github.com/developers/apps/authorizing-oauth-apps#error-codes-for-the-device-flow"),
    "slow_down": ("Too many requests have been made in the same timeframe.",
                  "https://docs.github.com/developers/apps/authorizing-oauth-apps#error-codes-for-the-device-flow"),
    "expired_token": ("The device_code has expired.",
                      "https://docs.github.com/developers/apps/authorizing-oauth-apps#error-codes-for-the-device-flow"),
    "incorrect_device_code": ("The device_code provided is not valid.",
                              "https://docs.github.com/developers/apps/authorizing-oauth-apps#error-codes-for-the-device-flow"),
    "access_denied": ("The authorization request was denied.",
                      "https://docs.github.com/developers/apps/authorizing-oauth-apps#error-codes-for-the-device-flow"),
    "device_flow_disabled": ("Device Flow must be explicitly enabled for this App",
                             "https://docs.github.com/developers/apps/authorizing-oauth-apps#error-codes-for-the-device-flow"),
}


class GitHub(WebStandIn):
    """Knobs:
      mode                 "oauth-app" | "github-app": which registered client .client_id /
                           .client_secret name (both clients are always registered)
      enterprise           False: github.com layout (API on its own server, .api_url);
                           True: GHES layout (API under /api/v3 on the same server)
      expiring_user_tokens GitHub App "user-to-server token expiration" (on unless opted out [REFRESH])
      device_flow_enabled  the apps' "Enable Device Flow" setting [AUTH]
      access_token_lifetime     28800 (GitHub App user tokens; OAuth app tokens never expire)
      refresh_token_lifetime    15897600: what github.com sends in practice ([RESP] says "always
                                15811200")
      form_content_type    Content-Type of the default (form-encoded) answers; community
                           discussion #101123 reports github.com sending application/json there
    """

    brand = "GitHub"
    login_path = "/session"
    consent_path = "/login/oauth/consent"
    device_path = "/login/device"

    def __init__(self, mode="oauth-app", enterprise=False, expiring_user_tokens=True, device_flow_enabled=True,
                 **kw):
        super().__init__(**kw)
        assert mode in ("oauth-app", "github-app")
        self.mode = mode
        self.enterprise = enterprise
        self.expiring_user_tokens = expiring_user_tokens
        self.device_flow_enabled = device_flow_enabled
        self.access_token_lifetime = 28800  # [RESP]: expires_in "will always be 28800 (8 hours)"
        self.refresh_token_lifetime = 15897600
        self.form_content_type = "application/x-www-form-urlencoded; charset=utf-8"
        self.register(Client(OAUTH_APP_ID, OAUTH_APP_SECRET, [CALLBACK], "oauth-app", {"name": "sfauth OAuth app"}))
        self.register(Client(GITHUB_APP_ID, GITHUB_APP_SECRET, [CALLBACK], "github-app",
                             {"name": "sfauth GitHub App"}))
        self.add_server("main")
        self.route("main", "GET", "/login/oauth/authorize", self.authorize)
        self.route("main", "POST", "/login/oauth/access_token", self.access_token)
        self.route("main", "POST", "/login/device/code", self.device_code)
        self.add_ui_routes()
        if enterprise:
            api_server, self.api_prefix = "main", "/api/v3"
        else:
            api_server, self.api_prefix = "api", ""
            self.add_server("api")
        self.route(api_server, "GET", self.api_prefix + "/user", self.api_user)
        self.route(api_server, "DELETE", self.api_prefix + r"/applications/([^/]+)/token", self.api_delete_token)

    @property
    def client_id(self):
        return OAUTH_APP_ID if self.mode == "oauth-app" else GITHUB_APP_ID

    @property
    def client_secret(self):
        return OAUTH_APP_SECRET if self.mode == "oauth-app" else GITHUB_APP_SECRET

    @property
    def api_url(self):
        return self.url("main") + self.api_prefix if self.enterprise else self.url("api")

    @property
    def authorize_url(self):
        return self.base_url + "/login/oauth/authorize"

    @property
    def token_url(self):
        return self.base_url + "/login/oauth/access_token"

    # -- answers: form-encoded unless Accept asks for JSON or XML, always HTTP 200 [AUTH], [200]

    def answer(self, req, fields):
        accept = (req.header("Accept") or "").lower()
        if "application/json" in accept:
            return json_response(fields)
        if "application/xml" in accept:
            inner = "".join(f"<{k}>{html.escape(str(v))}</{k}>" for k, v in fields.items())
            return Response(200, f"<OAuth>{inner}</OAuth>".encode(),
                            [("Content-Type", "application/xml; charset=utf-8")])
        resp = form_response(fields)
        resp.headers[0] = ("Content-Type", self.form_content_type)
        return resp

    def error(self, req, code, **extra):
        description, uri = ERRORS[code]
        return self.answer(req, {"error": code, "error_description": description, "error_uri": uri, **extra})

    # -- web flow ------------------------------------------------------------------------------

    def redirect_ok(self, client, redirect_uri):
        # OAuth apps [AUTH] "Redirect URLs": host and port must match, the path may be a
        # subdirectory of the callback URL; "Loopback redirect urls": any port for loopback.
        # GitHub Apps [GHAPP]: redirect_uri "must be an exact match to one of the URLs you provided
        # as a Callback URL"; the loopback port exception is assumed to apply as for OAuth apps.
        rule = "subdirectory" if client.kind == "oauth-app" else "exact"
        return any(redirect_matches(cb, redirect_uri, path_rule=rule) for cb in client.redirect_uris)

    def authorize(self, req):
        p = req.query
        client = self.clients.get(p.get("client_id", ""))
        if client is None:
            return error_page(self.brand, "Not Found", "No application with this client_id.", 404)
        redirect_uri = p.get("redirect_uri") or client.redirect_uris[0]  # [AUTH]: defaults to the callback URL
        if not self.redirect_ok(client, redirect_uri):
            # [AUTHERR] "Redirect URI mismatch": GitHub redirects to the *registered* callback URL.
            description, _ = ERRORS["redirect_uri_mismatch"]
            return redirect(add_query(client.redirect_uris[0], {
                "error": "redirect_uri_mismatch", "error_description": description,
                "error_uri": "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch",
                "state": p.get("state")}))
        method = p.get("code_challenge_method")
        if p.get("code_challenge") and method not in (None, "S256"):
            # [PKCE]: "Only the S256 code challenge method is accepted." (the error shape is assumed)
            return redirect(add_query(redirect_uri, {"error": "invalid_request",
                                                     "error_description": "Only S256 is supported.",
                                                     "state": p.get("state")}))
        scope = [s for s in p.get("scope", "").replace(",", " ").split() if s]
        if client.kind == "github-app":
            scope = []  # [RESP]: GitHub App user tokens have no scopes (scope is always "")
        areq = self.new_auth_request(client, redirect_uri, p, scope)
        return self.begin_authorization(req, areq)

    def needs_consent(self, areq, user):
        # [AUTH] scope: "For users who have authorized scopes for the application, the user won't
        # be shown the OAuth authorization page" (GitHub has no prompt=consent).
        granted = [set(s) for (u, c, s) in self.consents if u == user.username and c == areq.client_id]
        return not granted or not set(areq.scope) <= set().union(*granted)

    def authorization_denied(self, areq):
        return {"error": "access_denied", "error_description": "The user has denied your application access.",
                "error_uri": "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#access-denied",
                "state": areq.state}

    # -- token endpoint --------------------------------------------------------------------------

    def access_token(self, req):
        p = {**req.query, **req.form}  # [AUTH] documents them as query parameters; forms work too
        grant_type = p.get("grant_type") or "authorization_code"
        client = self.clients.get(p.get("client_id", ""))
        if grant_type == "authorization_code":
            return self.exchange_code(req, p, client)
        if grant_type == "refresh_token":
            return self.refresh(req, p, client)
        if grant_type == "urn:ietf:params:oauth:grant-type:device_code":
            return self.poll(req, p, client)
        return self.error(req, "unsupported_grant_type")

    def secret_ok(self, client, p):
        return client is not None and secrets.compare_digest(p.get("client_secret", ""), client.secret)

    def exchange_code(self, req, p, client):
        # [AUTH] step 2: client_secret is Required (GitHub has no public clients in the web flow).
        if not self.secret_ok(client, p):
            return self.error(req, "incorrect_client_credentials")
        code, problem = self.find(p.get("code"), "code")
        if problem or code.client_id != client.client_id:
            return self.error(req, "bad_verification_code")
        if p.get("redirect_uri") and p["redirect_uri"] != code.extra["redirect_uri"] and code.extra["redirect_uri"]:
            return self.error(req, "redirect_uri_mismatch")
        if code.extra["code_challenge"] and not self.pkce_ok(code.extra["code_challenge"], "S256",
                                                             p.get("code_verifier")):
            return self.error(req, "bad_verification_code")  # [PKCE]; GitHub's exact error is not documented
        code.used = True
        return self.answer(req, self.issue_tokens(client, code.username, code.scope, via_device=False))

    def issue_tokens(self, client, username, scope, via_device):
        if client.kind == "oauth-app" or not self.expiring_user_tokens:
            # [AUTH]: OAuth app tokens carry no expires_in and no refresh token; the scope answer is
            # comma-separated ("repo,gist"). [RESP]: without expiration the fields are omitted.
            prefix = "gho_" if client.kind == "oauth-app" else "ghu_"
            at = self.store("access", self.new_value(prefix, 27), client.client_id, username, scope, None)
            return {"access_token": at.value, "scope": ",".join(scope), "token_type": "bearer"}
        family = secrets.token_hex(8)
        at = self.store("access", self.new_value("ghu_", 27), client.client_id, username, [],
                        self.access_token_lifetime, family=family)
        rt = self.store("refresh", self.new_value("ghr_", 60), client.client_id, username, [],
                        self.refresh_token_lifetime, family=family, extra={"via_device": via_device})
        # [RESP]: expires_in 28800, refresh_token ghr_..., refresh_token_expires_in, scope "" .
        return {"access_token": at.value, "expires_in": self.access_token_lifetime,
                "refresh_token": rt.value, "refresh_token_expires_in": self.refresh_token_lifetime,
                "scope": "", "token_type": "bearer"}

    def refresh(self, req, p, client):
        rt, problem = self.find(p.get("refresh_token"), "refresh")
        if client is None:
            return self.error(req, "incorrect_client_credentials")
        # [REFRESH]: client_secret is "Required unless the user access token was generated using the
        # device flow".
        needs_secret = not (rt is not None and rt.extra.get("via_device"))
        if (needs_secret or p.get("client_secret")) and not self.secret_ok(client, p):
            return self.error(req, "incorrect_client_credentials")
        if problem or rt.client_id != client.client_id:
            return self.error(req, "bad_refresh_token")
        # [REFRESH]: "Once you use a refresh token, that refresh token and the old user access token
        # will no longer work."
        self.revoke_family(rt.family)
        return self.answer(req, self.issue_tokens(client, rt.username, rt.scope, rt.extra.get("via_device")))

    # -- device flow [AUTH] "Device flow", [GHAPP] -------------------------------------------------

    def device_code(self, req):
        p = {**req.query, **req.form}
        client = self.clients.get(p.get("client_id", ""))
        if client is None:
            return self.error(req, "incorrect_client_credentials")  # not documented; assumed
        if not self.device_flow_enabled:
            return self.error(req, "device_flow_disabled")
        scope = [s for s in p.get("scope", "").replace(",", " ").split() if s]
        # [AUTH]: "The device verification code is 40 characters"; user_code "8 characters with a
        # hyphen in the middle".
        d = self.start_device(client.client_id, scope if client.kind == "oauth-app" else [],
                              device_code=secrets.token_hex(20))
        # No verification_uri_complete: GitHub's answer has only these fields [AUTH].
        return self.answer(req, {"device_code": d.device_code, "user_code": d.user_code,
                                 "verification_uri": self.verification_uri(), "expires_in": self.device_lifetime,
                                 "interval": d.interval})

    def poll(self, req, p, client):
        if client is None:
            return self.error(req, "incorrect_client_credentials")
        if not self.device_flow_enabled:
            return self.error(req, "device_flow_disabled")
        state, d = self.poll_device(p.get("device_code"), client.client_id)
        if state in ("unknown", "used"):
            return self.error(req, "incorrect_device_code")
        if state == "expired":
            return self.error(req, "expired_token")
        if state == "denied":
            return self.error(req, "access_denied")
        if state == "slow_down":
            # [AUTH]: "The error response includes the new interval that you must use."
            return self.error(req, "slow_down", interval=d.interval)
        if state == "pending":
            return self.error(req, "authorization_pending")
        return self.answer(req, self.issue_tokens(client, d.username, d.scope, via_device=True))

    # -- REST API: GET /user, DELETE /applications/{client_id}/token --------------------------------

    def bad_credentials(self):
        # [GHAPP]: a revoked token "will receive the 401 Bad Credentials error".
        return json_response({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest",
                              "status": "401"}, 401)

    def token_from(self, req):
        value = req.header("Authorization", "")
        for scheme in ("bearer ", "token "):  # the REST API accepts both schemes
            if value.lower().startswith(scheme):
                return value[len(scheme):].strip()
        return None

    def api_user(self, req):
        g, problem = self.find(self.token_from(req), "access")
        if problem:
            return self.bad_credentials()
        user = self.users[g.username]
        # No OIDC at GitHub: identity is this object; it has login and id, no "sub".
        body = {"login": user.username, "id": user.id, "node_id": f"U_stand_in_{user.id}", "type": "User",
                "name": user.name, "email": user.email, "html_url": f"{self.base_url}/{user.username}"}
        headers = []
        if self.clients[g.client_id].kind == "oauth-app":
            headers.append(("X-OAuth-Scopes", ", ".join(g.scope)))  # scopes-for-oauth-apps docs
        return json_response(body, headers=headers)

    def api_delete_token(self, req, client_id):
        # [REST] "Delete an app token": Basic auth with client_id:client_secret, JSON body
        # {"access_token": ...}, 204 No Content; 422 "Validation failed".
        creds = req.basic_auth()
        client = self.clients.get(client_id)
        if not creds or client is None or creds[0] != client_id or not secrets.compare_digest(creds[1], client.secret):
            return json_response({"message": "Requires authentication",
                                  "documentation_url": "https://docs.github.com/rest"}, 401)
        token = (req.json or {}).get("access_token") if isinstance(req.json, dict) else None
        g, problem = self.find(token, "access")
        if g is None or g.client_id != client_id:
            return json_response({"message": "Validation Failed", "documentation_url": "https://docs.github.com/rest"},
                                 422)
        g.revoked = True
        return Response(204)

    # -- conveniences for tests ----------------------------------------------------------------

    def authorize_link(self, redirect_uri, state="st", scope="repo", **extra):
        params = {"client_id": self.client_id, "redirect_uri": redirect_uri, "state": state, "scope": scope, **extra}
        return self.authorize_url + "?" + urllib.parse.urlencode(params)
