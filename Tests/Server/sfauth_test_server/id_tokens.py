"""ID-token test controls: tampered, mis-addressed, expired or wrongly-nonced ID tokens, other
signing algorithms and key rotation, so a client's ID token validation can be tested against the
real server. Hooked into the token endpoint by views.CountingTokenView.

    POST /test/id-token-mode   mode=<mode> [client_id=<id>] [sticky=1]    (form or JSON body)
    GET  /test/id-token-mode   -> {"mode", "client_id", "sticky", "applied": {mode: n}, "jwks_requests": n}

A mode is armed for the next token response that carries an `id_token` (one-shot), optionally only
for one client, or for every such response until `mode=normal` (sticky). Modes:

    normal          leave ID tokens alone (disarms)
    tamper          change `sub` in the payload, keep the original signature
    wrong-audience  re-signed, `aud` = "someone-else"
    expired         re-signed, `exp` an hour ago (`iat` two hours ago)
    wrong-nonce     re-signed, `nonce` = "not-the-nonce-of-this-login"
    wrong-issuer    re-signed, `iss` = "https://issuer.invalid/o"
    es256           re-signed with an EC P-256 key (kid "sfauth-test-ec") that the JWKS always publishes
    rotate          re-signed with a NEW RSA key; its kid appears in the JWKS from that token on
    unknown-kid     re-signed with an RSA key whose kid the JWKS never publishes
    alg-none        header {"alg": "none"}, empty signature
    hs256           HS256 with the server's public key (PEM) as the HMAC secret (algorithm confusion)
    no-id-token     the `id_token` member is removed from the response

The JWKS (/o/.well-known/jwks.json) is DOT's plus the EC key and every rotated key; its requests
are counted (`jwks_requests`), so a test can see a client refetch it.
"""

import base64
import hashlib
import hmac
import json
import threading
import time

from django.http import JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from jwcrypto import jwk, jwt
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import JwksInfoView

MODES = ("normal", "tamper", "wrong-audience", "expired", "wrong-nonce", "wrong-issuer", "es256", "rotate",
         "unknown-kid", "alg-none", "hs256", "no-id-token")

EC_KID = "sfauth-test-ec"

_lock = threading.Lock()
_state = {
    "mode": "normal",
    "client_id": None,
    "sticky": False,
    "applied": {},
    "jwks_requests": 0,
}
_ec_key = jwk.JWK.generate(kty="EC", crv="P-256", kid=EC_KID)
_published_rotated_keys = []   # RSA keys of `rotate`, in the JWKS once a token was signed with them
_rotations = 0


# ------------------------------------------------------------------ control endpoint

@csrf_exempt
def id_token_mode(request):
    if request.method == "POST":
        fields = _fields(request)
        mode = fields.get("mode", "")
        if mode not in MODES:
            return JsonResponse({"error": f"unknown mode {mode!r}; one of {', '.join(MODES)}"}, status=400)
        with _lock:
            _state["mode"] = mode
            _state["client_id"] = fields.get("client_id") or None
            _state["sticky"] = str(fields.get("sticky", "")).lower() in ("1", "true", "yes", "on")
    elif request.method != "GET":
        return JsonResponse({"error": "GET or POST"}, status=405)
    with _lock:
        return JsonResponse(dict(_state, applied=dict(_state["applied"])))


def _fields(request):
    if request.content_type == "application/json":
        try:
            data = json.loads(request.body or b"{}")
            return data if isinstance(data, dict) else {}
        except ValueError:
            return {}
    return request.POST.dict()


# ------------------------------------------------------------------ JWKS

class CountingJwksView(JwksInfoView):
    """DOT's JWKS plus the EC key and the rotated RSA keys, counting requests."""

    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        data = json.loads(response.content)
        with _lock:
            _state["jwks_requests"] += 1
            extra = [_ec_key] + list(_published_rotated_keys)
        for key in extra:
            public = key.export_public(as_dict=True)
            public.update({"use": "sig", "alg": "ES256" if public["kty"] == "EC" else "RS256"})
            data["keys"].append(public)
        published = JsonResponse(data)
        for header in ("Access-Control-Allow-Origin", "Cache-Control"):
            if header in response:
                published[header] = response[header]
        return published


# ------------------------------------------------------------------ the token-endpoint hook

def after_token(request, response):
    """Called with every token response DOT produced; returns the response to send."""
    if response.status_code != 200:
        return response
    try:
        body = json.loads(response.content)
    except ValueError:
        return response
    if not isinstance(body, dict) or not body.get("id_token"):
        return response
    client_id = _client_id(request)
    with _lock:
        mode = _state["mode"]
        if mode == "normal" or (_state["client_id"] and _state["client_id"] != client_id):
            return response
        if not _state["sticky"]:
            _state["mode"], _state["client_id"] = "normal", None
        _state["applied"][mode] = _state["applied"].get(mode, 0) + 1

    if mode == "no-id-token":
        del body["id_token"]
    else:
        body["id_token"] = _rewrite(body["id_token"], mode)
    response.content = json.dumps(body).encode()
    if response.has_header("Content-Length"):
        response["Content-Length"] = str(len(response.content))
    return response


def _client_id(request):
    client_id = request.POST.get("client_id", "")
    if not client_id and request.META.get("HTTP_AUTHORIZATION", "").lower().startswith("basic "):
        try:
            decoded = base64.b64decode(request.META["HTTP_AUTHORIZATION"][6:]).decode()
            client_id = decoded.split(":", 1)[0]
        except (ValueError, UnicodeDecodeError):
            pass
    return client_id


def _rewrite(token, mode):
    header_b64, payload_b64, signature_b64 = token.split(".")
    claims = json.loads(_b64decode(payload_b64))
    now = int(time.time())

    if mode == "tamper":
        claims["sub"] = "tampered-" + str(claims.get("sub", ""))
        return f"{header_b64}.{_b64encode(json.dumps(claims).encode())}.{signature_b64}"
    if mode == "alg-none":
        header = {"alg": "none", "typ": "JWT"}
        return f"{_b64encode(json.dumps(header).encode())}.{_b64encode(json.dumps(claims).encode())}."
    if mode == "hs256":
        server_key = _server_key()
        secret = server_key.export_to_pem()  # the PUBLIC key's PEM, as a confused verifier would use it
        header = {"alg": "HS256", "typ": "JWT", "kid": server_key.thumbprint()}
        signing_input = f"{_b64encode(json.dumps(header).encode())}.{_b64encode(json.dumps(claims).encode())}"
        mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{_b64encode(mac)}"

    key, alg = _server_key(), "RS256"
    if mode == "wrong-audience":
        claims["aud"] = "someone-else"
    elif mode == "expired":
        claims["exp"], claims["iat"] = now - 3600, now - 7200
    elif mode == "wrong-nonce":
        claims["nonce"] = "not-the-nonce-of-this-login"
    elif mode == "wrong-issuer":
        claims["iss"] = "https://issuer.invalid/o"
    elif mode == "es256":
        key, alg = _ec_key, "ES256"
    elif mode == "rotate":
        key = _new_rsa_key("sfauth-test-rotated")
        with _lock:
            _published_rotated_keys.append(key)
    elif mode == "unknown-kid":
        key = _new_rsa_key("sfauth-test-never-published")
    return _sign(claims, key, alg)


def _server_key():
    return jwk.JWK.from_pem(oauth2_settings.OIDC_RSA_PRIVATE_KEY.encode())


def _new_rsa_key(prefix):
    global _rotations
    with _lock:
        _rotations += 1
        number = _rotations
    return jwk.JWK.generate(kty="RSA", size=2048, kid=f"{prefix}-{number}-{int(time.time())}")


def _sign(claims, key, alg):
    kid = key.get("kid") or key.thumbprint()
    token = jwt.JWT(header={"alg": alg, "typ": "JWT", "kid": kid}, claims=json.dumps(claims))
    token.make_signed_token(key)
    return token.serialize()


def _b64encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


urlpatterns = [          # served at the site root
    path("test/id-token-mode", id_token_mode),
]
oauth2_patterns = [      # served under /o/, before DOT's own patterns
    path(".well-known/jwks.json", CountingJwksView.as_view(), name="jwks-info"),
]
