"""Grants beyond the authorization code on the test server: the device authorization grant with
RFC 8628's polling rules, client credentials, the password grant, and JWT bearer assertions
(RFC 7523). Hooked into the token endpoint by views.CountingTokenView."""

urlpatterns = []          # served at the site root
oauth2_patterns = []      # served under /o/, before DOT's own patterns


def before_token(request):
    """Called for every token request before DOT sees it; a response ends the request there."""
    return None
