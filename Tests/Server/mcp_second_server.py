#!/usr/bin/env python3
"""A second, independent MCP authorization stack for sfauth's end-to-end tests: django-mcp-oauth 0.1.0
(PyPI; Django + Authlib; pinned in Tests/Server/requirements.txt) as the authorization server, and the
MCP SDK's streamable-HTTP server at /mcp behind the library's own resource-server helpers
(django_mcp_oauth.resource: user_from_bearer, www_authenticate). One origin, 127.0.0.1 only. See
Tests/Server/MCP.md ("The second server") for what it does and enforces -- it differs from
mcp_server.py on purpose: it is what a real deployment of that library looks like.

    .venv/bin/python Tests/Server/mcp_second_server.py [options]

  http://127.0.0.1:PORT/mcp                                   the protected MCP endpoint (tools whoami, admin_echo)
  http://127.0.0.1:PORT/.well-known/oauth-protected-resource  RFC 9728 (also at .../oauth-protected-resource/mcp)
  http://127.0.0.1:PORT/.well-known/oauth-authorization-server  RFC 8414
  http://127.0.0.1:PORT/oauth/authorize | /oauth/token | /oauth/register
  http://127.0.0.1:PORT/accounts/login/                       Django's LoginView (alice / alice-password)

Ours: the Django settings and templates (a login page; the consent page through the library's
MCP_OAUTH_CONSENT_TEMPLATE, shaped like django-oauth-toolkit's so Tests/Browser/browser_driver.py
approves it), the ASGI gate in front of the MCP SDK app (the library's README pattern), the test
endpoint /test/stats, the lifecycle. Nothing of the library is patched.

Lifecycle as mcp_server.py: --ttl, --parent-pid, SIGTERM; --write-env written once serving, removed
on exit; nothing on stdout.
"""
import argparse
import asyncio
import contextlib
import contextvars
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
import urllib.parse
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
USERNAME, PASSWORD = "alice", "alice-password"

LOGIN_TEMPLATE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in - django-mcp-oauth test server</title></head>
<body><h1>Sign in</h1>
{% if form.errors %}<p class="errornote">Your username and password didn't match.</p>{% endif %}
<form method="post">{% csrf_token %}
<label>Username <input type="text" name="username" autofocus></label>
<label>Password <input type="password" name="password"></label>
<input type="hidden" name="next" value="{{ next }}">
<button type="submit">Sign in</button>
</form></body></html>
"""

# The library's consent contract (views.authorize_view): POST confirm=yes grants, anything else denies.
# The form is shaped like django-oauth-toolkit's (form#authorizationForm, "Authorize" named allow, a
# "Cancel" submit), which is what Tests/Browser/browser_driver.py clicks.
CONSENT_TEMPLATE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Authorize access - django-mcp-oauth test server</title></head>
<body><h1>Authorize {{ client.client_name|default:client.client_id }}?</h1>
<p>Scope: <code>{{ scope }}</code></p>
<form id="authorizationForm" method="post">{% csrf_token %}
<input type="hidden" name="confirm" value="no">
<input type="submit" value="Cancel">
<input type="submit" name="allow" value="Authorize" onclick="this.form.confirm.value='yes'">
</form></body></html>
"""

CURRENT_CLAIMS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("claims", default=None)
STATS = {"token_requests": [], "authorize_requests": [], "registrations": 0, "rs_requests": []}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, default=0, help="the one port (default: free)")
    p.add_argument("--access-token-seconds", type=int, default=3600, help="MCP_OAUTH_ACCESS_TOKEN_TTL")
    p.add_argument("--refresh-grace", type=int, default=60,
                   help="MCP_OAUTH_REFRESH_GRACE: seconds a rotated refresh token still works (library default 60)")
    p.add_argument("--rotate-refresh-tokens", action="store_true",
                   help="issue a new refresh token on refresh (sets Authlib's RefreshTokenGrant."
                        "INCLUDE_NEW_REFRESH_TOKEN on the library's grant; without it django-mcp-oauth 0.1.0 answers "
                        "a refresh with no refresh_token and revokes the old one after the grace)")
    p.add_argument("--scope", default="mcp", help="MCP_OAUTH_SCOPE: the one scope the resource requires")
    p.add_argument("--run-dir", help="database and templates (default: a temporary directory, removed on exit)")
    p.add_argument("--ttl", type=float, default=900)
    p.add_argument("--parent-pid", type=int, default=0)
    p.add_argument("--write-env", metavar="PATH")
    p.add_argument("--verbose", action="store_true")
    return p.parse_args(argv)


def configure_django(args, run_dir, origin):
    import django
    from django.conf import settings
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    templates = os.path.join(run_dir, "templates")
    os.makedirs(templates, exist_ok=True)
    for name, text in (("login.html", LOGIN_TEMPLATE), ("consent.html", CONSENT_TEMPLATE)):
        with open(os.path.join(templates, name), "w") as f:
            f.write(text)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    settings.configure(
        DEBUG=False, SECRET_KEY=secrets.token_urlsafe(32), ALLOWED_HOSTS=["127.0.0.1"],
        ROOT_URLCONF=__name__, USE_TZ=True, DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions",
                        "django_mcp_oauth"],
        MIDDLEWARE=["django.contrib.sessions.middleware.SessionMiddleware",
                    "django.middleware.csrf.CsrfViewMiddleware",
                    "django.contrib.auth.middleware.AuthenticationMiddleware"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.path.join(run_dir, "db.sqlite3")}},
        TEMPLATES=[{"BACKEND": "django.template.backends.django.DjangoTemplates", "DIRS": [templates],
                    "APP_DIRS": True, "OPTIONS": {"context_processors": ["django.template.context_processors.request"]}}],
        LOGIN_URL="/accounts/login/",
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],   # test speed
        LOGGING_CONFIG=None,
        # django-mcp-oauth (django_mcp_oauth/conf.py)
        MCP_OAUTH_ISSUER=origin, MCP_RESOURCE_URL=origin + "/mcp", MCP_OAUTH_PRIVATE_KEY=key,
        MCP_OAUTH_SCOPE=args.scope, MCP_OAUTH_ACCESS_TOKEN_TTL=args.access_token_seconds,
        MCP_OAUTH_REFRESH_GRACE=args.refresh_grace, MCP_OAUTH_CONSENT_TEMPLATE="consent.html",
    )
    django.setup()
    if args.rotate_refresh_tokens:
        from django_mcp_oauth.grants import RefreshTokenGrant
        RefreshTokenGrant.INCLUDE_NEW_REFRESH_TOKEN = True      # Authlib's switch, default False
    from django.core.management import call_command
    call_command("migrate", verbosity=0, interactive=False)
    from django.contrib.auth import get_user_model
    get_user_model().objects.create_user(USERNAME, password=PASSWORD)


def build_urlpatterns():
    from django.contrib.auth.views import LoginView
    from django.http import JsonResponse
    from django.urls import path
    from django_mcp_oauth.urls import oauth_urlpatterns, wellknown_urlpatterns

    def stats(request):
        return JsonResponse(STATS)
    return wellknown_urlpatterns + oauth_urlpatterns + [
        path("accounts/login/", LoginView.as_view(template_name="login.html")),
        path("test/stats", stats),
    ]


urlpatterns = []     # ROOT_URLCONF; filled once Django is configured


class BearerGate:
    """OURS, the library's documented resource-server pattern (README "Resource server side"), as ASGI
    in front of the MCP SDK app: no credentials -> 401 `www_authenticate(include_error=False)`; a bad
    token -> 401 with the library's error (403 for its insufficient_scope); else the claims go to the
    tools through CURRENT_CLAIMS."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        from asgiref.sync import sync_to_async
        from django_mcp_oauth.resource import user_from_bearer, www_authenticate
        from django_mcp_oauth.validation import TokenError

        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        if not header.lower().startswith("bearer "):
            return await self.deny(send, 401, await sync_to_async(www_authenticate)(include_error=False),
                                   {"error": "invalid_request", "error_description": "bearer token required"})
        try:
            _, validated = await sync_to_async(user_from_bearer)(header[7:].strip())
        except TokenError as error:
            status = 403 if error.error == "insufficient_scope" else 401
            return await self.deny(send, status, await sync_to_async(www_authenticate)(error.error, error.description),
                                   {"error": error.error, "error_description": error.description})
        reset = CURRENT_CLAIMS.set(validated.claims)
        try:
            await self.app(scope, receive, send)
        finally:
            CURRENT_CLAIMS.reset(reset)

    @staticmethod
    async def deny(send, status, challenge, body):
        payload = json.dumps(body).encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
            (b"www-authenticate", challenge.encode())]})
        await send({"type": "http.response.body", "body": payload})


def mcp_app():
    from mcp.server.mcpserver import MCPServer
    server = MCPServer(name="sfauth-mcp-second", log_level="WARNING")

    @server.tool()
    def whoami() -> dict[str, Any]:
        """The client id, scopes, audience and subject of the calling token (the library's JWT claims)."""
        claims = CURRENT_CLAIMS.get() or {}
        return {"client_id": claims.get("client_id"), "scopes": str(claims.get("scope", "")).split(),
                "resource": claims.get("aud"), "subject": claims.get("sub")}

    @server.tool()
    def admin_echo(text: str) -> dict[str, Any]:
        """Echoes text; needs scope mcp:admin (a tool error otherwise: the library has no per-tool scopes)."""
        claims = CURRENT_CLAIMS.get() or {}
        if "mcp:admin" not in str(claims.get("scope", "")).split():
            raise PermissionError("insufficient_scope: this tool needs scope mcp:admin")
        return {"echo": text, "client_id": claims.get("client_id")}

    return server, server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True,
                                              json_response=True, host="127.0.0.1")


class Front:
    """OURS: /mcp to the MCP SDK app (behind BearerGate), everything else to Django; records what
    the AS saw for /test/stats."""

    def __init__(self, django_app, mcp):
        self.django_app, self.mcp = django_app, BearerGate(mcp)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.django_app(scope, receive, send)
        path = scope["path"]
        if path == "/mcp":
            status = {}

            async def watch(message):
                if message["type"] == "http.response.start":
                    status["code"] = message["status"]
                await send(message)
            await self.mcp(scope, receive, watch)
            STATS["rs_requests"].append({"method": scope["method"], "status": status.get("code")})
            return
        if path == "/oauth/token" and scope["method"] == "POST":
            from mcp_server import read_body, replay
            body, _ = await read_body(receive)
            form = urllib.parse.parse_qs(body.decode("latin-1"))
            status = {}

            async def watch_token(message):
                if message["type"] == "http.response.start":
                    status["code"] = message["status"]
                await send(message)
            await self.django_app(scope, replay(body, receive), watch_token)
            STATS["token_requests"].append({"grant_type": (form.get("grant_type") or [None])[0],
                                            "resource": (form.get("resource") or [None])[0],
                                            "client_id": (form.get("client_id") or [None])[0],
                                            "status": status.get("code")})
            return
        if path == "/oauth/authorize" and scope["method"] == "GET":
            query = dict(urllib.parse.parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            STATS["authorize_requests"].append({"client_id": query.get("client_id"),
                                                "redirect_uri": query.get("redirect_uri"),
                                                "resource": query.get("resource")})
        if path == "/oauth/register" and scope["method"] == "POST":
            STATS["registrations"] += 1
        return await self.django_app(scope, receive, send)


async def serve(args, sock, origin, run_dir):
    import uvicorn
    from mcp_server import alive, write_env

    from django.core.asgi import get_asgi_application
    server, mcp = mcp_app()
    front = Front(get_asgi_application(), mcp)
    level = "info" if args.verbose else "warning"
    web = uvicorn.Server(uvicorn.Config(front, lifespan="off", log_level=level, access_log=args.verbose))
    web.install_signal_handlers = lambda: None
    loop = asyncio.get_running_loop()

    def stop(reason):
        print(f"mcp-second-server: stopping: {reason}", file=sys.stderr, flush=True)
        web.should_exit = True
        loop.call_later(5, lambda: os._exit(0))
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop, signal.Signals(sig).name)

    async def watchdog():
        deadline = time.monotonic() + args.ttl
        while True:
            if time.monotonic() >= deadline:
                return stop(f"TTL of {args.ttl:g} s reached")
            if args.parent_pid > 0 and not alive(args.parent_pid):
                return stop(f"parent process {args.parent_pid} is gone")
            await asyncio.sleep(0.5)

    values = {"MCP_AS_URL": origin, "MCP_ISSUER": origin,
              "MCP_AS_METADATA_URL": origin + "/.well-known/oauth-authorization-server",
              "MCP_RESOURCE_URL": origin + "/mcp", "MCP_PRM_URL": origin + "/.well-known/oauth-protected-resource",
              "MCP_PRM_PATH_URL": origin + "/.well-known/oauth-protected-resource/mcp",
              "MCP_RS_ORIGIN": origin, "MCP_STATS_URL": origin + "/test/stats", "MCP_PORT": sock.getsockname()[1],
              "MCP_AS_PORT": sock.getsockname()[1], "MCP_RS_PORT": sock.getsockname()[1],
              "MCP_PID": os.getpid(), "MCP_SCOPES": args.scope, "MCP_USERNAME": USERNAME, "MCP_PASSWORD": PASSWORD,
              "MCP_RUN_DIR": run_dir}
    try:
        async with server.session_manager.run():
            task = asyncio.create_task(web.serve(sockets=[sock]))
            dog = asyncio.create_task(watchdog())
            while not web.started and not task.done():
                await asyncio.sleep(0.02)
            if web.started:
                if args.write_env:
                    write_env(args.write_env, values)
                print(f"mcp-second-server: django-mcp-oauth on {origin} (pid {os.getpid()})", file=sys.stderr,
                      flush=True)
            await task
            dog.cancel()
    finally:
        if args.write_env:
            with contextlib.suppress(FileNotFoundError):
                os.remove(args.write_env)
    return 0 if web.started else 1


def main(argv):
    args = parse_args(argv)
    sys.path.insert(0, HERE)
    sys.stdout = sys.stderr
    from mcp_server import bound_socket
    sock = bound_socket(args.port)
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    run_dir = args.run_dir or tempfile.mkdtemp(prefix="sfauth-mcp-second-")
    os.makedirs(run_dir, exist_ok=True)
    # Authlib refuses http:// request URIs (authlib/common/security.py) unless this is set; loopback only.
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"
    try:
        configure_django(args, run_dir, origin)      # before the event loop: Django's ORM is synchronous
        urlpatterns[:] = build_urlpatterns()
        return asyncio.run(serve(args, sock, origin, run_dir))
    finally:
        if not args.run_dir:
            shutil.rmtree(run_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
