"""The JWT bearer grant (RFC 7523 sections 2.1 and 3), as Salesforce's `sf org login jwt` uses it.

    POST /o/token/  grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer  assertion=<JWS>  [scope=...]

The assertion is checked in this order, and the first failure answers 400 invalid_grant with an
error_description that names the rule (RFC 7523 section 3.1):

  1. a compact JWS (header.payload.signature), JSON header and claims;
  2. header alg RS256 or ES256 (no "none", no HMAC);
  3. iss: a client registered for this grant with public keys (settings.JWT_BEARER_CLIENT_KEYS);
     a client_id parameter, if sent, must be the same client;
  4. the signature verifies with one of that client's keys (kid, if any, is not consulted);
  5. exp: a number, in the future, at most JWT_MAX_LIFETIME_SECONDS (300) from now;
     nbf, iat if present: not in the future; exp - iat at most that lifetime too;
  6. aud (a string or an array): contains the token endpoint URL or the issuer (a trailing slash
     does not matter);
  7. sub: the username of an active user;
  then `scope` (optional; default DEFAULT_SCOPES; an unknown one: 400 invalid_scope), and last
  8. jti, if present: not seen before from this client (kept until its exp) -- last, so an
     assertion refused for another reason may be sent again once that is fixed.

Then a DOT access token for that user and client is issued with DOT's own token machinery
(lifetime ACCESS_TOKEN_EXPIRE_SECONDS). No refresh token: like Salesforce's JWT flow, the client
signs a new assertion when it needs a new token. A missing assertion is 400 invalid_request.
"""

import base64
import json
import threading
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from jwcrypto import jws
from jwcrypto.common import JWException
from oauth2_provider.models import get_application_model
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.scopes import get_scopes_backend
from oauthlib.common import Request as OAuthlibRequest

from .jwt_client_keys import registered_keys
from .oauth_errors import oauth_error, token_json

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer"
# Which key type each accepted algorithm needs.
ALGORITHMS = {"RS256": "RSA", "ES256": "EC"}


class AssertionRejected(Exception):
    """An assertion that breaks a rule; the message is the error_description."""


class JtiLedger:
    """jti values already used, per issuer, forgotten once the assertion that carried them expired."""

    def __init__(self):
        self._lock = threading.Lock()
        self._seen = {}  # (iss, jti) -> exp

    def use(self, issuer, jti, expires_at):
        """Records the jti; False when it was already used."""
        now = time.time()
        with self._lock:
            self._seen = {key: exp for key, exp in self._seen.items() if exp > now}
            if (issuer, jti) in self._seen:
                return False
            self._seen[(issuer, jti)] = expires_at
            return True


JTI_LEDGER = JtiLedger()


def _b64url_json(part, what):
    try:
        value = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except ValueError:
        raise AssertionRejected(f"the assertion's {what} is not base64url-encoded JSON") from None
    if not isinstance(value, dict):
        raise AssertionRejected(f"the assertion's {what} is not a JSON object")
    return value


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _token_endpoint_and_issuer():
    base = settings.SERVER_URL
    return {f"{base}/o/token", f"{base}/o"}


def _check_times(claims, now):
    exp = claims.get("exp")
    if exp is None:
        raise AssertionRejected("the assertion has no exp claim (RFC 7523 section 3 item 4)")
    if not _is_number(exp):
        raise AssertionRejected("exp must be a NumericDate (seconds since the epoch)")
    if exp <= now:
        raise AssertionRejected(f"the assertion expired {now - exp:.0f} s ago (exp)")
    limit = settings.JWT_MAX_LIFETIME_SECONDS
    if exp - now > limit:
        raise AssertionRejected(f"exp is {exp - now:.0f} s in the future; at most {limit} s are allowed")
    for name in ("nbf", "iat"):
        value = claims.get(name)
        if value is None:
            continue
        if not _is_number(value):
            raise AssertionRejected(f"{name} must be a NumericDate (seconds since the epoch)")
        if value > now:
            raise AssertionRejected(f"{name} is {value - now:.0f} s in the future")
    iat = claims.get("iat")
    if iat is not None and exp - iat > limit:
        raise AssertionRejected(f"the assertion's lifetime (exp - iat) is {exp - iat:.0f} s; at most {limit} s")


def _check_audience(claims):
    aud = claims.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud
    if not isinstance(audiences, list) or not audiences or not all(isinstance(a, str) for a in audiences):
        raise AssertionRejected("the assertion has no aud claim (a string or an array of strings)")
    accepted = _token_endpoint_and_issuer()
    if not any(a.rstrip("/") in accepted for a in audiences):
        raise AssertionRejected(
            f"aud {aud!r} names neither the token endpoint {settings.SERVER_URL}/o/token/ "
            f"nor the issuer {settings.SERVER_URL}/o"
        )


def _verified_claims(request):
    """The assertion's claims, its client and user, once every rule holds."""
    assertion = request.POST["assertion"].strip()
    parts = assertion.split(".")
    if len(parts) != 3:
        raise AssertionRejected("the assertion is not a compact JWS (header.payload.signature)")
    header = _b64url_json(parts[0], "header")
    claims = _b64url_json(parts[1], "claims set")

    alg = header.get("alg")
    if alg not in ALGORITHMS:
        raise AssertionRejected(f"alg {alg!r} is not accepted; sign with RS256 or ES256")

    issuer = claims.get("iss")
    if issuer is None:
        raise AssertionRejected("the assertion has no iss claim (RFC 7523 section 3 item 1: the client id)")
    keys_file = settings.JWT_BEARER_CLIENT_KEYS.get(issuer) if isinstance(issuer, str) else None
    application = get_application_model().objects.filter(client_id=issuer).first() if keys_file else None
    if application is None or not application.allows_grant_type(GRANT_TYPE):
        raise AssertionRejected(f"iss {issuer!r} is not a client registered for the JWT bearer grant")
    client_id = request.POST.get("client_id")
    if client_id and client_id != issuer:
        raise AssertionRejected(f"client_id {client_id!r} is not the assertion's iss {issuer!r}")

    candidates = [key for key in registered_keys(keys_file) if key.key_type == ALGORITHMS[alg]]
    token = jws.JWS()
    try:
        token.deserialize(assertion)
    except JWException as e:
        raise AssertionRejected(f"the assertion is not a valid JWS: {e}") from None
    for key in candidates:
        try:
            token.verify(key, alg=alg)
            break
        except JWException:
            continue
    else:
        raise AssertionRejected(f"the {alg} signature does not verify with any key registered for {issuer}")

    _check_times(claims, time.time())
    _check_audience(claims)

    subject = claims.get("sub")
    if subject is None:
        raise AssertionRejected("the assertion has no sub claim (RFC 7523 section 3 item 2: the username)")
    user = get_user_model().objects.filter(username=subject).first() if isinstance(subject, str) else None
    if user is None:
        raise AssertionRejected(f"sub {subject!r} is not a user of this server")
    if not user.is_active:
        raise AssertionRejected(f"sub {subject!r} is not an active user")
    return claims, application, user


def _requested_scopes(request, application):
    """The scopes asked for, or the defaults; None when one is unknown."""
    backend = get_scopes_backend()
    requested = request.POST.get("scope", "").split()
    if not requested:
        return list(backend.get_default_scopes(application=application, request=None))
    available = set(backend.get_available_scopes(application=application, request=None))
    return requested if set(requested) <= available else None


def _issue_access_token(request, application, user, scopes):
    """An access token through DOT's own BearerToken and validator: the same token format, lifetime
    and storage as every other grant on this server."""
    core = get_oauthlib_core()
    uri, http_method, body, headers = core._extract_params(request)
    oauthlib_request = OAuthlibRequest(uri, http_method=http_method, body=body, headers=headers)
    oauthlib_request.client = application
    oauthlib_request.client_id = application.client_id
    oauthlib_request.user = user
    oauthlib_request.scopes = scopes
    bearer = core.server.bearer
    token = bearer.create_token(oauthlib_request, refresh_token=False)
    bearer.request_validator.save_bearer_token(token, oauthlib_request)
    return dict(token)


def token_response(request):
    """The token endpoint's answer to grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer."""
    if not request.POST.get("assertion"):
        return oauth_error("invalid_request", "assertion is required (RFC 7523 section 2.1)")
    try:
        claims, application, user = _verified_claims(request)
    except AssertionRejected as e:
        return oauth_error("invalid_grant", str(e))
    scopes = _requested_scopes(request, application)
    if scopes is None:
        return oauth_error("invalid_scope", f"unknown scope in {request.POST.get('scope')!r}")
    # Last, so an assertion refused for another reason can be corrected and sent again.
    jti = claims.get("jti")
    if jti is not None and not JTI_LEDGER.use(claims["iss"], str(jti), claims["exp"]):
        return oauth_error("invalid_grant", f"jti {jti!r} has already been used (a replayed assertion)")
    return token_json(_issue_access_token(request, application, user, scopes))
