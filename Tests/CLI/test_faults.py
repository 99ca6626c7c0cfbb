"""Misbehaving servers, end to end: the built binary against Tests/Faults/fault_server.py, a proxy to
the test server that fails one endpoint at a time (5xx with HTML, refused, reset mid-body, silence,
truncated or oversized JSON, wrong content types, token responses without access_token or with a
non-Bearer token_type, an untrusted TLS certificate).

For every (operation, endpoint, fault) a failure must: exit with the documented status (6 for a
network or server failure), print ONE line on stderr starting `sfauth: ` that says what went
wrong and what to do (login may print its progress lines before it; see LOGIN_PROGRESS in
faults.py), not crash, and leave every file under $SFAUTH_HOME byte for byte as it was (names,
modes, contents) — except where the operation's purpose is to change it (a login that succeeds,
logout). The userinfo fetch after a sign-in is best effort: the sign-in must succeed anyway.

    SFAUTH_FAULT_REPORT=path   write the results as JSON (Tests/Faults/render_matrix.py → docs/fault-matrix.md)
The `timeout` cases run with SFAUTH_HTTP_TIMEOUT=3, so each waits 3 s rather than sfauth's default
30 s; every case runs every time.
"""
import dataclasses
import json
import os
import re
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from conftest import Sfauth
from faults import (GIST, LOGIN_PROGRESS, NETWORK, OK, USAGE, FaultServer, Run, copy_store,
                    failure_line_problems, fault_was_met, point_account_endpoint, record, run_sfauth,
                    signal_problem, store_diff, store_files, write_report)

# The `timeout` cases wait 3 s for the server, not the default 30 s.
HTTP_TIMEOUT_ENV = {"SFAUTH_HTTP_TIMEOUT": "3"}


LENIENT = {"text-plain", "json-as-html"}             # a good JSON body with a wrong label: accepted


@dataclasses.dataclass(frozen=True)
class Case:
    operation: str
    endpoint: str
    fault: str
    exit: int
    message: str
    store: str = "unchanged"
    slow: bool = False

    @property
    def id(self):
        return f"{self.operation}/{self.endpoint}/{self.fault}"


WHAT = {
    "html-500": "HTTP 500 (an HTML page)", "html-502": "HTTP 502 (an HTML page)", "html-503": "HTTP 503 (an HTML page)",
    "html-404": "HTTP 404", "json-503": "HTTP 503 with a JSON error (temporarily_unavailable)",
    "html-200": "an HTML page instead of JSON", "refused": "connection refused",
    "reset": "connection reset mid-answer", "timeout": "no answer (timed out)", "truncated-json": "truncated JSON",
    "oversize": "an answer over the 4 MiB cap", "no-access-token": "no access_token in the answer",
    "token-type-mac": "token_type 'mac', not Bearer", "no-device-code": "no device_code in the answer",
    "tls-untrusted": "an untrusted TLS certificate",
}
NAMES = {"token": "token endpoint", "discovery": "server metadata (discovery)", "jwks": "key set (JWKS)",
         "userinfo": "userinfo endpoint", "revocation": "revocation endpoint", "device": "device endpoint"}


def failing(operation, endpoint, faults, exit=NETWORK):
    cases = []
    for fault in faults:
        if fault == "none":
            cases.append(Case(operation, endpoint, "none", OK, "passes through: success",
                              "changed (purpose)" if operation != "token-refresh" else "changed (refreshed)"))
        elif fault in LENIENT:
            cases.append(Case(operation, endpoint, fault, OK, "accepted: the body is valid JSON whatever its label",
                              "changed (purpose)" if operation != "token-refresh" else "changed (refreshed)"))
        else:
            # The issuer URL is what the user typed: a 404 there means it names no OAuth server (fix the
            # command line); everything else — an HTML page included, as a failing proxy or server
            # sends — is the server's or the network's: retry later.
            code = USAGE if fault == "html-404" and endpoint == "discovery" else exit
            advice = "check the issuer URL" if code == USAGE else "try again later"
            store = "rotated refresh token kept" if (operation, fault) == ("token-refresh", "token-type-mac") else "unchanged"
            cases.append(Case(operation, endpoint, fault, code, f"{NAMES[endpoint]}: {WHAT[fault]}; {advice}", store,
                              slow=fault == "timeout"))
    return cases


TOKEN_FAULTS = ["html-500", "html-502", "html-503", "json-503", "refused", "reset", "timeout", "truncated-json",
                "html-200", "text-plain", "json-as-html", "oversize", "no-access-token", "token-type-mac",
                "tls-untrusted"]

REFRESH_CASES = failing("token-refresh", "token", TOKEN_FAULTS)
CLIENT_CREDENTIALS_CASES = (
    failing("login-client-credentials", "token", ["none"] + TOKEN_FAULTS)
    + failing("login-client-credentials", "discovery",
              ["html-503", "html-404", "refused", "reset", "timeout", "truncated-json", "html-200", "text-plain",
               "oversize", "tls-untrusted"])
    + [Case("login-client-credentials", "userinfo", fault, OK,
            "sign-in succeeds (userinfo is best effort)", "changed (purpose)", slow=fault == "timeout")
       for fault in ["html-503", "refused", "reset", "timeout", "truncated-json", "html-200", "oversize",
                     "tls-untrusted"]])
PASSWORD_CASES = failing("login-password", "token", ["none", "html-503", "truncated-json", "no-access-token"])
BROWSER_CASES = failing("login-browser", "token", ["html-503", "reset"])
JWKS_CASES = failing("login-browser", "jwks", ["html-503", "refused", "truncated-json", "tls-untrusted"])
DEVICE_CASES = failing("login-device", "device",
                       ["none", "html-503", "refused", "reset", "timeout", "truncated-json", "html-200",
                        "no-device-code", "tls-untrusted"])
LOGOUT_CASES = [Case("logout", "revocation", fault, NETWORK if fault != "none" else OK,
                     "logged out here; says the tokens were NOT revoked at the server and why, and exits 6" if fault != "none"
                     else "revoked at the server and logged out", "changed (purpose: account removed)",
                     slow=fault == "timeout")
                for fault in ["none", "html-500", "html-503", "json-503", "refused", "reset", "timeout",
                              "tls-untrusted"]]


def params(cases):
    return [pytest.param(case, id=case.id) for case in cases]


# ------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def fault_server(server, tmp_path_factory):
    running = FaultServer(server, tmp_path_factory.mktemp("fault-server") / "requests.log")
    yield running
    running.stop()


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    path = os.environ.get("SFAUTH_FAULT_REPORT")
    if path:
        write_report(path)


@pytest.fixture(autouse=True)
def disarmed(fault_server):
    fault_server.reset()
    yield
    fault_server.reset()


@pytest.fixture(scope="module")
def template(binary, server, fault_server, tmp_path_factory):
    """A store with one account signed in through the fault proxy (browser, short-lived tokens, an ID
    token validated against the proxy's issuer and JWKS), refreshed once through it: every endpoint
    of the account is on the proxy, and the lock files exist."""
    base = tmp_path_factory.mktemp("fault-template")
    sfauth = Sfauth(binary, server, base)
    login = sfauth.run("login", "--issuer", fault_server.issuer, "--client-id", server["SFAUTH_TEST_SHORT_CLIENT_ID"],
                       "--scope", "openid profile", XDG_CACHE_HOME=str(base / "cache"))
    assert login.returncode == OK, login.stderr
    hits = fault_server.state()["hits"]
    assert hits.get("token", 0) >= 1 and hits.get("jwks", 0) >= 1, hits       # really through the proxy
    refresh = sfauth.run("token", "--refresh")
    assert refresh.returncode == OK, refresh.stderr
    assert fault_server.state()["hits"]["token"] >= 2
    return sfauth.home


def env_for(case, **env):
    return dict(env, **(HTTP_TIMEOUT_ENV if case.fault == "timeout" else {}))


def judge(case, run, before, after, fault_before, fault_after, *, progress=(), success_check=None, store_changes_ok=False,
          required_change=None, failure_check=None):
    """Checks a run against its case; records the outcome; fails the test with every problem found."""
    problems = signal_problem(run.returncode)
    if run.returncode != case.exit:
        problems.append(f"exit {run.returncode}, expected {case.exit}")
    met = fault_was_met(fault_before, fault_after, case.endpoint, case.fault) if case.fault != "none" else None
    if met is False:
        problems.append(f"the fault server never served {case.fault} on {case.endpoint}: the case tested nothing")
    unchanged = before == after
    if case.exit == OK:
        if success_check:
            problems += success_check(run)
        if not store_changes_ok and not unchanged:
            problems.append("the store changed: " + store_diff(before, after))
    else:
        if run.stdout:
            problems.append(f"stdout is not empty: {run.stdout[:100]!r}")
        if failure_check:
            # A failure that has done its purpose all the same (logout: the account is gone here).
            problems += failure_check(run)
        else:
            problems += failure_line_problems(run.stderr, progress, advice=case.exit == NETWORK, gist=GIST.get(case.fault))
        if failure_check:
            pass
        elif required_change:
            # The answer was unusable, yet it carried a rotated refresh token: that one must be kept.
            problems += required_change()
        elif not unchanged:
            problems.append("the store changed: " + store_diff(before, after))
    record(case, run, problems, unchanged, met)
    assert not problems, f"{run.command}\nexit {run.returncode}\nstderr:\n{run.stderr}\nproblems:\n- " + "\n- ".join(problems)


def one_line_success(run, pattern):
    lines = run.stderr.splitlines()
    problems = []
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines on stderr (want 1)")
    if not lines or not re.search(pattern, lines[-1], re.I):
        problems.append(f"the stderr line does not match /{pattern}/")
    return problems


# ------------------------------------------------------------------ sfauth token (refresh)

@pytest.mark.parametrize("case", params(REFRESH_CASES))
def test_token_refresh(case, sfauth, fault_server, template):
    copy_store(template, sfauth.home)
    if case.fault in ("refused", "tls-untrusted"):
        point_account_endpoint(sfauth.home, "tokenEndpoint", fault_server.endpoint_url("token", case.fault))
    fault_server.arm("token", case.fault)
    before, fault_before = store_files(sfauth.home), fault_server.state()
    run = run_sfauth(sfauth, "token", "--refresh", **env_for(case))
    fault_after = fault_server.state()

    def served_token(result):
        expected = (fault_after["last_token"] or {}).get("access_token")
        return [] if result.stdout == f"{expected}\n" else [f"stdout {result.stdout[:60]!r} is not the served token"]

    def kept_rotated_refresh_token():
        # A server that rotates has retired the old refresh token when it answers, usable or not.
        rotated = (fault_after["last_token"] or {}).get("refresh_token")
        [account] = (sfauth.home / "accounts").glob("*.json")
        stored = json.loads(account.read_text())
        [original] = (template / "accounts").glob("*.json")
        problems = [] if stored["refreshToken"] == rotated else [f"the rotated refresh token {rotated!r} was not kept"]
        if stored["accessToken"] != json.loads(original.read_text())["accessToken"]:
            problems.append("the unusable answer's access token was stored")
        return problems

    judge(case, run, before, store_files(sfauth.home), fault_before, fault_after, success_check=served_token,
          store_changes_ok=True, required_change=kept_rotated_refresh_token if case.fault == "token-type-mac" else None)


# ------------------------------------------------------------------ sfauth login without a browser

def client_credentials_login(sfauth, server, issuer, case):
    return run_sfauth(sfauth, "login", "--issuer", issuer, "--client-id", server["SFAUTH_TEST_SERVICE_CLIENT_ID"],
                      "--client-credentials",
                      **env_for(case, SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"],
                                XDG_CACHE_HOME=str(sfauth.home.parent / "cache")))


def signed_in(sfauth, before):
    """The sign-in succeeded: said so, stored something (a new account, or the same user's account
    replaced), and `sfauth token` hands out a token afterwards."""
    def check(run):
        problems = []
        if "Signed in as" not in run.stderr:
            problems.append("no 'Signed in as' line")
        if any(line.startswith("sfauth") for line in run.stderr.splitlines()):
            problems.append("an error line on stderr although the sign-in succeeded")
        if store_files(sfauth.home) == before:
            problems.append("the store did not change: the sign-in was not stored")
        token = sfauth.run("token")
        if token.returncode != OK:
            problems.append(f"sfauth token afterwards: exit {token.returncode}: {token.stderr.strip()}")
        return problems
    return check


@pytest.mark.parametrize("case", params(CLIENT_CREDENTIALS_CASES))
def test_login_client_credentials(case, sfauth, server, fault_server, template):
    copy_store(template, sfauth.home)                    # an account is stored: a failed login keeps it as it is
    fault_server.arm(case.endpoint, case.fault)
    issuer = fault_server.issuer_for(case.fault) if case.endpoint == "discovery" else fault_server.issuer
    before, fault_before = store_files(sfauth.home), fault_server.state()
    run = client_credentials_login(sfauth, server, issuer, case)
    judge(case, run, before, store_files(sfauth.home), fault_before, fault_server.state(), progress=LOGIN_PROGRESS,
          success_check=signed_in(sfauth, before), store_changes_ok=True)


@pytest.mark.parametrize("case", params(PASSWORD_CASES))
def test_login_password(case, sfauth, server, fault_server, template):
    copy_store(template, sfauth.home)
    fault_server.arm("token", case.fault)
    before, fault_before = store_files(sfauth.home), fault_server.state()
    run = run_sfauth(sfauth, "login", "--issuer", fault_server.issuer, "--client-id", server["SFAUTH_TEST_PASSWORD_CLIENT_ID"],
                     "--password", "--username", "alice", stdin="alice-password\n",
                     SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_PASSWORD_CLIENT_SECRET"],
                     XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    judge(case, run, before, store_files(sfauth.home), fault_before, fault_server.state(), progress=LOGIN_PROGRESS,
          success_check=signed_in(sfauth, before), store_changes_ok=True)


# ------------------------------------------------------------------ sfauth login in the browser

@pytest.mark.parametrize("case", params(BROWSER_CASES))
def test_login_browser_token_exchange(case, sfauth, fault_server, template):
    """The browser signs in at the real server; the code exchange meets the fault."""
    copy_store(template, sfauth.home)
    fault_server.arm("token", case.fault)
    before, fault_before = store_files(sfauth.home), fault_server.state()
    run = run_sfauth(sfauth, *sfauth.login_args(token_url=fault_server.endpoint_url("token", case.fault)))
    judge(case, run, before, store_files(sfauth.home), fault_before, fault_server.state(), progress=LOGIN_PROGRESS)


@pytest.mark.parametrize("case", params(JWKS_CASES))
def test_login_browser_id_token_keys(case, sfauth, server, fault_server, template):
    """`--issuer <proxy>`: the ID token of the sign-in is checked against the proxy's JWKS, which fails."""
    copy_store(template, sfauth.home)
    fault_server.arm("jwks", case.fault)
    before, fault_before = store_files(sfauth.home), fault_server.state()
    run = run_sfauth(sfauth, "login", "--issuer", fault_server.issuer, "--client-id", server["SFAUTH_TEST_CLIENT_ID"],
                     "--scope", "openid profile", XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    judge(case, run, before, store_files(sfauth.home), fault_before, fault_server.state(), progress=LOGIN_PROGRESS)


# ------------------------------------------------------------------ sfauth login --device

def approve_device_login(sfauth, server, args, env):
    """Runs a device login that passes through the proxy, approving its code with the server's control."""
    started = time.monotonic()
    process = sfauth.start(*args, **env)
    process.stdin.close()
    process.stdin = None
    shown = []
    deadline = time.time() + 30
    while time.time() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        shown.append(line)
        match = re.search(r"user_code=(\S+)", line)
        if match:
            data = urllib.parse.urlencode({"user_code": match.group(1), "action": "approve",
                                           "username": server["SFAUTH_TEST_USERNAME"]}).encode()
            urllib.request.urlopen(urllib.request.Request(server["SFAUTH_TEST_DEVICE_DECIDE_URL"], data=data), timeout=10).read()
            break
    stdout, rest = process.communicate(timeout=60)
    completed = subprocess.CompletedProcess(args, process.returncode, stdout, "".join(shown) + rest)
    return Run(list(args), {"SFAUTH_HOME": str(sfauth.home), **env}, completed, time.monotonic() - started)


@pytest.mark.parametrize("case", params(DEVICE_CASES))
def test_login_device(case, sfauth, server, fault_server, template):
    copy_store(template, sfauth.home)
    fault_server.arm("device", case.fault)
    before, fault_before = store_files(sfauth.home), fault_server.state()
    args = ["login", "--issuer", fault_server.issuer, "--client-id", server["SFAUTH_TEST_DEVICE_CLIENT_ID"], "--device",
            "--timeout", "60"]
    env = env_for(case, XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    if case.fault == "none":
        run = approve_device_login(sfauth, server, args, env)
    else:
        run = run_sfauth(sfauth, *args, **env)
    judge(case, run, before, store_files(sfauth.home), fault_before, fault_server.state(), progress=LOGIN_PROGRESS,
          success_check=signed_in(sfauth, before), store_changes_ok=True)


# ------------------------------------------------------------------ sfauth logout

@pytest.mark.parametrize("case", params(LOGOUT_CASES))
def test_logout(case, sfauth, fault_server, template):
    """README: the tokens are revoked, then removed here; if the server cannot be reached they are still
    removed, and it says what was not revoked. So: the account gone; revoked: exit 0 and one line
    saying so; not revoked: the line saying what was not revoked and why, then sfauth's one failure
    line with what to do, exit 6 (issue 17 §18: a revocation not confirmed is not a success)."""
    copy_store(template, sfauth.home)
    if case.fault in ("refused", "tls-untrusted"):
        point_account_endpoint(sfauth.home, "revocationEndpoint", fault_server.endpoint_url("revocation", case.fault))
    fault_server.arm("revocation", case.fault)
    before, fault_before = store_files(sfauth.home), fault_server.state()
    run = run_sfauth(sfauth, "logout", **env_for(case))
    after = store_files(sfauth.home)

    def logged_out(result):
        if case.fault == "none":
            problems = one_line_success(result, r"^Logged out of .+: revoked the refresh token")
        else:
            said = r"Logged out of .+: .*(not revoked|only forgotten locally).*"
            problems = failure_line_problems(result.stderr, (said,), advice=False)
            lines = result.stderr.splitlines()
            if len(lines) != 2 or not re.fullmatch(said, lines[0]):
                problems.append(f"want the line /{said}/, then the failure line: {lines!r}")
            if not re.search(r"did not confirm the revocation .*revoke them at the server", lines[-1] if lines else ""):
                problems.append("the failure line does not say what was not confirmed and what to do")
            gist = GIST[case.fault]
            if result.stderr and not re.search(gist, result.stderr, re.I):
                problems.append(f"the line does not say why the tokens were not revoked (/{gist}/)")
        if sfauth.stored_accounts():
            problems.append(f"accounts left: {sfauth.stored_accounts()}")
        added = sorted(set(after) - set(before))
        if added:
            problems.append("files added to the store: " + ", ".join(added))
        return problems

    judge(case, run, before, after, fault_before, fault_server.state(), success_check=logged_out, store_changes_ok=True,
          failure_check=logged_out)


# ------------------------------------------------------------------ a refresh whose ID token cannot be checked

ROTATED_KEPT_CASE = Case("token-refresh", "jwks", "html-503", NETWORK,
                         "key set (JWKS): HTTP 503; try again later — and the refresh token the server just rotated "
                         "is kept (the next `sfauth token` works)", "changed (the rotated refresh token is stored)")


@pytest.mark.parametrize("case", params([ROTATED_KEPT_CASE]))
def test_token_refresh_keeps_the_rotated_refresh_token_when_the_id_token_keys_fail(case, binary, server, fault_server,
                                                                                  tmp_path):
    """The refresh passes through (the server rotates the refresh token and retires the old one), then
    the refreshed ID token's keys cannot be fetched. Whatever sfauth says, it must not forget the new
    refresh token: the stored one is now retired, and presenting it revokes the whole family."""
    sfauth = Sfauth(binary, server, tmp_path)
    login = sfauth.run("login", "--issuer", fault_server.issuer, "--client-id", server["SFAUTH_TEST_SHORT_CLIENT_ID"],
                       "--scope", "openid profile", XDG_CACHE_HOME=str(tmp_path / "cache"))
    assert login.returncode == OK, login.stderr
    fault_server.arm("jwks", case.fault)
    before, fault_before = store_files(sfauth.home), fault_server.state()
    run = run_sfauth(sfauth, "token", "--refresh")
    fault_after = fault_server.state()
    fault_server.reset()
    again = sfauth.run("token", "--refresh")

    problems = signal_problem(run.returncode)
    met = fault_was_met(fault_before, fault_after, "jwks", case.fault)
    if not met:
        problems.append("the refresh fetched no key set: its ID token was not checked, the case tested nothing")
    if fault_after["hits"].get("token", 0) <= fault_before["hits"].get("token", 0):
        problems.append("no refresh request reached the token endpoint")
    if run.returncode not in (OK, NETWORK):
        problems.append(f"exit {run.returncode}, expected {NETWORK} (or 0)")
    if run.returncode != OK:
        problems += failure_line_problems(run.stderr, advice=True, gist=GIST[case.fault])
    if again.returncode != OK:
        problems.append(f"the next `sfauth token` (fault gone) exits {again.returncode}: "
                        f"{again.stderr.strip()} — the rotated refresh token was lost")
    after = store_files(sfauth.home)
    record(case, run, problems, before == after, met, {"next_token_exit": again.returncode,
                                                       "next_token_stderr": again.stderr})
    assert not problems, f"{run.command}\nexit {run.returncode}\nstderr:\n{run.stderr}\nproblems:\n- " + "\n- ".join(problems)
