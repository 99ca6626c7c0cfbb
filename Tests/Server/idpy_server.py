#!/usr/bin/env python3
"""An OpenID provider with RFC 8693 token exchange for sfauth's end-to-end tests of per-call targets
(`sfauth token --scope/--audience/--resource/--exchange`, issue 20): idpyoidc 5.0.0 (PyPI `idpyoidc`,
IdentityPython's OAuth 2.0 / OpenID Connect library, pinned in Tests/Server/requirements.txt), served
by Werkzeug on 127.0.0.1. See Tests/Server/IDPY.md for what it does, its quirks and their sources.

    .venv/bin/python Tests/Server/idpy_server.py [options]

idpyoidc is a library without a server of its own. The glue below is a trimmed copy of its repository's
example/flask_op/views.py (for each endpoint: parse_request, process_request, do_response); everything
else -- PKCE, redirect URI matching, refresh, token exchange and its policy, the errors -- is the library's.
Users are signed in by idpyoidc's NoAuthn (always "diana"), so /authorization answers with a 302
straight back to the client: there is no login page and no browser is needed.

Clients (in memory; see IDPY.md):
  public-cli        public (no secret), PKCE S256, redirect URIs from --redirect-uri (exact match,
                    port included: idpyoidc has no RFC 8252 any-port rule), code + refresh + token exchange
  confidential-cli  the same, with the secret printed as IDPY_CONFIDENTIAL_CLIENT_SECRET
                    (client_secret_basic or client_secret_post)

Lifecycle: binds 127.0.0.1 only (--port 0: a free port); stops by itself after --ttl seconds or when
--parent-pid is gone; SIGTERM/SIGINT stop it; --write-env is written once it answers and removed on exit.
Its state (idpyoidc writes a key file) lives in a private temporary directory removed on exit. Prints
nothing on stdout (logs go to stderr).
"""
import argparse
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
REFRESH_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:refresh_token"
PUBLIC_CLIENT = "public-cli"
CONFIDENTIAL_CLIENT = "confidential-cli"
USER = "diana"                            # NoAuthn signs everyone in as this user
SCOPES = ["openid", "profile", "offline_access", "read", "write"]
DEFAULT_REDIRECT_URI = "http://127.0.0.1:8765/callback"
DEFAULT_AUDIENCES = ["downstream-api", "other-api"]
DEFAULT_RESOURCES = ["https://api.example/", "https://other.example/"]


def log(message):
    print(f"idpy-server: {message}", file=sys.stderr, flush=True)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default 0: a free one)")
    p.add_argument("--rotate", action="store_true",
                   help="rotate refresh tokens: a used refresh token is revoked when a new one is issued "
                        "(idpyoidc's revoke_refresh_on_issue)")
    p.add_argument("--access-token-lifetime", type=int, default=600, metavar="SECONDS",
                   help="access token lifetime, expires_in and the JWT's exp (default 600)")
    p.add_argument("--refresh-token-lifetime", type=int, default=86400, metavar="SECONDS",
                   help="refresh token lifetime (default 86400)")
    p.add_argument("--redirect-uri", action="append", default=[], metavar="URI",
                   help=f"a redirect URI of both clients, matched exactly (repeatable; default {DEFAULT_REDIRECT_URI})")
    p.add_argument("--audience", action="append", default=[], metavar="NAME",
                   help="an audience token exchange may issue tokens for (repeatable; default "
                        + " ".join(DEFAULT_AUDIENCES) + ")")
    p.add_argument("--resource", action="append", default=[], metavar="URL",
                   help="a resource token exchange accepts (repeatable; default " + " ".join(DEFAULT_RESOURCES) + ")")
    p.add_argument("--confidential-secret", default=None,
                   help="confidential-cli's secret (default: a random one, in the env file)")
    p.add_argument("--ttl", type=float, default=900, help="stop after this many seconds (default 900)")
    p.add_argument("--parent-pid", type=int, default=0, help="stop when this process is gone (0: no watch)")
    p.add_argument("--write-env", metavar="PATH",
                   help="write the URLs here once serving (PATH ending in .json: JSON, else `export K=V` lines)")
    p.add_argument("--verbose", action="store_true",
                   help="log every request on stderr: `idpy-server: request {JSON}` with method, path, status, "
                        "grant_type, scope, resource, audience, error (never a token)")
    return p.parse_args(argv)


def configuration(issuer, state_dir, args):
    """idpyoidc's OPConfiguration dict (groundwork: docs/notes/issue-20-groundwork/README.md §A.1)."""
    key_defs = [{"type": "RSA", "key": "", "use": ["sig"]}, {"type": "EC", "crv": "P-256", "use": ["sig"]}]
    return {
        "issuer": issuer,
        "httpc_params": {"verify": False},        # it makes no outgoing requests here
        "keys": {"uri_path": "jwks", "key_defs": key_defs, "read_only": False},
        "preference": {
            "subject_types_supported": ["public"],
            "scopes_supported": SCOPES,
            # what discovery lists in grant_types_supported; the client must also list a grant (below)
            "grant_types_supported": ["authorization_code", "refresh_token", TOKEN_EXCHANGE],
        },
        "cookie_handler": {
            "class": "idpyoidc.server.cookie_handler.CookieHandler",
            "kwargs": {"keys": {"key_defs": [{"type": "OCT", "use": ["enc"], "kid": "enc"},
                                             {"type": "OCT", "use": ["sig"], "kid": "sig"}]}},
        },
        "endpoint": {
            "provider_config": {"path": ".well-known/openid-configuration",
                                "class": "idpyoidc.server.oidc.provider_config.ProviderConfiguration",
                                "kwargs": {"client_authn_method": None}},
            "authorization": {"path": "authorization",
                              "class": "idpyoidc.server.oidc.authorization.Authorization",
                              "kwargs": {"client_authn_method": None, "response_types_supported": ["code"],
                                         "response_modes_supported": ["query"]}},
            "token": {"path": "token", "class": "idpyoidc.server.oidc.token.Token",
                      # "public": client_id alone (the public client); secrets for the confidential one
                      "kwargs": {"client_authn_method": ["client_secret_basic", "client_secret_post", "public"],
                                 "revoke_refresh_on_issue": args.rotate}},
            "userinfo": {"path": "userinfo", "class": "idpyoidc.server.oidc.userinfo.UserInfo",
                         "kwargs": {"client_authn_method": ["bearer_header"]}},
            "introspection": {"path": "introspection",
                              "class": "idpyoidc.server.oauth2.introspection.Introspection",
                              "kwargs": {"client_authn_method": ["client_secret_basic", "client_secret_post"]}},
        },
        # PKCE required; its methods are restricted to S256 after start (see main: a list here crashes)
        "add_on": {"pkce": {"function": "idpyoidc.server.oauth2.add_on.pkce.add_support",
                            "kwargs": {"essential": True}}},
        "authentication": {"anon": {"acr": "urn:oasis:names:tc:SAML:2.0:ac:classes:InternetProtocolPassword",
                                    "class": "idpyoidc.server.user_authn.user.NoAuthn",
                                    "kwargs": {"user": USER}}},
        "userinfo": {"class": "idpyoidc.server.user_info.UserInfo",
                     "kwargs": {"db": {USER: {"sub": USER, "name": "Diana", "email": "diana@example.test",
                                              "preferred_username": USER}}}},
        "authz": {"class": "idpyoidc.server.authz.AuthzHandling", "kwargs": {"grant_config": {
            "usage_rules": {
                "authorization_code": {"supports_minting": ["access_token", "refresh_token", "id_token"],
                                       "max_usage": 1},
                # access tokens may mint access tokens: token exchange with an access token as subject
                # needs it (else "Minting of access_token not supported")
                "access_token": {"supports_minting": ["access_token", "refresh_token"],
                                 "expires_in": args.access_token_lifetime},
                "refresh_token": {"supports_minting": ["access_token", "refresh_token"],
                                  "expires_in": args.refresh_token_lifetime},
            },
            "expires_in": 43200}}},
        "token_handler_args": {
            "jwks_def": {"private_path": os.path.join(state_dir, "token_jwks.json"), "read_only": False,
                         "key_defs": [{"type": "oct", "bytes": 24, "use": ["enc"], "kid": "code"}]},
            "code": {"lifetime": 600, "kwargs": {}},
            # JWT access tokens, so that a test (and sfauth) can read `aud` and `scope`
            "token": {"class": "idpyoidc.server.token.jwt_token.JWTToken",
                      "kwargs": {"lifetime": args.access_token_lifetime, "add_claims_by_scope": True}},
            "refresh": {"class": "idpyoidc.server.token.jwt_token.JWTToken",
                        "kwargs": {"lifetime": args.refresh_token_lifetime}},
            "id_token": {"class": "idpyoidc.server.token.id_token.IDToken", "kwargs": {}},
        },
        "session_params": {"encrypter": {"kwargs": {
            "keys": {"key_defs": [{"type": "OCT", "use": ["enc"], "kid": "password"},
                                  {"type": "OCT", "use": ["enc"], "kid": "salt"}]},
            "iterations": 1}}},
        "template_dir": state_dir,
    }


def client(client_id, redirect_uris, audiences, resources, secret=None):
    """A client database entry (idpyoidc's cdb) with its per-client token exchange policy."""
    entry = {
        "client_id": client_id,
        "redirect_uris": [(uri, None) for uri in redirect_uris],
        "token_endpoint_auth_method": "client_secret_basic" if secret else "none",
        "response_types": ["code"],
        # checked at /token: a grant missing here is "Unsupported grant_type" even when discovery lists it
        "grant_types_supported": ["authorization_code", "refresh_token", TOKEN_EXCHANGE],
        "allowed_scopes": SCOPES,
        "token_exchange": {
            "subject_token_types_supported": [ACCESS_TOKEN_TYPE, REFRESH_TOKEN_TYPE],
            "requested_token_types_supported": [ACCESS_TOKEN_TYPE, REFRESH_TOKEN_TYPE],
            "default_requested_token_type": ACCESS_TOKEN_TYPE,
            # validate_token_exchange_policy: an absent/empty `audience` list would allow ANY audience,
            # an empty `resource` list refuses every resource. Both are given explicitly.
            "policy": {"": {"function": "idpyoidc.server.oauth2.token_helper.validate_token_exchange_policy",
                            "kwargs": {"resource": resources, "audience": audiences,
                                       "scope": ["read", "write", "openid", "offline_access", "profile"]}}},
        },
    }
    if secret:
        entry["client_secret"] = secret
        entry["client_secret_expires_at"] = 0
    return entry


def build_op(issuer, state_dir, args, secret):
    from idpyoidc.server import Server
    from idpyoidc.server.configure import OPConfiguration
    from idpyoidc.server.oauth2.add_on.pkce import CC_METHOD

    redirect_uris = args.redirect_uri or [DEFAULT_REDIRECT_URI]
    audiences = args.audience or DEFAULT_AUDIENCES
    resources = args.resource or DEFAULT_RESOURCES
    server = Server(OPConfiguration(conf=configuration(issuer, state_dir, args), base_path=state_dir), cwd=state_dir)
    context = server.context
    # S256 only: add_support takes a dict name -> hash function and, given none, allows plain too
    # (idpyoidc/server/oauth2/add_on/pkce.py); so restrict it after start and publish the restriction.
    context.add_on["pkce"]["code_challenge_methods"] = {"S256": CC_METHOD["S256"]}
    context.set_preference("code_challenge_methods_supported", ["S256"])
    context.set_provider_info()
    context.cdb[PUBLIC_CLIENT] = client(PUBLIC_CLIENT, redirect_uris, audiences, resources)
    context.cdb[CONFIDENTIAL_CLIENT] = client(CONFIDENTIAL_CLIENT, redirect_uris, audiences, resources, secret)
    return server


def flask_app(server, verbose):
    """The HTTP glue, after idpyoidc's example/flask_op/views.py (service())."""
    from flask import Flask, Response, redirect, request
    from idpyoidc.message.oauth2 import ResponseMessage
    from idpyoidc.message.oidc import AccessTokenRequest
    from idpyoidc.server.oidc.token import Token

    app = Flask("idpy_server")
    ignored_headers = ("cookie", "user-agent")

    def http_info():
        return {"headers": {k.lower(): v for k, v in request.headers.items() if k.lower() not in ignored_headers},
                "method": request.method, "url": request.url,
                "cookie": [{"name": k, "value": v} for k, v in request.cookies.items()]}

    def json_response(body, status):
        return Response(body if isinstance(body, str) else json.dumps(body), status, content_type="application/json")

    def service(endpoint):
        info = http_info()
        source = request.args if request.method == "GET" else request.form
        args = source.to_dict(flat=True)
        # `resource` / `audience` may repeat (RFC 8707 §2, RFC 8693 §2.1): always hand them over as lists.
        # The token endpoint parses into a generic Message with no schema for `resource`, so a single value
        # would stay a str and idpyoidc's policies would compare it character by character.
        for name in ("resource", "audience"):
            values = source.getlist(name)
            if values:
                args[name] = values
        try:
            parsed = endpoint.parse_request(args, http_info=info)
        except Exception as error:   # noqa: BLE001 - idpyoidc raises many kinds; a client sees a 400
            return json_response({"error": "invalid_request", "error_description": f"{type(error).__name__}: {error}"}, 400)
        if isinstance(parsed, ResponseMessage) and "error" in parsed:
            return json_response(parsed.to_json(), 401 if endpoint.name == "userinfo" else 400)
        try:
            if isinstance(endpoint, Token):
                result = endpoint.process_request(AccessTokenRequest(**parsed), http_info=info)
            else:
                result = endpoint.process_request(parsed, http_info=info)
        except Exception as error:   # noqa: BLE001
            logging.getLogger("idpy_server").exception("process_request")
            return json_response({"error": "invalid_request", "error_description": f"{type(error).__name__}: {error}"}, 400)
        if isinstance(result, ResponseMessage) and "error" in result:
            return json_response(result.to_json(), 400)
        if "redirect_location" in result:
            return redirect(result["redirect_location"])
        if "http_response" in result:
            return Response(result["http_response"], 200)
        done = endpoint.do_response(request=parsed, **result)
        placement = done.get("response_placement", endpoint.response_placement)
        if placement == "url":
            response = redirect(done["response"])
        else:
            response = Response(done["response"], done.get("response_code", 200))
        for name, value in done["http_headers"]:
            response.headers[name] = value
        return response

    routes = {
        "/.well-known/openid-configuration": ("provider_config", ["GET"]),
        "/.well-known/oauth-authorization-server": ("provider_config", ["GET"]),
        "/authorization": ("authorization", ["GET"]),
        "/token": ("token", ["POST"]),
        "/userinfo": ("userinfo", ["GET", "POST"]),
        "/introspection": ("introspection", ["POST"]),
    }
    for path, (name, methods) in routes.items():
        app.add_url_rule(path, path, (lambda n: lambda: service(server.get_endpoint(n)))(name), methods=methods)
    app.add_url_rule("/jwks", "jwks", lambda: json_response(server.context.keyjar.export_jwks(), 200))

    if verbose:
        @app.after_request
        def log_request(response):
            # One JSON line per request, so tests can see which grant and which targets a client asked
            # for. Never a token or a secret: only these non-secret parameters.
            seen = {"method": request.method, "path": request.path, "status": response.status_code}
            source = request.form if request.method == "POST" else request.args
            for name in ("grant_type", "scope", "subject_token_type", "requested_token_type", "client_id"):
                if name in source:
                    seen[name] = source[name]
            for name in ("resource", "audience"):
                if name in source:
                    seen[name] = source.getlist(name)
            if response.is_json and response.status_code >= 400:
                seen["error"] = (response.get_json(silent=True) or {}).get("error")
            log("request " + json.dumps(seen, sort_keys=True))
            return response
    return app


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


def main(argv):
    args = parse_args(argv)
    sys.stdout = sys.stderr        # stdout carries nothing: anything a library prints goes to stderr
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr)
    logging.getLogger("werkzeug").setLevel(logging.INFO if args.verbose else logging.ERROR)
    import secrets
    from werkzeug.serving import make_server

    state_dir = tempfile.mkdtemp(prefix="idpy_state-")
    secret = args.confidential_secret or secrets.token_urlsafe(24)
    stopping = threading.Event()
    http = None
    try:
        # Bind first (port 0: a free one), then configure the OP with the issuer that includes the real port.
        http = make_server("127.0.0.1", args.port, app=None, threaded=True)
        port = http.server_port
        issuer = f"http://127.0.0.1:{port}"
        op = build_op(issuer, state_dir, args, secret)
        http.app = flask_app(op, args.verbose)

        def stop(reason):
            if not stopping.is_set():
                stopping.set()
                log(f"stopping: {reason}")
                threading.Thread(target=http.shutdown, daemon=True).start()

        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda number, frame: stop(signal.Signals(number).name))

        def watchdog():
            deadline = time.monotonic() + args.ttl
            while not stopping.is_set():
                if time.monotonic() >= deadline:
                    return stop(f"TTL of {args.ttl:g} s reached")
                if args.parent_pid > 0 and not alive(args.parent_pid):
                    return stop(f"parent process {args.parent_pid} is gone")
                stopping.wait(0.5)
        threading.Thread(target=watchdog, daemon=True).start()

        values = {
            "IDPY_URL": issuer, "IDPY_ISSUER": issuer, "IDPY_PORT": port, "IDPY_PID": os.getpid(),
            "IDPY_DISCOVERY_URL": issuer + "/.well-known/openid-configuration",
            "IDPY_AUTHORIZE_URL": issuer + "/authorization", "IDPY_TOKEN_URL": issuer + "/token",
            "IDPY_USERINFO_URL": issuer + "/userinfo", "IDPY_INTROSPECTION_URL": issuer + "/introspection",
            "IDPY_JWKS_URL": issuer + "/jwks",
            "IDPY_CLIENT_ID": PUBLIC_CLIENT,
            "IDPY_CONFIDENTIAL_CLIENT_ID": CONFIDENTIAL_CLIENT, "IDPY_CONFIDENTIAL_CLIENT_SECRET": secret,
            "IDPY_REDIRECT_URIS": " ".join(args.redirect_uri or [DEFAULT_REDIRECT_URI]),
            "IDPY_AUDIENCES": " ".join(args.audience or DEFAULT_AUDIENCES),
            "IDPY_RESOURCES": " ".join(args.resource or DEFAULT_RESOURCES),
            "IDPY_SCOPES": " ".join(SCOPES), "IDPY_USER": USER,
            "IDPY_ROTATE": "1" if args.rotate else "0",
            "IDPY_ACCESS_TOKEN_LIFETIME": args.access_token_lifetime,
        }
        # make_server has bound and listens: a connection now waits in the backlog until serve_forever runs.
        if args.write_env:
            write_env(args.write_env, values)
        log(f"OP {issuer} (pid {os.getpid()}, rotate {args.rotate}, access tokens {args.access_token_lifetime} s, "
            f"redirect {values['IDPY_REDIRECT_URIS']}, state {state_dir})")
        http.serve_forever(poll_interval=0.2)
        return 0
    finally:
        if http is not None:
            http.server_close()
        if args.write_env:
            try:
                os.remove(args.write_env)
            except FileNotFoundError:
                pass
        shutil.rmtree(state_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
