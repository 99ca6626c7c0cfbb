"""DOT validator with the few additions the tests need."""

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
