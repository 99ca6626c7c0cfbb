"""`sfauth login --resource URL`: signing in to a protected resource (an MCP server) from nothing but its
URL, against two real implementations from PyPI (Tests/Server/MCP.md): the `mcp` SDK's own
authorization server and MCP server (Tests/Server/mcp_server.py), and django-mcp-oauth
(Tests/Server/mcp_second_server.py). The browser is the headless Chromium of the other tests; every
token is checked by the real MCP server, called with the real MCP SDK client (`call_tool`).
"""
import json
import pathlib

import pytest

from mcp_fixtures import McpHttpError, call_tool, forget_clients, mcp_second_server, mcp_server, stats  # noqa: F401

ADMIN_CALL = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "admin_echo", "arguments": {"text": "hi"}}})
WHOAMI_CALL = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}})
JSON_RPC = ["-X", "POST", "-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream"]


@pytest.fixture(autouse=True)
def private_discovery_cache(sfauth, tmp_path):
    """Each test its own metadata cache: the servers come and go on reused ports, and a document cached
    for another test's server at the same address would be taken for this one's (for 15 minutes)."""
    sfauth.env["XDG_CACHE_HOME"] = str(tmp_path / "cache")


def login(sfauth, resource, *extra, **env):
    return sfauth.run("login", "--resource", resource, *extra, **env)


def token(sfauth, resource, *extra):
    result = sfauth.run("token", "--resource", resource, *extra)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def accounts(sfauth):
    result = sfauth.run("accounts", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["accounts"]


def registrations(sfauth):
    directory = pathlib.Path(sfauth.home) / "registrations"
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def error_line(result):
    """The one line sfauth says about a failure (progress lines come before it)."""
    lines = [line for line in result.stderr.splitlines() if line.startswith("sfauth: ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


# ---------------------------------------------------------------- the MCP SDK's servers


def test_from_the_url_alone_to_a_tool_call(sfauth, mcp_server):
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    result = login(sfauth, resource)
    assert result.returncode == 0, result.stderr
    assert "Registered sfauth as a client at " + s["MCP_ISSUER"] in result.stderr
    assert f"Signed in to {resource}" in result.stderr
    assert sfauth.browser_report()["ok"]

    # The token the real MCP server accepts, through the real MCP SDK client.
    access_token = token(sfauth, resource)
    who = call_tool(resource, access_token, "whoami")
    assert who["resource"] == resource and who["scopes"] == ["mcp", "mcp:admin"]   # the resource's scopes_supported
    assert json.loads(token(sfauth, resource, "--format", "headers-json")) == {"Authorization": "Bearer " + access_token}

    # Registered as a native public client with one exact loopback redirect, port included;
    # `resource` on the authorization request and the code exchange (the server refuses a token
    # request without it: --require-resource is its default).
    seen = stats(s["MCP_AS_URL"])
    (client,) = seen["registered_clients"]
    assert client["application_type"] == "native" and client["token_endpoint_auth_method"] == "none"
    assert client["grant_types"] == ["authorization_code", "refresh_token"]
    (redirect,) = client["redirect_uris"]
    assert redirect.startswith("http://127.0.0.1:") and redirect.endswith("/callback") and redirect != "http://127.0.0.1/callback"
    assert [r["resource"] for r in seen["authorize_requests"]] == [resource]
    assert [(r["grant_type"], r["resource"], r["status"]) for r in seen["token_requests"]] == [("authorization_code", resource, 200)]

    # One account, keyed by the server and the resource, which says so.
    (account,) = accounts(sfauth)
    assert account["resource"] == resource and account["identifier"].endswith("/resource:" + resource)
    whoami = sfauth.run("whoami")
    assert any(line.split() == ["resource", resource] for line in whoami.stdout.splitlines()), whoami.stdout


def test_the_registration_and_its_port_are_reused_and_signing_in_again_renews_the_account(sfauth, mcp_server):
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    assert login(sfauth, resource, "--scope", "mcp").returncode == 0
    first = stats(s["MCP_AS_URL"])
    again = login(sfauth, resource, "--scope", "mcp")
    assert again.returncode == 0, again.stderr
    assert "Registered" not in again.stderr
    seen = stats(s["MCP_AS_URL"])
    assert seen["registrations"] == 1 and len(registrations(sfauth)) == 1
    # The same exact redirect URI every time (the server compares it, port included).
    assert {r["redirect_uri"] for r in seen["authorize_requests"]} == {first["registered_clients"][0]["redirect_uris"][0]}
    assert len(accounts(sfauth)) == 1
    # `login --account` signs the resource account in again the same way.
    name = accounts(sfauth)[0]["identifier"]
    assert sfauth.run("login", "--account", name).returncode == 0
    assert stats(s["MCP_AS_URL"])["registrations"] == 1 and len(accounts(sfauth)) == 1


def test_a_client_the_server_forgot_is_registered_again_before_the_browser_opens(sfauth, mcp_server):
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    assert login(sfauth, resource).returncode == 0
    old_port = stats(s["MCP_AS_URL"])["registered_clients"][0]["redirect_uris"][0]
    forget_clients(s["MCP_AS_URL"])
    result = login(sfauth, resource)
    assert result.returncode == 0, result.stderr
    assert "no longer knows the client it registered for sfauth" in result.stderr
    seen = stats(s["MCP_AS_URL"])
    assert seen["registrations"] == 2
    assert seen["registered_clients"][-1]["redirect_uris"] == [old_port]   # the same port again
    call_tool(resource, token(sfauth, resource), "whoami")


def test_a_refresh_names_the_resource_and_its_token_is_accepted(sfauth, mcp_server):
    s = mcp_server(access_token_seconds=4)
    resource = s["MCP_RESOURCE_URL"]
    assert login(sfauth, resource).returncode == 0
    first = token(sfauth, resource)
    renewed = token(sfauth, resource, "--refresh")
    assert renewed != first
    refreshes = [r for r in stats(s["MCP_AS_URL"])["token_requests"] if r["grant_type"] == "refresh_token"]
    assert [(r["resource"], r["status"]) for r in refreshes] == [(resource, 200)]
    assert call_tool(resource, renewed, "whoami")["resource"] == resource


def test_insufficient_scope_says_the_command_for_the_union_and_that_command_steps_up(sfauth, mcp_server):
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    assert login(sfauth, resource, "--scope", "mcp").returncode == 0
    with pytest.raises(McpHttpError) as refused:
        call_tool(resource, token(sfauth, resource), "admin_echo", {"text": "hi"})
    assert refused.value.status == 403 and "insufficient_scope" in refused.value.www_authenticate

    # Without a terminal: the command for the scopes held and those asked for, exit 3.
    result = sfauth.run("request", *JSON_RPC, "-d", ADMIN_CALL, resource)
    assert result.returncode == 3, result.stderr
    line = error_line(result)
    assert "insufficient_scope; it lacks mcp:admin" in line
    assert f"sfauth login --resource {resource} --scope 'mcp mcp:admin'" in line

    # That command renews the same account with both scopes; the call then succeeds.
    assert login(sfauth, resource, "--scope", "mcp mcp:admin").returncode == 0
    assert len(accounts(sfauth)) == 1
    ok = sfauth.run("request", *JSON_RPC, "-d", ADMIN_CALL, resource)
    assert ok.returncode == 0 and '"isError":false' in ok.stdout.replace(" ", ""), ok.stdout + ok.stderr


def test_a_token_is_never_sent_to_another_resource(sfauth, mcp_server):
    s = mcp_server(second_resource=True)
    first, second = s["MCP_RESOURCE_URL"], s["MCP_SECOND_RESOURCE_URL"]
    assert login(sfauth, first).returncode == 0
    # The URL is within no account's resource: asked (a bare GET, no token) what it is; its 401 names what to do.
    result = sfauth.run("request", *JSON_RPC, "-d", WHOAMI_CALL, second)
    assert result.returncode == 3, result.stderr
    assert f"Run `sfauth login --resource {second}`" in error_line(result)
    # Asked explicitly to use the first resource's account there: refused before anything is sent.
    result = sfauth.run("request", "--resource", first, *JSON_RPC, "-d", WHOAMI_CALL, second)
    assert result.returncode == 2 and "is outside " + first in error_line(result)
    # The token itself is bound to its resource by the server too.
    with pytest.raises(McpHttpError) as refused:
        call_tool(second, token(sfauth, first), "whoami")
    assert refused.value.status == 401
    # `token --resource` for a resource no account is bound to: exit 3 with the command.
    result = sfauth.run("token", "--resource", second)
    assert result.returncode == 3 and f"sfauth login --resource {second}" in error_line(result)
    # Its own URL: the account bound to it is used by itself.
    ok = sfauth.run("request", *JSON_RPC, "-d", WHOAMI_CALL, first)
    assert ok.returncode == 0 and first in ok.stdout


@pytest.mark.parametrize("kind, says", [
    ("resource-mismatch", "refused (RFC 9728 §3.3)"),
    ("foreign-metadata", "points at metadata on another origin"),
    ("no-s256", "does not support PKCE with S256"),
    ("no-pkce-list", "does not list PKCE S256"),
    ("issuer-mismatch", "the server the resource names: refused (RFC 8414 §3.3)"),
    ("registration-without-client-id", "answered without a client_id"),
])
def test_hostile_metadata_is_refused_with_one_line_and_nothing_stored(sfauth, mcp_server, kind, says):
    s = mcp_server(hostile=kind)
    result = login(sfauth, s["MCP_RESOURCE_URL"])
    assert result.returncode == 2, result.stderr
    assert says in error_line(result)
    assert sfauth.stored_accounts() == [] and registrations(sfauth) == []
    assert not sfauth.browser_log.exists(), "the browser was opened"


def test_force_signs_the_resources_own_account_in_again(sfauth, mcp_server):
    """`login --force --resource` signs the resource's own account in again (not the default one)."""
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    assert login(sfauth, resource).returncode == 0
    before = token(sfauth, resource)
    result = login(sfauth, resource, "--force")
    assert result.returncode == 0, result.stderr
    assert len(accounts(sfauth)) == 1 and token(sfauth, resource) != before


# ---------------------------------------------------------------- django-mcp-oauth


def test_a_second_implementation_signs_in_reuses_its_registration_and_refreshes(sfauth, mcp_second_server):
    # Refresh tokens rotating as a deployment would configure them (the library's default answers a
    # refresh without a new refresh token yet retires the old one after 60 s: Tests/Server/MCP.md).
    s = mcp_second_server(rotate_refresh_tokens=True)
    resource = s["MCP_RESOURCE_URL"]
    env = {"SFAUTH_TEST_USERNAME": s["MCP_USERNAME"], "SFAUTH_TEST_PASSWORD": s["MCP_PASSWORD"]}
    result = login(sfauth, resource, **env)
    assert result.returncode == 0, result.stderr
    assert "Registered sfauth as a client at " + s["MCP_ISSUER"] in result.stderr
    access_token = token(sfauth, resource)
    assert call_tool(resource, access_token, "whoami")["resource"] == resource
    # Its challenge names the root metadata; the account is still bound to the exact resource.
    assert accounts(sfauth)[0]["resource"] == resource
    again = login(sfauth, resource, **env)
    assert again.returncode == 0 and "Registered" not in again.stderr, again.stderr
    assert len(registrations(sfauth)) == 1 and len(accounts(sfauth)) == 1
    renewed = token(sfauth, resource, "--refresh")
    assert renewed != access_token
    assert call_tool(resource, renewed, "whoami")["resource"] == resource


# ---------------------------------------------------------------- at a terminal


def run_at_a_terminal(sfauth, arguments, answer=None, within=90):
    """Runs sfauth with a pseudo-terminal on stdin and stderr (stdout a pipe, as for a program reading
    the response), typing `answer` once the question appears; returns (exit status, stdout, screen)."""
    import os
    import pty
    import select
    import subprocess
    import time
    leader, follower = pty.openpty()
    process = subprocess.Popen([sfauth.binary, *arguments], env=sfauth.env, stdin=follower, stdout=subprocess.PIPE,
                               stderr=follower, start_new_session=True)
    os.close(follower)
    screen = b""
    answered = answer is None
    deadline = time.time() + within
    while process.poll() is None and time.time() < deadline:
        if select.select([leader], [], [], 0.2)[0]:
            try:
                screen += os.read(leader, 4096)
            except OSError:
                break
        if not answered and b"[Y/n]" in screen:
            os.write(leader, answer)
            answered = True
    stdout = process.communicate(timeout=max(1, deadline - time.time()))[0].decode()
    # What the process wrote just before it exited is still in the terminal: read it to the end.
    while select.select([leader], [], [], 0.5)[0]:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    os.close(leader)
    return process.returncode, stdout, screen.decode(errors="replace")


def test_at_a_terminal_insufficient_scope_signs_in_again_and_sends_the_request_once_more(sfauth, mcp_server):
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    assert login(sfauth, resource, "--scope", "mcp").returncode == 0
    status, stdout, screen = run_at_a_terminal(sfauth, ["request", *JSON_RPC, "-d", ADMIN_CALL, resource])
    assert status == 0, screen
    assert "insufficient_scope; it lacks mcp:admin); signing in again for mcp mcp:admin" in screen
    assert '"isError":false' in stdout.replace(" ", "") and "hi" in stdout
    (account,) = accounts(sfauth)
    # The sign-in, then (the registration reused) the check that the server still knows it, then the browser's.
    assert [r["scopes"] for r in stats(s["MCP_AS_URL"])["authorize_requests"]] == [["mcp"], ["mcp", "mcp:admin"], ["mcp", "mcp:admin"]]
    assert call_tool(resource, token(sfauth, resource), "admin_echo", {"text": "again"})


def test_at_a_terminal_a_resource_without_an_account_offers_the_sign_in(sfauth, mcp_server):
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    status, stdout, screen = run_at_a_terminal(sfauth, ["request", *JSON_RPC, "-d", WHOAMI_CALL, resource], answer=b"y\n")
    assert status == 0, screen
    assert f"no account is signed in to it. Sign in to {resource} now? [Y/n]" in screen
    assert resource in stdout and '"isError":false' in stdout.replace(" ", "")
    assert accounts(sfauth)[0]["resource"] == resource
    # Declined: nothing is signed in, and the command is said (exit 3).
    other = mcp_server()
    status, _, screen = run_at_a_terminal(sfauth, ["request", *JSON_RPC, "-d", WHOAMI_CALL, other["MCP_RESOURCE_URL"]], answer=b"n\n")
    assert status == 3 and f"sfauth login --resource {other['MCP_RESOURCE_URL']}" in screen
    assert len(accounts(sfauth)) == 1


# ---------------------------------------------------------------- the other commands


def test_exec_config_and_headers_json_for_a_resource_and_for_any_account(sfauth, server, mcp_server):
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    # `config` is the dry run: the resource's sign-in, not the profile's or Salesforce's defaults.
    dry = sfauth.run("config", "--resource", resource, "--scope", "mcp")
    assert dry.returncode == 0, dry.stderr
    assert "login.salesforce.com" not in dry.stdout and "PlatformCLI" not in dry.stdout
    assert any(line.split()[:2] == ["resource", resource] for line in dry.stdout.splitlines())
    assert any(line.split()[:2] == ["client_id", "(registered)"] for line in dry.stdout.splitlines())
    conflicting = sfauth.run("config", "--resource", resource, "--preset", "github")
    assert conflicting.returncode == 2 and "leave out --preset" in error_line(conflicting)

    assert login(sfauth, resource).returncode == 0
    # `exec --resource`: the resource's token in the command's environment.
    seen = sfauth.run("exec", "--resource", resource, "--", "sh", "-c", 'printf %s "$SF_ACCESS_TOKEN"')
    assert seen.returncode == 0 and seen.stdout == token(sfauth, resource)
    # `--format headers-json` for an account that is not a resource's (the test server's).
    assert sfauth.run(*sfauth.login_args()).returncode == 0
    plain = sfauth.run("token")
    headers = sfauth.run("token", "--format", "headers-json")
    assert headers.returncode == 0 and json.loads(headers.stdout) == {"Authorization": "Bearer " + plain.stdout.strip()}
    # --resource with an account bound to none is a per-call target of that account (issue 20): the test
    # server ignores `resource` and its opaque token cannot show otherwise, so nothing is handed out and the
    # resource's own sign-in is said.
    plain_account = next(a["identifier"] for a in accounts(sfauth) if a["resource"] is None)
    other = sfauth.run("token", "--account", plain_account, "--resource", resource)
    assert other.returncode == 5 and other.stdout == "", other.stderr
    assert "does not say what it is for" in error_line(other) and f"sfauth login --resource {resource}" in error_line(other)


def test_a_taken_port_gets_a_new_registration(sfauth, mcp_server):
    import socket
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    assert login(sfauth, resource).returncode == 0
    registered = stats(s["MCP_AS_URL"])["registered_clients"][0]["redirect_uris"][0]
    port = int(registered.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # the port is in TIME_WAIT from the sign-in
        holder.bind(("127.0.0.1", port))
        holder.listen(1)
        result = login(sfauth, resource)
    assert result.returncode == 0, result.stderr
    assert "Registered sfauth as a client" in result.stderr
    seen = stats(s["MCP_AS_URL"])
    assert seen["registrations"] == 2 and seen["registered_clients"][-1]["redirect_uris"] != [registered]
    call_tool(resource, token(sfauth, resource), "whoami")


def test_logout_forgets_a_resource_account_and_says_what_the_sdks_server_refused(sfauth, mcp_server):
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    assert login(sfauth, resource).returncode == 0
    result = sfauth.run("logout")
    # The MCP SDK's revocation endpoint requires a client_secret field even from a public client
    # (Tests/Server/MCP.md): refused, said, and the account is gone here all the same.
    assert result.returncode == 5, result.stderr
    assert "refused to revoke the refresh token" in result.stderr and "client_secret" in result.stderr
    assert accounts(sfauth) == []
    # The registration stays: it belongs to the server, not to the account.
    assert len(registrations(sfauth)) == 1


def test_the_front_end_alone_answers_a_resources_token_and_its_headers(sfauth, mcp_server, tmp_path):
    """`token --resource URL [--format headers-json]` — what a header helper runs on every connection —
    is a hot path: a copy of the front end with no main program beside it answers it, with the main
    program's bytes; another spelling of the resource, or another format, is handed over (exit 9)."""
    import shutil
    import subprocess
    s = mcp_server()
    resource = s["MCP_RESOURCE_URL"]
    assert login(sfauth, resource).returncode == 0
    lone = tmp_path / "lone" / "sfauth"
    lone.parent.mkdir()
    shutil.copy2(sfauth.binary, lone)

    def front(*arguments):
        return subprocess.run([str(lone), *arguments], env=sfauth.env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=30)
    for arguments in (["--resource", resource], ["--resource", resource, "--format", "headers-json"],
                      [f"--resource={resource}", "--format=headers-json"], ["--format", "headers-json"]):
        main = sfauth.run("token", *arguments)
        alone = front("token", *arguments)
        assert main.returncode == 0 and alone.returncode == 0, (arguments, alone.stderr)
        assert alone.stdout == main.stdout, arguments
    assert json.loads(front("token", "--resource", resource, "--format", "headers-json").stdout)["Authorization"].startswith("Bearer ")
    # Without the store's name index (an older sfauth's store), the main program answers once and
    # rebuilds the index; the front end answers from then on.
    shutil.rmtree(sfauth.home / "names")
    assert front("token", "--resource", resource).returncode == 9
    assert sfauth.run("token", "--resource", resource).returncode == 0
    assert front("token", "--resource", resource).returncode == 0
    for handed_over in (["--resource", resource.replace("http://", "HTTP://")], ["--resource", resource, "--format", "json"],
                        ["--resource", resource, "--account", accounts(sfauth)[0]["identifier"]]):
        assert front("token", *handed_over).returncode == 9, handed_over
        assert sfauth.run("token", *handed_over).returncode == 0, handed_over
