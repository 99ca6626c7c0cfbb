"""Fixtures for end-to-end tests of the built `sfauth` binary against the real test server.

`scripts/test` starts the server and exports its SFAUTH_TEST_* variables and SFAUTH_BINARY.
"""
import json
import os
import socket
import subprocess
import time
import urllib.parse

import pytest


@pytest.fixture(scope="session")
def server():
    if "SFAUTH_TEST_SERVER_URL" not in os.environ:
        pytest.fail("SFAUTH_TEST_SERVER_URL is not set: run these tests through scripts/test")
    return {k: v for k, v in os.environ.items() if k.startswith("SFAUTH_TEST_")}


@pytest.fixture(scope="session")
def binary():
    path = os.environ.get("SFAUTH_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"SFAUTH_BINARY ({path!r}) is not an executable: run these tests through scripts/test")
    return path


class Sfauth:
    """Runs the binary with a private credentials directory and a controllable test browser."""

    def __init__(self, binary, server, tmp_path):
        self.binary = binary
        self.server = server
        self.home = tmp_path / "home"
        self.browser_log = tmp_path / "browser.json"
        # No desktop: xdg-open then runs $BROWSER.
        # Nor an SSH session or WSL of whoever runs the tests: tests that need one set it themselves.
        desktop = ("DISPLAY", "WAYLAND_DISPLAY", "XDG_CURRENT_DESKTOP", "DESKTOP_SESSION", "KDE_FULL_SESSION",
                   "GNOME_DESKTOP_SESSION_ID", "MATE_DESKTOP_SESSION_ID", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY",
                   "WSL_DISTRO_NAME", "WSL_INTEROP")
        self.env = {k: v for k, v in os.environ.items() if k not in desktop}
        self.env.update({
            "SFAUTH_HOME": str(self.home),
            "BROWSER": server["SFAUTH_TEST_BROWSER"],
            "SFAUTH_TEST_BROWSER_LOG": str(self.browser_log),
            "SFAUTH_TEST_BROWSER_ACTION": "approve",
            "SFAUTH_TEST_BROWSER_FORGE": "0",
            # Tests read refresh tokens from the files; the keyring tests choose the keyring themselves.
            "SFAUTH_STORAGE": "file",
        })

    def login_args(self, client_id=None, scope="openid profile", token_url=None, revoke_url=None, extra=()):
        return ["login",
                "--authorize-url", self.server["SFAUTH_TEST_AUTHORIZE_URL"],
                "--token-url", token_url or self.server["SFAUTH_TEST_TOKEN_URL"],
                "--revoke-url", revoke_url or self.server["SFAUTH_TEST_REVOKE_URL"],
                "--userinfo-url", self.server["SFAUTH_TEST_USERINFO_URL"],
                "--client-id", client_id or self.server["SFAUTH_TEST_CLIENT_ID"],
                "--scope", scope, *extra]

    def run(self, *args, timeout=90, **env):
        environment = dict(self.env, **env)
        return subprocess.run([self.binary, *args], env=environment, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)

    def start(self, *args, **env):
        environment = dict(self.env, **env)
        return subprocess.Popen([self.binary, *args], env=environment, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def browser_report(self, within=30):
        deadline = time.time() + within
        while time.time() < deadline:
            if self.browser_log.exists():
                return json.loads(self.browser_log.read_text())
            time.sleep(0.1)
        raise AssertionError(f"the test browser wrote no report within {within} s")

    def stored_accounts(self):
        accounts = self.home / "accounts"
        return sorted(p.name for p in accounts.iterdir()) if accounts.exists() else []


@pytest.fixture
def sfauth(binary, server, tmp_path):
    return Sfauth(binary, server, tmp_path)


def redirect_uri_of(url):
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    return query["redirect_uri"][0]


def is_listening(host, port):
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
