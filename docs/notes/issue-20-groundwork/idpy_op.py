#!/usr/bin/env python3
"""Minimal idpyoidc 5.0.0 OP on 127.0.0.1 with code+PKCE (public client), refresh tokens,
and RFC 8693 token exchange.  Users are authenticated with NoAuthn (always "diana"), so the
authorization endpoint redirects straight back with a code (no login page, no browser).

Usage: venv/bin/python idpy_op.py [PORT]   (default 8820)
"""
import json
import logging
import os
import sys

from flask import Flask, Response, redirect, request

from idpyoidc.message.oauth2 import ResponseMessage
from idpyoidc.message.oidc import AccessTokenRequest
from idpyoidc.server import Server
from idpyoidc.server.configure import OPConfiguration
from idpyoidc.server.oidc.token import Token

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 8820
ISSUER = f"http://127.0.0.1:{PORT}"
HERE = os.path.dirname(os.path.abspath(__file__))
KEYDEFS = [{"type": "RSA", "key": "", "use": ["sig"]}, {"type": "EC", "crv": "P-256", "use": ["sig"]}]
TE = "urn:ietf:params:oauth:grant-type:token-exchange"

CONF = {
    "issuer": ISSUER,
    "httpc_params": {"verify": False},
    "keys": {"uri_path": "jwks", "key_defs": KEYDEFS, "read_only": False},
    "preference": {
        "subject_types_supported": ["public"],
        # what ends up in grant_types_supported of the discovery document
        "grant_types_supported": ["authorization_code", "refresh_token", TE],
    },
    "cookie_handler": {
        "class": "idpyoidc.server.cookie_handler.CookieHandler",
        "kwargs": {"keys": {"key_defs": [
            {"type": "OCT", "use": ["enc"], "kid": "enc"},
            {"type": "OCT", "use": ["sig"], "kid": "sig"}]}},
    },
    "endpoint": {
        "provider_config": {
            "path": ".well-known/openid-configuration",
            "class": "idpyoidc.server.oidc.provider_config.ProviderConfiguration",
            "kwargs": {"client_authn_method": None},
        },
        "authorization": {
            "path": "authorization",
            "class": "idpyoidc.server.oidc.authorization.Authorization",
            "kwargs": {"client_authn_method": None,
                       "response_types_supported": ["code"],
                       "response_modes_supported": ["query"]},
        },
        "token": {
            "path": "token",
            "class": "idpyoidc.server.oidc.token.Token",
            # "public" = client_id only (public client); also secret methods for confidential
            "kwargs": {"client_authn_method": ["client_secret_basic", "client_secret_post", "public"],
                       # ROTATE=1: the used refresh token is revoked when a new one is issued
                       "revoke_refresh_on_issue": os.environ.get("ROTATE") == "1"},
        },
        "introspection": {
            "path": "introspection",
            "class": "idpyoidc.server.oauth2.introspection.Introspection",
            "kwargs": {"client_authn_method": ["client_secret_basic", "client_secret_post"]},
        },
    },
    "add_on": {
        "pkce": {"function": "idpyoidc.server.oauth2.add_on.pkce.add_support",
                 "kwargs": {"essential": True}},  # code_challenge_methods must be a dict name->fn; a list crashes
    },
    "authentication": {
        "anon": {"acr": "urn:oasis:names:tc:SAML:2.0:ac:classes:InternetProtocolPassword",
                 "class": "idpyoidc.server.user_authn.user.NoAuthn",
                 "kwargs": {"user": "diana"}},
    },
    "userinfo": {"class": "idpyoidc.server.user_info.UserInfo",
                 "kwargs": {"db": {"diana": {"sub": "diana", "name": "Diana"}}}},
    "authz": {
        "class": "idpyoidc.server.authz.AuthzHandling",
        "kwargs": {"grant_config": {
            "usage_rules": {
                "authorization_code": {"supports_minting": ["access_token", "refresh_token", "id_token"],
                                       "max_usage": 1},
                # access tokens may mint access tokens -> needed for AT->AT token exchange
                "access_token": {"supports_minting": ["access_token", "refresh_token"],
                                 "expires_in": 600},
                "refresh_token": {"supports_minting": ["access_token", "refresh_token"],
                                  "expires_in": 86400},
            },
            "expires_in": 43200}},
    },
    "token_handler_args": {
        "jwks_def": {"private_path": os.path.join(HERE, "idpy_state/token_jwks.json"),
                     "read_only": False,
                     "key_defs": [{"type": "oct", "bytes": 24, "use": ["enc"], "kid": "code"}]},
        "code": {"lifetime": 600, "kwargs": {}},
        # JWT access tokens so that `aud` (from resource/audience) is visible
        "token": {"class": "idpyoidc.server.token.jwt_token.JWTToken",
                  "kwargs": {"lifetime": 600, "add_claims_by_scope": True}},
        "refresh": {"class": "idpyoidc.server.token.jwt_token.JWTToken",
                    "kwargs": {"lifetime": 86400}},
        "id_token": {"class": "idpyoidc.server.token.id_token.IDToken", "kwargs": {}},
    },
    "session_params": {"encrypter": {"kwargs": {
        "keys": {"key_defs": [{"type": "OCT", "use": ["enc"], "kid": "password"},
                              {"type": "OCT", "use": ["enc"], "kid": "salt"}]},
        "iterations": 1}}},
    "template_dir": HERE,
}

if os.environ.get("OAUTH2_TOKEN") == "1":
    # Variant: the plain OAuth 2.0 token endpoint class, which (unlike the OIDC one) implements
    # RFC 8707 on the code exchange. With resource_indicators set, `resource` becomes MANDATORY.
    CONF["endpoint"]["token"]["class"] = "idpyoidc.server.oauth2.token.Token"
    CONF["endpoint"]["token"]["kwargs"]["resource_indicators"] = {
        "policy": {"function": "idpyoidc.server.oauth2.token_helper.validate_resource_indicators_policy",
                   "kwargs": {"resource_servers_per_client": {
                       "public-cli": ["https://api.example/", "https://other.example/"]}}}}

os.makedirs(os.path.join(HERE, "idpy_state"), exist_ok=True)
server = Server(OPConfiguration(conf=CONF, base_path=HERE), cwd=HERE)
ctx = server.context
# restrict PKCE to S256 (add_support takes a dict of name -> hash function, so patch after start)
from idpyoidc.server.oauth2.add_on.pkce import CC_METHOD
ctx.add_on["pkce"]["code_challenge_methods"] = {"S256": CC_METHOD["S256"]}
ctx.set_preference("code_challenge_methods_supported", ["S256"])
ctx.set_provider_info()

# ---- clients (in memory) ----
ctx.cdb["public-cli"] = {
    "client_id": "public-cli",
    "redirect_uris": [("http://127.0.0.1:8765/callback", None)],
    "token_endpoint_auth_method": "none",
    "response_types": ["code"],
    "grant_types_supported": ["authorization_code", "refresh_token", TE],
    "allowed_scopes": ["openid", "profile", "offline_access", "read", "write"],
    # per-client token exchange config (else the endpoint default is used)
    "token_exchange": {
        "subject_token_types_supported": ["urn:ietf:params:oauth:token-type:access_token",
                                          "urn:ietf:params:oauth:token-type:refresh_token"],
        "requested_token_types_supported": ["urn:ietf:params:oauth:token-type:access_token",
                                            "urn:ietf:params:oauth:token-type:refresh_token"],
        "default_requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
        "policy": {"": {"function": "idpyoidc.server.oauth2.token_helper.validate_token_exchange_policy",
                        "kwargs": {"resource": ["https://api.example/", "https://other.example/"],
                                   "audience": ["downstream-api", "other-api"],
                                   "scope": ["read", "write", "openid", "offline_access"]}}},
    },
}
# resource servers that the resource-indicator policy may need to find in cdb
for rs in ("https://api.example/", "https://other.example/"):
    ctx.cdb[rs] = {"client_id": rs, "allowed_scopes": ["read", "write"]}

app = Flask("idpy_op")
IGNORE = ["cookie", "user-agent"]


def _http_info():
    return {"headers": {k.lower(): v for k, v in request.headers.items() if k.lower() not in IGNORE},
            "method": request.method, "url": request.url,
            "cookie": [{"name": k, "value": v} for k, v in request.cookies.items()]}


def _json(body, code):
    return Response(body if isinstance(body, str) else json.dumps(body), code,
                    content_type="application/json")


def service(endpoint):
    hi = _http_info()
    args = request.args.to_dict() if request.method == "GET" else request.form.to_dict(flat=True)
    # keep repeated parameters (resource / audience may repeat)
    # resource / audience may repeat (RFC 8707 / RFC 8693). Always hand them over as lists:
    # the generic token Message has no schema for `resource`, so a single value would stay a str
    # and idpyoidc's resource-indicator policy would then compare it character by character.
    src = request.form if request.method == "POST" else request.args
    for k in ("resource", "audience"):
        v = src.getlist(k)
        if v:
            args[k] = v
    try:
        req = endpoint.parse_request(args, http_info=hi)
    except Exception as err:
        return _json({"error": "invalid_request", "error_description": f"{type(err).__name__}: {err}"}, 400)
    if isinstance(req, ResponseMessage) and "error" in req:
        return _json(req.to_json(), 400)
    try:
        if isinstance(endpoint, Token):
            res = endpoint.process_request(AccessTokenRequest(**req), http_info=hi)
        else:
            res = endpoint.process_request(req, http_info=hi)
    except Exception as err:
        app.logger.exception("process_request")
        return _json({"error": "invalid_request", "error_description": f"{type(err).__name__}: {err}"}, 400)
    if isinstance(res, ResponseMessage) and "error" in res:
        return _json(res.to_json(), 400)
    if "redirect_location" in res:
        return redirect(res["redirect_location"])
    if "http_response" in res:
        return Response(res["http_response"], 200)
    info = endpoint.do_response(request=req, **res)
    placement = info.get("response_placement", endpoint.response_placement)
    if placement == "url":
        resp = redirect(info["response"])
    else:
        resp = Response(info["response"], info.get("response_code", 200))
    for k, v in info["http_headers"]:
        resp.headers[k] = v
    return resp


@app.route("/.well-known/openid-configuration")
def wk_oidc():
    return service(server.get_endpoint("provider_config"))


@app.route("/.well-known/oauth-authorization-server")
def wk_oauth():
    return service(server.get_endpoint("provider_config"))


@app.route("/jwks")
def jwks():
    return _json(ctx.keyjar.export_jwks(), 200)


@app.route("/authorization")
def authorization():
    return service(server.get_endpoint("authorization"))


@app.route("/token", methods=["POST"])
def token():
    return service(server.get_endpoint("token"))


@app.route("/introspection", methods=["POST"])
def introspection():
    return service(server.get_endpoint("introspection"))


if __name__ == "__main__":
    logging.basicConfig(level=os.environ.get("LOGLEVEL", "WARNING"))
    app.run(host="127.0.0.1", port=PORT, threaded=True)
