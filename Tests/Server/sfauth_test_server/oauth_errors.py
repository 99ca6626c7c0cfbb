"""OAuth 2.0 error responses (RFC 6749 section 5.2) for the token-endpoint code of this server."""

import base64
from urllib.parse import unquote_plus

from django.http import JsonResponse


def oauth_error(error, description, status=400):
    """{"error", "error_description"} with the headers RFC 6749 section 5.1 asks of token responses.
    invalid_client answers 401 with a Basic challenge (section 5.2)."""
    response = JsonResponse({"error": error, "error_description": description}, status=status)
    response["Cache-Control"] = "no-store"
    response["Pragma"] = "no-cache"
    if status == 401:
        response["WWW-Authenticate"] = 'Basic realm="sfauth-test"'
    return response


def token_json(data):
    """A successful token response (RFC 6749 section 5.1)."""
    response = JsonResponse(data)
    response["Cache-Control"] = "no-store"
    response["Pragma"] = "no-cache"
    return response


def client_id_of(request):
    """The client id a token request names: the client_id parameter, else the user name of HTTP Basic
    client authentication (RFC 6749 section 2.3.1: form-encoded, then base64). None when neither."""
    client_id = request.POST.get("client_id")
    if client_id:
        return client_id
    scheme, _, credentials = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
    except ValueError:
        return None
    user, separator, _ = decoded.partition(":")
    return unquote_plus(user) if separator else None
