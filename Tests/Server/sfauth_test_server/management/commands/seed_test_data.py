"""Idempotent seed data for the sfauth test server: users and OAuth applications."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from oauth2_provider.models import AbstractApplication, get_application_model

SERVICE_USERNAME = "integration"  # the user client-credentials tokens act as (Salesforce's "run as" user)
INACTIVE_USERNAME = "carol"       # deactivated: the JWT bearer grant must refuse her

USERS = [
    # username, password (None: cannot sign in), first, last, email, active
    ("alice", "alice-password", "Alice", "Example", "alice@example.test", True),
    ("bob", "bob-password", "Bob", "Example", "bob@example.test", True),
    (SERVICE_USERNAME, None, "Integration", "User", "integration@example.test", True),
    (INACTIVE_USERNAME, "carol-password", "Carol", "Example", "carol@example.test", False),
]

REDIRECT_URIS = " ".join(
    [
        "http://127.0.0.1/callback",
        "http://[::1]/callback",
        "http://localhost/callback",
        "http://localhost/OauthRedirect",
        "http://127.0.0.1/OauthRedirect",
    ]
)

CONFIDENTIAL_SECRET = "sfauth-confidential-secret"

DEVICE_CLIENT_ID = "sfauth-device"
SERVICE_CLIENT_ID, SERVICE_CLIENT_SECRET = "sfauth-service", "sfauth-service-secret"
PASSWORD_CLIENT_ID, PASSWORD_CLIENT_SECRET = "sfauth-password", "sfauth-password-secret"
JWT_CLIENT_ID = "sfauth-jwt"

AUTHORIZATION_CODE = AbstractApplication.GRANT_AUTHORIZATION_CODE
DEVICE_CODE = AbstractApplication.GRANT_DEVICE_CODE
CLIENT_CREDENTIALS = AbstractApplication.GRANT_CLIENT_CREDENTIALS
PASSWORD = AbstractApplication.GRANT_PASSWORD
# Not a DOT grant type: jwt_bearer.py answers it before DOT, and DOT refuses every grant it knows
# to an application registered for it.
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"

APPLICATIONS = [
    # client_id, name, client_type, secret (None: generated, never used), grant type (one each)
    ("sfauth-public", "sfauth (public)", "public", None, AUTHORIZATION_CODE),
    ("short-sfauth-public", "sfauth (public, short-lived tokens)", "public", None, AUTHORIZATION_CODE),
    ("sfauth-confidential", "sfauth (confidential)", "confidential", CONFIDENTIAL_SECRET, AUTHORIZATION_CODE),
    (DEVICE_CLIENT_ID, "sfauth (device)", "public", None, DEVICE_CODE),
    (SERVICE_CLIENT_ID, "sfauth (service account)", "confidential", SERVICE_CLIENT_SECRET, CLIENT_CREDENTIALS),
    (PASSWORD_CLIENT_ID, "sfauth (password)", "confidential", PASSWORD_CLIENT_SECRET, PASSWORD),
    # Its public keys: settings.JWT_BEARER_CLIENT_KEYS (jwt_client_keys.py makes them).
    (JWT_CLIENT_ID, "sfauth (JWT bearer)", "public", None, JWT_BEARER),
]


class Command(BaseCommand):
    help = "Create or update the test users and OAuth applications."

    @transaction.atomic
    def handle(self, *args, **options):
        User = get_user_model()
        for username, password, first, last, email, active in USERS:
            user, _ = User.objects.get_or_create(username=username)
            user.first_name, user.last_name, user.email = first, last, email
            user.is_active = active
            user.set_password(password)  # None: an unusable password
            user.save()

        Application = get_application_model()
        for client_id, name, client_type, secret, grant_type in APPLICATIONS:
            app = Application.objects.filter(client_id=client_id).first() or Application(client_id=client_id)
            app.name = name
            app.client_type = client_type
            app.authorization_grant_type = grant_type
            app.redirect_uris = REDIRECT_URIS if grant_type == AUTHORIZATION_CODE else ""
            # Client-credentials tokens act as this user (validators.py); the others leave it empty.
            app.user = User.objects.get(username=SERVICE_USERNAME) if grant_type == CLIENT_CREDENTIALS else None
            app.algorithm = Application.RS256_ALGORITHM
            app.skip_authorization = False
            if secret is not None:
                # DOT hashes client secrets on save (hash_client_secret=True) with the default
                # password hasher; the plain value is what the client presents.
                app.client_secret = secret
                app.hash_client_secret = True
            app.save()
        self.stdout.write("seeded %d users, %d applications\n" % (len(USERS), len(APPLICATIONS)))
