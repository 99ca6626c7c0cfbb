#!/usr/bin/env python
"""Start the sfauth test authorization server in the background (used by scripts/test-server).

    <repo>/.venv/bin/python Tests/Server/serve.py

In the foreground: binds 127.0.0.1 (a free port, or $SFAUTH_TEST_SERVER_PORT), creates the OIDC
RSA key (and the JWT bearer client's keys) on first use, resets the SQLite DB (from a cached
migrated template) and seeds it. Then it forks a detached server process (waitress, setsid, output
to <run dir>/server.log), waits up to $SFAUTH_TEST_START_TIMEOUT (20) seconds for it to answer,
and writes <run dir>/env. Exit 0 when the server is up. Nothing is printed to stdout.

The server process stops by itself after $SFAUTH_TEST_SERVER_TTL seconds (3600), or when the
process $SFAUTH_TEST_PARENT_PID is gone (0 or empty: no parent watch), or on SIGTERM/SIGINT.
"""

import hashlib
import io
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import json

SERVER_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(os.path.dirname(SERVER_DIR))
BROWSER = os.path.join(REPO_DIR, "Tests", "Browser", "sfauth-test-browser")

CLIENT_ID = "sfauth-public"
SHORT_CLIENT_ID = "short-sfauth-public"
CONFIDENTIAL_CLIENT_ID = "sfauth-confidential"
CONFIDENTIAL_CLIENT_SECRET = "sfauth-confidential-secret"
USERNAME, PASSWORD = "alice", "alice-password"


def err(msg):
    sys.stderr.write(f"test-server: {msg}\n")
    sys.stderr.flush()


def env_int(name, default):
    try:
        return int(os.environ.get(name, "") or default)
    except ValueError:
        err(f"ignoring non-integer {name}={os.environ.get(name)!r}")
        return default


def run_dir():
    d = os.environ.get("SFAUTH_TEST_RUN_DIR") or os.path.join(REPO_DIR, ".test-run", "server")
    return os.path.abspath(d)


def ensure_key(path):
    if os.path.exists(path):
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    subprocess.run(
        ["openssl", "genrsa", "-out", tmp, "2048"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def remove_db(db):
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(db + suffix)
        except FileNotFoundError:
            pass


def schema_stamp():
    """Changes whenever the installed packages or our migrations change."""
    h = hashlib.sha256()
    with open(os.path.join(SERVER_DIR, "requirements.txt"), "rb") as f:
        h.update(f.read())
    mig = os.path.join(SERVER_DIR, "sfauth_test_server", "migrations")
    for name in sorted(os.listdir(mig)):
        if name.endswith(".py"):
            with open(os.path.join(mig, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    h.update(sys.version.encode())
    return h.hexdigest()


def prepare_database(rdir):
    """Fresh DB for every start: copy a cached migrated template (migrating takes ~2 s), seed."""
    from django.core.management import call_command
    from django.db import connections

    db = os.path.join(rdir, "db.sqlite3")
    template = os.path.join(rdir, "db-template.sqlite3")
    stamp_file = template + ".stamp"
    stamp = schema_stamp()
    remove_db(db)
    have_template = (
        os.path.exists(template)
        and os.path.exists(stamp_file)
        and open(stamp_file).read().strip() == stamp
    )
    if have_template:
        shutil.copyfile(template, db)
    else:
        call_command("migrate", verbosity=0, interactive=False, stdout=io.StringIO())
        with connections["default"].cursor() as c:
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connections.close_all()
        tmp = f"{template}.{os.getpid()}.tmp"
        shutil.copyfile(db, tmp)
        os.replace(tmp, template)
        with open(stamp_file, "w") as f:
            f.write(stamp + "\n")
    call_command("seed_test_data", verbosity=0, stdout=io.StringIO())
    connections.close_all()


def process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return True


def write_atomic(path, text):
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def server_child(sock, application, rdir, pid_file):
    """Runs in the detached child: serve until TTL, parent death or a signal."""
    import logging

    log = logging.getLogger("sfauth_test_server.watchdog")
    ttl = env_int("SFAUTH_TEST_SERVER_TTL", 3600)
    parent_pid = env_int("SFAUTH_TEST_PARENT_PID", 0)
    me = os.getpid()
    write_atomic(pid_file, f"{me}\n")

    def shutdown(reason, code=0):
        log.warning("stopping (%s)", reason)
        try:
            with open(pid_file) as f:
                if f.read().strip() == str(me):
                    os.unlink(pid_file)
        except OSError:
            pass
        for h in logging.getLogger().handlers:
            h.flush()
        os._exit(code)

    # Python runs signal handlers only in the main thread, and only between bytecodes: with
    # waitress's loop in select() that can take a second. Instead block the signals in every
    # thread (threads inherit the mask) and take them synchronously in a dedicated thread.
    stop_signals = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)

    def signal_waiter():
        signum = signal.sigwait(stop_signals)
        shutdown(signal.Signals(signum).name)

    threading.Thread(target=signal_waiter, name="signals", daemon=True).start()

    def watchdog():
        deadline = time.monotonic() + ttl
        while True:
            time.sleep(0.5)
            if time.monotonic() >= deadline:
                shutdown(f"TTL of {ttl} s reached")
            if parent_pid > 0 and not process_alive(parent_pid):
                shutdown(f"parent process {parent_pid} is gone")

    threading.Thread(target=watchdog, name="watchdog", daemon=True).start()
    log.warning(
        "pid %d serving %s (ttl %d s, parent pid %s)",
        me, os.environ["SFAUTH_TEST_SERVER_URL"], ttl, parent_pid or "-",
    )

    from waitress import serve

    try:
        serve(application, sockets=[sock], threads=8, ident="sfauth-test-server", channel_timeout=30)
    except Exception as e:  # noqa: BLE001
        log.exception("waitress failed: %s", e)
        shutdown("waitress failed", 1)
    shutdown("waitress returned")


def main():
    rdir = run_dir()
    os.makedirs(rdir, exist_ok=True)
    os.environ["SFAUTH_TEST_RUN_DIR"] = rdir
    pid_file = os.path.join(rdir, "server.pid")
    env_file = os.path.join(rdir, "env")
    log_file = os.path.join(rdir, "server.log")
    for stale in (env_file,):
        try:
            os.unlink(stale)
        except FileNotFoundError:
            pass

    # Bind first: the port is part of the issuer the settings are built from.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", env_int("SFAUTH_TEST_SERVER_PORT", 0)))
    sock.listen(128)
    port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}"
    os.environ["SFAUTH_TEST_SERVER_URL"] = base_url

    ensure_key(os.path.join(rdir, "oidc-rsa.pem"))

    sys.path.insert(0, SERVER_DIR)
    from sfauth_test_server.jwt_client_keys import ensure_client_keys

    ensure_client_keys(rdir)  # the JWT bearer client's key pairs (grants.py)
    os.environ["DJANGO_SETTINGS_MODULE"] = "sfauth_test_server.settings"
    import django

    django.setup()
    prepare_database(rdir)
    from django.core.wsgi import get_wsgi_application

    application = get_wsgi_application()

    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:
        try:
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            out = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(out, 1)
            os.dup2(out, 2)
            os.close(devnull)
            os.close(out)
            server_child(sock, application, rdir, pid_file)
        finally:
            os._exit(1)

    sock.close()
    timeout = env_int("SFAUTH_TEST_START_TIMEOUT", 20)
    deadline = time.monotonic() + timeout
    discovery_url = f"{base_url}/o/.well-known/openid-configuration"
    discovery = None
    last_error = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            last_error = f"server process exited (status {status})"
            break
        try:
            with urllib.request.urlopen(discovery_url, timeout=2) as r:
                discovery = json.load(r)
            break
        except Exception as e:  # noqa: BLE001 - not up yet
            last_error = e
            time.sleep(0.05)
    if discovery is None:
        err(f"server did not come up within {timeout} s: {last_error}")
        try:
            os.kill(child, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            with open(log_file, errors="replace") as f:
                err("last lines of " + log_file + ":\n" + "".join(f.readlines()[-30:]))
        except OSError:
            pass
        return 1

    variables = {
        "SFAUTH_TEST_SERVER_URL": base_url,
        "SFAUTH_TEST_ISSUER": discovery["issuer"],
        "SFAUTH_TEST_DISCOVERY_URL": discovery_url,
        "SFAUTH_TEST_AUTHORIZE_URL": discovery["authorization_endpoint"],
        "SFAUTH_TEST_TOKEN_URL": discovery["token_endpoint"],
        "SFAUTH_TEST_USERINFO_URL": discovery["userinfo_endpoint"],
        "SFAUTH_TEST_JWKS_URL": discovery["jwks_uri"],
        "SFAUTH_TEST_REVOKE_URL": discovery["revocation_endpoint"],
        "SFAUTH_TEST_INTROSPECT_URL": discovery["introspection_endpoint"],
        "SFAUTH_TEST_RESOURCE_URL": f"{base_url}/api/me",
        "SFAUTH_TEST_STATS_URL": f"{base_url}/test/stats",
        "SFAUTH_TEST_STATS_RESET_URL": f"{base_url}/test/stats/reset",
        "SFAUTH_TEST_CLIENT_ID": CLIENT_ID,
        "SFAUTH_TEST_SHORT_CLIENT_ID": SHORT_CLIENT_ID,
        "SFAUTH_TEST_SHORT_TOKEN_SECONDS": str(env_int("SFAUTH_TEST_SHORT_TOKEN_SECONDS", 5)),
        "SFAUTH_TEST_CONFIDENTIAL_CLIENT_ID": CONFIDENTIAL_CLIENT_ID,
        "SFAUTH_TEST_CONFIDENTIAL_CLIENT_SECRET": CONFIDENTIAL_CLIENT_SECRET,
        "SFAUTH_TEST_USERNAME": USERNAME,
        "SFAUTH_TEST_PASSWORD": PASSWORD,
        "SFAUTH_TEST_BROWSER": BROWSER,
        "SFAUTH_TEST_ISS_PARAMETER": "1" if discovery.get("authorization_response_iss_parameter_supported") else "0",
        "SFAUTH_TEST_SERVER_PID": str(child),
        "SFAUTH_TEST_RUN_DIR": rdir,
    }
    from sfauth_test_server import grants

    variables.update(grants.env_variables(base_url))
    write_atomic(env_file, "".join(f"export {k}={shlex.quote(v)}\n" for k, v in variables.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
