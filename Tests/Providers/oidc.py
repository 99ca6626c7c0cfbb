"""A generic OpenID Connect provider on top of StandIn; each provider module configures it and
overrides the hooks where its documentation says it differs.

Configuration (class attributes, overridable per instance):
  paths               endpoint name -> path: discovery, jwks, authorize, token, userinfo, revoke,
                      device, end_session (a missing name: no such endpoint)
  endpoint_server     endpoint name -> server name (default "main"; Cognito puts the OAuth
                      endpoints on a second server)
  pkce_methods        code_challenge_method values accepted at /authorize
  refresh_mode        what a refresh grant does with the refresh token:
                        "omit"         answer without refresh_token; the old one stays valid
                        "same"         answer with the same refresh_token
                        "new-keep-old" a new refresh_token; the old one stays valid
                        "rotate"       a new refresh_token; the old one (and its access token) die
                        "rotate-detect-reuse"  like rotate, and presenting a used one revokes
                                       the whole family (OAuth 2.1 / RFC 9700 §4.14.2)
  offline_scope       a refresh token only when this scope was granted (None: always)
  id_token_lifetime   seconds
Hooks: metadata(), authenticate_client(), validate_authorize(), gives_refresh(),
make_access_token(), id_token_claims(), userinfo_claims(), userinfo_accepts(), error(),
device_response(), device_error().
"""

import re
import secrets
import urllib.parse

from stand_in import Response, add_query, json_response, redirect, redirect_matches
from web_flow import WebStandIn, error_page

GRANT_DEVICE = "urn:ietf:params:oauth:grant-type:device_code"


class OidcStandIn(WebStandIn):
    paths = {}
    endpoint_server = {}
    pkce_methods = ("S256", "plain")
    refresh_mode = "new-keep-old"
    offline_scope = "offline_access"
    id_token_lifetime = 3600
    any_loopback_port = True
    token_type = "Bearer"

    # -- wiring ---------------------------------------------------------------------------------

    def wire(self):
        """Register the endpoints listed in self.paths (call after add_server)."""
        handlers = {"discovery": ("GET", self.discovery), "jwks": ("GET", self.jwks_endpoint),
                    "authorize": ("GET", self.authorize), "token": ("POST", self.token),
                    "userinfo": ("GET", self.userinfo), "revoke": ("POST", self.revoke),
                    "device": ("POST", self.device_authorization), "end_session": ("GET", self.end_session)}
        for name, path in self.paths.items():
            if name in handlers:
                method, fn = handlers[name]
                self.route(self.server_of(name), method, re.escape(path), fn)
                if name == "userinfo":
                    self.route(self.server_of(name), "POST", re.escape(path), fn)
        self.add_ui_routes()

    def server_of(self, endpoint):
        return self.endpoint_server.get(endpoint, "main")

    def endpoint(self, name):
        return self.url(self.server_of(name)) + self.paths[name] if name in self.paths else None

    @property
    def issuer(self):
        return self.base_url

    @property
    def discovery_url(self):
        return self.endpoint("discovery")

    def metadata(self):
        m = {"issuer": self.issuer,
             "authorization_endpoint": self.endpoint("authorize"),
             "token_endpoint": self.endpoint("token"),
             "userinfo_endpoint": self.endpoint("userinfo"),
             "jwks_uri": self.endpoint("jwks"),
             "revocation_endpoint": self.endpoint("revoke"),
             "device_authorization_endpoint": self.endpoint("device"),
             "end_session_endpoint": self.endpoint("end_session"),
             "response_types_supported": ["code"],
             "subject_types_supported": ["public"],
             "id_token_signing_alg_values_supported": ["RS256"],
             "code_challenge_methods_supported": list(self.pkce_methods),
             "grant_types_supported": ["authorization_code", "refresh_token"]
             + ([GRANT_DEVICE] if "device" in self.paths else [])}
        return {k: v for k, v in m.items() if v is not None}

    def discovery(self, req):
        return json_response(self.metadata())

    def jwks_endpoint(self, req):
        return json_response(self.jwks())

    # -- errors -----------------------------------------------------------------------------------

    def error(self, code, description, status=400, **extra):
        return json_response({"error": code, "error_description": description, **extra}, status)

    # -- /authorize -----------------------------------------------------------------------------------

    def redirect_ok(self, client, redirect_uri):
        return any(redirect_matches(r, redirect_uri, any_loopback_port=self.any_loopback_port)
                   for r in client.redirect_uris)

    def bad_client(self, req):
        return error_page(self.brand, "invalid_client", "Unknown client_id.", 400)

    def bad_redirect(self, req, client, redirect_uri):
        # RFC 6749 §4.1.2.1: never redirect to an unverified URI; show an error page.
        return error_page(self.brand, "invalid_request", f"Invalid redirect_uri: {redirect_uri}", 400)

    def validate_authorize(self, client, p, scope):
        """(error, description) to send back to the client, or None."""
        return None

    def authorize_scope(self, p):
        return [s for s in p.get("scope", "").split() if s]

    def authorize(self, req):
        p = req.query
        client = self.clients.get(p.get("client_id", ""))
        if client is None:
            return self.bad_client(req)
        redirect_uri = p.get("redirect_uri") or ""
        if not self.redirect_ok(client, redirect_uri):
            return self.bad_redirect(req, client, redirect_uri)
        if p.get("response_type") != "code":
            return self.redirect_error(redirect_uri, p, "unsupported_response_type",
                                       "Only response_type=code is supported here.")
        if p.get("code_challenge") and p.get("code_challenge_method", "plain") not in self.pkce_methods:
            return self.redirect_error(redirect_uri, p, "invalid_request", "Unsupported code_challenge_method.")
        scope = self.authorize_scope(p)
        problem = self.validate_authorize(client, p, scope)
        if problem:
            return self.redirect_error(redirect_uri, p, *problem)
        areq = self.new_auth_request(client, redirect_uri, p, scope)
        return self.begin_authorization(req, areq)

    def redirect_error(self, redirect_uri, p, error, description):
        return redirect(add_query(redirect_uri, {"error": error, "error_description": description,
                                                 "state": p.get("state"), **self.iss_param()}))

    def iss_param(self):
        """RFC 9207 `iss` on authorization responses; {} for providers that don't send it."""
        return {}

    def authorization_success(self, areq):
        code = self.issue_code(areq)
        return {"code": code.value, "state": areq.state, **self.iss_param()}

    def authorization_denied(self, areq):
        return {"error": "access_denied", "error_description": "The user denied the request.",
                "state": areq.state, **self.iss_param()}

    # -- /token ---------------------------------------------------------------------------------------

    def client_credentials(self, req, p):
        """(client_id, secret or None, method) from HTTP Basic or the form."""
        basic = req.basic_auth()
        if basic:
            return basic[0], basic[1], "client_secret_basic"
        if "client_secret" in p:
            return p.get("client_id"), p.get("client_secret"), "client_secret_post"
        return p.get("client_id"), None, "none"

    def authenticate_client(self, req, p, grant_type):
        """(client, error Response or None). Default: a confidential client must present its
        secret; a public client must present none."""
        client_id, secret, _ = self.client_credentials(req, p)
        client = self.clients.get(client_id or "")
        if client is None:
            return None, self.error("invalid_client", "Client authentication failed.", 401)
        if client.secret is None:
            if secret:
                return None, self.error("invalid_client", "Public clients have no secret.", 401)
            return client, None
        if not secret or not secrets.compare_digest(secret, client.secret):
            return None, self.error("invalid_client", "Client authentication failed.", 401)
        return client, None

    def token(self, req):
        p = dict(req.form)
        grant_type = p.get("grant_type", "")
        if grant_type not in ("authorization_code", "refresh_token", GRANT_DEVICE):
            return self.error("unsupported_grant_type", f"Unsupported grant_type: {grant_type}")
        client, problem = self.authenticate_client(req, p, grant_type)
        if problem:
            return problem
        if grant_type == "authorization_code":
            return self.exchange(p, client)
        if grant_type == "refresh_token":
            return self.refresh(p, client)
        return self.poll(p, client)

    def exchange(self, p, client):
        code, problem = self.find(p.get("code"), "code")
        if problem or code.client_id != client.client_id:
            return self.error("invalid_grant", "The authorization code is invalid or expired.")
        if code.extra.get("redirect_uri") and p.get("redirect_uri") != code.extra["redirect_uri"]:
            return self.error("invalid_grant", "redirect_uri does not match the authorization request.")
        pkce_problem = self.check_pkce(code, client, p)
        if pkce_problem:
            return pkce_problem
        code.used = True
        ctx = {"nonce": code.extra.get("nonce"), "consent_shown": code.extra.get("consent_shown"),
               "params": code.extra.get("params", {}), "via": "code", **code.extra.get("ctx", {})}
        scope = self.token_scope(code.scope, p, ctx)
        if isinstance(scope, Response):
            return scope
        return self.tokens_or_error(client, code.username, scope, ctx)

    def check_pkce(self, code, client, p):
        challenge = code.extra.get("code_challenge")
        if challenge:
            method = code.extra.get("code_challenge_method") or "plain"
            if not self.pkce_ok(challenge, method, p.get("code_verifier")):
                return self.error("invalid_grant", "PKCE verification failed.")
        elif p.get("code_verifier"):
            return self.error("invalid_grant", "code_verifier given but no code_challenge was sent.")
        return None

    def token_scope(self, granted, p, ctx):
        """The scope of the tokens for a code exchange (or an error Response)."""
        return granted

    def tokens_or_error(self, client, username, scope, ctx):
        result = self.token_response(client, username, scope, ctx)
        return result if isinstance(result, Response) else json_response(result)

    def gives_refresh(self, client, scope, ctx):
        return self.offline_scope is None or self.offline_scope in scope

    def make_access_token(self, client, user, scope, ctx):
        """(value, audience): an opaque token by default."""
        return self.new_value("", 32), client.client_id

    def token_response(self, client, username, scope, ctx, family=None):
        user = self.users[username]
        family = family or secrets.token_hex(8)
        value, audience = self.make_access_token(client, user, scope, ctx)
        self.store("access", value, client.client_id, username, scope, self.access_token_lifetime,
                   audience=audience, family=family, extra={"ctx": ctx})
        out = {"access_token": value, "token_type": self.token_type, "expires_in": self.access_token_lifetime,
               "scope": " ".join(scope)}
        if ctx.get("via") != "refresh" and self.gives_refresh(client, scope, ctx):
            rt = self.store("refresh", self.new_value("", 32), client.client_id, username, scope,
                            self.refresh_token_lifetime, family=family, extra={"ctx": ctx})
            out["refresh_token"] = rt.value
        if "openid" in scope:
            out["id_token"] = self.id_token(client, user, scope, ctx, access_token=value)
        return out

    # -- refresh --------------------------------------------------------------------------------------

    def refresh_problem(self, rt, problem):
        """The error for a refresh token that can't be used (hook for provider wording)."""
        return self.error("invalid_grant", "The refresh token is invalid or expired.")

    def refresh(self, p, client):
        rt, problem = self.find(p.get("refresh_token"), "refresh")
        if rt is not None and rt.client_id != client.client_id:
            problem = "unknown"
        if problem == "used" and self.refresh_mode == "rotate-detect-reuse":
            self.revoke_family(rt.family)  # reuse detected: the whole chain dies
        if problem:
            return self.refresh_problem(rt, problem)
        scope = self.refresh_scope(rt, p)
        if isinstance(scope, Response):
            return scope
        ctx = dict(rt.extra.get("ctx", {}), via="refresh")
        if self.refresh_mode in ("rotate", "rotate-detect-reuse"):
            rt.used = True
            rt.extra["used_at"] = self.now()
            for g in list(self.grants.values()):
                if g.family == rt.family and g.kind == "access" and self.refresh_mode == "rotate":
                    g.revoked = True
        out = self.token_response(client, rt.username, scope, ctx, family=rt.family)
        if isinstance(out, Response):
            return out
        if self.refresh_mode == "same":
            out["refresh_token"] = rt.value
        elif self.refresh_mode != "omit":
            new = self.store("refresh", self.new_value("", 32), client.client_id, rt.username, rt.scope,
                             self.refresh_lifetime_after(rt), family=rt.family, extra=dict(rt.extra))
            out["refresh_token"] = new.value
        return json_response(out)

    def refresh_scope(self, rt, p):
        requested = p.get("scope", "").split()
        if requested and not set(requested) <= set(rt.scope):
            return self.error("invalid_scope", "The requested scope exceeds the granted scope.")
        return requested or rt.scope

    def refresh_lifetime_after(self, rt):
        return self.refresh_token_lifetime

    # -- ID token and userinfo ------------------------------------------------------------------------

    def id_token_claims(self, client, user, scope, ctx):
        return {}

    def id_token(self, client, user, scope, ctx, access_token=None):
        now = int(self.now())
        claims = {"iss": self.issuer, "sub": user.sub, "aud": client.client_id, "iat": now,
                  "exp": now + self.id_token_lifetime, "auth_time": now}
        if ctx.get("nonce"):
            claims["nonce"] = ctx["nonce"]
        if "email" in scope:
            claims.update(email=user.email, email_verified=True)
        if "profile" in scope:
            claims.update(name=user.name, preferred_username=user.username)
        claims.update(self.id_token_claims(client, user, scope, ctx))
        return self.sign_jwt(claims)

    def userinfo_accepts(self, grant):
        return True

    def userinfo_claims(self, user, grant):
        claims = {"sub": user.sub}
        if "email" in grant.scope:
            claims.update(email=user.email, email_verified=True)
        if "profile" in grant.scope:
            claims.update(name=user.name, preferred_username=user.username)
        return claims

    def unauthorized(self, error="invalid_token"):
        return json_response({"error": error, "error_description": "The access token is invalid or expired."}, 401,
                             [("WWW-Authenticate", f'Bearer error="{error}"')])

    def userinfo(self, req):
        g = self.valid_access(req)
        if g is None or not self.userinfo_accepts(g):
            return self.unauthorized()
        return json_response(self.userinfo_claims(self.users[g.username], g))

    # -- revocation (RFC 7009) ------------------------------------------------------------------------

    def revoke(self, req):
        p = dict(req.form)
        client, problem = self.authenticate_client(req, p, "revoke")
        if problem:
            return problem
        g = self.grants.get(p.get("token", ""))
        if g is not None and g.client_id == client.client_id:
            self.revoke_grant(g)
        return Response(200, b"", [("Cache-Control", "no-store")])  # RFC 7009 §2.2: 200 even if unknown

    def revoke_grant(self, g):
        if g.kind == "refresh":
            self.revoke_family(g.family)
        else:
            g.revoked = True

    def end_session(self, req):
        self.sessions.pop(req.cookies.get(self._cookie, ""), None)
        target = req.query.get("post_logout_redirect_uri")
        return redirect(target) if target else Response(200, b"Signed out", [("Content-Type", "text/plain")])

    # -- device authorization (RFC 8628) ----------------------------------------------------------------

    def device_authorization(self, req):
        p = dict(req.form)
        client, problem = self.authenticate_client(req, p, "device")
        if problem:
            return problem
        d = self.start_device(client.client_id, p.get("scope", "").split())
        self.device_started(d, p)
        return json_response(self.device_response(d))

    def device_started(self, d, p):
        """Hook: remember request details in d.extra["ctx"] (they reach the token answer)."""

    def device_response(self, d):
        return {"device_code": d.device_code, "user_code": d.user_code,
                "verification_uri": self.verification_uri(),
                "verification_uri_complete": self.verification_uri() + "?" + urllib.parse.urlencode(
                    {"user_code": d.user_code}),
                "expires_in": self.device_lifetime, "interval": d.interval}

    def device_error(self, state, d):
        """The Response for a poll that yields no token (RFC 8628 §3.5 errors, HTTP 400)."""
        code = {"unknown": "invalid_grant", "used": "invalid_grant", "expired": "expired_token",
                "denied": "access_denied", "slow_down": "slow_down", "pending": "authorization_pending"}[state]
        return self.error(code, f"Device authorization: {state}.")

    def poll(self, p, client):
        state, d = self.poll_device(p.get("device_code"), client.client_id)
        if state != "approved":
            return self.device_error(state, d)
        ctx = {"via": "device", "consent_shown": True, "params": {}, **d.extra.get("ctx", {})}
        return self.tokens_or_error(client, d.username, d.scope, ctx)
