"""Django settings for sfauth's end-to-end test authorization server (django-oauth-toolkit).

Test-only: fixed secret key, fast password hasher, SQLite in the run directory.
Configured through environment variables set by serve.py / scripts/test-server:

  SFAUTH_TEST_RUN_DIR               run directory (DB, RSA key, logs); default <repo>/.test-run/server
  SFAUTH_TEST_SERVER_URL            http://127.0.0.1:PORT (set by serve.py once the port is known)
  SFAUTH_TEST_ISS_PARAMETER=1       add the RFC 9207 `iss` parameter to authorization responses
  SFAUTH_TEST_SHORT_TOKEN_SECONDS   access-token lifetime for clients whose id starts with "short-" (5)
  SFAUTH_TEST_TOKEN_SECONDS         access-token lifetime for every other client (3600)
  SFAUTH_TEST_DEVICE_INTERVAL       device grant: polling interval in seconds at the start (1)
  SFAUTH_TEST_DEVICE_SLOW_DOWN_SECONDS  device grant: what each slow_down adds to it (5, RFC 8628 section 3.5)
  SFAUTH_TEST_DEVICE_CODE_SECONDS   device grant: lifetime of a device code / user code (300)
  SFAUTH_TEST_JWT_MAX_LIFETIME_SECONDS  JWT bearer grant: how far in the future an assertion's exp may be (300)
"""

import os
from pathlib import Path

SERVER_DIR = Path(__file__).resolve().parent.parent  # Tests/Server
REPO_DIR = SERVER_DIR.parent.parent
RUN_DIR = Path(os.environ.get("SFAUTH_TEST_RUN_DIR") or REPO_DIR / ".test-run" / "server").resolve()
OIDC_KEY_FILE = RUN_DIR / "oidc-rsa.pem"

SECRET_KEY = "sfauth-test-server-not-secret"  # test only
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "oauth2_provider",
    "sfauth_test_server",
]

MIDDLEWARE = [
    "sfauth_test_server.views.AccessLogMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "sfauth_test_server.urls"
WSGI_APPLICATION = "sfauth_test_server.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # DIRS is searched before the apps, so templates/oauth2_provider/base.html here
        # overrides DOT's (adds a page title); DOT's own authorize.html is used unchanged.
        "DIRS": [str(Path(__file__).resolve().parent / "templates")],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(RUN_DIR / "db.sqlite3"),
        "OPTIONS": {
            # Several waitress threads write (tokens, stats): wait for the lock instead of failing,
            # and take the write lock at BEGIN so two writers never deadlock on an upgrade.
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Logins must be quick in tests: PBKDF2 costs 0.3-0.5 s per password check.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
AUTH_PASSWORD_VALIDATORS = []

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"

SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"  # no DB writes for sessions
CSRF_COOKIE_SECURE = False
SESSION_COOKIE_SECURE = False


def _int_env(name, default):
    try:
        return int(os.environ.get(name, "") or default)
    except ValueError:
        return default


TOKEN_SECONDS = _int_env("SFAUTH_TEST_TOKEN_SECONDS", 3600)
SHORT_TOKEN_SECONDS = _int_env("SFAUTH_TEST_SHORT_TOKEN_SECONDS", 5)
ISS_PARAMETER = os.environ.get("SFAUTH_TEST_ISS_PARAMETER", "") in ("1", "true", "yes", "on")
SERVER_URL = os.environ.get("SFAUTH_TEST_SERVER_URL", "").rstrip("/")

# Device authorization grant (RFC 8628), see grants.py / device_grant.py. Tests want a short interval;
# the slow_down increment is RFC 8628's 5 s unless a test server is started with a smaller one.
DEVICE_INTERVAL = _int_env("SFAUTH_TEST_DEVICE_INTERVAL", 1)
DEVICE_SLOW_DOWN_SECONDS = _int_env("SFAUTH_TEST_DEVICE_SLOW_DOWN_SECONDS", 5)
DEVICE_CODE_SECONDS = _int_env("SFAUTH_TEST_DEVICE_CODE_SECONDS", 300)

# The password grant stays refused (COMPLIANT_BCP_RFC9700_PASSWORD_GRANT below) for every client
# but these (validators.TestOAuth2Validator.validate_grant_type).
PASSWORD_GRANT_CLIENTS = ["sfauth-password"]

# JWT bearer grant (RFC 7523), see jwt_bearer.py: the public keys registered per client, as a JWKS file
# that serve.py writes at start (jwt_client_keys.py; the private keys are the tests'), and the longest
# lifetime an assertion may claim (Salesforce allows a few minutes).
JWT_BEARER_CLIENT_KEYS = {"sfauth-jwt": RUN_DIR / "jwt-client-keys.json"}
JWT_MAX_LIFETIME_SECONDS = _int_env("SFAUTH_TEST_JWT_MAX_LIFETIME_SECONDS", 300)

# What the token endpoint really accepts (for some client each: one grant per DOT application),
# published as grant_types_supported by both discovery documents.
GRANT_TYPES_SUPPORTED = [
    "authorization_code",
    "refresh_token",
    "urn:ietf:params:oauth:grant-type:device_code",
    "client_credentials",
    "password",
    "urn:ietf:params:oauth:grant-type:jwt-bearer",
]


def access_token_expire_seconds(request):
    """ACCESS_TOKEN_EXPIRE_SECONDS as a callable: oauthlib's BearerToken calls it with the
    oauthlib request (request.client is the DOT Application once the client is authenticated)."""
    client = getattr(request, "client", None)
    client_id = getattr(client, "client_id", None) or getattr(request, "client_id", None) or ""
    return SHORT_TOKEN_SECONDS if client_id.startswith("short-") else TOKEN_SECONDS


def _read_key():
    try:
        return OIDC_KEY_FILE.read_text()
    except OSError:
        return ""  # management commands before serve.py generated the key


OAUTH2_PROVIDER = {
    "OAUTH2_VALIDATOR_CLASS": "sfauth_test_server.validators.TestOAuth2Validator",
    # PKCE: required, S256 only ("plain" -- also what a missing code_challenge_method means --
    # is rejected when the code would be issued).
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    # Refuse the implicit grant outright, and the password grant for every client not in
    # PASSWORD_GRANT_CLIENTS (the validator lets those through).
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    # RFC 8252 section 7.3: any port on http://127.0.0.1/..., http://[::1]/... (always) and
    # http://localhost/... (this setting).
    "ALLOW_LOCALHOST_LOOPBACK": True,
    # Refresh token rotation with reuse detection: a retired refresh token revokes its family.
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "ACCESS_TOKEN_EXPIRE_SECONDS": access_token_expire_seconds,
    "ID_TOKEN_EXPIRE_SECONDS": 3600,
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "REQUEST_APPROVAL_PROMPT": "force",  # always show the consent page
    # Device authorization grant: DOT's user-code page (wrapped in device_grant.py) is the
    # verification URI; the complete URI carries the user code, so the page comes prefilled.
    "OAUTH_DEVICE_VERIFICATION_URI": f"{SERVER_URL}/o/device/",
    "OAUTH_DEVICE_VERIFICATION_URI_COMPLETE": f"{SERVER_URL}/o/device/?user_code={{user_code}}",
    "DEVICE_FLOW_INTERVAL": DEVICE_INTERVAL,
    # RFC 8414 metadata (/.well-known/oauth-authorization-server/o). DOT drops "password" from it
    # because of COMPLIANT_BCP_RFC9700_PASSWORD_GRANT; the OIDC discovery document keeps it.
    "OAUTH2_GRANT_TYPES_SUPPORTED": GRANT_TYPES_SUPPORTED,
    # OIDC with RS256 ID tokens.
    "OIDC_ENABLED": True,
    "OIDC_RSA_PRIVATE_KEY": _read_key(),
    # A fixed issuer (http://127.0.0.1:PORT/o), whatever Host header a request carries.
    "OIDC_ISS_ENDPOINT": f"{SERVER_URL}/o" if SERVER_URL else "",
    # RFC 9207 `iss` authorization-response parameter (off unless asked for).
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": ISS_PARAMETER,
    "SCOPES": {
        "openid": "OpenID Connect sign-in",
        "profile": "Your name and username",
        "email": "Your email address",
        "offline_access": "Access while you are away",
        "read": "Read your data",
        "write": "Change your data",
        # Salesforce-style scope names, so a Salesforce-shaped scope request is accepted too.
        "api": "Access the API",
        "refresh_token": "Refresh access",
        "web": "Web access",
        "id": "Identity URL",
        "full": "Full access",
    },
    "DEFAULT_SCOPES": ["openid"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["stderr"], "level": "WARNING"},
    "loggers": {
        "sfauth_test_server": {"level": "INFO"},
        "oauth2_provider": {"level": "INFO"},
        "oauthlib": {"level": "INFO"},
    },
}
