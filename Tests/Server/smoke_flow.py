#!/usr/bin/env python
"""End-to-end smoke test of the test infrastructure (server + headless browser + xdg-open).

    scripts/test-server start
    .venv/bin/python Tests/Server/smoke_flow.py [--skip-slow]

Reads the server's variables from the environment or from <run dir>/env. Plays the part of a
CLI doing a loopback login: its own listener on 127.0.0.1:0, an authorization URL with PKCE S256
and state, `xdg-open URL` with BROWSER=Tests/Browser/sfauth-test-browser and no DISPLAY, then
token exchange, userinfo, /api/me, refresh with rotation, reuse detection, statistics, deny,
a forged callback, an unregistered redirect path, plus server-only checks over plain HTTP
(any-port loopback matching, PKCE rules, short-lived tokens, confidential client).
Exit 0 only when every check passes.
"""

import base64
import hashlib
import html
import http.server
import json
import os
import queue
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import requests

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCOPE = "openid profile email"

RESULTS = []  # (name, ok, detail)
TIMINGS = {}


def check(name, ok, detail=""):
    RESULTS.append((name, bool(ok), detail))
    print(f"{'PASS' if ok else 'FAIL'}  {name}{'  -- ' + str(detail) if detail else ''}", flush=True)
    return bool(ok)


# ------------------------------------------------------------------ environment

def load_env():
    env = {}
    run_dir = os.environ.get("SFAUTH_TEST_RUN_DIR") or os.path.join(REPO, ".test-run", "server")
    path = os.path.join(run_dir, "env")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("export ") and "=" in line:
                    k, v = line[len("export "):].rstrip("\n").split("=", 1)
                    env[k] = shlex.split(v)[0] if v else ""
    for k, v in os.environ.items():  # the environment wins
        if k.startswith("SFAUTH_TEST_"):
            env[k] = v
    if "SFAUTH_TEST_SERVER_URL" not in env:
        sys.exit("smoke_flow: no server (run scripts/test-server start)")
    return env


E = load_env()
S = requests.Session()
S.trust_env = False  # never a proxy for 127.0.0.1


# ------------------------------------------------------------------ loopback listener

class Listener:
    """A CLI's loopback redirect listener: checks state, answers a small page, queues results."""

    def __init__(self):
        self.expected_state = None
        self.results = queue.Queue()
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                parts = urllib.parse.urlsplit(self.path)
                params = dict(urllib.parse.parse_qsl(parts.query))
                outer.requests.append(self.path)
                if parts.path == "/favicon.ico":
                    return self.answer(404, "not found")
                if params.get("state") != outer.expected_state:
                    return self.answer(400, "Sign-in failed: state mismatch. Try again.")
                outer.results.put((parts.path, params, time.monotonic()))
                if "error" in params:
                    return self.answer(200, f"Sign-in was cancelled ({params['error']}).")
                return self.answer(200, "Signed in. You can close this window.")

            def answer(self, status, text):
                body = (f"<!DOCTYPE html><title>smoke listener</title><p id=msg>{html.escape(text)}</p>").encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body)

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                # Chromium drops idle preconnect sockets and closes the page on quit:
                # broken pipes / resets are normal here.
                if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
                    super().handle_error(request, client_address)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def pkce():
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(48)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize_url(client_id, redirect_uri, state, challenge, method="S256", scope=SCOPE):
    q = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "state": state,
        "code_challenge": challenge,
    }
    if method:
        q["code_challenge_method"] = method
    return E["SFAUTH_TEST_AUTHORIZE_URL"] + "?" + urllib.parse.urlencode(q, quote_via=urllib.parse.quote)


TMP = tempfile.mkdtemp(prefix="sfauth-smoke-")
_browser_runs = [0]


def browser_login(listener, action="approve", path="/callback", forge=False, client_id=None, expect_callback=True):
    """Runs `xdg-open URL` with the test browser; returns (callback params | None, result, verifier, redirect_uri)."""
    _browser_runs[0] += 1
    n = _browser_runs[0]
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(16)
    listener.expected_state = state
    redirect_uri = f"http://127.0.0.1:{listener.port}{path}"
    url = authorize_url(client_id or E["SFAUTH_TEST_CLIENT_ID"], redirect_uri, state, challenge)
    result_path = os.path.join(TMP, f"browser-{n}-{action}.json")
    env = dict(os.environ)
    # No display and no desktop: xdg-open then runs $BROWSER.
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_CURRENT_DESKTOP", "DESKTOP_SESSION", "KDE_FULL_SESSION",
              "GNOME_DESKTOP_SESSION_ID", "MATE_DESKTOP_SESSION_ID"):
        env.pop(k, None)
    env.update({k: v for k, v in E.items()})
    env.update(
        {
            "BROWSER": E["SFAUTH_TEST_BROWSER"],
            "SFAUTH_TEST_BROWSER_LOG": result_path,
            "SFAUTH_TEST_BROWSER_ACTION": action,
            "SFAUTH_TEST_BROWSER_SCREENSHOT": os.path.join(TMP, f"browser-{n}-{action}.png"),
        }
    )
    if forge:
        env["SFAUTH_TEST_BROWSER_FORGE"] = "1"
    t0 = time.monotonic()
    proc = subprocess.run(["xdg-open", url], env=env, timeout=20, capture_output=True, text=True)
    t_open = time.monotonic() - t0
    TIMINGS.setdefault("xdg-open returned (s)", []).append(round(t_open, 3))
    check(f"[{n} {action}] xdg-open exit 0, returns fast", proc.returncode == 0 and t_open < 1.0,
          f"rc={proc.returncode} {t_open * 1000:.0f} ms {proc.stderr.strip()}")
    params = None
    if expect_callback:
        try:
            cb_path, params, t_cb = listener.results.get(timeout=60)
            TIMINGS.setdefault(f"callback after xdg-open, {action} (s)", []).append(round(t_cb - t0, 2))
            check(f"[{n} {action}] callback arrived on {path} with our state", cb_path == path, f"{t_cb - t0:.2f} s")
        except queue.Empty:
            check(f"[{n} {action}] callback arrived", False, "none within 60 s")
    result = None
    deadline = time.monotonic() + 70
    while time.monotonic() < deadline:
        if os.path.exists(result_path):
            with open(result_path) as f:
                result = json.load(f)
            break
        time.sleep(0.1)
    if result is None:
        check(f"[{n} {action}] browser result written", False, result_path)
        result = {}
    else:
        TIMINGS.setdefault(f"browser run, {action} (s)", []).append(result.get("seconds"))
        check(f"[{n} {action}] browser reports ok", result.get("ok"), result.get("error") or result.get("final_url"))
    return params, result, verifier, redirect_uri


def token(data, auth=None):
    r = S.post(E["SFAUTH_TEST_TOKEN_URL"], data=data, auth=auth, timeout=10)
    try:
        return r.status_code, r.json()
    except ValueError:
        return r.status_code, {"raw": r.text[:200]}


def exchange(code, verifier, redirect_uri, client_id=None):
    return token(
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "client_id": client_id or E["SFAUTH_TEST_CLIENT_ID"],
            "code_verifier": verifier,
        }
    )


def refresh(refresh_token, client_id=None):
    return token(
        {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id or E["SFAUTH_TEST_CLIENT_ID"]}
    )


def api_me(access_token):
    headers = {"Authorization": f"Bearer {access_token}"} if access_token else {}
    r = S.get(E["SFAUTH_TEST_RESOURCE_URL"], headers=headers, timeout=10)
    return r.status_code, (r.json() if r.headers.get("content-type", "").startswith("application/json") else r.text)


def stats():
    return S.get(E["SFAUTH_TEST_STATS_URL"], timeout=10).json()["token_requests"]


# ------------------------------------------------------------------ a person over plain HTTP

class HttpPerson:
    """Logs in and approves with requests (no browser) -- for server-only checks."""

    def __init__(self, username=None, password=None):
        self.s = requests.Session()
        self.s.trust_env = False
        self.username = username or E["SFAUTH_TEST_USERNAME"]
        self.password = password or E["SFAUTH_TEST_PASSWORD"]
        login_url = E["SFAUTH_TEST_SERVER_URL"] + "/accounts/login/"
        page = self.s.get(login_url, timeout=10)
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        r = self.s.post(
            login_url,
            data={"csrfmiddlewaretoken": csrf, "username": self.username, "password": self.password, "next": "/"},
            headers={"Referer": login_url},
            allow_redirects=False,
            timeout=10,
        )
        assert r.status_code == 302, f"login failed: {r.status_code}"

    def authorize_page(self, url):
        return self.s.get(url, allow_redirects=False, timeout=10)

    def approve(self, url, allow=True):
        """Returns (status, location, page)."""
        page = self.authorize_page(url)
        if page.status_code != 200 or 'id="authorizationForm"' not in page.text:
            return page.status_code, page.headers.get("Location"), page.text
        form = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
        form = {k: html.unescape(v) for k, v in form.items()}
        if allow:
            form["allow"] = "Authorize"
        r = self.s.post(url, data=form, headers={"Referer": url}, allow_redirects=False, timeout=10)
        return r.status_code, r.headers.get("Location"), r.text

    def code_for(self, client_id, redirect_uri, method="S256", scope=SCOPE):
        verifier, challenge = pkce()
        if method == "plain":
            challenge = verifier
        state = secrets.token_urlsafe(8)
        status, location, text = self.approve(authorize_url(client_id, redirect_uri, state, challenge, method, scope))
        params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location or "").query))
        return status, params, verifier, text


def page_error_text(text):
    m = re.search(r"<h2>(.*?)</h2>\s*<p>(.*?)</p>", text, re.S)
    return f"{html.unescape(m.group(1)).strip()} / {html.unescape(m.group(2)).strip()}" if m else text[:200]


# ------------------------------------------------------------------ the checks

def server_checks(skip_slow):
    person = HttpPerson()
    cid = E["SFAUTH_TEST_CLIENT_ID"]
    port = 54321
    for host in ("127.0.0.1", "[::1]", "localhost"):
        uri = f"http://{host}:{port}/callback"
        page = person.authorize_page(authorize_url(cid, uri, "s", pkce()[1]))
        check(f"any-port loopback redirect accepted: {uri}", page.status_code == 200 and "authorizationForm" in page.text,
              page.status_code)
    uri = f"http://127.0.0.1:{port}/not-registered"
    page = person.authorize_page(authorize_url(cid, uri, "s", pkce()[1]))
    check("unregistered redirect path rejected with an error page (not redirected)",
          page.status_code == 400 and "authorizationForm" not in page.text,
          f"{page.status_code}: {page_error_text(page.text)}")
    uri = "http://127.0.0.2:54321/callback"
    page = person.authorize_page(authorize_url(cid, uri, "s", pkce()[1]))
    check("non-loopback host rejected", page.status_code == 400, f"{page.status_code}: {page_error_text(page.text)}")

    redirect = "http://127.0.0.1:54321/callback"
    status, params, verifier, _ = person.code_for(cid, redirect, method="plain")
    check("PKCE plain rejected", "code" not in params and params.get("error") == "invalid_request",
          f"{status} {params}")
    status, params, verifier, _ = person.code_for(cid, redirect, method=None)
    check("PKCE without code_challenge_method (= plain) rejected", "code" not in params, f"{status} {params}")
    status, params, verifier, _ = person.code_for(cid, redirect)
    st, body = exchange(params.get("code"), verifier[:-1] + ("A" if verifier[-1] != "A" else "B"), redirect)
    check("wrong code_verifier rejected", st == 400 and body.get("error") == "invalid_grant", f"{st} {body}")
    status, params, verifier, _ = person.code_for(cid, redirect)
    st, body = token({"grant_type": "authorization_code", "code": params.get("code"), "redirect_uri": redirect,
                      "client_id": cid})
    check("missing code_verifier rejected", st == 400, f"{st} {body}")

    # Authorization request without PKCE at all.
    page = person.authorize_page(
        E["SFAUTH_TEST_AUTHORIZE_URL"] + "?" + urllib.parse.urlencode(
            {"response_type": "code", "client_id": cid, "redirect_uri": redirect, "scope": SCOPE, "state": "s"}))
    loc = page.headers.get("Location", "")
    check("authorization request without code_challenge rejected (before consent)",
          "error=invalid_request" in loc or page.status_code == 400, f"{page.status_code} {loc}")

    # Confidential client with its known secret.
    ccid, csecret = E["SFAUTH_TEST_CONFIDENTIAL_CLIENT_ID"], E["SFAUTH_TEST_CONFIDENTIAL_CLIENT_SECRET"]
    status, params, verifier, _ = person.code_for(ccid, redirect)
    st, body = token({"grant_type": "authorization_code", "code": params.get("code"), "redirect_uri": redirect,
                      "code_verifier": verifier}, auth=(ccid, "wrong-secret"))
    check("confidential client: wrong secret -> 401 invalid_client", st == 401 and body.get("error") == "invalid_client",
          f"{st} {body}")
    st, body = token({"grant_type": "authorization_code", "code": params.get("code"), "redirect_uri": redirect,
                      "code_verifier": verifier}, auth=(ccid, csecret))
    check("confidential client: known secret works (client_secret_basic)", st == 200 and "access_token" in body,
          f"{st} {list(body)}")
    if st == 200:
        r = S.post(E["SFAUTH_TEST_INTROSPECT_URL"], data={"token": body["access_token"]}, auth=(ccid, csecret), timeout=10)
        check("introspection (confidential client credentials)", r.status_code == 200 and r.json().get("active") is True,
              f"{r.status_code} {r.text[:120]}")

    # Revocation of a refresh token.
    status, params, verifier, _ = person.code_for(cid, redirect)
    st, body = exchange(params.get("code"), verifier, redirect)
    if check("second login over HTTP: token", st == 200, st):
        r = S.post(E["SFAUTH_TEST_REVOKE_URL"], data={"token": body["refresh_token"], "token_type_hint": "refresh_token",
                                                       "client_id": cid}, timeout=10)
        check("revoke refresh token -> 200", r.status_code == 200, r.status_code)
        st2, b2 = refresh(body["refresh_token"])
        check("revoked refresh token no longer works", st2 == 400 and b2.get("error") == "invalid_grant", f"{st2} {b2}")
        st3, _ = api_me(body["access_token"])
        check("revoking the refresh token also ends its access token", st3 == 401, st3)

    # Two parallel refreshes with the same token (what a client must never do): the server
    # serialises token requests, so one wins and the other is a reuse that revokes the family.
    status, params, verifier, _ = person.code_for(cid, redirect)
    st, body = exchange(params.get("code"), verifier, redirect)
    if st == 200:
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            both = list(ex.map(lambda _: refresh(body["refresh_token"]), range(2)))
        statuses = sorted(s for s, _ in both)
        winner = next((b for s, b in both if s == 200), None)
        revoked = winner is not None and api_me(winner["access_token"])[0] == 401 and refresh(winner["refresh_token"])[0] == 400
        check("parallel refresh with one token: 200 + 400, then the family is revoked", statuses == [200, 400] and revoked,
              f"{statuses} family revoked: {revoked}")

    # prompt=none must not crash the server.
    page = person.authorize_page(authorize_url(cid, redirect, "s", pkce()[1]) + "&prompt=none")
    check("prompt=none answers without a 500", page.status_code in (302, 400), f"{page.status_code} {page.headers.get('Location')}")

    # Short-lived tokens for short-* clients.
    scid = E["SFAUTH_TEST_SHORT_CLIENT_ID"]
    status, params, verifier, _ = person.code_for(scid, redirect)
    st, body = exchange(params.get("code"), verifier, redirect, client_id=scid)
    short = int(E.get("SFAUTH_TEST_SHORT_TOKEN_SECONDS", "5"))
    check(f"short client: expires_in == {short}", st == 200 and body.get("expires_in") == short, f"{st} {body.get('expires_in')}")
    if st == 200 and not skip_slow:
        check("short client: token valid at first", api_me(body["access_token"])[0] == 200)
        time.sleep(short + 1.5)
        check(f"short client: token rejected after {short + 1.5:g} s", api_me(body["access_token"])[0] == 401)
        st2, b2 = refresh(body["refresh_token"], client_id=scid)
        check("short client: refresh after expiry works, again short", st2 == 200 and b2.get("expires_in") == short,
              f"{st2} {b2.get('expires_in')}")


def browser_checks():
    listener = Listener()
    issuer = E["SFAUTH_TEST_ISSUER"]
    try:
        S.post(E["SFAUTH_TEST_STATS_URL"] + "/reset", timeout=10)
        check("stats reset -> zero", stats() == {}, stats())

        # 1. approve
        params, result, verifier, redirect_uri = browser_login(listener, "approve")
        params = params or {}
        check("approve: code in callback, no error", "code" in params and "error" not in params, sorted(params))
        if E.get("SFAUTH_TEST_ISS_PARAMETER") == "1":
            check("approve: iss parameter == issuer", params.get("iss") == issuer, params.get("iss"))
        else:
            check("approve: no iss parameter (off by default)", "iss" not in params, params.get("iss"))
        check("approve: browser ended on the listener's page",
              (result.get("final_url") or "").startswith(f"http://127.0.0.1:{listener.port}/callback")
              and "Signed in" in (result.get("page_text") or ""), result.get("page_text"))
        st, tok = exchange(params.get("code"), verifier, redirect_uri)
        check("token exchange -> 200 with access, refresh and id token",
              st == 200 and all(k in tok for k in ("access_token", "refresh_token", "id_token")), f"{st} {sorted(tok)}")
        if st != 200:
            return
        check("token_type Bearer, expires_in 3600, scope as requested",
              tok.get("token_type") == "Bearer" and tok.get("expires_in") == 3600
              and set(tok.get("scope", "").split()) == set(SCOPE.split()), f"{tok.get('token_type')} {tok.get('expires_in')} {tok.get('scope')!r}")
        st2, again = exchange(params.get("code"), verifier, redirect_uri)
        check("code cannot be redeemed twice", st2 == 400 and again.get("error") == "invalid_grant", f"{st2} {again}")

        # ID token: RS256, signed with the published key, iss/aud right.
        from jwcrypto import jwk, jwt

        keys = jwk.JWKSet.from_json(S.get(E["SFAUTH_TEST_JWKS_URL"], timeout=10).text)
        idt = jwt.JWT(jwt=tok["id_token"], key=keys, algs=["RS256"])
        claims = json.loads(idt.claims)
        check("id_token RS256 verifies against JWKS; iss == issuer, aud == client_id",
              claims.get("iss") == issuer and claims.get("aud") == E["SFAUTH_TEST_CLIENT_ID"],
              {k: claims.get(k) for k in ("iss", "aud", "sub")})

        r = S.get(E["SFAUTH_TEST_USERINFO_URL"], headers={"Authorization": f"Bearer {tok['access_token']}"}, timeout=10)
        info = r.json() if r.status_code == 200 else {}
        check("userinfo -> 200 with sub, preferred_username, email",
              r.status_code == 200 and info.get("preferred_username") == E["SFAUTH_TEST_USERNAME"] and "email" in info,
              f"{r.status_code} {info or r.text[:100]}")
        st, me = api_me(tok["access_token"])
        check("/api/me -> 200 {username, scope}", st == 200 and me.get("username") == E["SFAUTH_TEST_USERNAME"]
              and me.get("scope"), f"{st} {me}")
        check("/api/me without token -> 401", api_me(None)[0] == 401)
        check("/api/me with a bad token -> 401", api_me("not-a-token")[0] == 401)

        # Refresh with rotation.
        st, tok2 = refresh(tok["refresh_token"])
        check("refresh -> 200, rotated refresh token", st == 200 and tok2.get("refresh_token")
              and tok2["refresh_token"] != tok["refresh_token"], f"{st} {sorted(tok2)}")
        if st == 200:
            check("refreshed access token works, old one does not",
                  api_me(tok2["access_token"])[0] == 200 and api_me(tok["access_token"])[0] == 401)
            st3, reuse = refresh(tok["refresh_token"])
            check("reusing the retired refresh token -> 400 invalid_grant", st3 == 400 and reuse.get("error") == "invalid_grant",
                  f"{st3} {reuse}")
            st4, fam = refresh(tok2["refresh_token"])
            check("reuse revoked the family: the current refresh token fails too", st4 == 400, f"{st4} {fam}")

        counts = stats()
        check("stats: authorization_code 2, refresh_token 3",
              counts.get("authorization_code") == 2 and counts.get("refresh_token") == 3, counts)

        # 2. deny
        params, result, _, _ = browser_login(listener, "deny")
        params = params or {}
        check("deny: error=access_denied in callback", params.get("error") == "access_denied" and "code" not in params, params)
        if E.get("SFAUTH_TEST_ISS_PARAMETER") == "1":
            check("deny: iss parameter == issuer (error responses carry it too)", params.get("iss") == issuer, params.get("iss"))

        # 3. forged callback before the real login
        params, result, verifier, redirect_uri = browser_login(listener, "approve", forge=True)
        check("forge: the forged request was refused by the listener (400)", result.get("forged_status") == 400,
              f"{result.get('forged_status')} {result.get('forged_body')!r}")
        check("forge: the real login still completed", bool(params and params.get("code")), sorted(params or {}))
        if params and params.get("code"):
            st, _ = exchange(params["code"], verifier, redirect_uri)
            check("forge: real code exchanges fine", st == 200, st)

        # 4. unregistered redirect path: the server shows its error page, no callback
        before = len(listener.requests)
        params, result, _, _ = browser_login(listener, "login-only", path="/not-registered", expect_callback=False)
        text = result.get("page_text") or ""
        check("unregistered path: DOT error page shown after login", "invalid_request" in text or "Mismatching" in text,
              repr(text[:200]))
        check("unregistered path: nothing reached the listener", len(listener.requests) == before,
              listener.requests[before:])
        print("unregistered-redirect page text: " + json.dumps(text), flush=True)
    finally:
        listener.close()


def no_leftover_chromium():
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    left = [line for line in out.splitlines() if "sfauth-test-browser-" in line and "ps -eo" not in line]
    check("no leftover chromium processes", not left, left[:3])


def main():
    skip_slow = "--skip-slow" in sys.argv
    t0 = time.monotonic()
    try:
        server_checks(skip_slow)
        browser_checks()
        time.sleep(0.5)
        no_leftover_chromium()
    except Exception as e:  # noqa: BLE001
        import traceback

        traceback.print_exc()
        check("no unexpected exception", False, f"{type(e).__name__}: {e}")
    failed = [r for r in RESULTS if not r[1]]
    print()
    for k, v in TIMINGS.items():
        print(f"timing  {k}: {v}")
    keep = failed or os.environ.get("SFAUTH_SMOKE_KEEP")
    if keep:
        print(f"artifacts (browser results + logs, screenshots): {TMP}")
    print(f"{'PASS' if not failed else 'FAIL'}: {len(RESULTS) - len(failed)}/{len(RESULTS)} checks passed "
          f"in {time.monotonic() - t0:.1f} s")
    for name, _, detail in failed:
        print(f"  failed: {name} -- {detail}")
    if not keep:
        shutil.rmtree(TMP, ignore_errors=True)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
