#!/usr/bin/env python3
"""A protected MCP server and its authorization server, in one process, for sfauth's end-to-end tests
of `sfauth login --resource URL` (issue 19; MCP authorization: RFC 9728, RFC 8414, RFC 7591, PKCE
S256, RFC 8707, RFC 9207). Built from the REAL Python MCP SDK (PyPI `mcp` 2.3.0, pinned in
Tests/Server/requirements.txt). See Tests/Server/MCP.md for what it does and enforces, exactly.

    .venv/bin/python Tests/Server/mcp_server.py [options]

Two (or three) origins, all on 127.0.0.1, served by uvicorn in this one process:

  AS  http://127.0.0.1:ASPORT       the authorization server: the SDK's `create_auth_routes`
                                    (/.well-known/oauth-authorization-server, /authorize, /token,
                                    /register, /revoke) over an in-memory provider of ours, plus
                                    our consent page (/consent) and test endpoints (/test/...)
  RS  http://127.0.0.1:RSPORT/mcp   the protected MCP server: the SDK's `MCPServer` streamable-HTTP
                                    app (stateless, JSON responses) behind the SDK's bearer
                                    middleware, RFC 9728 metadata at
                                    /.well-known/oauth-protected-resource/mcp
      http://127.0.0.1:RSPORT/other/mcp   with --second-resource: a second protected resource at
                                    the same AS (its metadata: /.well-known/oauth-protected-resource/other/mcp)

Our code is only where the SDK has none, each piece marked "OURS" below: the provider's storage,
the consent page, RFC 8707 enforcement on /token, RFC 9207 `iss` on every authorization response,
the 403 insufficient_scope step-up challenge, the hostile variants, the test endpoints.

Lifecycle: binds 127.0.0.1 only; stops by itself after --ttl seconds or when --parent-pid is gone;
SIGTERM/SIGINT stop it; --write-env is written once everything answers and removed on exit. Prints
nothing on stdout (logs go to stderr).
"""
import argparse
import asyncio
import base64
import contextvars
import hashlib
import html
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
import urllib.parse
from typing import Any

HOSTILE_KINDS = (
    "resource-mismatch",               # PRM `resource` is another URL than the one it is served for
    "no-s256",                         # AS metadata code_challenge_methods_supported: ["plain"]
    "no-pkce-list",                    # AS metadata without code_challenge_methods_supported
    "registration-without-client-id",  # /register answers 201 JSON without client_id
    "foreign-metadata",                # the 401's resource_metadata points at the AS origin (which serves a PRM)
    "issuer-mismatch",                 # AS metadata `issuer` differs from the URL it is fetched for
    "forget-clients",                  # the AS forgets every client after each code exchange
)
SCOPES = ["mcp", "mcp:admin"]
DEFAULT_SCOPES = ["mcp"]
ADMIN_SCOPE = "mcp:admin"
SUBJECT = "alice"                       # the one resource owner; there is no sign-in step
CODE_SECONDS = 300


def log(message):
    print(f"mcp-server: {message}", file=sys.stderr, flush=True)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def bound_socket(port):
    """A listening-ready socket on 127.0.0.1 (port 0: a free one); handed to uvicorn, so there is no
    race between picking a port and binding it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.set_inheritable(True)
    return sock


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Hostile kinds:\n  " + "\n  ".join(HOSTILE_KINDS))
    p.add_argument("--as-port", type=int, default=0, help="the authorization server's port (default: free)")
    p.add_argument("--rs-port", type=int, default=0, help="the MCP server's port (default: free)")
    p.add_argument("--second-resource", action="store_true",
                   help="also serve a second protected resource at http://127.0.0.1:RSPORT/other/mcp")
    p.add_argument("--access-token-seconds", type=int, default=3600, help="access token lifetime (default 3600)")
    p.add_argument("--refresh-token-seconds", type=int, default=0,
                   help="refresh token lifetime (default 0: no expiry)")
    p.add_argument("--require-resource", dest="require_resource", action="store_true", default=True,
                   help="RFC 8707: refuse authorization and token requests without `resource` (default)")
    p.add_argument("--no-require-resource", dest="require_resource", action="store_false",
                   help="accept requests without `resource` (the token is then bound to the resource of "
                        "the authorization request, or to the first resource)")
    p.add_argument("--auto-approve", action="store_true",
                   help="/authorize redirects straight back with a code (no consent page)")
    p.add_argument("--hostile", choices=HOSTILE_KINDS, action="append", default=[],
                   help="a documented deviation (repeatable)")
    p.add_argument("--ttl", type=float, default=900, help="stop after this many seconds (default 900)")
    p.add_argument("--parent-pid", type=int, default=0, help="stop when this process is gone (0: no watch)")
    p.add_argument("--write-env", metavar="PATH",
                   help="write the URLs here once serving (PATH ending in .json: JSON, else `export K=V` lines)")
    p.add_argument("--verbose", action="store_true", help="log every request on stderr")
    return p.parse_args(argv)


# ---------------------------------------------------------------- the authorization server's state

from pydantic import AnyUrl  # noqa: E402  (after the docstring/argument code: keeps --help fast to read)
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler  # noqa: E402
from mcp.server.auth.provider import (  # noqa: E402
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import (  # noqa: E402
    build_metadata,
    build_resource_metadata_url,
    cors_middleware,
    create_auth_routes,
    create_protected_resource_routes,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions  # noqa: E402
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken, ProtectedResourceMetadata  # noqa: E402

# OURS: the `resource` values of the /token request being handled. The SDK's TokenHandler parses
# `resource` (handlers/token.py, AuthorizationCodeRequest/RefreshTokenRequest.resource) but never
# passes it to the provider, so TokenRequestShim (below) reads the form first and puts it here for
# the provider's exchange_* methods. A list: RFC 8707 §2 allows the parameter more than once.
TOKEN_REQUEST_RESOURCES: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "token_request_resources", default=None)


class Provider:
    """OURS: the in-memory storage behind the SDK's OAuthAuthorizationServerProvider protocol
    (mcp/server/auth/provider.py). The SDK's handlers do the HTTP, parameter validation, redirect
    URI and scope checks, PKCE (handlers/token.py: S256 of code_verifier == code_challenge), and
    client authentication; this class stores clients, codes and tokens, and adds what the SDK
    leaves to a deployment: RFC 8707 resource binding, refresh token rotation, consent."""

    def __init__(self, config):
        self.config = config
        self.issuer = config["issuer"]
        self.resources = config["resources"]            # the resources this AS issues tokens for
        self.lock = threading.Lock()
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.pending: dict[str, tuple[str, AuthorizationParams]] = {}   # consent id -> (client_id, params)
        self.access_tokens: dict[str, AccessToken] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.pairs: dict[str, str] = {}                 # access token <-> its refresh token
        self.stats = {"registrations": 0, "registered_clients": [], "forgotten_clients": 0,
                      "authorize_requests": [], "consents": [], "token_requests": [],
                      "token_requests_by_grant": {}, "revocations": 0, "rs_requests": []}

    # -- clients (RFC 7591; the SDK's RegistrationHandler validates and mints client_id)
    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info
        self.stats["registrations"] += 1
        self.stats["registered_clients"].append({
            "client_id": client_info.client_id,
            "redirect_uris": [str(u) for u in client_info.redirect_uris or []],
            "token_endpoint_auth_method": client_info.token_endpoint_auth_method,
            "grant_types": client_info.grant_types, "scope": client_info.scope,
            "client_name": client_info.client_name, "application_type": client_info.application_type})

    def forget_clients(self):
        n = len(self.clients)
        self.clients.clear()
        self.stats["forgotten_clients"] += n
        return n

    # -- authorization (the SDK's AuthorizationHandler has checked client, redirect_uri, scope)
    async def authorize(self, client, params):
        self.stats["authorize_requests"].append({
            "client_id": client.client_id, "redirect_uri": str(params.redirect_uri),
            "resource": params.resource, "scopes": params.scopes, "state": params.state})
        # OURS, RFC 8707 §2: the resource must be one this AS serves; and (strict deployment, the MCP
        # authorization spec's "MUST include resource") it must be present. AuthorizeError makes the
        # SDK redirect back with error=invalid_target (handlers/authorize.py error_response).
        if params.resource is None:
            if self.config["require_resource"]:
                raise AuthorizeError("invalid_target", "the resource parameter (RFC 8707) is required")
        elif params.resource not in self.resources:
            raise AuthorizeError("invalid_target", f"unknown resource {params.resource}")
        if self.config["auto_approve"]:
            return self.approve(client.client_id, params)
        consent_id = secrets.token_urlsafe(24)
        self.pending[consent_id] = (client.client_id, params)
        return f"{self.issuer}/consent?" + urllib.parse.urlencode({"request": consent_id})

    def approve(self, client_id, params):
        """A code for the request; the redirect back carries RFC 9207 `iss`."""
        code = secrets.token_urlsafe(32)            # 256 bits (the protocol asks for >= 128)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or DEFAULT_SCOPES, expires_at=time.time() + CODE_SECONDS,
            client_id=client_id, code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource or (self.resources[0] if not self.config["require_resource"] else None),
            subject=SUBJECT)
        self.stats["consents"].append({"client_id": client_id, "decision": "allow"})
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, iss=self.issuer)

    def deny(self, client_id, params):
        self.stats["consents"].append({"client_id": client_id, "decision": "deny"})
        return construct_redirect_uri(str(params.redirect_uri), error="access_denied",
                                      error_description="the user denied the request",
                                      state=params.state, iss=self.issuer)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def _requested_resource(self, bound):
        """OURS, RFC 8707 §2 on the token request: the `resource` it carries must be the one the
        grant was issued for (the MCP spec: the client MUST send it on token requests)."""
        requested = TOKEN_REQUEST_RESOURCES.get() or []
        if len(requested) > 1:
            raise TokenError("invalid_target", "one resource per token request, please")
        if not requested:
            if self.config["require_resource"]:
                raise TokenError("invalid_target", "the resource parameter (RFC 8707) is required")
            return bound
        if requested[0] != bound:
            raise TokenError("invalid_target", f"resource {requested[0]} is not the one this grant is for")
        return bound

    async def exchange_authorization_code(self, client, authorization_code):
        resource = self._requested_resource(authorization_code.resource)
        self.codes.pop(authorization_code.code, None)   # single use
        tokens = self._issue(client.client_id, authorization_code.scopes, resource, authorization_code.subject)
        if "forget-clients" in self.config["hostile"]:
            self.forget_clients()
        return tokens

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh_tokens.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        resource = self._requested_resource(refresh_token.resource)
        # Rotation: the old refresh token is gone (presenting it again: the SDK's invalid_grant
        # "refresh token does not exist"); its access token stays valid until it expires.
        self.refresh_tokens.pop(refresh_token.token, None)
        return self._issue(client.client_id, scopes, resource, refresh_token.subject)

    def _issue(self, client_id, scopes, resource, subject):
        now = int(time.time())
        access = "mcp_at_" + secrets.token_urlsafe(32)
        refresh = "mcp_rt_" + secrets.token_urlsafe(32)
        seconds = self.config["access_token_seconds"]
        self.access_tokens[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=now + seconds, resource=resource,
            subject=subject, claims={"iss": self.issuer})
        rt_seconds = self.config["refresh_token_seconds"]
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject,
            expires_at=now + rt_seconds if rt_seconds else None)
        self.pairs[access], self.pairs[refresh] = refresh, access
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=seconds,
                          scope=" ".join(scopes), refresh_token=refresh)

    async def load_access_token(self, token):
        found = self.access_tokens.get(token)
        if found and found.expires_at and found.expires_at < time.time():
            return None
        return found

    async def revoke_token(self, token):
        # RFC 7009 via the SDK's RevocationHandler; both halves of the pair go.
        self.stats["revocations"] += 1
        for value in (token.token, self.pairs.get(token.token)):
            if value:
                self.access_tokens.pop(value, None)
                self.refresh_tokens.pop(value, None)
                self.pairs.pop(value, None)


class ResourceTokenVerifier:
    """The SDK's TokenVerifier protocol, answered by the in-process provider: the token exists, has
    not expired, and was issued for exactly THIS resource (string equality; the SDK's own
    BearerAuthBackend check, enabled too, forgives a trailing slash)."""

    def __init__(self, provider, resource):
        self.provider, self.resource = provider, resource

    async def verify_token(self, token):
        found = await self.provider.load_access_token(token)
        if found is None or found.resource != self.resource:
            return None
        return found


# ---------------------------------------------------------------- ASGI shims (OURS)

async def read_body(receive):
    body, more = b"", True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return body, message
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body, None


def replay(body, receive):
    sent = False

    async def again():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()
    return again


class AuthorizationServerShim:
    """OURS, around the SDK's AS routes:
    - POST /token: reads the form (then replays it to the SDK's TokenHandler), puts its `resource`
      values in TOKEN_REQUEST_RESOURCES for the provider (RFC 8707 enforcement), records stats;
    - /authorize: adds RFC 9207 `iss` to a redirect back to the client that lacks it (the SDK's own
      error redirects, e.g. invalid_scope or invalid_target, carry none; RFC 9207 §2 wants it on
      error responses too);
    - POST /register with --hostile registration-without-client-id: drops client_id from the 201."""

    def __init__(self, app, provider, config):
        self.app, self.provider, self.config = app, provider, config

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path, method = scope["path"], scope["method"]
        if path == "/token" and method == "POST":
            body, _ = await read_body(receive)
            form = urllib.parse.parse_qs(body.decode("latin-1"), keep_blank_values=True)
            resources = form.get("resource") or []
            grant = (form.get("grant_type") or [None])[0]
            status = {}

            async def send_status(message):
                if message["type"] == "http.response.start":
                    status["code"] = message["status"]
                elif message["type"] == "http.response.body" and "code" in status:
                    status.setdefault("body", b"")
                    status["body"] += message.get("body", b"")
                await send(message)
            reset = TOKEN_REQUEST_RESOURCES.set(resources)
            try:
                await self.app(scope, replay(body, receive), send_status)
            finally:
                TOKEN_REQUEST_RESOURCES.reset(reset)
            try:
                error = json.loads(status.get("body") or b"{}").get("error")
            except ValueError:
                error = None
            entry = {"grant_type": grant, "resource": resources[0] if len(resources) == 1 else (resources or None),
                     "client_id": (form.get("client_id") or [None])[0], "status": status.get("code"),
                     "error": error, "scope": (form.get("scope") or [None])[0]}
            self.provider.stats["token_requests"].append(entry)
            self.provider.stats["token_requests_by_grant"].setdefault(grant or "", []).append(entry)
            return
        if path == "/authorize":
            async def send_with_iss(message):
                if message["type"] == "http.response.start" and message["status"] in (302, 303, 307):
                    headers = []
                    for k, v in message["headers"]:
                        if k.lower() == b"location":
                            v = self.with_iss(v.decode("latin-1")).encode("latin-1")
                        headers.append((k, v))
                    message = dict(message, headers=headers)
                await send(message)
            return await self.app(scope, receive, send_with_iss)
        if path == "/register" and method == "POST" and "registration-without-client-id" in self.config["hostile"]:
            start, chunks = {}, []

            async def capture(message):
                if message["type"] == "http.response.start":
                    start.update(message)
                else:
                    chunks.append(message.get("body", b""))
            await self.app(scope, receive, capture)
            body = b"".join(chunks)
            if start.get("status") == 201:
                document = json.loads(body)
                document.pop("client_id", None)      # HOSTILE: RFC 7591 §3.2.1 makes it REQUIRED
                body = json.dumps(document).encode()
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send(dict(start, headers=headers))
            await send({"type": "http.response.body", "body": body})
            return
        return await self.app(scope, receive, send)

    def with_iss(self, location):
        parts = urllib.parse.urlsplit(location)
        if f"{parts.scheme}://{parts.netloc}" == self.provider.issuer:
            return location                        # our own consent page, not an authorization response
        query = urllib.parse.parse_qs(parts.query)
        if "iss" in query or not ({"code", "error"} & set(query)):
            return location
        return construct_redirect_uri(location, iss=self.provider.issuer)


class StepUpChallenge:
    """OURS, inside the SDK's RequireAuthMiddleware (so the request is authenticated): a tools/call
    of a tool that needs a scope the token lacks answers HTTP 403 with the MCP authorization spec's
    step-up challenge (RFC 6750 §3.1 insufficient_scope + `scope` + RFC 9728 `resource_metadata`).
    The SDK's own 403 (RequireAuthMiddleware, for AuthSettings.required_scopes) carries no `scope=`,
    and the SDK has no per-tool scopes; so this peeks at the JSON-RPC body."""

    TOOL_SCOPES = {"admin_echo": ADMIN_SCOPE}

    def __init__(self, app, resource_metadata_url):
        self.app, self.resource_metadata_url = app, resource_metadata_url

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        body, _ = await read_body(receive)
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        granted = set(getattr(scope.get("auth"), "scopes", []) or [])
        for m in message if isinstance(message, list) else [message]:
            if isinstance(m, dict) and m.get("method") == "tools/call":
                needed = self.TOOL_SCOPES.get((m.get("params") or {}).get("name"))
                if needed and needed not in granted:
                    wanted = " ".join(dict.fromkeys([*sorted(granted & set(SCOPES)), *DEFAULT_SCOPES, needed]))
                    challenge = (f'Bearer error="insufficient_scope", scope="{wanted}", '
                                 f'resource_metadata="{self.resource_metadata_url}", '
                                 f'error_description="the tool needs scope {needed}"')
                    payload = json.dumps({"error": "insufficient_scope",
                                          "error_description": f"the tool needs scope {needed}"}).encode()
                    await send({"type": "http.response.start", "status": 403, "headers": [
                        (b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                        (b"www-authenticate", challenge.encode())]})
                    await send({"type": "http.response.body", "body": payload})
                    return
        return await self.app(scope, replay(body, receive), send)


class PathDispatch:
    """OURS: one origin, several apps (the RS origin holds /mcp and, with --second-resource,
    /other/mcp, each with its own RFC 9728 document)."""

    def __init__(self, default, by_path, provider, verbose):
        self.default, self.by_path, self.provider, self.verbose = default, by_path, provider, verbose

    async def __call__(self, scope, receive, send):
        app = self.by_path.get(scope.get("path"), self.default) if scope["type"] == "http" else self.default
        if scope["type"] != "http":
            return await app(scope, receive, send)
        seen = {}

        async def watch(message):
            if message["type"] == "http.response.start":
                seen["status"] = message["status"]
            await send(message)
        await app(scope, receive, watch)
        auth = dict(scope.get("headers") or []).get(b"authorization", b"")
        self.provider.stats["rs_requests"].append({"method": scope["method"], "path": scope["path"],
                                                   "status": seen.get("status"), "bearer": bool(auth)})


# ---------------------------------------------------------------- building the apps

def as_app(provider, config):
    issuer = config["issuer"]
    hostile = config["hostile"]
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES, default_scopes=DEFAULT_SCOPES)
    revocation = RevocationOptions(enabled=True)
    # The issuer as an AnyHttpUrl parsed the way the SDK's AuthSettings parses it (url_preserve_empty_path):
    # a plain AnyHttpUrl("http://127.0.0.1:PORT") would serve "issuer": "http://127.0.0.1:PORT/".
    issuer_url = AuthSettings(issuer_url=issuer, resource_server_url=None).issuer_url
    routes = create_auth_routes(provider=provider, issuer_url=issuer_url, client_registration_options=registration,
                                revocation_options=revocation)
    # RFC 8414 metadata: the SDK's build_metadata + MetadataHandler, with RFC 9207's
    # authorization_response_iss_parameter_supported added (OURS: build_metadata leaves it unset,
    # although OAuthMetadata has the field) -- and the hostile variants' changes.
    metadata = build_metadata(issuer_url, None, registration, revocation)
    metadata.authorization_response_iss_parameter_supported = True
    if "no-s256" in hostile:
        metadata.code_challenge_methods_supported = ["plain"]
    if "no-pkce-list" in hostile:
        metadata.code_challenge_methods_supported = None    # PydanticJSONResponse drops None fields
    if "issuer-mismatch" in hostile:
        metadata.issuer = config["as_url"].replace("127.0.0.1", "localhost") + "/issuer-mismatch"
    routes = [r for r in routes if r.path != "/.well-known/oauth-authorization-server"]
    routes.insert(0, Route("/.well-known/oauth-authorization-server",
                           endpoint=cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
                           methods=["GET", "OPTIONS"]))
    if "foreign-metadata" in hostile:
        # The PRM the RS's 401 points at, served on the AS origin (the document itself is right).
        for resource in config["resources"]:
            routes += [Route(urllib.parse.urlsplit(build_resource_metadata_url(resource).unicode_string()).path,
                             endpoint=cors_middleware(ProtectedResourceMetadataHandler(prm(config, resource)).handle,
                                                      ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"])]

    async def consent(request: Request):
        # OURS: the AS's consent page. Its form mirrors django-oauth-toolkit's (form#authorizationForm,
        # an "Authorize" submit named allow, a "Cancel" submit), so Tests/Browser/browser_driver.py
        # approves or denies it as it does DOT's page.
        if request.method == "GET":
            consent_id = request.query_params.get("request", "")
        else:
            form = await request.form()
            consent_id = str(form.get("request", ""))
        entry = provider.pending.get(consent_id)
        if entry is None:
            return HTMLResponse("<!doctype html><title>Error</title><h2>Error: unknown or used request</h2>"
                                "<p>This authorization request is not pending.</p>", status_code=400)
        client_id, params = entry
        if request.method == "POST":
            provider.pending.pop(consent_id, None)
            allowed = "allow" in form
            target = provider.approve(client_id, params) if allowed else provider.deny(client_id, params)
            return RedirectResponse(target, status_code=302, headers={"Cache-Control": "no-store"})
        client = provider.clients.get(client_id)
        name = html.escape((client.client_name if client else None) or client_id)
        return HTMLResponse(f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Authorize {name} - sfauth MCP test server</title></head>
<body><h1>Authorize {name}?</h1>
<p>Application <b>{name}</b> asks for access to <code>{html.escape(params.resource or "")}</code>
with scopes <code>{html.escape(" ".join(params.scopes or DEFAULT_SCOPES))}</code>, as {SUBJECT}.</p>
<form id="authorizationForm" method="post" action="/consent">
<input type="hidden" name="request" value="{html.escape(consent_id)}">
<input type="submit" value="Cancel">
<input type="submit" name="allow" value="Authorize">
</form></body></html>""", headers={"Cache-Control": "no-store"})

    async def test_stats(request: Request):
        return JSONResponse({**provider.stats, "clients": sorted(provider.clients), "hostile": hostile,
                             "issuer": issuer, "resources": config["resources"]})

    async def test_forget(request: Request):
        return JSONResponse({"forgotten": provider.forget_clients()})

    routes += [Route("/consent", consent, methods=["GET", "POST"]),
               Route("/test/stats", test_stats, methods=["GET"]),
               Route("/test/forget-clients", test_forget, methods=["POST"])]
    return AuthorizationServerShim(Starlette(routes=routes), provider, config)


def prm(config, resource):
    """The RFC 9728 document for `resource` (strings, so pydantic keeps them as given: the models use
    url_preserve_empty_path)."""
    served = resource
    if "resource-mismatch" in config["hostile"]:
        served = resource.rsplit("/", 1)[0] + "/not-this-mcp"     # HOSTILE: another URL
    return ProtectedResourceMetadata(resource=served, authorization_servers=[config["issuer"]],
                                     scopes_supported=SCOPES, resource_name="sfauth MCP test server")


def rs_app(provider, config, resource, path):
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(
        name="sfauth-mcp-test", token_verifier=ResourceTokenVerifier(provider, resource),
        auth=AuthSettings(issuer_url=config["issuer"], resource_server_url=resource, required_scopes=DEFAULT_SCOPES,
                          validate_token_resource=True),
        log_level="WARNING")

    @server.tool()
    def whoami() -> dict[str, Any]:
        """The client id, scopes, resource and subject of the calling token."""
        token = get_access_token()
        return {"client_id": token.client_id, "scopes": token.scopes, "resource": token.resource,
                "subject": token.subject}

    @server.tool()
    def admin_echo(text: str) -> dict[str, Any]:
        """Echoes text; needs scope mcp:admin (StepUpChallenge answers 403 before this runs)."""
        token = get_access_token()
        if ADMIN_SCOPE not in token.scopes:          # never reached through HTTP; belt and braces
            raise PermissionError("insufficient_scope")
        return {"echo": text, "client_id": token.client_id}

    # stateless + JSON: every POST stands alone (no Mcp-Session-Id needed), answers application/json.
    app = server.streamable_http_app(streamable_http_path=path, stateless_http=True, json_response=True,
                                     host="127.0.0.1")
    metadata_url = build_resource_metadata_url(resource).unicode_string()
    routes = []
    for route in app.router.routes:
        if getattr(route, "path", None) == path and isinstance(route.app, RequireAuthMiddleware):
            require = route.app
            if "foreign-metadata" in config["hostile"]:
                # HOSTILE: the 401's resource_metadata names the AS origin.
                require.resource_metadata_url = config["as_url"] + urllib.parse.urlsplit(metadata_url).path
            require.app = StepUpChallenge(require.app, require.resource_metadata_url)
            routes.append(route)
        elif getattr(route, "path", "").startswith("/.well-known/oauth-protected-resource"):
            # The SDK's PRM route lists AuthSettings.required_scopes as scopes_supported; ours lists
            # every scope (same SDK function, create_protected_resource_routes).
            if "resource-mismatch" in config["hostile"]:
                routes.append(Route(route.path, endpoint=cors_middleware(
                    ProtectedResourceMetadataHandler(prm(config, resource)).handle, ["GET", "OPTIONS"]),
                    methods=["GET", "OPTIONS"]))
            else:
                routes += create_protected_resource_routes(resource_url=resource,
                                                           authorization_servers=[config["issuer"]],
                                                           scopes_supported=SCOPES,
                                                           resource_name="sfauth MCP test server")
        else:
            routes.append(route)
    app.router.routes[:] = routes
    return server, app, urllib.parse.urlsplit(metadata_url).path


# ---------------------------------------------------------------- main

def write_env(path, values):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        if path.endswith(".json"):
            json.dump(values, f, indent=2)
            f.write("\n")
        else:
            import shlex
            f.write("".join(f"export {k}={shlex.quote(str(v))}\n" for k, v in values.items()))
    os.replace(tmp, path)


async def serve(args):
    import uvicorn

    as_sock, rs_sock = bound_socket(args.as_port), bound_socket(args.rs_port)
    as_url = f"http://127.0.0.1:{as_sock.getsockname()[1]}"
    rs_origin = f"http://127.0.0.1:{rs_sock.getsockname()[1]}"
    resource = rs_origin + "/mcp"
    second = rs_origin + "/other/mcp" if args.second_resource else None
    config = {"issuer": as_url, "as_url": as_url, "resources": [r for r in (resource, second) if r],
              "require_resource": args.require_resource, "auto_approve": args.auto_approve,
              "hostile": args.hostile, "access_token_seconds": args.access_token_seconds,
              "refresh_token_seconds": args.refresh_token_seconds}
    provider = Provider(config)
    first_server, first_app, first_prm = rs_app(provider, config, resource, "/mcp")
    managers = [first_server.session_manager]
    by_path = {}
    if second:
        second_server, second_app, second_prm = rs_app(provider, config, second, "/other/mcp")
        managers.append(second_server.session_manager)
        by_path = {"/other/mcp": second_app, second_prm: second_app}
    rs = PathDispatch(first_app, by_path, provider, args.verbose)

    level = "info" if args.verbose else "warning"
    servers = [uvicorn.Server(uvicorn.Config(as_app(provider, config), lifespan="off", log_level=level,
                                             access_log=args.verbose)),
               uvicorn.Server(uvicorn.Config(rs, lifespan="off", log_level=level, access_log=args.verbose))]
    for s in servers:
        s.install_signal_handlers = lambda: None    # ours below stop both
    loop = asyncio.get_running_loop()

    def stop(reason):
        log(f"stopping: {reason}")
        for s in servers:
            s.should_exit = True
        loop.call_later(5, lambda: os._exit(0))     # should a connection hang on
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop, signal.Signals(sig).name)
    loop.add_signal_handler(signal.SIGUSR1, lambda: log(f"SIGUSR1: forgot {provider.forget_clients()} clients"))

    async def watchdog():
        deadline = time.monotonic() + args.ttl
        while True:
            if time.monotonic() >= deadline:
                return stop(f"TTL of {args.ttl:g} s reached")
            if args.parent_pid > 0 and not alive(args.parent_pid):
                return stop(f"parent process {args.parent_pid} is gone")
            await asyncio.sleep(0.5)

    values = {
        "MCP_AS_URL": as_url, "MCP_ISSUER": config["issuer"],
        "MCP_AS_METADATA_URL": as_url + "/.well-known/oauth-authorization-server",
        "MCP_RESOURCE_URL": resource, "MCP_PRM_URL": rs_origin + first_prm,
        "MCP_SECOND_RESOURCE_URL": second or "", "MCP_SECOND_PRM_URL": (rs_origin + second_prm) if second else "",
        "MCP_RS_ORIGIN": rs_origin, "MCP_STATS_URL": as_url + "/test/stats",
        "MCP_FORGET_CLIENTS_URL": as_url + "/test/forget-clients",
        "MCP_AS_PORT": as_sock.getsockname()[1], "MCP_RS_PORT": rs_sock.getsockname()[1],
        "MCP_PID": os.getpid(), "MCP_HOSTILE": ",".join(args.hostile), "MCP_SCOPES": " ".join(SCOPES),
    }
    import contextlib
    async with contextlib.AsyncExitStack() as stack:
        for manager in managers:
            await stack.enter_async_context(manager.run())
        tasks = [asyncio.create_task(servers[0].serve(sockets=[as_sock])),
                 asyncio.create_task(servers[1].serve(sockets=[rs_sock])),
                 asyncio.create_task(watchdog())]
        while not all(s.started for s in servers):
            if any(t.done() for t in tasks[:2]):
                break
            await asyncio.sleep(0.02)
        if all(s.started for s in servers):
            if args.write_env:
                write_env(args.write_env, values)
            log(f"AS {as_url}, resource {resource}" + (f", second resource {second}" if second else "")
                + (f", hostile {','.join(args.hostile)}" if args.hostile else "") + f" (pid {os.getpid()})")
        try:
            await asyncio.gather(*tasks[:2])
        finally:
            tasks[2].cancel()
            if args.write_env:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(args.write_env)
    return 0 if all(s.started for s in servers) else 1


def main(argv):
    args = parse_args(argv)
    # stdout carries nothing: anything a library prints goes to stderr.
    sys.stdout = sys.stderr
    return asyncio.run(serve(args))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
