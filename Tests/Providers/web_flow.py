"""The browser side of a stand-in: sign-in, consent and device-verification pages, and the
authorization-code flow between /authorize and the redirect back.

The markup is ours; it has the shapes Tests/Browser/browser_driver.py (unchanged) drives, the
ones it knows from the DOT test server:

  login form     input[name=username], input[name=password], a submit button; a refused sign-in
                 shows #login-error
  consent        form#authorizationForm with input[name=allow] "Authorize" and a plain submit
                 "Cancel"
  device pages   form input[name=user_code] + "Verify"; refused codes in ul.errorlist ("Incorrect
                 user code", "Expired user code", "User code has already been used"); then
                 button[name=action][value=accept|deny]; the last page is under
                 .../device-grant-status/... with <h1>Device Authorized|Denied</h1>
  error page     <h2>Error: ...</h2><p>description</p>

A signed-in browser is a cookie per host (sessions live in the stand-in).
"""

import html
import secrets
import urllib.parse

from stand_in import AuthRequest, StandIn, add_query, html_response, re_escape, redirect


def page(title, body):
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            '<style>body{font-family:sans-serif;max-width:32em;margin:3em auto}label{display:block;margin-top:1em}'
            'input[type=text],input[type=password]{width:100%}button,input[type=submit]{margin-top:1em}</style>'
            f'</head><body>\n{body}\n</body></html>\n')


def login_page(brand, action, next_url, error=None, username=""):
    err = f'<p class="error" id="login-error">{html.escape(error)}</p>' if error else ""
    return page(f"Sign in | {brand}", f"""<h1>Sign in to {html.escape(brand)}</h1>{err}
<form id="login-form" method="post" action="{html.escape(action)}">
<label for="username">Username or email address</label>
<input type="text" name="username" id="username" autocomplete="username" value="{html.escape(username)}" autofocus required>
<label for="password">Password</label>
<input type="password" name="password" id="password" autocomplete="current-password" required>
<input type="hidden" name="next" value="{html.escape(next_url)}">
<button type="submit" id="login-submit">Sign in</button>
</form>""")


def consent_page(brand, app_name, action, request_id, scopes, note=""):
    items = "".join(f"<li>{html.escape(s)}</li>" for s in scopes) or "<li>(no scopes)</li>"
    return page(f"Authorize {app_name} | {brand}", f"""<form id="authorizationForm" method="post" action="{html.escape(action)}">
<h3>Authorize {html.escape(app_name)}?</h3>
<p>{html.escape(app_name)} requests access to your {html.escape(brand)} account:</p><ul>{items}</ul>{note}
<input type="hidden" name="request" value="{html.escape(request_id)}">
<input type="submit" value="Cancel">
<input type="submit" name="allow" value="Authorize">
</form>""")


def error_page(brand, error, description, status=400, heading_note=""):
    return html_response(page(f"Error | {brand}", f"""{heading_note}<h2>Error: {html.escape(error)}</h2>
<p>{html.escape(description)}</p>"""), status)


class WebStandIn(StandIn):
    """A StandIn with the browser pages. Subclasses set login_path, consent_path, device_path
    (None: no device grant) and ui_server, and call add_ui_routes() after add_server()."""

    login_path = "/login"
    consent_path = "/consent"
    device_path = None
    ui_server = "main"

    def __init__(self, **kw):
        super().__init__(**kw)
        self.auth_requests = {}
        self.sessions = {}  # browser session cookie -> username
        self.consents = set()  # (username, client_id, frozenset(scope))
        self._cookie = "standin_" + secrets.token_hex(3)

    def add_ui_routes(self):
        """The login form, the consent page and (if device_path) the device pages."""
        s = self.ui_server
        self.route(s, "POST", re_escape(self.login_path), self._login_post)
        self.route(s, "GET", re_escape(self.consent_path), self._consent_get)
        self.route(s, "POST", re_escape(self.consent_path), self._consent_post)
        if self.device_path:
            self.route(s, "GET", re_escape(self.device_path), self._device_page)
            self.route(s, "POST", re_escape(self.device_path), self._device_post)
            self.route(s, "GET", re_escape(self.device_path) + r"/device-grant-status/([A-Za-z0-9-]+)",
                       self._device_status_page)

    def user_for(self, req):
        return self.users.get(self.sessions.get(req.cookies.get(self._cookie, "")))

    # -- login, consent, redirect ----------------------------------------------------

    def app_name(self, client):
        return client.options.get("name", client.client_id)

    def begin_authorization(self, req, areq):
        """Store a validated authorization request and show the login or consent page."""
        with self.lock:
            self.auth_requests[areq.id] = areq
        consent_url = self.consent_path + "?" + urllib.parse.urlencode({"request": areq.id})
        user = self.user_for(req)
        if user is None or areq.params.get("prompt") == "login":
            return html_response(login_page(self.brand, self.login_path, consent_url))
        return self._consent_get_for(req, areq, user)

    def _login_post(self, req):
        next_url = req.form.get("next") or "/"
        if not next_url.startswith("/"):
            next_url = "/"  # never an open redirector
        user = self.check_password(req.form.get("username", ""), req.form.get("password", ""))
        if user is None:
            return html_response(login_page(self.brand, self.login_path, next_url,
                                            "Incorrect username or password.", req.form.get("username", "")))
        sid = secrets.token_urlsafe(16)
        with self.lock:
            self.sessions[sid] = user.username
        return redirect(next_url, [("Set-Cookie", f"{self._cookie}={sid}; Path=/; HttpOnly; SameSite=Lax")])

    def _pending(self, req):
        rid = req.query.get("request") or req.form.get("request") or ""
        with self.lock:
            return self.auth_requests.get(rid)

    def _consent_get(self, req):
        areq = self._pending(req)
        if areq is None:
            return error_page(self.brand, "invalid_request", "This authorization request is unknown or finished.")
        user = self.user_for(req)
        if user is None:
            return html_response(login_page(self.brand, self.login_path,
                                            self.consent_path + "?" + urllib.parse.urlencode({"request": areq.id})))
        return self._consent_get_for(req, areq, user)

    def _consent_get_for(self, req, areq, user):
        areq.username = user.username
        if not self.needs_consent(areq, user):
            return self.finish_authorization(areq, True)
        areq.consent_shown = True
        client = self.clients[areq.client_id]
        return html_response(consent_page(self.brand, self.app_name(client), self.consent_path, areq.id,
                                          self.consent_scopes(areq)))

    def _consent_post(self, req):
        areq = self._pending(req)
        user = self.user_for(req)
        if areq is None or user is None or areq.username != user.username:
            return error_page(self.brand, "invalid_request", "This authorization request is unknown or finished.")
        approved = "allow" in req.form
        if approved:
            with self.lock:
                self.consents.add((user.username, areq.client_id, frozenset(areq.scope)))
        return self.finish_authorization(areq, approved)

    def consent_scopes(self, areq):
        return areq.scope

    def needs_consent(self, areq, user):
        """Default: ask once per (user, client, scopes); prompt=consent asks again."""
        if areq.params.get("prompt") == "consent":
            return True
        return (user.username, areq.client_id, frozenset(areq.scope)) not in self.consents

    def finish_authorization(self, areq, approved):
        with self.lock:
            self.auth_requests.pop(areq.id, None)
        if approved:
            params = self.authorization_success(areq)
        else:
            params = self.authorization_denied(areq)
        return redirect(add_query(areq.redirect_uri, params))

    def authorization_success(self, areq):
        """Query parameters of the success redirect; subclasses issue their codes here."""
        code = self.issue_code(areq)
        return {"code": code.value, "state": areq.state}

    def authorization_denied(self, areq):
        return {"error": "access_denied", "error_description": "The user denied the request.",
                "state": areq.state}

    def issue_code(self, areq, prefix=""):
        p = areq.params
        return self.store("code", self.new_value(prefix, 20), areq.client_id, areq.username, areq.scope,
                          self.code_lifetime,
                          extra={"redirect_uri": p.get("redirect_uri"), "code_challenge": p.get("code_challenge"),
                                 "code_challenge_method": p.get("code_challenge_method"),
                                 "nonce": p.get("nonce"), "consent_shown": areq.consent_shown,
                                 "params": dict(p), **areq.extra})

    def new_auth_request(self, client, redirect_uri, params, scope):
        return AuthRequest(secrets.token_urlsafe(12), client.client_id, redirect_uri, scope,
                           params.get("state"), dict(params))

    # -- device verification pages (RFC 8628 §3.3) ----------------------------------------

    def verification_uri(self):
        return self.url(self.ui_server) + self.device_path

    def _device_page(self, req):
        user = self.user_for(req)
        here = self.device_path + ("?" + urllib.parse.urlencode(req.query) if req.query else "")
        if user is None:
            return html_response(login_page(self.brand, self.login_path, here))
        return html_response(self._user_code_form(req.query.get("user_code", "")))

    def _user_code_form(self, prefill, error=None):
        err = f'<ul class="errorlist"><li>{html.escape(error)}</li></ul>' if error else ""
        return page(f"Device activation | {self.brand}", f"""<h1>Enter the code displayed on your device</h1>
<form method="post" action="{html.escape(self.device_path)}">{err}
<p><label for="id_user_code">Code</label>
<input type="text" name="user_code" id="id_user_code" value="{html.escape(prefill)}" required></p>
<button type="submit">Verify</button>
</form>""")

    def _device_post(self, req):
        user = self.user_for(req)
        if user is None:
            return html_response(login_page(self.brand, self.login_path, self.device_path))
        d = self.device_by_user_code(req.form.get("user_code", ""))
        action = req.form.get("action")
        if d is None:
            return html_response(self._user_code_form(req.form.get("user_code", ""), "Incorrect user code"))
        if d.expires_at <= self.now():
            return html_response(self._user_code_form(d.user_code, "Expired user code"))
        if d.status != "pending":
            return html_response(self._user_code_form(d.user_code, "User code has already been used"))
        if action in ("accept", "deny"):
            with self.lock:
                d.status = "approved" if action == "accept" else "denied"
                d.username = user.username
            self.device_decided(d)
            return redirect(f"{self.device_path}/device-grant-status/{d.user_code}")
        client = self.clients.get(d.client_id)
        name = self.app_name(client) if client else d.client_id
        scopes = "".join(f"<li>{html.escape(s)}</li>" for s in d.scope) or "<li>(no scopes)</li>"
        return html_response(page(f"Authorize {name} | {self.brand}", f"""<h1>{html.escape(name)} requests access to the following scopes:</h1>
<ul>{scopes}</ul>
<form method="post" action="{html.escape(self.device_path)}">
<input type="hidden" name="user_code" value="{html.escape(d.user_code)}">
<button type="submit" name="action" value="accept">Accept</button>
<button type="submit" name="action" value="deny">Deny</button>
</form>"""))

    def device_decided(self, d):
        """Hook: a device grant was just approved or denied in the browser."""

    def _device_status_page(self, req, user_code):
        d = self.device_by_user_code(user_code)
        if d is None:
            return error_page(self.brand, "not_found", "Unknown device code.", 404)
        status = "Authorized" if d.status in ("approved", "used") else "Denied" if d.status == "denied" else "Pending"
        return html_response(page(f"Device {status} | {self.brand}", f"<h1>Device {status}</h1>"))
