"""A private instance of the django-oauth-toolkit test server (scripts/test-server with its own run
directory and settings), for tests that need it configured otherwise than the shared one: e.g. an
RFC 9207 `iss` on every redirect. Stops when the `with` block ends, or when pytest is gone."""
import contextlib
import os
import shlex
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEST_SERVER = os.path.join(REPO, "scripts", "test-server")


def parse_env_file(text):
    values = {}
    for line in text.splitlines():
        if line.startswith("export ") and "=" in line:
            key, value = line[len("export "):].split("=", 1)
            values[key] = shlex.split(value)[0] if value else ""
    return values


@contextlib.contextmanager
def private_test_server(name, **settings):
    """Yields the instance's SFAUTH_TEST_* variables; os.environ is left alone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SFAUTH_TEST_")}
    env.update(settings, SFAUTH_TEST_RUN_DIR=os.path.join(REPO, ".test-run", name), SFAUTH_TEST_PARENT_PID=str(os.getpid()),
               SFAUTH_TEST_SERVER_TTL="1800")
    subprocess.run([TEST_SERVER, "start"], env=env, check=True, stdin=subprocess.DEVNULL)
    try:
        listing = subprocess.run([TEST_SERVER, "env"], env=env, check=True, capture_output=True, text=True)
        yield parse_env_file(listing.stdout)
    finally:
        subprocess.run([TEST_SERVER, "stop"], env=env, stdin=subprocess.DEVNULL)
