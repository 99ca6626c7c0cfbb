"""`sfauth login`, `token` and `logout` end to end: real server, real Chromium, the built binary."""
import json
import os
import re
import signal
import stat
import time
import urllib.parse
import urllib.request

from conftest import free_port, is_listening, redirect_uri_of

# Exit statuses documented in the README.
OK, STORAGE, USAGE, LOGIN_REQUIRED, CANCELLED, REFUSED, NETWORK = 0, 1, 2, 3, 4, 5, 6
LOCAL_FAULT = 9


def call_api(url, token):
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, None


def test_login_then_token_is_accepted_by_the_server(sfauth, server):
    login = sfauth.run(*sfauth.login_args())
    assert login.returncode == OK, login.stderr
    assert login.stdout == ""                       # stdout is an API: nothing but data
    assert "Opening your browser" in login.stderr
    assert "Signed in as" in login.stderr

    token = sfauth.run("token")
    assert token.returncode == OK, token.stderr
    assert token.stderr == ""
    assert re.fullmatch(r"\S+\n", token.stdout)
    status, body = call_api(server["SFAUTH_TEST_RESOURCE_URL"], token.stdout.strip())
    assert status == 200 and body["username"] == server["SFAUTH_TEST_USERNAME"]

    [account] = sfauth.stored_accounts()
    mode = stat.S_IMODE(os.stat(sfauth.home / "accounts" / account).st_mode)
    assert mode == 0o600
    assert stat.S_IMODE(os.stat(sfauth.home).st_mode) == 0o700
    assert sfauth.browser_report()["ok"] is True


def test_forged_callback_is_rejected_and_login_completes(sfauth):
    login = sfauth.run(*sfauth.login_args(), SFAUTH_TEST_BROWSER_FORGE="1")
    assert login.returncode == OK, login.stderr
    report = sfauth.browser_report()
    assert report["forged_status"] == 400
    assert "signed in" in report["page_text"].lower()
    assert sfauth.run("token").returncode == OK


def test_fixed_port_on_localhost_like_salesforce(sfauth):
    port = free_port()
    login = sfauth.run(*sfauth.login_args(extra=["--callback-host", "localhost", "--port", str(port),
                                                   "--callback-path", "/OauthRedirect"]))
    assert login.returncode == OK, login.stderr
    assert f"http://localhost:{port}/OauthRedirect" in login.stderr
    assert not is_listening("127.0.0.1", port)     # closed once the flow ended


def test_denied_consent_exits_cancelled_and_stores_nothing(sfauth):
    login = sfauth.run(*sfauth.login_args(), SFAUTH_TEST_BROWSER_ACTION="deny")
    assert login.returncode == CANCELLED, login.stderr
    assert "access_denied" in login.stderr
    assert login.stderr.strip().splitlines()[-1].startswith("sfauth: ")
    assert sfauth.stored_accounts() == []
    assert "access_denied" in sfauth.browser_report()["page_text"]
    assert sfauth.run("token").returncode == LOGIN_REQUIRED


def test_unregistered_redirect_uri_gives_a_clear_error(sfauth):
    login = sfauth.run(*sfauth.login_args(extra=["--callback-path", "/not-registered", "--timeout", "12"]),
                       SFAUTH_TEST_BROWSER_ACTION="login-only")
    assert login.returncode == CANCELLED, login.stderr
    last = login.stderr.strip().splitlines()[-1]
    assert "Timed out after 12 s. No redirect arrived." in last
    # The port was picked at random: registering it would not help the next sign-in.
    assert "redirects on any port" in last and "--port" in last, last
    assert not re.search(r"register http://127\.0\.0\.1:\d+", last), last
    # The server itself refused the redirect URI in the browser.
    assert "redirect" in sfauth.browser_report()["page_text"].lower()
    assert sfauth.stored_accounts() == []


def test_timeout_closes_the_listener(sfauth):
    started = time.time()
    login = sfauth.run(*sfauth.login_args(extra=["--no-browser", "--timeout", "2"]))
    assert login.returncode == CANCELLED
    assert time.time() - started < 15
    url = re.search(r"^\s+(http\S+)$", login.stderr, re.M).group(1)
    redirect = urllib.parse.urlsplit(redirect_uri_of(url))
    assert not is_listening(redirect.hostname, redirect.port)
    assert "Opening your browser" not in login.stderr


def test_ctrl_c_cancels_and_closes_the_listener(sfauth):
    process = sfauth.start(*sfauth.login_args(extra=["--no-browser"]))
    deadline = time.time() + 15
    lines = []
    while time.time() < deadline:
        line = process.stderr.readline()
        lines.append(line)
        if line.strip().startswith("http"):
            break
    url = lines[-1].strip()
    redirect = urllib.parse.urlsplit(redirect_uri_of(url))
    assert is_listening(redirect.hostname, redirect.port)
    process.send_signal(signal.SIGINT)
    process.wait(timeout=10)
    rest = process.stderr.read()
    assert process.returncode == CANCELLED, rest
    assert "cancelled" in rest
    assert not is_listening(redirect.hostname, redirect.port)


def test_network_failure_at_the_token_endpoint(sfauth):
    dead = f"http://127.0.0.1:{free_port()}/o/token/"
    login = sfauth.run(*sfauth.login_args(token_url=dead))
    assert login.returncode == NETWORK, login.stderr
    assert "Network error" in login.stderr
    assert sfauth.stored_accounts() == []


def test_server_refusal_keeps_the_error_verbatim(sfauth, server):
    # A confidential client that presents no secret: the token endpoint answers invalid_client.
    login = sfauth.run(*sfauth.login_args(client_id=server["SFAUTH_TEST_CONFIDENTIAL_CLIENT_ID"]))
    assert login.returncode == REFUSED, login.stderr
    assert "invalid_client" in login.stderr
    assert sfauth.stored_accounts() == []


def test_logout_forgets_credentials(sfauth):
    assert sfauth.run(*sfauth.login_args()).returncode == OK
    logout = sfauth.run("logout")
    assert logout.returncode == OK and "Logged out of alice" in logout.stderr and logout.stdout == ""
    assert sfauth.stored_accounts() == []
    assert sfauth.run("token").returncode == LOGIN_REQUIRED
    again = sfauth.run("logout")
    assert again.returncode == OK and "nothing to log out of" in again.stderr


def test_token_without_login(sfauth):
    token = sfauth.run("token")
    assert token.returncode == LOGIN_REQUIRED
    assert token.stdout == ""
    assert token.stderr.count("\n") == 1 and "sfauth login" in token.stderr


def test_corrupt_store_is_reported_and_kept(sfauth):
    (sfauth.home / "accounts").mkdir(parents=True)
    (sfauth.home / "default").write_text("x/y\n")
    broken = sfauth.home / "accounts" / "x%2Fy.json"
    broken.write_text("{ not json")
    token = sfauth.run("token")
    assert token.returncode == STORAGE
    assert str(broken) in token.stderr
    assert broken.read_text() == "{ not json"


def test_usage_errors_exit_2(sfauth):
    for args in (["login", "--authorize-url", "https://x/a"],            # no --token-url
                 ["login", "--sandbox", "--instance-url", "https://a.my.salesforce.com"],
                 ["login", "--timeout", "0"],
                 ["frobnicate"]):
        result = sfauth.run(*args)
        assert result.returncode == USAGE, (args, result.stderr)
        assert result.stdout == ""


def test_insecure_endpoint_is_a_configuration_error(sfauth):
    result = sfauth.run("login", "--authorize-url", "http://example.com/a", "--token-url", "http://example.com/t",
                        "--client-id", "c", "--no-browser")
    assert result.returncode == USAGE
    assert "plain http" in result.stderr


def test_help_has_examples(sfauth):
    for command in ([], ["login"], ["token"], ["logout"], ["accounts"], ["use"], ["whoami"]):
        result = sfauth.run(*command, "--help")
        assert result.returncode == OK
        assert "Example" in result.stdout


def test_extra_authorization_parameters_reach_the_server(sfauth):
    login = sfauth.run(*sfauth.login_args(extra=["--login-hint", "alice@example.test", "--param", "ui_locales=de fr"]))
    assert login.returncode == OK, login.stderr
    url = sfauth.browser_report()["url"]
    assert "&login_hint=alice%40example.test" in url and "&ui_locales=de%20fr" in url
    refused = sfauth.run(*sfauth.login_args(extra=["--param", "state=mine", "--no-browser"]))
    assert refused.returncode == USAGE and "'state' is set by sfauth itself" in refused.stderr
    assert sfauth.run(*sfauth.login_args(extra=["--param", "novalue", "--no-browser"])).returncode == USAGE


def test_a_listener_short_of_descriptors_is_a_local_fault_not_a_usage_error(sfauth):
    import resource
    import subprocess
    # How many descriptors sfauth opens before its listener's sockets depends on the machine: try a
    # range of limits; one of them lets the store be read and leaves no descriptor for a socket.
    faults = []
    for limit in range(4, 16):
        def limited(limit=limit):
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
        login = subprocess.run([sfauth.binary, *sfauth.login_args(extra=["--no-browser", "--timeout", "1"])],
                               env=sfauth.env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=30, preexec_fn=limited)
        assert login.returncode != USAGE, login.stderr
        if login.returncode == LOCAL_FAULT:
            assert "Local failure: " in login.stderr and "Too many open files" in login.stderr, login.stderr
            faults.append(limit)
    assert faults, "no limit made the listener fail"


def test_a_busy_fixed_port_names_the_sign_in_probably_waiting_on_it(sfauth):
    import socket
    import subprocess
    import sys
    holder = subprocess.Popen([sys.executable, "-c", "import socket,sys,time\n"
                               "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                               "s.bind(('127.0.0.1', 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = holder.stdout.readline().strip()
        login = sfauth.run(*sfauth.login_args(extra=["--port", port, "--no-browser", "--timeout", "5"]))
        assert login.returncode == USAGE, login.stderr
        assert f"port {port} on 127.0.0.1 is already in use, held by python" in login.stderr, login.stderr
        assert f"(pid {holder.pid})" in login.stderr
        # Not a sign-in holding it: no guess that one is waiting, but what to do (issue 17 §15).
        assert "another sign-in" not in login.stderr and "use another --port" in login.stderr and "leave out --port" in login.stderr
    finally:
        holder.kill()
        holder.wait()
