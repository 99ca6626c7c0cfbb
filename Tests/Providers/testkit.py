"""Test helpers for the stand-ins: a loopback redirect listener, a form-driving HTTP "browser"
(no JavaScript: the stand-ins' pages are plain forms), PKCE pairs, and the headless-Chromium driver.

    with CallbackListener() as cb:
        url = stand_in.authorize_link(cb.url("/callback"))
        final = FormBrowser(stand_in).authorize(url)   # signs in as alice, clicks Authorize
        final.query["code"]
"""

import html.parser
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

from stand_in import pkce_s256

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DRIVER = os.path.join(REPO, "Tests", "Browser", "browser_driver.py")


def pkce_pair():
    verifier = secrets.token_urlsafe(48)
    return verifier, pkce_s256(verifier)


def session():
    """A requests session that never uses a proxy (everything here is 127.0.0.1)."""
    s = requests.Session()
    s.trust_env = False
    return s


class CallbackListener:
    """The redirect target: 127.0.0.1 on an ephemeral port; records each GET's query."""

    def __init__(self):
        self.hits = []
        self.event = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                parts = urllib.parse.urlsplit(self.path)
                if parts.path == "/favicon.ico":
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                outer.hits.append((parts.path, dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))))
                outer.event.set()
                body = b"<html><head><title>Done</title></head><body><p>You can close this window.</p></body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]

    def url(self, path="/callback", host="127.0.0.1"):
        return f"http://{host}:{self.port}{path}"

    def wait(self, timeout=30):
        if not self.event.wait(timeout):
            raise TimeoutError("no redirect arrived at the listener")
        return self.hits[0]

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Form:
    action: str
    method: str
    id: str | None
    fields: list = field(default_factory=list)  # (name, value, type)
    buttons: list = field(default_factory=list)  # (name, value)


class _FormParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.forms = []
        self.errors = []
        self._in_error = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append(Form(a.get("action") or "", (a.get("method") or "get").lower(), a.get("id")))
        elif tag == "input" and self.forms:
            kind = (a.get("type") or "text").lower()
            if kind == "submit":
                self.forms[-1].buttons.append((a.get("name"), a.get("value", "")))
            else:
                self.forms[-1].fields.append((a.get("name"), a.get("value", ""), kind))
        elif tag == "button" and self.forms:
            self.forms[-1].buttons.append((a.get("name"), a.get("value", "")))
        elif a.get("id") == "login-error" or "errorlist" in (a.get("class") or ""):
            self._in_error = True

    def handle_data(self, data):
        if self._in_error and data.strip():
            self.errors.append(data.strip())
            self._in_error = False


@dataclass
class Outcome:
    url: str  # the redirect target the stand-in sent the browser to (not fetched), or the last page
    status: int
    page: str
    query: dict
    redirected: bool  # True: ended with a redirect away from the stand-in


class FormBrowser:
    """Signs in and approves/denies on a stand-in's pages with plain HTTP."""

    def __init__(self, stand_in, username="alice", password=None, approve=True):
        self.stand_in = stand_in
        self.username = username
        self.password = password if password is not None else f"{username}-password"
        self.approve = approve
        self.http = session()
        self.visited = []

    def _ours(self, url):
        netloc = urllib.parse.urlsplit(url).netloc
        return any(urllib.parse.urlsplit(self.stand_in.url(name)).netloc == netloc for name in self.stand_in._servers)

    def _finish(self, resp):
        location = resp.headers.get("Location")
        target = urllib.parse.urljoin(resp.url, location)
        parts = urllib.parse.urlsplit(target)
        return Outcome(target, resp.status_code, "", dict(urllib.parse.parse_qsl(parts.query)), True)

    def go(self, url, method="get", data=None, max_steps=20):
        for _ in range(max_steps):
            self.visited.append(url)
            resp = self.http.request(method, url, data=data, allow_redirects=False, timeout=10)
            if resp.status_code in (301, 302, 303, 307):
                target = urllib.parse.urljoin(url, resp.headers["Location"])
                if not self._ours(target):
                    return self._finish(resp)
                url, method, data = target, "get", None
                continue
            parser = _FormParser()
            parser.feed(resp.text)
            step = self._next(url, resp, parser)
            if step is None:
                return Outcome(url, resp.status_code, resp.text, {}, False)
            url, method, data = step
        raise RuntimeError("too many steps")

    def _next(self, url, resp, parser):
        for form in parser.forms:
            names = {f[0] for f in form.fields}
            target = urllib.parse.urljoin(url, form.action or url)
            values = {n: v for n, v, _ in form.fields if n}
            if {"username", "password"} <= names:
                if parser.errors:
                    return None  # the login was refused
                values.update(username=self.username, password=self.password)
                return target, form.method, values
            if form.id == "authorizationForm":
                if self.approve:
                    values["allow"] = "Authorize"
                return target, form.method, values
            if any(b == ("action", "accept") for b in form.buttons):
                values["action"] = "accept" if self.approve else "deny"
                return target, form.method, values
            if "user_code" in names and not parser.errors and self.user_code is not None:
                values["user_code"] = self.user_code
                self.user_code = None  # type it once
                return target, form.method, values
        return None

    user_code = None

    def authorize(self, url):
        return self.go(url)

    def device(self, verification_uri, user_code):
        """Enter user_code on the device page, then accept (approve) or deny."""
        self.user_code = user_code
        return self.go(verification_uri)


def run_browser(url, action="approve", user_code=None, username=None, password=None, timeout=60):
    """Run Tests/Browser/browser_driver.py (headless Chromium) against url; returns its result."""
    env = dict(os.environ)
    env.update(SFAUTH_TEST_BROWSER_ACTION=action, SFAUTH_TEST_BROWSER_TIMEOUT=str(timeout),
               SFAUTH_TEST_USERNAME=username or "alice", SFAUTH_TEST_PASSWORD=password or "alice-password")
    env.pop("SFAUTH_TEST_DEVICE_USER_CODE", None)
    if user_code is not None:
        env["SFAUTH_TEST_DEVICE_USER_CODE"] = user_code
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(k, None)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    with tempfile.TemporaryDirectory(prefix="stand-in-browser-") as work:
        log = os.path.join(work, "result.json")
        env["SFAUTH_TEST_BROWSER_LOG"] = log
        done = subprocess.run([sys.executable, DRIVER, url], env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout + 30)
        try:
            with open(log) as f:
                result = json.load(f)
        except (OSError, ValueError):
            result = {"ok": False, "error": f"the driver wrote no result (exit {done.returncode})"}
    result["stdio"] = done.stdout + done.stderr
    return result
