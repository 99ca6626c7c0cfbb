"""ID-token test controls: tampered, mis-addressed, expired or wrongly-nonced ID tokens, other
signing algorithms and key rotation, so a client's ID token validation can be tested against the
real server. Hooked into the token endpoint by views.CountingTokenView."""

urlpatterns = []          # served at the site root
oauth2_patterns = []      # served under /o/, before DOT's own patterns


def after_token(request, response):
    """Called with every token response DOT produced; returns the response to send."""
    return response
