"""Grants beyond the authorization code on the test server: the device authorization grant with
RFC 8628's polling rules, client credentials, the password grant, and JWT bearer assertions
(RFC 7523). Hooked into the token endpoint by views.CountingTokenView.

Client credentials and the password grant are DOT's own (see validators.py for the two changes:
the password grant allowed for settings.PASSWORD_GRANT_CLIENTS only, and client-credentials tokens
acting as the application's user). The device grant is DOT's, with the polling rules added in
device_grant.py; the JWT bearer grant is jwt_bearer.py. Tests/Server/README.md has the contract.
"""

from django.urls import path

from . import device_grant, jwt_bearer

# Served at the site root: test controls for the device grant.
urlpatterns = [
    path("test/device/status", device_grant.status_control),
    path("test/device/expire", device_grant.expire_control),
    path("test/device/decide", device_grant.decide_control),
    path("test/device/slow-down", device_grant.slow_down_control),
]

# Served under /o/, before DOT's own patterns (same names, so reverse() finds these).
oauth2_patterns = [
    path("device-authorization/", device_grant.DeviceAuthorizationView.as_view(), name="device-authorization"),
    path("device/", device_grant.DeviceUserCodeView.as_view(), name="device"),
]

# Token requests these modules answer themselves, by grant_type.
TOKEN_HANDLERS = {
    device_grant.GRANT_TYPE: device_grant.token_response,
    jwt_bearer.GRANT_TYPE: jwt_bearer.token_response,
}


def before_token(request):
    """Called for every token request before DOT sees it; a response ends the request there."""
    handler = TOKEN_HANDLERS.get(request.POST.get("grant_type"))
    return handler(request) if handler else None


def env_variables(base_url):
    """The SFAUTH_TEST_* variables serve.py writes to the env file for these grants."""
    from django.conf import settings

    from . import jwt_client_keys as keys
    from .management.commands import seed_test_data as seed

    run_dir = str(settings.RUN_DIR)

    def key_path(name):
        return f"{run_dir}/{name}"

    return {
        "SFAUTH_TEST_DEVICE_CLIENT_ID": seed.DEVICE_CLIENT_ID,
        "SFAUTH_TEST_DEVICE_AUTHORIZATION_URL": f"{base_url}/o/device-authorization/",
        "SFAUTH_TEST_DEVICE_VERIFICATION_URL": f"{base_url}/o/device/",
        "SFAUTH_TEST_DEVICE_INTERVAL": str(settings.DEVICE_INTERVAL),
        "SFAUTH_TEST_DEVICE_SLOW_DOWN_SECONDS": str(settings.DEVICE_SLOW_DOWN_SECONDS),
        "SFAUTH_TEST_DEVICE_CODE_SECONDS": str(settings.DEVICE_CODE_SECONDS),
        "SFAUTH_TEST_DEVICE_STATUS_URL": f"{base_url}/test/device/status",
        "SFAUTH_TEST_DEVICE_EXPIRE_URL": f"{base_url}/test/device/expire",
        "SFAUTH_TEST_DEVICE_DECIDE_URL": f"{base_url}/test/device/decide",
        "SFAUTH_TEST_DEVICE_SLOW_DOWN_URL": f"{base_url}/test/device/slow-down",
        "SFAUTH_TEST_SERVICE_CLIENT_ID": seed.SERVICE_CLIENT_ID,
        "SFAUTH_TEST_SERVICE_CLIENT_SECRET": seed.SERVICE_CLIENT_SECRET,
        "SFAUTH_TEST_SERVICE_USERNAME": seed.SERVICE_USERNAME,
        "SFAUTH_TEST_PASSWORD_CLIENT_ID": seed.PASSWORD_CLIENT_ID,
        "SFAUTH_TEST_PASSWORD_CLIENT_SECRET": seed.PASSWORD_CLIENT_SECRET,
        "SFAUTH_TEST_INACTIVE_USERNAME": seed.INACTIVE_USERNAME,
        "SFAUTH_TEST_JWT_CLIENT_ID": seed.JWT_CLIENT_ID,
        "SFAUTH_TEST_JWT_AUDIENCE": f"{base_url}/o",
        "SFAUTH_TEST_JWT_MAX_LIFETIME_SECONDS": str(settings.JWT_MAX_LIFETIME_SECONDS),
        "SFAUTH_TEST_JWT_RSA_KEY": key_path(keys.RSA_KEY),
        "SFAUTH_TEST_JWT_RSA_KEY_PKCS1": key_path(keys.RSA_KEY_PKCS1),
        "SFAUTH_TEST_JWT_EC_KEY": key_path(keys.EC_KEY),
        "SFAUTH_TEST_JWT_EC_KEY_SEC1": key_path(keys.EC_KEY_SEC1),
        "SFAUTH_TEST_JWT_UNREGISTERED_KEY": key_path(keys.UNREGISTERED_KEY),
        "SFAUTH_TEST_JWT_PUBLIC_KEYS": key_path(keys.JWKS),
    }
