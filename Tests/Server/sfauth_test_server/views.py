"""Test-server views: counted token/revoke endpoints, test statistics, a protected resource,
an extended OIDC discovery document, and an access log."""

import json
import logging
import threading
import time

from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.oauth2_backends import _add_iss_to_redirect
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import AuthorizationView, ConnectDiscoveryInfoView, RevokeTokenView, TokenView
from urllib.parse import parse_qsl, urlsplit

from . import grants, id_tokens

access_log = logging.getLogger("sfauth_test_server.access")


class AccessLogMiddleware:
    """One line per request on stderr (the server log): method, path, status, milliseconds."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        start = time.monotonic()
        response = self.get_response(request)
        ms = (time.monotonic() - start) * 1000
        extra = ""
        if request.path.endswith("/token/") and request.method == "POST":
            extra = " grant_type=%s" % request.POST.get("grant_type", "-")
        access_log.info("%s %s %s %.0fms%s", request.method, request.path, response.status_code, ms, extra)
        return response


# ------------------------------------------------------------------ authorization endpoint

class IssAuthorizationView(AuthorizationView):
    """DOT's authorization endpoint. With the RFC 9207 `iss` parameter on, DOT adds it to
    successful responses only; RFC 9207 section 2 wants it in error responses too
    (error=access_denied after Cancel, consent_required, invalid_scope, ...)."""

    def redirect(self, redirect_to, application):
        if oauth2_settings.COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS:
            query = dict(parse_qsl(urlsplit(redirect_to).query))
            if "error" in query and "iss" not in query:
                issuer = oauth2_settings.oauth2_authorization_server_issuer(self.request)
                redirect_to = _add_iss_to_redirect(redirect_to, issuer)
        return super().redirect(redirect_to, application)


# ------------------------------------------------------------------ statistics

def bump(*keys):
    """Atomically increment counters (one autocommitted UPSERT each; safe across threads)."""
    with connection.cursor() as cursor:
        for key in keys:
            cursor.execute(
                "INSERT INTO sfauth_counter (key, count) VALUES (%s, 1) "
                "ON CONFLICT(key) DO UPDATE SET count = count + 1",
                [key],
            )


def read_counters():
    with connection.cursor() as cursor:
        cursor.execute("SELECT key, count FROM sfauth_counter ORDER BY key")
        return cursor.fetchall()


# DOT validates a refresh token before the transaction that rotates it, so two parallel refreshes
# with the same token race: sometimes both succeed (two live families), sometimes the second is
# taken for a reuse and revokes the family. Serialising token requests (one server process) makes
# it deterministic: the second request presents a retired token -> invalid_grant, family revoked.
TOKEN_LOCK = threading.Lock()


class CountingTokenView(TokenView):
    """DOT's token endpoint, counting every request by grant_type (and responses by status)."""

    def post(self, request, *args, **kwargs):
        grant_type = request.POST.get("grant_type", "") or "(none)"
        bump(f"token_requests\t{grant_type}")
        with TOKEN_LOCK:
            response = grants.before_token(request) or super().post(request, *args, **kwargs)
            response = id_tokens.after_token(request, response)
        bump(f"token_responses\t{grant_type}\t{response.status_code}")
        return response


class CountingRevokeTokenView(RevokeTokenView):
    """DOT's RFC 7009 revocation endpoint, counting requests by token_type_hint."""

    def post(self, request, *args, **kwargs):
        hint = request.POST.get("token_type_hint", "") or "(none)"
        bump(f"revoke_requests\t{hint}")
        return super().post(request, *args, **kwargs)


@require_GET
def stats(request):
    data = {"token_requests": {}, "token_responses": {}, "revoke_requests": {}}
    for key, count in read_counters():
        parts = key.split("\t")
        if parts[0] == "token_responses" and len(parts) == 3:
            data["token_responses"].setdefault(parts[1], {})[parts[2]] = count
        elif len(parts) == 2:
            data.setdefault(parts[0], {})[parts[1]] = count
    return JsonResponse(data)


@csrf_exempt
@require_POST
def stats_reset(request):
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM sfauth_counter")
    return JsonResponse({"ok": True})


# ------------------------------------------------------------------ protected resource

def _unauthorized(error=None):
    response = JsonResponse({"error": error or "unauthorized"}, status=401)
    challenge = 'Bearer realm="sfauth-test"'
    if error:
        challenge += f', error="{error}"'
    response["WWW-Authenticate"] = challenge
    return response


@require_GET
def api_me(request):
    """Accepts any valid bearer access token (no scope required)."""
    if not request.META.get("HTTP_AUTHORIZATION", "").lower().startswith("bearer "):
        return _unauthorized()
    valid, r = get_oauthlib_core().verify_request(request, scopes=[])
    if not valid or r.user is None:
        return _unauthorized("invalid_token")
    token = r.access_token
    return JsonResponse(
        {
            "username": r.user.get_username(),
            "scope": token.scope,
            "client_id": token.application.client_id if token.application else None,
            "expires": token.expires.isoformat(),
        }
    )


# ------------------------------------------------------------------ discovery

class ExtendedDiscoveryView(ConnectDiscoveryInfoView):
    """DOT's OIDC discovery document plus what DOT leaves out but real servers publish:
    revocation_endpoint, introspection_endpoint, device_authorization_endpoint (RFC 8628 section 4),
    grant_types_supported (what the token endpoint really accepts: settings.GRANT_TYPES_SUPPORTED)."""

    def get(self, request, *args, **kwargs):
        from django.conf import settings

        response = super().get(request, *args, **kwargs)
        data = json.loads(response.content)
        for key, view_name in (
            ("revocation_endpoint", "revoke-token"),
            ("introspection_endpoint", "introspect"),
            ("device_authorization_endpoint", "device-authorization"),
        ):
            data.setdefault(key, self._get_endpoint_url(request, view_name, required=True))
        data.setdefault("grant_types_supported", list(settings.GRANT_TYPES_SUPPORTED))
        extended = JsonResponse(data)
        extended["Access-Control-Allow-Origin"] = "*"
        return extended


def home(request):
    return HttpResponse(
        "<!DOCTYPE html><title>sfauth test server</title><h1>sfauth test server</h1>"
        '<p>OAuth endpoints live under <a href="/o/.well-known/openid-configuration">/o/</a>.</p>',
    )
