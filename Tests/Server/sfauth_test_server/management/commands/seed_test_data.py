"""Idempotent seed data for the sfauth test server: users and OAuth applications."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from oauth2_provider.models import get_application_model

USERS = [
    # username, password, first, last, email
    ("alice", "alice-password", "Alice", "Example", "alice@example.test"),
    ("bob", "bob-password", "Bob", "Example", "bob@example.test"),
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

APPLICATIONS = [
    # client_id, name, client_type, secret (None: generated, never used)
    ("sfauth-public", "sfauth (public)", "public", None),
    ("short-sfauth-public", "sfauth (public, short-lived tokens)", "public", None),
    ("sfauth-confidential", "sfauth (confidential)", "confidential", CONFIDENTIAL_SECRET),
]


class Command(BaseCommand):
    help = "Create or update the test users and OAuth applications."

    @transaction.atomic
    def handle(self, *args, **options):
        User = get_user_model()
        for username, password, first, last, email in USERS:
            user, _ = User.objects.get_or_create(username=username)
            user.first_name, user.last_name, user.email = first, last, email
            user.is_active = True
            user.set_password(password)
            user.save()

        Application = get_application_model()
        for client_id, name, client_type, secret in APPLICATIONS:
            app = Application.objects.filter(client_id=client_id).first() or Application(client_id=client_id)
            app.name = name
            app.client_type = client_type
            app.authorization_grant_type = Application.GRANT_AUTHORIZATION_CODE
            app.redirect_uris = REDIRECT_URIS
            app.algorithm = Application.RS256_ALGORITHM
            app.skip_authorization = False
            if secret is not None:
                # DOT hashes client secrets on save (hash_client_secret=True) with the default
                # password hasher; the plain value is what the client presents.
                app.client_secret = secret
                app.hash_client_secret = True
            app.save()
        self.stdout.write("seeded %d users, %d applications\n" % (len(USERS), len(APPLICATIONS)))
