#!/usr/bin/env python3
"""A third, independent authorization server for sfauth's end-to-end tests: NanoIDP 3.4.0 (PyPI
`nanoidp`, a Flask OAuth 2.0 / OpenID Connect test identity provider), run from <repo>/.venv on
127.0.0.1 with a private configuration directory written here -- the two YAML files a deployment of
it consists of (settings.yaml, users.yaml), no database. See Tests/Server/NANOIDP.md.

Usage (normally through scripts/third-server):
    nanoidp_server.py start|stop|status|env
  start   (re)start with fresh state (new config, new signing key); writes <run dir>/env; no stdout
  stop    stop it (idempotent)
  status  exit 0 when running (a line on stderr either way)
  env     print <run dir>/env (export lines: SFAUTH_NANOIDP_SERVER_URL, ..._ISSUER, ...)

Env (start):
  SFAUTH_NANOIDP_RUN_DIR        run directory (default <repo>/.test-run/nanoidp)
  SFAUTH_NANOIDP_PORT           the server's port (default: a free one)
  SFAUTH_NANOIDP_TTL            seconds until the server stops by itself (default 3600)
  SFAUTH_NANOIDP_PARENT_PID     stop when this process is gone (default: the caller's parent, i.e.
                                the shell or program that ran scripts/third-server; 0 = no watch)
  SFAUTH_NANOIDP_START_TIMEOUT  seconds to wait for the server to answer (default 30)

The server process watches the parent and the TTL itself (a thread in it), so nothing else is left
running: when it stops, everything stops.
"""
import json
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_DIR = os.environ.get("SFAUTH_NANOIDP_RUN_DIR") or os.path.join(REPO, ".test-run", "nanoidp")
CONFIG_DIR = os.path.join(RUN_DIR, "config")
PID_FILE = os.path.join(RUN_DIR, "nanoidp.pid")
ENV_FILE = os.path.join(RUN_DIR, "env")
LOG_FILE = os.path.join(RUN_DIR, "nanoidp.log")
MARKER = "sfauth-nanoidp-serve"          # in the server's command line: how stop knows it is ours

# Test-only fixed identities (documented in Tests/Server/NANOIDP.md).
PUBLIC_CLIENT = "sfauth-cli"               # public (token_endpoint_auth_method none): browser + device
RESOURCE_SERVER = "sfauth-resource-server"  # confidential: what an API would use to introspect tokens
RESOURCE_SERVER_SECRET = "sfauth-resource-server-secret"
CONFIDENTIAL_CLIENT = "sfauth-confidential"  # confidential, client_secret_post: browser login with a secret
CONFIDENTIAL_SECRET = "sfauth-confidential-secret"
# confidential with NanoIDP's (and RFC 7591 §2's) default method, client_secret_basic
BASIC_CLIENT = "sfauth-confidential-basic"
BASIC_SECRET = "sfauth-confidential-basic-secret"
AUDIENCE = "sfauth-nanoidp-api"
# public, with RFC 8707 resources it may ask for (at /authorize and on refresh; issue 20's per-call targets).
# Its refresh tokens rotate like every client's here (refresh_token_rotation below).
RESOURCE_CLIENT = "sfauth-resource-cli"
ALLOWED_RESOURCES = ["https://api.example/", "https://other.example/"]
USERS = {
    "alice": {"password": "alice-password", "email": "alice@example.test"},
    "bob": {"password": "bob-password", "email": "bob@example.test"},
}
# Loopback redirect URIs: NanoIDP compares redirect URIs as exact strings, except that the port of
# a registered http://127.0.0.1/... or http://[::1]/... URI is ignored (RFC 8252 §7.3); localhost gets
# no such exception, so it is not registered (sfauth's default callback host is 127.0.0.1).
REDIRECT_URIS = ["http://127.0.0.1/callback", "http://[::1]/callback"]
SCOPES = ["openid", "profile", "email", "offline_access"]
DEVICE_POLL_INTERVAL = 2


def log(message):
    print(f"third-server: {message}", file=sys.stderr, flush=True)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def running_pid():
    """The pid in the pid file when that process is alive and is our server."""
    try:
        pid = int(open(PID_FILE).read().strip())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
    except (OSError, ValueError):
        return None
    return pid if alive(pid) and MARKER in cmdline and RUN_DIR in cmdline else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop():
    pid = running_pid()
    if pid:
        os.kill(pid, signal.SIGTERM)
        for _ in range(200):
            if not alive(pid):
                break
            time.sleep(0.025)
        else:
            os.kill(pid, signal.SIGKILL)
    for path in (PID_FILE, ENV_FILE):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


# ---------------------------------------------------------------- configuration

def write_config(port):
    """settings.yaml and users.yaml, as a deployment of NanoIDP would have them."""
    import yaml  # PyYAML: a dependency of nanoidp, so in the venv

    issuer = f"http://127.0.0.1:{port}"
    settings = {
        "config_version": 1,
        # oauth21: the draft OAuth 2.1 strictness -- PKCE required with S256 only, refresh tokens
        # rotate, registered redirect URIs required, no password grant, scopes enforced, userinfo
        # claims gated by scope.
        "security_profile": "oauth21",
        "config_validation": "strict",          # an unknown key is an error, not a warning
        "server": {"host": "127.0.0.1", "port": port},
        "oauth": {
            "issuer": issuer,
            "audience": AUDIENCE,
            "token_expiry_minutes": 60,
            "refresh_token_expiry_minutes": 1440,
            "refresh_token_rotation": True,
            "require_pkce": True,
            "scopes_supported": SCOPES,
            "clients": [
                {"client_id": PUBLIC_CLIENT, "token_endpoint_auth_method": "none",
                 "redirect_uris": REDIRECT_URIS, "allowed_scopes": SCOPES,
                 "description": "sfauth: public client, PKCE, browser and device login"},
                {"client_id": CONFIDENTIAL_CLIENT, "client_secret": CONFIDENTIAL_SECRET,
                 "token_endpoint_auth_method": "client_secret_post",
                 "redirect_uris": REDIRECT_URIS, "allowed_scopes": SCOPES,
                 "description": "sfauth: confidential client"},
                {"client_id": BASIC_CLIENT, "client_secret": BASIC_SECRET,
                 "token_endpoint_auth_method": "client_secret_basic",
                 "redirect_uris": REDIRECT_URIS, "allowed_scopes": SCOPES,
                 "description": "sfauth: confidential client, HTTP Basic"},
                {"client_id": RESOURCE_CLIENT, "token_endpoint_auth_method": "none",
                 "redirect_uris": REDIRECT_URIS, "allowed_scopes": SCOPES,
                 # an empty list would allow any absolute URI: a list makes another resource invalid_target
                 "allowed_resources": ALLOWED_RESOURCES,
                 "description": "sfauth: public client with resource indicators (RFC 8707)"},
                {"client_id": RESOURCE_SERVER, "client_secret": RESOURCE_SERVER_SECRET,
                 "token_endpoint_auth_method": "client_secret_basic", "allowed_scopes": [],
                 "description": "the API: introspects access tokens"},
            ],
        },
        "device_flow": {"code_expiry_seconds": 600, "polling_interval": DEVICE_POLL_INTERVAL},
        "session": {
            "secret_key": secrets.token_urlsafe(32),
            # /api/* (users, keys, config) answers everyone by design; mutations need this secret.
            "management_secret": secrets.token_urlsafe(24),
        },
        "login": {"mode": "password"},
        "jwt": {"algorithm": "RS256", "keys_dir": "./keys"},   # an RSA key made at first start
        "logging": {"level": "INFO", "log_token_requests": True, "verbose_logging": True},
    }
    users = {"config_version": 1, "users": {
        name: {"password": u["password"], "email": u["email"], "roles": ["USER"], "tenant": "sfauth-tests"}
        for name, u in USERS.items()}}
    os.makedirs(CONFIG_DIR, mode=0o700, exist_ok=True)
    for name, document in (("settings.yaml", settings), ("users.yaml", users)):
        path = os.path.join(CONFIG_DIR, name)
        with open(path + ".tmp", "w") as f:
            yaml.safe_dump(document, f, sort_keys=False)
        os.chmod(path + ".tmp", 0o600)
        os.replace(path + ".tmp", path)
    return issuer


def env_lines(port, issuer, pid):
    q = issuer
    values = {
        "RUN_DIR": RUN_DIR, "CONFIG_DIR": CONFIG_DIR, "LOG": LOG_FILE, "PID": str(pid),
        "SERVER_URL": q, "PORT": str(port), "ISSUER": q,
        "DISCOVERY_URL": f"{q}/.well-known/openid-configuration",
        "AUTHORIZE_URL": f"{q}/authorize", "TOKEN_URL": f"{q}/token", "REVOKE_URL": f"{q}/revoke",
        "INTROSPECT_URL": f"{q}/introspect", "USERINFO_URL": f"{q}/userinfo",
        "JWKS_URL": f"{q}/.well-known/jwks.json",
        "DEVICE_AUTHORIZATION_URL": f"{q}/device_authorization", "DEVICE_VERIFICATION_URL": f"{q}/device",
        "DEVICE_POLL_INTERVAL": str(DEVICE_POLL_INTERVAL),
        "AUDIENCE": AUDIENCE,
        "REDIRECT_URIS": " ".join(REDIRECT_URIS),
        "CLIENT_ID": PUBLIC_CLIENT,
        "CONFIDENTIAL_CLIENT_ID": CONFIDENTIAL_CLIENT, "CONFIDENTIAL_CLIENT_SECRET": CONFIDENTIAL_SECRET,
        "BASIC_CLIENT_ID": BASIC_CLIENT, "BASIC_CLIENT_SECRET": BASIC_SECRET,
        "RESOURCE_CLIENT_ID": RESOURCE_CLIENT, "ALLOWED_RESOURCES": " ".join(ALLOWED_RESOURCES),
        "RESOURCE_SERVER_ID": RESOURCE_SERVER, "RESOURCE_SERVER_SECRET": RESOURCE_SERVER_SECRET,
        "USERNAME": "alice", "PASSWORD": USERS["alice"]["password"], "EMAIL": USERS["alice"]["email"],
        "BOB_PASSWORD": USERS["bob"]["password"],
        "BROWSER": os.path.join(REPO, "Tests", "Browser", "sfauth-test-browser"),
    }
    return "".join(f"export SFAUTH_NANOIDP_{k}={shlex.quote(v)}\n" for k, v in values.items())


# ---------------------------------------------------------------- start

def answers(url, timeout=2):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as response:
            return response.status == 200 and json.loads(response.read()).get("issuer")
    except (OSError, ValueError):
        return None


def start():
    stop()
    os.makedirs(RUN_DIR, exist_ok=True)
    parent = os.environ.get("SFAUTH_NANOIDP_PARENT_PID") or str(os.getppid())
    ttl = os.environ.get("SFAUTH_NANOIDP_TTL") or "3600"
    timeout = float(os.environ.get("SFAUTH_NANOIDP_START_TIMEOUT") or 30)
    fixed_port = os.environ.get("SFAUTH_NANOIDP_PORT")
    last_error = "did not start"
    for attempt in range(1 if fixed_port else 3):   # a free port can be taken before it is bound
        port = int(fixed_port) if fixed_port else free_port()
        # Fresh state: a new configuration and a new signing key every start.
        subprocess.run(["rm", "-rf", CONFIG_DIR], check=True)
        issuer = write_config(port)
        with open(LOG_FILE, "ab") as logf:
            process = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "serve", MARKER, RUN_DIR, str(port), parent, ttl],
                stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT, cwd=CONFIG_DIR,
                start_new_session=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        with open(PID_FILE + ".tmp", "w") as f:
            f.write(f"{process.pid}\n")
        os.replace(PID_FILE + ".tmp", PID_FILE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                last_error = f"exited with status {process.returncode} (see {LOG_FILE})"
                break
            if answers(f"{issuer}/.well-known/openid-configuration") == issuer:
                with open(ENV_FILE + ".tmp", "w") as f:
                    f.write(env_lines(port, issuer, process.pid))
                os.replace(ENV_FILE + ".tmp", ENV_FILE)
                log(f"NanoIDP on {issuer} (pid {process.pid}, parent {parent}, ttl {ttl} s)")
                return 0
            time.sleep(0.1)
        else:
            last_error = f"did not answer within {timeout:g} s (see {LOG_FILE})"
        stop()
    log(f"NanoIDP {last_error}")
    try:
        with open(LOG_FILE, errors="replace") as f:
            sys.stderr.write("".join(f.readlines()[-20:]))
    except OSError:
        pass
    return 1


# ---------------------------------------------------------------- the server process

def serve(run_dir, port, parent, ttl):
    """Runs NanoIDP (its own run_app: Flask's threaded Werkzeug server) in this process, with a
    thread that ends the process when the TTL is reached or the parent process is gone."""
    parent, deadline = int(parent), time.monotonic() + float(ttl)

    def watch():
        while True:
            reason = None
            if time.monotonic() >= deadline:
                reason = f"TTL of {ttl} s reached"
            elif parent > 0 and not alive(parent):
                reason = f"parent process {parent} is gone"
            if reason:
                print(f"watchdog: stopping NanoIDP: {reason}", flush=True)
                os._exit(0)
            time.sleep(1)

    threading.Thread(target=watch, daemon=True, name="watchdog").start()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    from nanoidp.app import run_app
    run_app(host="127.0.0.1", port=int(port), debug=False,
            config_dir=os.path.join(run_dir, "config"), strict_config=True)
    return 0


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "start":
        return start()
    if command == "stop":
        stop()
        return 0
    if command == "status":
        pid = running_pid()
        log(f"running (pid {pid})" if pid else "not running")
        return 0 if pid else 1
    if command == "env":
        try:
            sys.stdout.write(open(ENV_FILE).read())
        except OSError:
            log(f"not running (no {ENV_FILE}): run scripts/third-server start")
            return 1
        return 0
    if command == "serve" and len(argv) == 7 and argv[2] == MARKER:
        return serve(*argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
