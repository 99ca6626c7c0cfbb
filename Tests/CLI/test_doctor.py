"""`sfauth doctor`: one line per check with the fix; non-zero when something would stop a sign-in."""
import os
import pathlib
import subprocess
import sys

from test_accounts import login
from test_login import OK, STORAGE, USAGE


def lines(result):
    return {line.split()[1]: line for line in result.stdout.splitlines()}


def test_doctor_on_a_healthy_machine(sfauth, server):
    login(sfauth)
    result = sfauth.run("doctor", "--server", server["SFAUTH_TEST_ISSUER"])
    assert result.returncode == OK, result.stdout + result.stderr
    checks = lines(result)
    assert {"display", "browser", "keyring", "store", "port", "proxy", "clock"} <= set(checks), result.stdout
    assert checks["store"].startswith("ok"), checks["store"]
    assert checks["clock"].startswith("ok") and ("ahead of" in checks["clock"] or "behind" in checks["clock"]), checks["clock"]
    assert checks["display"].startswith("note") and "--device" in checks["display"]       # the tests run without a display


def test_doctor_names_what_would_stop_a_sign_in_and_the_fix(sfauth):
    login(sfauth)
    os.chmod(sfauth.home, 0o777)
    holder = subprocess.Popen([sys.executable, "-c", "import socket,time\n"
                               "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                               "s.bind(('127.0.0.1', 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = holder.stdout.readline().strip()
        result = sfauth.run("doctor", "--port", port, HTTPS_PROXY="http://proxy.example:3128")
    finally:
        holder.kill()
        holder.wait()
        os.chmod(sfauth.home, 0o700)
    assert result.returncode == STORAGE, result.stdout
    checks = lines(result)
    assert checks["store"].startswith("PROBLEM") and "chmod 700" in checks["store"]
    assert checks["port"].startswith("PROBLEM") and f"held by python" in checks["port"] and f"(pid {holder.pid})" in checks["port"]
    assert "another sign-in" not in checks["port"] and "another --port" in checks["port"]
    assert checks["proxy"].startswith("note") and "HTTPS_PROXY" in checks["proxy"]


def test_doctor_checks_the_browser_the_display_and_the_server_are_really_there(sfauth, tmp_path):
    """$BROWSER must name something that exists, something must answer at DISPLAY, and the server must
    answer: else a sign-in would fail, and doctor says so and exits 1 (issue 17 §18)."""
    from conftest import free_port
    import socket
    listener = None
    for port in range(6100, 6200):                     # an X11 display N listens on TCP 6000+N
        try:
            listener = socket.socket()
            listener.bind(("127.0.0.1", port))
            listener.listen()
            break
        except OSError:
            listener.close()
            listener = None
    assert listener, "no free port in 6100-6199"
    try:
        display = f"127.0.0.1:{listener.getsockname()[1] - 6000}"
        good = sfauth.run("doctor", DISPLAY=display)
        assert lines(good)["display"].startswith("ok") and display in lines(good)["display"], good.stdout
    finally:
        listener.close()
    dead = sfauth.run("doctor", DISPLAY=display, BROWSER="no-such-browser-here --new-window")
    assert dead.returncode == STORAGE, dead.stdout
    assert lines(dead)["display"].startswith("PROBLEM") and "nothing answers" in lines(dead)["display"]
    assert lines(dead)["browser"].startswith("PROBLEM") and "cannot be found" in lines(dead)["browser"]
    unreachable = sfauth.run("doctor", "--server", f"http://127.0.0.1:{free_port()}/")
    assert unreachable.returncode == STORAGE, unreachable.stdout
    assert lines(unreachable)["clock"].startswith("PROBLEM") and "could not reach" in lines(unreachable)["clock"]


# -- sfauth doctor --issuer URL / --preset NAME: the server's published metadata (issue 18 §4) -------

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Providers"))
from entra import Entra, MSA_TENANT  # noqa: E402
from gitlab import GitLab  # noqa: E402
from keycloak import Keycloak  # noqa: E402


def server_lines(result):
    """The lines after the machine's own checks (display … proxy), in order."""
    out = result.stdout.splitlines()
    names = [line.split()[1] for line in out]
    return out[names.index("proxy") + 1:]


HTTP_NOTE = "note    http     {} uses plain http to this machine: fine for a test server, never for a real one"
NO_ISS = ("note    iss      no authorization_response_iss_parameter_supported (RFC 9207): the defence against mix-ups "
          "rests on sfauth's state per sign-in and redirect per server; fine")
NO_PKCE = ("note    pkce     no code_challenge_methods_supported: sfauth sends PKCE S256 anyway; "
           "the server does not say whether it checks it")
NO_REVOKE = ("note    revoke   no revocation_endpoint: sfauth logout can only forget the tokens on this machine; "
             "they stay valid at the server until they expire")
REFRESH_OK = "ok      refresh  scopes_supported lists offline_access: a sign-in can ask for a refresh token with it"


def doctor(sfauth, *args):
    # --port 0: the callback port of whatever else runs on this machine is not under test here.
    return sfauth.run("doctor", "--port", "0", *args)


def test_doctor_reads_the_test_servers_metadata_instead_of_the_default_accounts_server(sfauth, server):
    login(sfauth)                                       # a default account whose server is NOT the one asked about
    issuer = server["SFAUTH_TEST_ISSUER"]
    location = issuer + "/.well-known/openid-configuration"
    result = doctor(sfauth, "--issuer", issuer)
    assert result.returncode == OK, result.stdout + result.stderr
    found = server_lines(result)
    assert found[:2] == [f"ok      issuer   the metadata at {location} names {issuer}, as asked", HTTP_NOTE.format(issuer)], found
    assert f"ok      revoke   sfauth logout revokes the tokens at {server['SFAUTH_TEST_REVOKE_URL']}" in found, found
    iss = [line for line in found if line.split()[1] == "iss"]
    assert (iss[0].startswith("ok") if server["SFAUTH_TEST_ISS_PARAMETER"] == "1" else iss == [NO_ISS]), iss
    assert [line.split()[1] for line in found] == ["issuer", "http", "pkce", "revoke", "iss", "refresh", "device", "clock"], found
    assert found[-1].startswith(f"ok      clock    this machine is ") and found[-1].endswith(location), found[-1]


def test_doctor_on_entras_common_endpoint_notes_the_tenant_template_pkce_and_logout(sfauth):
    with Entra() as entra:
        issuer = entra.base_url + "/common/v2.0"
        result = doctor(sfauth, "--issuer", issuer)
        assert entra.errors == []
    assert result.returncode == OK, result.stdout + result.stderr
    assert server_lines(result)[:-1] == [
        f"note    issuer   the metadata names the issuer template {entra.base_url}/{{tenantid}}/v2.0 (Microsoft Entra's "
        "/common and /organizations): each ID token's iss is checked against it with that token's tid",
        HTTP_NOTE.format(issuer), NO_PKCE, NO_REVOKE, NO_ISS, REFRESH_OK,
        f"ok      device   sfauth login --device signs in through {entra.base_url}/common/oauth2/v2.0/devicecode",
    ]


def test_doctor_refuses_an_issuer_the_metadata_does_not_name(sfauth):
    """Entra's /consumers metadata names the personal-accounts tenant: sfauth login refuses it, doctor says so."""
    with Entra() as entra:
        issuer = entra.base_url + "/consumers/v2.0"
        result = doctor(sfauth, "--issuer", issuer)
    assert result.returncode == STORAGE, result.stdout
    advertised = f"{entra.base_url}/{MSA_TENANT}/v2.0"
    assert lines(result)["issuer"] == (
        f"PROBLEM issuer   the metadata at {issuer}/.well-known/openid-configuration is for the issuer {advertised}, "
        f"not {issuer}: sfauth refuses it; use exactly {advertised} if you trust it")


def test_doctor_tells_keycloak_22_from_26_by_rfc_9207(sfauth):
    for version, expected in [(22, NO_ISS), (26, "ok      iss      the server names itself in its redirects (RFC 9207 iss): "
                                                "sfauth checks it, against mix-ups")]:
        with Keycloak(version=version) as keycloak:
            result = doctor(sfauth, "--issuer", keycloak.issuer)
        assert result.returncode == OK, result.stdout
        found = server_lines(result)
        assert [line for line in found if line.split()[1] == "iss"] == [expected], found
        assert "ok      pkce     PKCE S256 is supported (code_challenge_methods_supported: S256, plain)" in found, found
        assert REFRESH_OK in found and f"ok      revoke   sfauth logout revokes the tokens at {keycloak.endpoint('revoke')}" in found


def test_doctor_with_a_preset_resolves_its_server_as_login_does(sfauth):
    """`--preset oidc --issuer` goes through the configuration, as `sfauth login` would; GitLab's metadata has
    no PKCE methods and no offline_access."""
    with GitLab() as gitlab:
        result = doctor(sfauth, "--preset", "oidc", "--issuer", gitlab.issuer)
    assert result.returncode == OK, result.stdout
    found = server_lines(result)
    assert NO_PKCE in found, found
    assert ("note    refresh  scopes_supported lacks offline_access: a refresh token comes another way (a provider "
            "parameter) or not at all; without one, sfauth signs in again when the access token expires") in found, found
    missing = doctor(sfauth, "--preset", "oidc")
    assert missing.returncode == STORAGE
    assert server_lines(missing) == [
        "PROBLEM config   flag --preset: preset 'oidc' needs issuer; give --issuer, SFAUTH_ISSUER or issuer in the profile "
        "(sfauth login would stop there too)"]


def test_doctor_with_a_preset_of_built_in_endpoints_says_there_is_no_metadata(sfauth):
    result = doctor(sfauth, "--preset", "github")
    found = server_lines(result)
    assert found[0] == ("note    metadata preset github: sfauth signs in with built-in endpoints "
                        "(https://github.com/login/oauth/authorize) and reads no server metadata, so there is none to check")
    assert [line.split()[1] for line in found] == ["metadata", "clock"], found    # the clock: of github.com


def test_doctor_falls_back_to_rfc_8414_and_names_what_to_check_when_there_is_no_metadata(sfauth):
    from stub_server import StubServer
    with StubServer() as stub:
        issuer = stub.url("/tenant")
        oauth = stub.url("/.well-known/oauth-authorization-server/tenant")
        stub.answer("/.well-known/oauth-authorization-server/tenant", 200, {
            "issuer": issuer, "authorization_endpoint": issuer + "/authorize", "token_endpoint": issuer + "/token",
            "code_challenge_methods_supported": ["plain"]})
        rfc8414 = doctor(sfauth, "--issuer", issuer)
        stub.answer("/page/.well-known/openid-configuration", 200, "<html><title>Sign in</title></html>",
                    headers={"Content-Type": "text/html"})
        page = doctor(sfauth, "--issuer", stub.url("/page"))
        nothing = doctor(sfauth, "--issuer", stub.url("/nothing"))
    assert rfc8414.returncode == STORAGE, rfc8414.stdout
    assert lines(rfc8414)["issuer"] == f"ok      issuer   the metadata at {oauth} names {issuer}, as asked"
    assert lines(rfc8414)["pkce"] == ("PROBLEM pkce     code_challenge_methods_supported lists plain, not S256: "
                                      "sfauth refuses servers that list PKCE methods without S256")
    assert lines(rfc8414)["clock"].startswith("ok") and lines(rfc8414)["clock"].endswith(oauth)
    assert server_lines(page) == [
        f"PROBLEM metadata {stub.url('/page')}/.well-known/openid-configuration answered with an HTML page instead of JSON "
        "metadata: check the issuer URL (a login page or a proxy may be answering)", page.stdout.splitlines()[-1]]
    assert page.returncode == STORAGE
    assert server_lines(nothing)[0] == (
        f"PROBLEM metadata no metadata at {stub.url('/nothing')}/.well-known/openid-configuration nor "
        f"{stub.url('/.well-known/oauth-authorization-server/nothing')} (HTTP 404): check the issuer URL; it is the "
        "server's issuer, as its tokens name it, not its login page")


def test_doctor_says_once_when_the_issuer_cannot_be_reached_or_is_plain_http(sfauth):
    from conftest import free_port
    issuer = f"http://127.0.0.1:{free_port()}/realm"
    unreachable = doctor(sfauth, "--issuer", issuer)
    assert unreachable.returncode == STORAGE, unreachable.stdout
    found = server_lines(unreachable)
    assert len(found) == 1 and found[0].startswith(
        f"PROBLEM metadata could not reach {issuer}/.well-known/openid-configuration: "), found   # no clock line besides
    assert found[0].endswith("; check the issuer URL, the network and any proxy (a sign-in would fail the same way)")
    insecure = doctor(sfauth, "--issuer", "http://idp.example.com")
    assert insecure.returncode == STORAGE
    assert server_lines(insecure) == [
        "PROBLEM config   flag --issuer: the issuer 'http://idp.example.com' uses plain http; only https is allowed, "
        "except to this machine (127.0.0.1, ::1, localhost) (sfauth login would stop there too)"]
    both = sfauth.run("doctor", "--server", issuer, "--issuer", issuer)
    assert both.returncode == USAGE and "Give --server or --issuer/--preset, not both" in both.stderr
