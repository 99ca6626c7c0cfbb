"""Fixtures for running the `sfauth` binary against the second test server, Glewlwyd
(scripts/second-server; Tests/Server/GLEWLWYD.md). Import them into a test module:

    from glewlwyd import glewlwyd, gsfauth  # noqa: F401  (pytest fixtures)

`glewlwyd` (session): when SFAUTH_GLEWLWYD_SERVER_URL is set (`eval "$(scripts/second-server env)"`)
that server is used and left running; otherwise a private instance is started once per session in
<repo>/.test-run/glewlwyd-pytest (its parent pid is this pytest process, so it also stops if pytest is
killed) and stopped at the end. Either way it yields the SFAUTH_GLEWLWYD_* variables as a dict.

`gsfauth`: conftest's `Sfauth` (a private SFAUTH_HOME, the headless test browser as $BROWSER, file
storage) pointed at Glewlwyd, signing in as alice; it needs neither the DOT server nor its variables.
"""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "second-server"
PRIVATE_RUN_DIR = REPO / ".test-run" / "glewlwyd-pytest"


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


def answers(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def glewlwyd():
    if os.environ.get("SFAUTH_GLEWLWYD_SERVER_URL"):
        env = {k: v for k, v in os.environ.items() if k.startswith("SFAUTH_GLEWLWYD_")}
        if not answers(env["SFAUTH_GLEWLWYD_DISCOVERY_URL"]):
            pytest.fail(f"SFAUTH_GLEWLWYD_SERVER_URL={env['SFAUTH_GLEWLWYD_SERVER_URL']} does not answer: "
                        "run scripts/second-server start, or unset the SFAUTH_GLEWLWYD_* variables")
        yield env
        return
    if shutil.which("glewlwyd") is None:
        pytest.fail("glewlwyd is not installed: run scripts/install-test-deps")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SFAUTH_GLEWLWYD_")}
    environment.update(SFAUTH_GLEWLWYD_RUN_DIR=str(PRIVATE_RUN_DIR), SFAUTH_GLEWLWYD_PARENT_PID=str(os.getpid()))
    started = subprocess.run([str(SCRIPT), "start"], env=environment, stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=120)
    if started.returncode != 0:
        pytest.fail(f"scripts/second-server start failed ({started.returncode}):\n{started.stderr}")
    try:
        printed = subprocess.run([str(SCRIPT), "env"], env=environment, capture_output=True, text=True,
                                 timeout=30, check=True)
        yield parse_env(printed.stdout)
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=environment, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=60)


@pytest.fixture
def gsfauth(binary, glewlwyd, tmp_path):
    runner = Sfauth(binary, {"SFAUTH_TEST_BROWSER": glewlwyd["SFAUTH_GLEWLWYD_BROWSER"]}, tmp_path)
    runner.glewlwyd = glewlwyd
    runner.env.update({
        "SFAUTH_TEST_USERNAME": glewlwyd["SFAUTH_GLEWLWYD_USERNAME"],
        "SFAUTH_TEST_PASSWORD": glewlwyd["SFAUTH_GLEWLWYD_PASSWORD"],
        "XDG_CACHE_HOME": str(tmp_path / "cache"),        # a private discovery cache
        "XDG_CONFIG_HOME": str(tmp_path / "config"),      # no user configuration file
    })
    for name in ("SFAUTH_CLIENT_SECRET", "SFAUTH_PROFILE", "SFAUTH_ISSUER", "SFAUTH_CLIENT_ID", "SFAUTH_SCOPES",
                 "SFAUTH_CONFIG", "SFAUTH_PRESET"):
        runner.env.pop(name, None)
    return runner
