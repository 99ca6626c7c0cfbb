"""Helpers of test_faults.py: the fault server (Tests/Faults/fault_server.py), store digests, the
"one clear line" rule, and the JSON report that Tests/Faults/render_matrix.py turns into
docs/fault-matrix.md."""
import hashlib
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[2]
FAULT_SERVER = REPO / "Tests" / "Faults" / "fault_server.py"

# Exit statuses documented in the README.
OK, STORAGE, USAGE, LOGIN_REQUIRED, CANCELLED, REFUSED, NETWORK = 0, 1, 2, 3, 4, 5, 6

# What each fault's one line must mention (case-insensitive regex), besides the `sfauth: ` prefix.
GIST = {
    "html-500": r"\b500\b",
    "html-502": r"\b502\b",
    "html-503": r"\b503\b",
    "json-503": r"\b503\b|temporarily_unavailable",
    "html-404": r"\b404\b|not found|metadata",
    "html-200": r"html|not json|json",
    "refused": r"refused|could not connect|couldn.t connect|connect",
    "reset": r"reset|closed|recv|receiv|connection",
    "timeout": r"timed? ?out|timeout",
    "truncated-json": r"json|pars|incomplete|truncat|invalid",
    "oversize": r"large|size|\bMiB\b|bytes|exceed|limit",
    "no-access-token": r"access_token",
    "token-type-mac": r"token_type|token type|\bmac\b",
    "no-device-code": r"device_code",
    "tls-untrusted": r"certificate|\btls\b|\bssl\b|trust",
}
# What to do, for the failures that are the server's or the network's (exit 6).
RETRY_ADVICE = r"try again|retry|later"

# Lines `sfauth login` may print before its failure line (LoginProgressReporter, DeviceInstructions).
LOGIN_PROGRESS = [
    r"Reading the endpoints of \S+ from its metadata…",
    r"Opening your browser to sign in at .+…",
    r"Waiting for the sign-in \(redirect to .+\)\.",
    r"Authorization received; getting tokens…",
    r"To sign in, open .+ on any device and enter the code:",
    r"Or open this address, which carries the code:",
    r"    \S+",
    r"The code expires in \d+ minutes?\.",
    r"Waiting for the approval \(press Ctrl-C to cancel\)…",
    r"",
]


# ------------------------------------------------------------------ the fault server

class FaultServer:
    """A running Tests/Faults/fault_server.py in front of the test server."""

    def __init__(self, server_env, log_path, ttl=900):
        env = dict(os.environ, **server_env)
        self.process = subprocess.Popen(
            [sys.executable, str(FAULT_SERVER), "--ttl", str(ttl), "--parent-pid", str(os.getpid()),
             "--log", str(log_path)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the fault server did not start: " + self.process.stderr.read())
        info = json.loads(line)
        self.url, self.issuer = info["url"], info["issuer"]
        self.tls_url, self.tls_issuer, self.dead_url = info["tls_url"], info["tls_issuer"], info["dead_url"]
        self.upstream = server_env["SFAUTH_TEST_SERVER_URL"]
        self.upstream_issuer = server_env["SFAUTH_TEST_ISSUER"]
        self.paths = {
            "token": urllib.parse.urlsplit(server_env["SFAUTH_TEST_TOKEN_URL"]).path,
            "revocation": urllib.parse.urlsplit(server_env["SFAUTH_TEST_REVOKE_URL"]).path,
            "userinfo": urllib.parse.urlsplit(server_env["SFAUTH_TEST_USERINFO_URL"]).path,
            "jwks": urllib.parse.urlsplit(server_env["SFAUTH_TEST_JWKS_URL"]).path,
            "device": urllib.parse.urlsplit(server_env["SFAUTH_TEST_DEVICE_AUTHORIZATION_URL"]).path,
        }

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def _call(self, method, path, document=None):
        data = json.dumps(document).encode() if document is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=10) as response:
            return json.loads(response.read())

    def arm(self, endpoint, fault, sticky=True):
        return self._call("POST", "/fault", {"endpoint": endpoint, "fault": fault, "sticky": sticky})

    def reset(self):
        return self._call("POST", "/fault/reset", {})

    def state(self):
        return self._call("GET", "/fault")

    def origin_for(self, fault):
        return {"refused": self.dead_url, "tls-untrusted": self.tls_url}.get(fault, self.url)

    def endpoint_url(self, endpoint, fault="none"):
        """The URL a client configured with explicit endpoints uses to meet `fault` there."""
        return self.origin_for(fault) + self.paths[endpoint]

    def issuer_for(self, fault):
        """The issuer whose discovery meets `fault` (refused and TLS faults act on the connection)."""
        return {"refused": self.dead_url + "/o", "tls-untrusted": self.tls_issuer}.get(fault, self.issuer)


def fault_was_met(before, after, endpoint, fault):
    """Whether the fault server saw the fault happen (None when it cannot see it: refused)."""
    if fault == "refused":
        return None
    if fault == "tls-untrusted":
        return after["tls_handshake_failures"] > before["tls_handshake_failures"]
    key = f"{endpoint}/{fault}"
    return after["applied"].get(key, 0) > before["applied"].get(key, 0)


# ------------------------------------------------------------------ the credential store

def store_files(home):
    """{relative path: (mode, sha256 of the contents)} of every file and directory under home."""
    home = pathlib.Path(home)
    listing = {}
    if not home.exists():
        return listing
    for path in sorted(home.rglob("*")):
        relative = str(path.relative_to(home))
        mode = oct(path.lstat().st_mode & 0o7777)
        if path.is_dir():
            listing[relative + "/"] = (mode, "dir")
        else:
            listing[relative] = (mode, hashlib.sha256(path.read_bytes()).hexdigest())
    return listing


def store_digest(home):
    """sha256 over the names, modes and contents of everything under home."""
    return hashlib.sha256(json.dumps(store_files(home), sort_keys=True).encode()).hexdigest()


def store_diff(before, after):
    """A short description of what changed between two store_files() listings."""
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    parts = []
    if added:
        parts.append("added " + ", ".join(added))
    if removed:
        parts.append("removed " + ", ".join(removed))
    if changed:
        parts.append("changed " + ", ".join(changed))
    return "; ".join(parts) or "nothing"


def copy_store(template, home):
    shutil.copytree(template, home, symlinks=True)
    return home


def only_account(home):
    [path] = (pathlib.Path(home) / "accounts").glob("*.json")
    return path


def point_account_endpoint(home, key, url):
    """Makes the stored account use `url` for its `server.<key>` (e.g. tokenEndpoint)."""
    path = only_account(home)
    document = json.loads(path.read_text())
    document["server"][key] = url
    path.write_text(json.dumps(document))


# ------------------------------------------------------------------ the one clear line

def failure_line_problems(stderr, allowed_before=(), advice=False, gist=None):
    """Problems with stderr as a failure report: any lines matching `allowed_before` (full-line
    regexes), then exactly one line, the last, starting `sfauth: `, naming the gist, in one line."""
    problems = []
    lines = stderr.splitlines()
    if not lines:
        return ["nothing on stderr"]
    last = lines[-1]
    if not last.startswith("sfauth: "):
        problems.append(f"the last stderr line does not start with 'sfauth: ': {last[:200]!r}")
    prefixed = [line for line in lines if line.startswith("sfauth")]
    if len(prefixed) != 1:
        problems.append(f"{len(prefixed)} lines start with 'sfauth' (want exactly 1)")
    for line in lines[:-1]:
        if not any(re.fullmatch(pattern, line) for pattern in allowed_before):
            problems.append(f"unexpected stderr line before the failure line: {line[:200]!r}")
            break
    if re.search(r"<\s*(!doctype|html|body|h1|title)", stderr, re.I):
        problems.append("stderr contains HTML")
    if len(last) > 400:
        problems.append(f"the failure line is {len(last)} characters long")
    if gist and not re.search(gist, last, re.I):
        problems.append(f"the failure line does not say what went wrong (/{gist}/)")
    if advice and not re.search(RETRY_ADVICE, last, re.I):
        problems.append(f"the failure line does not say what to do (/{RETRY_ADVICE}/)")
    return problems


def signal_problem(returncode):
    if returncode < 0 or returncode >= 128:
        return [f"killed by a signal or crashed (status {returncode})"]
    return []


# ------------------------------------------------------------------ running sfauth

class Run:
    def __init__(self, args, env_changes, completed, duration):
        self.args = args
        self.env_changes = env_changes
        self.returncode = completed.returncode
        self.stdout = completed.stdout
        self.stderr = completed.stderr
        self.duration = duration

    @property
    def command(self):
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env_changes.items())
        return (env + " " if env else "") + "sfauth " + " ".join(shlex.quote(a) for a in self.args)


def run_sfauth(sfauth, *args, stdin=None, timeout=120, **env):
    """Runs the binary like Sfauth.run (its private home and browser) and times it."""
    environment = dict(sfauth.env, **env)
    started = time.monotonic()
    completed = subprocess.run([sfauth.binary, *args], env=environment, input=stdin if stdin is not None else None,
                               stdin=subprocess.DEVNULL if stdin is None else None,
                               capture_output=True, text=True, timeout=timeout)
    shown_env = {"SFAUTH_HOME": str(sfauth.home), **{k: v for k, v in env.items() if k != "SFAUTH_CLIENT_SECRET"}}
    if "SFAUTH_CLIENT_SECRET" in env:
        shown_env["SFAUTH_CLIENT_SECRET"] = "<secret>"
    return Run(list(args), shown_env, completed, time.monotonic() - started)


# ------------------------------------------------------------------ the report

RESULTS = []


def record(case, run, problems, store_unchanged, fault_met, extra=None):
    RESULTS.append({
        "id": case.id, "operation": case.operation, "endpoint": case.endpoint, "fault": case.fault,
        "expected_exit": case.exit, "expected_message": case.message, "store": case.store,
        "slow": case.slow,
        "command": run.command if run else None,
        "actual_exit": run.returncode if run else None,
        "stderr": run.stderr if run else None,
        "stdout_bytes": len(run.stdout) if run else None,
        "duration": round(run.duration, 2) if run else None,
        "store_unchanged": store_unchanged, "fault_met": fault_met,
        "problems": problems, "passed": not problems, **(extra or {}),
    })


def write_report(path):
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    binary = os.environ.get("SFAUTH_BINARY")
    path.write_text(json.dumps({"binary": binary, "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                "results": RESULTS}, indent=1) + "\n")
