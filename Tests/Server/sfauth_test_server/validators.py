"""DOT validator with the few additions the tests need."""

from django.conf import settings
from oauth2_provider.models import AbstractApplication
from oauth2_provider.oauth2_validators import OAuth2Validator


class TestOAuth2Validator(OAuth2Validator):
    # Claims beyond "sub", released per scope through DOT's oidc_claim_scope map
    # (preferred_username/name -> profile, email/email_verified -> email).
    def get_additional_claims(self, request):
        user = request.user
        return {
            "preferred_username": user.get_username(),
            "name": user.get_full_name() or user.get_username(),
            "given_name": user.first_name,
            "family_name": user.last_name,
            "email": user.email,
            "email_verified": True,
        }

    # prompt=none: DOT answers 500 unless these exist. The authorization view already
    # requires a logged-in user (it redirects or sends login_required otherwise), and this
    # server never grants silently, so the client gets error=consent_required.
    def validate_silent_login(self, request):
        return True

    def validate_silent_authorization(self, request):
        return False

    # The password grant: COMPLIANT_BCP_RFC9700_PASSWORD_GRANT refuses it for every client (RFC 9700
    # section 2.4); this server lets the clients in settings.PASSWORD_GRANT_CLIENTS use it anyway,
    # provided they are registered for it, so a client's password login can be tested.
    def validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs):
        if grant_type == "password" and client.client_id in settings.PASSWORD_GRANT_CLIENTS:
            return client.allows_grant_type(AbstractApplication.GRANT_PASSWORD)
        return super().validate_grant_type(client_id, grant_type, client, request, *args, **kwargs)

    # Client credentials: DOT stores these tokens with no user, so a resource server (like /api/me)
    # cannot tell whom they act for. Here they act as the application's user, as Salesforce's client
    # credentials flow runs as the connected app's "run as" user.
    def _create_access_token(self, expires, request, token, source_refresh_token=None):
        if request.grant_type == "client_credentials" and request.client.user_id is not None:
            request.user = request.client.user
        return super()._create_access_token(expires, request, token, source_refresh_token)
