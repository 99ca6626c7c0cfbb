"""Fixtures and helpers for tests against the MCP test servers (Tests/Server/MCP.md):

    from mcp_fixtures import mcp_server, mcp_second_server, call_tool, stats  # noqa: F401

(Not named mcp.py: pytest puts this directory first on sys.path, and a module called `mcp` here would
hide the MCP SDK -- `import mcp.client` then fails.)

`mcp_server(**options)` (function-scoped factory): starts a private Tests/Server/mcp_server.py with
the flags the options name (`second_resource=True` -> --second-resource, `hostile="no-s256"` or a list
-> --hostile ..., `access_token_seconds=5`, `require_resource=False` -> --no-require-resource,
`auto_approve=True`) and returns its variables as a dict (MCP_AS_URL, MCP_ISSUER, MCP_RESOURCE_URL,
MCP_PRM_URL, MCP_SECOND_RESOURCE_URL, MCP_STATS_URL, ...; see mcp_server.py). Every instance is
stopped at the end of the test; each also watches this pytest process (--parent-pid) and has a TTL.

`mcp_second_server(**options)`: the same for Tests/Server/mcp_second_server.py (django-mcp-oauth).

`call_tool(resource_url, token, name, arguments)`: the MCP SDK's own client (streamable HTTP +
ClientSession) with `Authorization: Bearer <token>`: initialize, tools/call; returns the tool's
structured result (else its text content). An HTTP error raises McpHttpError(status, www_authenticate,
body).

`stats(as_url)`: the AS's GET /test/stats (registrations, token requests by grant with their
`resource`, authorize requests with redirect_uri and resource). `forget_clients(as_url)`: POST
/test/forget-clients.
"""
import asyncio
import json
import os
import pathlib
import subprocess
import sys
import time
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SERVER = REPO / "Tests" / "Server" / "mcp_server.py"
SECOND_SERVER = REPO / "Tests" / "Server" / "mcp_second_server.py"
PYTHON = os.environ.get("SFAUTH_TEST_VENV") and os.path.join(os.environ["SFAUTH_TEST_VENV"], "bin", "python") \
    or str(REPO / ".venv" / "bin" / "python")
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class McpHttpError(Exception):
    def __init__(self, status, www_authenticate=None, body=None):
        super().__init__(f"HTTP {status}: {www_authenticate or ''} {body or ''}".strip())
        self.status, self.www_authenticate, self.body = status, www_authenticate, body


def options_to_flags(options):
    flags = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False:
            if key == "require_resource":
                flags.append("--no-require-resource")
        elif value is None:
            continue
        elif isinstance(value, (list, tuple)):
            for item in value:
                flags += [flag, str(item)]
        else:
            flags += [flag, str(value)]
    return flags


def start_server(script, run_dir, options, timeout=60):
    """Starts `script` with the options; returns (process, variables). Raises when it does not come up."""
    run_dir = pathlib.Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    env_file = run_dir / "env.json"
    log_file = run_dir / "server.log"
    if env_file.exists():
        env_file.unlink()
    options = dict(options)
    options.setdefault("ttl", 900)
    command = [PYTHON, str(script), *options_to_flags(options), "--parent-pid", str(os.getpid()),
               "--write-env", str(env_file)]
    with open(log_file, "ab") as log:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                                   env={k: v for k, v in os.environ.items() if not k.endswith("_proxy")
                                        and not k.endswith("_PROXY")})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if env_file.exists():
            return process, json.loads(env_file.read_text())
        if process.poll() is not None:
            break
        time.sleep(0.05)
    stop_server(process)
    raise RuntimeError(f"{script.name} did not start ({' '.join(command)}):\n{log_file.read_text()[-3000:]}")


def stop_server(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    out = process.stdout.read() if process.stdout else b""
    if process.stdout:
        process.stdout.close()
    return out


def _factory(script, tmp_path, name):
    started = []

    def start(**options):
        process, values = start_server(script, tmp_path / f"{name}-{len(started)}", options)
        values = dict(values, process=process)
        started.append(values)
        return values
    return start, started


@pytest.fixture
def mcp_server(tmp_path):
    start, started = _factory(SERVER, tmp_path, "mcp-server")
    yield start
    for values in started:
        out = stop_server(values["process"])
        assert not out, f"mcp_server.py printed on stdout: {out[:200]!r}"


@pytest.fixture
def mcp_second_server(tmp_path):
    start, started = _factory(SECOND_SERVER, tmp_path, "mcp-second-server")
    yield start
    for values in started:
        stop_server(values["process"])


def stats(as_url):
    with _opener.open(as_url.rstrip("/") + "/test/stats", timeout=10) as response:
        return json.loads(response.read())


def forget_clients(as_url):
    request = urllib.request.Request(as_url.rstrip("/") + "/test/forget-clients", data=b"", method="POST")
    with _opener.open(request, timeout=10) as response:
        return json.loads(response.read())


async def call_tool_async(resource_url, token, name, arguments=None):
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    failures = []

    async def remember(response):
        if response.status_code >= 400:
            await response.aread()
            failures.append(McpHttpError(response.status_code, response.headers.get("www-authenticate"),
                                         response.text[:500]))

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, trust_env=False, timeout=30,
                                  event_hooks={"response": [remember]}) as http:
        try:
            async with streamable_http_client(resource_url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    result = await session.call_tool(name, arguments or {})
        except BaseException as error:  # noqa: BLE001 - task groups wrap the HTTP error
            if failures:
                raise failures[0] from error
            raise
    if failures:
        raise failures[0]
    if result.is_error:
        raise RuntimeError(f"tool {name} failed: {result.content}")
    if result.structured_content is not None:
        return result.structured_content
    return "".join(getattr(c, "text", "") for c in result.content)


def call_tool(resource_url, token, name, arguments=None):
    return asyncio.run(call_tool_async(resource_url, token, name, arguments))


if __name__ == "__main__":     # a manual check: mcp_fixtures.py RESOURCE_URL TOKEN TOOL [JSON]
    print(json.dumps(call_tool(sys.argv[1], sys.argv[2], sys.argv[3],
                               json.loads(sys.argv[4]) if len(sys.argv) > 4 else None)))
