"""Shared base of the loopback stand-ins for identity providers (see README.md).

A stand-in is one or more ThreadingHTTPServers on 127.0.0.1 (ephemeral ports, daemon threads)
that reproduce what a provider's documentation says it does. This module holds what every
provider shares: routing, request recording, RS256 signing and a JWKS, in-memory clients / codes /
tokens / device grants, PKCE verification and a clock tests can move. The browser pages (sign-in,
consent, device verification) are in web_flow.py, the generic OpenID provider in oidc.py.

Nothing here reaches beyond 127.0.0.1. Every stand-in stops on context exit, and by itself after
`ttl` seconds if a test forgets to.
"""

import base64
import hashlib
import json
import re
import secrets
import threading
import time
import traceback
import urllib.parse
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

_KEY_LOCK = threading.Lock()
_KEYS = {}


def signing_key(slot="default"):
    """RSA keys cached per process (generating 2048-bit keys per stand-in would slow the suite);
    a second slot gives a key that a stand-in signs with but does not publish."""
    with _KEY_LOCK:
        if slot not in _KEYS:
            _KEYS[slot] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return _KEYS[slot]


def b64url(data):
    if isinstance(data, str):
        data = data.encode()
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt_claims(token):
    """The payload of a JWT, unverified (tests use it to look at what a stand-in issued)."""
    return json.loads(b64url_decode(token.split(".")[1]))


def jwt_header(token):
    return json.loads(b64url_decode(token.split(".")[0]))


def pkce_s256(verifier):
    return b64url(hashlib.sha256(verifier.encode()).digest())


def re_escape(path):
    return re.escape(path)


def is_loopback_host(host):
    return host in ("127.0.0.1", "localhost", "[::1]", "::1")


# --------------------------------------------------------------------------------------------
# Data


@dataclass
class User:
    username: str
    password: str
    id: int
    name: str
    email: str

    @property
    def sub(self):
        return str(self.id)


def default_users():
    return {
        "alice": User("alice", "alice-password", 1001, "Alice Example", "alice@example.com"),
        "bob": User("bob", "bob-password", 1002, "Bob Example", "bob@example.com"),
    }


@dataclass
class Client:
    client_id: str
    secret: str | None  # None: a public client
    redirect_uris: list
    kind: str = "default"  # provider-specific: "oauth-app", "desktop", "public", ...
    options: dict = field(default_factory=dict)


@dataclass
class Grant:
    """An issued authorization code, access token, refresh token or device code."""
    value: str
    kind: str  # "code" | "access" | "refresh"
    client_id: str
    username: str | None
    scope: list
    expires_at: float | None  # None: never expires
    audience: object = None
    family: str | None = None  # refresh-token rotation chain
    used: bool = False
    revoked: bool = False
    extra: dict = field(default_factory=dict)


@dataclass
class AuthRequest:
    """A pending authorization request (between /authorize and the redirect back)."""
    id: str
    client_id: str
    redirect_uri: str  # where to send the answer (already validated)
    scope: list
    state: str | None
    params: dict  # every query parameter, first value
    username: str | None = None
    consent_shown: bool = False
    extra: dict = field(default_factory=dict)


@dataclass
class DeviceGrant:
    device_code: str
    user_code: str
    client_id: str
    scope: list
    expires_at: float
    interval: int
    status: str = "pending"  # pending | approved | denied | used
    username: str | None = None
    last_poll: float | None = None
    slow_down_next: bool = False
    extra: dict = field(default_factory=dict)


@dataclass
class Recorded:
    """One request a stand-in received (tests assert on these)."""
    server: str
    method: str
    path: str
    query: dict
    headers: dict
    form: dict
    json: object
    time: float


@dataclass
class Request:
    server: str
    method: str
    path: str
    query: dict
    headers: object  # email.message.Message: case-insensitive .get()
    body: bytes
    form: dict
    json: object
    cookies: dict

    def header(self, name, default=None):
        return self.headers.get(name, default)

    def bearer(self):
        value = self.header("Authorization", "")
        if value[:7].lower() == "bearer ":
            return value[7:].strip()
        return None

    def basic_auth(self):
        """(client_id, secret) from HTTP Basic (RFC 6749 §2.3.1: both form-urlencoded), or None."""
        value = self.header("Authorization", "")
        if value[:6].lower() != "basic ":
            return None
        try:
            user, _, password = base64.b64decode(value[6:].strip()).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        return urllib.parse.unquote_plus(user), urllib.parse.unquote_plus(password)


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: list = field(default_factory=list)


def json_response(obj, status=200, headers=()):
    return Response(status, json.dumps(obj).encode(),
                    [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-store"),
                     *headers])


def form_response(fields, status=200):
    return Response(status, urllib.parse.urlencode(fields).encode(),
                    [("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"),
                     ("Cache-Control", "no-store")])


def html_response(text, status=200, headers=()):
    return Response(status, text.encode(), [("Content-Type", "text/html; charset=utf-8"), *headers])


def redirect(location, headers=()):
    return Response(302, b"", [("Location", location), *headers])


def add_query(url, params):
    """url with params appended to its query (params with value None are left out)."""
    parts = urllib.parse.urlsplit(url)
    extra = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    query = parts.query + ("&" if parts.query and extra else "") + extra
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def redirect_matches(registered, requested, *, any_loopback_port=True, path_rule="exact",
                     loopback_hosts=("127.0.0.1", "localhost", "[::1]")):
    """Does `requested` match the registered redirect URI?

    path_rule "exact" compares paths literally (a trailing slash counts); "subdirectory" also
    accepts paths below the registered one (GitHub OAuth apps). With any_loopback_port the port of
    an http loopback URI is ignored (RFC 8252 §7.3); the host must still be the same literal."""
    try:
        reg, req = urllib.parse.urlsplit(registered), urllib.parse.urlsplit(requested)
        reg_port, req_port = reg.port, req.port
    except ValueError:
        return False
    if reg.scheme != req.scheme or reg.hostname != req.hostname or reg.query != req.query or req.fragment:
        return False
    loopback = reg.scheme == "http" and reg.netloc.rsplit(":", 1)[0].lower() in loopback_hosts
    if not (loopback and any_loopback_port) and reg_port != req_port:
        return False
    if path_rule == "subdirectory":
        base = reg.path.rstrip("/")
        return req.path == reg.path or req.path.startswith(base + "/")
    return req.path == reg.path


# --------------------------------------------------------------------------------------------
# HTTP plumbing


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # one request per connection: no idle keep-alive threads
    timeout = 15  # a client that connects and sends nothing cannot hold a thread for long
    server_version = "stand-in"

    def _handle(self):
        self.server.stand_in._dispatch(self, self.server.stand_in_name)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _handle

    def log_message(self, *args):
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class StandIn:
    """Base class. Subclasses call add_server() and route() in __init__ and implement the flows.

    Knobs shared by every stand-in:
      access_token_lifetime / refresh_token_lifetime  seconds (None: never expires); set before
                                                      the tokens are issued
      device_interval, device_lifetime                the device grant's interval / expires_in
      advance(seconds)                                moves the stand-in's clock
      expire_access_tokens() / expire_refresh_tokens() / expire_device_codes()
      revoke_all()
    Recorded requests: .requests (list of Recorded), requests_to(path) and last(path).
    """

    brand = "Stand-in"
    access_token_lifetime = 3600
    refresh_token_lifetime = None
    code_lifetime = 600
    device_interval = 5
    device_lifetime = 900

    def __init__(self, users=None, ttl=600):
        self.users = users or default_users()
        self.ttl = ttl
        self.lock = threading.RLock()
        self.key = signing_key()
        self.kid = "stand-in-" + secrets.token_hex(4)
        self.clients = {}
        self.grants = {}  # value -> Grant (codes, access and refresh tokens)
        self.device_grants = {}  # device_code -> DeviceGrant
        self.requests = []
        self.errors = []  # exceptions raised by handlers (a test can assert it stays empty)
        self.clock_offset = 0.0
        self._servers = {}  # name -> _Server
        self._routes = {}  # name -> [(method, regex, fn)]
        self._threads = []
        self._timer = None
        self._started = False

    # -- servers and routing -------------------------------------------------------------

    def add_server(self, name):
        server = _Server(("127.0.0.1", 0), _Handler)
        server.stand_in = self
        server.stand_in_name = name
        self._servers[name] = server
        self._routes.setdefault(name, [])
        return server

    def url(self, server="main"):
        host, port = self._servers[server].server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self):
        return self.url("main")

    def route(self, server, method, pattern, fn):
        self._routes[server].append((method, re.compile(pattern + r"\Z"), fn))

    def __enter__(self):
        self._started = True
        for name, server in self._servers.items():
            t = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                                 name=f"{type(self).__name__}-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        self._timer = threading.Timer(self.ttl, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        if self._timer:
            self._timer.cancel()
        for server in self._servers.values():
            if self._started:
                server.shutdown()  # returns at once if already shut down
            server.server_close()

    def _dispatch(self, handler, server_name):
        try:
            length = int(handler.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        body = handler.rfile.read(length) if length > 0 else b""
        parts = urllib.parse.urlsplit(handler.path)
        query = {k: v[0] for k, v in urllib.parse.parse_qs(parts.query, keep_blank_values=True).items()}
        ctype = (handler.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        form, parsed_json = {}, None
        if ctype == "application/x-www-form-urlencoded":
            form = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode("utf-8", "replace"),
                                                                keep_blank_values=True).items()}
        elif ctype == "application/json" and body:
            try:
                parsed_json = json.loads(body)
            except ValueError:
                parsed_json = None
        cookies = {}
        if handler.headers.get("Cookie"):
            jar = SimpleCookie()
            try:
                jar.load(handler.headers.get("Cookie"))
            except Exception:  # noqa: BLE001 - a malformed cookie is just no cookie
                pass
            cookies = {k: m.value for k, m in jar.items()}
        req = Request(server_name, handler.command, parts.path, query, handler.headers, body, form,
                      parsed_json, cookies)
        with self.lock:
            self.requests.append(Recorded(server_name, handler.command, parts.path, dict(query),
                                          {k: v for k, v in handler.headers.items()}, dict(form),
                                          parsed_json, time.time()))
        try:
            resp = self._route(req)
        except Exception as e:  # noqa: BLE001 - report, don't kill the server thread
            self.errors.append(f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
            resp = Response(500, f"stand-in error: {type(e).__name__}: {e}".encode(),
                            [("Content-Type", "text/plain")])
        try:
            handler.send_response(resp.status)
            for k, v in resp.headers:
                handler.send_header(k, v)
            handler.send_header("Content-Length", str(len(resp.body)))
            handler.end_headers()
            if handler.command != "HEAD":
                handler.wfile.write(resp.body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _route(self, req):
        allowed = False
        for method, regex, fn in self._routes.get(req.server, []):
            m = regex.match(req.path)
            if not m:
                continue
            if method != req.method:
                allowed = True
                continue
            return fn(req, *m.groups())
        if allowed:
            return self.not_allowed(req)
        return self.not_found(req)

    def not_found(self, req):
        return json_response({"error": "not_found", "path": req.path}, 404)

    def not_allowed(self, req):
        return json_response({"error": "method_not_allowed"}, 405)

    # -- recorded requests ----------------------------------------------------------------

    def requests_to(self, path, method=None, server=None):
        with self.lock:
            return [r for r in self.requests if r.path == path and (method is None or r.method == method)
                    and (server is None or r.server == server)]

    def last(self, path, method=None, server=None):
        found = self.requests_to(path, method, server)
        return found[-1] if found else None

    # -- time ---------------------------------------------------------------------------------

    def now(self):
        return time.time() + self.clock_offset

    def advance(self, seconds):
        self.clock_offset += seconds

    def _expire(self, kinds):
        with self.lock:
            for g in self.grants.values():
                if g.kind in kinds and (g.expires_at is None or g.expires_at > self.now() - 1):
                    g.expires_at = self.now() - 1

    def expire_access_tokens(self):
        self._expire({"access"})

    def expire_refresh_tokens(self):
        self._expire({"refresh"})

    def expire_codes(self):
        self._expire({"code"})

    def expire_device_codes(self):
        with self.lock:
            for d in self.device_grants.values():
                d.expires_at = self.now() - 1

    def revoke_all(self):
        with self.lock:
            for g in self.grants.values():
                g.revoked = True

    # -- clients and users ----------------------------------------------------------------------

    def register(self, client):
        self.clients[client.client_id] = client
        return client

    def allow_redirect_uri(self, uri, client_id=None):
        """Register one more redirect URI (e.g. a test listener's, where the provider matches ports)."""
        self.clients[client_id or self.client_id].redirect_uris.append(uri)

    def check_password(self, username, password):
        user = self.users.get(username)
        return user if user and secrets.compare_digest(user.password, password) else None

    # -- tokens ---------------------------------------------------------------------------------

    def new_value(self, prefix="", nbytes=24):
        return prefix + secrets.token_urlsafe(nbytes)

    def store(self, kind, value, client_id, username, scope, lifetime, **kw):
        expires_at = None if lifetime is None else self.now() + lifetime
        g = Grant(value, kind, client_id, username, list(scope), expires_at, **kw)
        with self.lock:
            self.grants[value] = g
        return g

    def find(self, value, kind):
        """(grant, problem): problem is None, "unknown", "revoked", "expired" or "used"."""
        with self.lock:
            g = self.grants.get(value or "")
            if g is None or g.kind != kind:
                return None, "unknown"
            if g.revoked:
                return g, "revoked"
            if g.expires_at is not None and g.expires_at <= self.now():
                return g, "expired"
            if g.used:
                return g, "used"
            return g, None

    def valid_access(self, req, audience=None):
        """The Grant of the request's bearer token if it is a current access token (optionally
        for `audience`: a value, or a callable taking the grant's audience), else None."""
        g, problem = self.find(req.bearer(), "access")
        if problem:
            return None
        if audience is not None:
            ok = audience(g.audience) if callable(audience) else g.audience == audience
            if not ok:
                return None
        return g

    def revoke_family(self, family):
        with self.lock:
            for g in self.grants.values():
                if g.family == family:
                    g.revoked = True

    # -- JWT -------------------------------------------------------------------------------------

    def sign_jwt(self, claims, typ="JWT", key=None, kid=None):
        header = {"alg": "RS256", "typ": typ, "kid": kid or self.kid}
        signing_input = b64url(json.dumps(header, separators=(",", ":"))) + "." + b64url(
            json.dumps(claims, separators=(",", ":")))
        signature = (key or self.key).sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64url(signature)

    def jwks(self):
        numbers = self.key.public_key().public_numbers()

        def as_b64(n):
            return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))

        return {"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": self.kid,
                          "n": as_b64(numbers.n), "e": as_b64(numbers.e)}]}

    def verify_jwt(self, token):
        """Claims of a JWT this stand-in signed (signature only; tests check the rest)."""
        head, payload, signature = token.split(".")
        self.key.public_key().verify(b64url_decode(signature), f"{head}.{payload}".encode(),
                                     padding.PKCS1v15(), hashes.SHA256())
        return json.loads(b64url_decode(payload))

    # -- PKCE -----------------------------------------------------------------------------------

    @staticmethod
    def pkce_ok(challenge, method, verifier):
        """RFC 7636 §4.6: S256 compares BASE64URL(SHA256(verifier)); plain compares as is."""
        if not verifier:
            return False
        if (method or "plain") == "S256":
            return secrets.compare_digest(pkce_s256(verifier), challenge)
        if method in (None, "", "plain"):
            return secrets.compare_digest(verifier, challenge)
        return False

    # -- device grant (RFC 8628) ----------------------------------------------------------------------

    def start_device(self, client_id, scope, user_code=None, device_code=None):
        code = user_code or self.new_user_code()
        d = DeviceGrant(device_code or self.new_value("", 30), code, client_id, list(scope),
                        self.now() + self.device_lifetime, self.device_interval)
        with self.lock:
            self.device_grants[d.device_code] = d
        return d

    def new_user_code(self):
        alphabet = "BCDFGHJKLMNPQRSTVWXZ"
        raw = "".join(secrets.choice(alphabet) for _ in range(8))
        return raw[:4] + "-" + raw[4:]

    def normalise_user_code(self, text):
        raw = re.sub(r"[^A-Za-z0-9]", "", text or "").upper()
        return raw[:4] + "-" + raw[4:] if len(raw) == 8 else raw

    def device_by_user_code(self, user_code):
        code = self.normalise_user_code(user_code)
        with self.lock:
            for d in self.device_grants.values():
                if self.normalise_user_code(d.user_code) == code:
                    return d
        return None

    def force_slow_down(self, device_code=None):
        """The next pending poll (of one device grant, or all) answers slow_down."""
        with self.lock:
            for d in self.device_grants.values():
                if device_code in (None, d.device_code):
                    d.slow_down_next = True

    def poll_device(self, device_code, client_id):
        """(state, DeviceGrant): state is unknown | expired | slow_down | pending | denied |
        approved | used. `approved` marks the grant used (a device code redeems once)."""
        with self.lock:
            d = self.device_grants.get(device_code or "")
            if d is None or d.client_id != client_id:
                return "unknown", d
            if d.status == "used":
                return "used", d
            if d.expires_at <= self.now():
                return "expired", d
            if d.status == "denied":
                return "denied", d
            if d.status == "approved":
                d.status = "used"
                return "approved", d
            now = self.now()
            too_fast = d.last_poll is not None and now - d.last_poll < d.interval
            d.last_poll = now
            if d.slow_down_next or too_fast:
                d.slow_down_next = False
                d.interval += 5  # RFC 8628 §3.5: the interval grows by 5 seconds
                return "slow_down", d
            return "pending", d
