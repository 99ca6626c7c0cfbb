"""The device authorization grant (RFC 8628) with the polling rules DOT 3.4.1 leaves out.

DOT does the device authorization endpoint, the user-code page and the approve/deny page; its token
endpoint answers authorization_pending / access_denied, but it never says slow_down, never notices
an expired device code, lets a device code be redeemed again and again, and answers an unknown
device code with 404 device_not_found. Here, before DOT sees a device-code token request:

  - the device code must belong to the client that polls (else invalid_grant);
  - redeemed once, then invalid_grant;
  - denied: access_denied; past its lifetime: expired_token;
  - still pending: authorization_pending, or slow_down when this poll came sooner than the
    current interval after the previous one -- and then the interval grows by
    DEVICE_SLOW_DOWN_SECONDS for this and every later poll (RFC 8628 section 3.5);
  - approved: DOT issues the tokens (access + refresh), and the code is spent.

The device authorization endpoint is DOT's, with the device code lifetime from the settings, a
clear unauthorized_client for clients not registered for this grant, and Cache-Control: no-store.
The user-code page is DOT's, accepting the code in any case and with dashes or spaces in it.
"""

import json
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from oauth2_provider.models import get_application_model, get_device_grant_model
from oauth2_provider.views import TokenView
from oauth2_provider.views import device as dot_device

from .oauth_errors import client_id_of, oauth_error

GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code"
FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"


@dataclass
class PollRecord:
    """What the token endpoint remembers about one device code besides DOT's DeviceGrant row."""

    last_poll: float | None = None  # time.monotonic() of the previous poll
    polls: int = 0
    slow_downs: int = 0
    redeemed: bool = False
    slow_down_demanded: bool = False  # the next pending poll answers slow_down whatever its timing


class PollLedger:
    """Poll records by device code. In memory: the server is one process, and its database starts
    fresh on every start as well. The current interval is kept in DeviceGrant.interval."""

    def __init__(self):
        self._lock = threading.Lock()
        self._records = {}

    def record(self, device_code):
        """A copy of the record for `device_code` (a fresh one if it was never polled)."""
        with self._lock:
            record = self._records.setdefault(device_code, PollRecord())
            return PollRecord(record.last_poll, record.polls, record.slow_downs, record.redeemed, record.slow_down_demanded)

    def poll(self, device_code):
        """Counts a poll; returns the seconds since the previous one (None for the first). Measured
        between the moments the server handles the two polls, so a client that waits the interval
        after each response can never be too early."""
        now = time.monotonic()
        with self._lock:
            record = self._records.setdefault(device_code, PollRecord())
            elapsed = None if record.last_poll is None else now - record.last_poll
            record.last_poll = now
            record.polls += 1
            return elapsed

    def count_slow_down(self, device_code):
        with self._lock:
            record = self._records.setdefault(device_code, PollRecord())
            record.slow_downs += 1
            record.slow_down_demanded = False

    def demand_slow_down(self, device_code):
        with self._lock:
            self._records.setdefault(device_code, PollRecord()).slow_down_demanded = True

    def redeem(self, device_code):
        with self._lock:
            self._records.setdefault(device_code, PollRecord()).redeemed = True


LEDGER = PollLedger()


def _device_grant(**lookup):
    return get_device_grant_model().objects.filter(**lookup).first()


def _grant_for_control(request):
    """The device grant a test control names by device_code or user_code (query or form)."""
    params = request.POST if request.method == "POST" else request.GET
    device_code, user_code = params.get("device_code"), params.get("user_code")
    if device_code:
        return _device_grant(device_code=device_code)
    if user_code:
        return _device_grant(user_code=normalised_user_code(user_code))
    return None


def normalised_user_code(text):
    """RFC 8628 section 6.1: accept the user code however a person types it (case, dashes, spaces)."""
    return "".join(text.split()).replace("-", "").upper()


# ------------------------------------------------------------------ token endpoint

def token_response(request):
    """The token endpoint's answer to grant_type=urn:ietf:params:oauth:grant-type:device_code."""
    device_code = request.POST.get("device_code")
    if not device_code:
        return oauth_error("invalid_request", "device_code is required (RFC 8628 section 3.4)")
    client_id = client_id_of(request)
    if not client_id:
        return oauth_error("invalid_client", "client_id is required (RFC 8628 section 3.4)", status=401)
    grant = _device_grant(device_code=device_code)
    if grant is None:
        return oauth_error("invalid_grant", "unknown device_code")
    if grant.client_id != client_id:
        return oauth_error("invalid_grant", f"this device_code was not issued to client {client_id}")

    elapsed = LEDGER.poll(device_code)
    if LEDGER.record(device_code).redeemed:
        return oauth_error("invalid_grant", "this device_code has already been redeemed")
    if grant.status == grant.DENIED:
        return oauth_error("access_denied", "the user denied the authorization request")
    if grant.is_expired():  # also marks the grant expired, so the user-code page refuses it too
        return oauth_error("expired_token", "the device_code has expired; start a new device authorization")
    if grant.status == grant.AUTHORIZATION_PENDING:
        demanded = LEDGER.record(device_code).slow_down_demanded
        if demanded or (elapsed is not None and elapsed < grant.interval):
            LEDGER.count_slow_down(device_code)
            old = grant.interval
            grant.interval = old + settings.DEVICE_SLOW_DOWN_SECONDS
            grant.save(update_fields=["interval"])
            if demanded:
                return oauth_error("slow_down", f"slow down (demanded by a test); the interval is now {grant.interval} s")
            return oauth_error(
                "slow_down",
                f"polled {elapsed:.2f} s after the previous poll, sooner than the interval of {old} s; "
                f"the interval is now {grant.interval} s (RFC 8628 section 3.5)",
            )
        return oauth_error("authorization_pending", "the user has not yet approved or denied this request")

    # Approved: DOT checks the client and issues the tokens. Spent once it has.
    view = TokenView()
    view.setup(request)
    response = view.post(request)
    if response.status_code == 200:
        LEDGER.redeem(device_code)
    return response


# ------------------------------------------------------------------ device authorization endpoint

class DeviceAuthorizationView(dot_device.DeviceAuthorizationView):
    """DOT's device authorization endpoint (RFC 8628 section 3.1/3.2), with this server's device code
    lifetime and interval, and unauthorized_client for a client registered for another grant."""

    def post(self, request, *args, **kwargs):
        # oauthlib compares the media type as a whole string; a charset parameter is fine by RFC 6749.
        if request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower() == FORM_CONTENT_TYPE:
            request.META["CONTENT_TYPE"] = FORM_CONTENT_TYPE
        client_id = request.POST.get("client_id")
        application = get_application_model().objects.filter(client_id=client_id).first() if client_id else None
        if application is not None and not application.allows_grant_type(GRANT_TYPE):
            return oauth_error(
                "unauthorized_client",
                f"client {client_id} is not registered for the device authorization grant",
            )
        response = super().post(request, *args, **kwargs)
        if response.status_code == 200:
            device_code = json.loads(response.content)["device_code"]
            get_device_grant_model().objects.filter(device_code=device_code).update(
                interval=settings.DEVICE_INTERVAL  # the model's default is 5; the response said this
            )
        response["Cache-Control"] = "no-store"
        return response

    def create_device_authorization_response(self, request):
        # oauthlib's DeviceApplicationServer always says 1800 s; DOT stores what the response says.
        headers, data, status = super().create_device_authorization_response(request)
        if status == 200:
            data["expires_in"] = settings.DEVICE_CODE_SECONDS
        return headers, data, status


class UserCodeForm(dot_device.DeviceGrantForm):
    """DOT's user-code form, taking the code the way a person types it."""

    def clean_user_code(self):
        self.cleaned_data["user_code"] = normalised_user_code(self.cleaned_data["user_code"])
        return super().clean_user_code()


class DeviceUserCodeView(dot_device.DeviceUserCodeView):
    """DOT's verification page (sign in, enter or confirm the user code, then approve or deny)."""

    form_class = UserCodeForm


# ------------------------------------------------------------------ test controls

def _describe(grant):
    record = LEDGER.record(grant.device_code)
    remaining = (grant.expires - timezone.now()).total_seconds()
    status = "redeemed" if record.redeemed else grant.status
    if status == grant.AUTHORIZATION_PENDING and remaining <= 0:
        status = grant.EXPIRED
    return {
        "device_code": grant.device_code,
        "user_code": grant.user_code,
        "client_id": grant.client_id,
        "status": status,
        "username": grant.user.get_username() if grant.user else None,
        "scope": grant.scope,
        "interval": grant.interval,
        "expires_in": max(0, int(remaining)),
        "polls": record.polls,
        "slow_downs": record.slow_downs,
    }


def _not_found():
    return JsonResponse({"error": "not_found", "error_description": "no device grant with that device_code or "
                         "user_code"}, status=404)


@require_GET
def status_control(request):
    """GET /test/device/status?device_code=...|user_code=... -> the grant's state and poll counts."""
    grant = _grant_for_control(request)
    return JsonResponse(_describe(grant)) if grant else _not_found()


@csrf_exempt
@require_POST
def expire_control(request):
    """POST /test/device/expire (device_code= or user_code=): its lifetime ends now."""
    grant = _grant_for_control(request)
    if grant is None:
        return _not_found()
    grant.expires = timezone.now()
    grant.save(update_fields=["expires"])
    return JsonResponse(_describe(grant))


@csrf_exempt
@require_POST
def slow_down_control(request):
    """POST /test/device/slow-down (device_code= or user_code=): the next pending poll answers
    slow_down whatever its timing, so a test can see whether the client then waits the longer interval."""
    grant = _grant_for_control(request)
    if grant is None:
        return _not_found()
    LEDGER.demand_slow_down(grant.device_code)
    return JsonResponse(_describe(grant))


@csrf_exempt
@require_POST
def decide_control(request):
    """POST /test/device/decide (user_code= or device_code=, action=approve|deny, username=alice):
    what the verification page does, without a browser."""
    grant = _grant_for_control(request)
    if grant is None:
        return _not_found()
    action = request.POST.get("action", "approve")
    if action not in ("approve", "deny"):
        return JsonResponse({"error": "invalid_request", "error_description": "action must be approve or deny"},
                            status=400)
    if grant.status != grant.AUTHORIZATION_PENDING or grant.is_expired():
        return JsonResponse({"error": "invalid_request", "error_description": f"the grant is {grant.status}"},
                            status=409)
    username = request.POST.get("username") or "alice"
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        return JsonResponse({"error": "invalid_request", "error_description": f"no user {username}"}, status=400)
    grant.user = user
    grant.status = grant.AUTHORIZED if action == "approve" else grant.DENIED
    grant.save(update_fields=["user", "status"])
    return JsonResponse(_describe(grant))
