"""Fixtures for the test server's own tests (test_grants_server.py).

These tests start a private server (scripts/test-server, own run directory, a free port), so they
can choose the device grant's timings: interval 1 s, slow_down adds 2 s. It stops when the tests
end (or when pytest is gone: SFAUTH_TEST_PARENT_PID). Run directory: $SFAUTH_TEST_GRANTS_RUN_DIR,
default <repo>/.test-run/grants-server.
"""

import os
import shlex
import subprocess
import sys

import pytest
import requests

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TEST_SERVER = os.path.join(REPO, "scripts", "test-server")

sys.path.insert(0, os.path.join(REPO, "Tests", "Browser"))

SERVER_SETTINGS = {
    "SFAUTH_TEST_DEVICE_INTERVAL": "1",
    "SFAUTH_TEST_DEVICE_SLOW_DOWN_SECONDS": "2",
    "SFAUTH_TEST_DEVICE_CODE_SECONDS": "300",
    "SFAUTH_TEST_SERVER_TTL": "1800",
}


def _parse_env_file(text):
    values = {}
    for line in text.splitlines():
        if line.startswith("export ") and "=" in line:
            key, value = line[len("export "):].split("=", 1)
            values[key] = shlex.split(value)[0] if value else ""
    return values


@pytest.fixture(scope="session")
def server():
    """The private server's SFAUTH_TEST_* variables. os.environ is left alone (other tests in the
    same pytest run may use another server): pass these to the browser driver explicitly."""
    run_dir = os.environ.get("SFAUTH_TEST_GRANTS_RUN_DIR") or os.path.join(REPO, ".test-run", "grants-server")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SFAUTH_TEST_")}
    env.update(SERVER_SETTINGS, SFAUTH_TEST_RUN_DIR=run_dir, SFAUTH_TEST_PARENT_PID=str(os.getpid()))
    subprocess.run([TEST_SERVER, "start"], env=env, check=True, stdin=subprocess.DEVNULL)
    try:
        listing = subprocess.run([TEST_SERVER, "env"], env=env, check=True, capture_output=True, text=True)
        yield _parse_env_file(listing.stdout)
    finally:
        subprocess.run([TEST_SERVER, "stop"], env=env, stdin=subprocess.DEVNULL)


@pytest.fixture
def http():
    """A requests session that ignores proxy settings (the server is on 127.0.0.1)."""
    session = requests.Session()
    session.trust_env = False
    yield session
    session.close()
