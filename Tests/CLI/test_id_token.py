"""ID token validation through the built binary: a login whose ID token was tampered with fails."""
import json
import urllib.parse
import urllib.request

from test_login import LOGIN_REQUIRED, OK, REFUSED


def arm_id_token_mode(server, mode, client_id=None):
    """Arms the test server's ID-token control for the next token response with an ID token."""
    fields = {"mode": mode, **({"client_id": client_id} if client_id else {})}
    request = urllib.request.Request(server["SFAUTH_TEST_SERVER_URL"] + "/test/id-token-mode",
                                     data=urllib.parse.urlencode(fields).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_a_login_with_a_tampered_id_token_exits_5_with_one_line_and_stores_nothing(sfauth, server):
    client_id = server["SFAUTH_TEST_CLIENT_ID"]
    applied_before = arm_id_token_mode(server, "normal")["applied"].get("tamper", 0)
    arm_id_token_mode(server, "tamper", client_id)
    try:
        login = sfauth.run("login", "--issuer", server["SFAUTH_TEST_ISSUER"], "--client-id", client_id,
                           "--scope", "openid profile", XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    finally:
        state = arm_id_token_mode(server, "normal")
    assert state["applied"].get("tamper", 0) == applied_before + 1     # the server really tampered with it

    assert login.returncode == REFUSED, login.stderr
    assert login.stdout == ""
    expected = ("sfauth: The ID token was refused: the ID token's signature does not verify against the keys at "
                f"{server['SFAUTH_TEST_JWKS_URL']}. Try again; if it persists, check the issuer, the client id and "
                "this machine's clock.")
    assert login.stderr.splitlines()[-1] == expected
    assert sum("ID token" in line for line in login.stderr.splitlines()) == 1
    assert sfauth.stored_accounts() == []
    assert sfauth.run("token").returncode == LOGIN_REQUIRED
    assert "Sign-in failed" in sfauth.browser_report()["page_text"]
