"""Fixtures for running the `sfauth` binary against the third test server, NanoIDP
(scripts/third-server; Tests/Server/NANOIDP.md). Import them into a test module:

    from nanoidp import nanoidp, nsfauth  # noqa: F401  (pytest fixtures)

`nanoidp` (session): when SFAUTH_NANOIDP_SERVER_URL is set (`eval "$(scripts/third-server env)"`)
that server is used and left running; otherwise a private instance is started once per session in
<repo>/.test-run/nanoidp-pytest (its parent pid is this pytest process, so it also stops if pytest is
killed) and stopped at the end. Either way it yields the SFAUTH_NANOIDP_* variables as a dict.

`nsfauth`: conftest's `Sfauth` (a private SFAUTH_HOME, the headless test browser as $BROWSER, file
storage) pointed at NanoIDP, signing in as alice; it needs neither the DOT server nor its variables.
"""
import importlib.util
import json
import os
import pathlib
import subprocess
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "third-server"
PRIVATE_RUN_DIR = REPO / ".test-run" / "nanoidp-pytest"


def _cli_conftest():
    """This directory's conftest.py, loaded by path (another conftest module may be the one registered
    as `conftest` when several test directories run in one session)."""
    spec = importlib.util.spec_from_file_location("sfauth_cli_conftest", pathlib.Path(__file__).with_name("conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_conftest = _cli_conftest()
Sfauth = _conftest.Sfauth
free_port = _conftest.free_port


from private_server import parse_env_file as parse_env  # noqa: E402  (the same env-file format)


def issuer_of(url):
    """The issuer a discovery document at `url` names, None when nothing (usable) answers."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as response:
            return json.loads(response.read()).get("issuer") if response.status == 200 else None
    except (OSError, ValueError):
        return None


@pytest.fixture(scope="session")
def nanoidp():
    if os.environ.get("SFAUTH_NANOIDP_SERVER_URL"):
        env = {k: v for k, v in os.environ.items() if k.startswith("SFAUTH_NANOIDP_")}
        if issuer_of(env["SFAUTH_NANOIDP_DISCOVERY_URL"]) != env["SFAUTH_NANOIDP_ISSUER"]:
            pytest.fail(f"SFAUTH_NANOIDP_SERVER_URL={env['SFAUTH_NANOIDP_SERVER_URL']} does not answer: "
                        "run scripts/third-server start, or unset the SFAUTH_NANOIDP_* variables")
        yield env
        return
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SFAUTH_NANOIDP_")}
    environment.update(SFAUTH_NANOIDP_RUN_DIR=str(PRIVATE_RUN_DIR), SFAUTH_NANOIDP_PARENT_PID=str(os.getpid()),
                       SFAUTH_NANOIDP_TTL="1800")
    started = subprocess.run([str(SCRIPT), "start"], env=environment, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=600)   # may install the venv first
    if started.returncode != 0:
        pytest.fail(f"scripts/third-server start failed ({started.returncode}):\n{started.stderr}")
    try:
        printed = subprocess.run([str(SCRIPT), "env"], env=environment, capture_output=True, text=True,
                                 timeout=30, check=True)
        yield parse_env(printed.stdout)
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=environment, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=60)


@pytest.fixture
def nsfauth(binary, nanoidp, tmp_path):
    runner = Sfauth(binary, {"SFAUTH_TEST_BROWSER": nanoidp["SFAUTH_NANOIDP_BROWSER"]}, tmp_path)
    runner.nanoidp = nanoidp
    runner.env.update({
        "SFAUTH_TEST_USERNAME": nanoidp["SFAUTH_NANOIDP_USERNAME"],
        "SFAUTH_TEST_PASSWORD": nanoidp["SFAUTH_NANOIDP_PASSWORD"],
        "XDG_CACHE_HOME": str(tmp_path / "cache"),        # a private discovery cache
        "XDG_CONFIG_HOME": str(tmp_path / "config"),      # no user configuration file
    })
    for name in ("SFAUTH_CLIENT_SECRET", "SFAUTH_PROFILE", "SFAUTH_ISSUER", "SFAUTH_CLIENT_ID", "SFAUTH_SCOPES",
                 "SFAUTH_CONFIG", "SFAUTH_PRESET"):
        runner.env.pop(name, None)
    return runner
