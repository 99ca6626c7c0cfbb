"""Benchmark: 50 `sfauth token` processes started at once on an expired token, against one process
refreshing alone, in the same run against the real test server. Prints wall times, the ratio and the
number of refresh requests the server saw. Run by scripts/benchmark (needs the test server's env)."""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

binary = sys.argv[1]
rounds = int(os.environ.get("REFRESH_ROUNDS", "5"))
server = os.environ
home = tempfile.mkdtemp(prefix="sfauth-bench-")
env = dict(os.environ, SFAUTH_HOME=home, BROWSER=server["SFAUTH_TEST_BROWSER"], SFAUTH_TOKEN_LEEWAY="1",
           SFAUTH_TEST_BROWSER_LOG=home + "/browser.json")
for name in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_CURRENT_DESKTOP"):
    env.pop(name, None)


def refreshes():
    with urllib.request.urlopen(server["SFAUTH_TEST_STATS_URL"], timeout=10) as response:
        return json.loads(response.read())["token_requests"].get("refresh_token", 0)


login = subprocess.run([binary, "login", "--authorize-url", server["SFAUTH_TEST_AUTHORIZE_URL"],
                        "--token-url", server["SFAUTH_TEST_TOKEN_URL"], "--client-id", server["SFAUTH_TEST_SHORT_CLIENT_ID"],
                        "--scope", "openid"], env=env, capture_output=True, text=True, timeout=120)
if login.returncode != 0:
    sys.exit(f"login failed: {login.stderr}")
[account] = os.listdir(home + "/accounts")
path = f"{home}/accounts/{account}"


def expire():
    expires_at = json.load(open(path))["expiresAt"]
    time.sleep(max(0.0, expires_at - time.time()) + 1.1)


def run(count):
    expire()
    before = refreshes()
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=count) as pool:
        results = list(pool.map(lambda _: subprocess.run([binary, "token"], env=env, capture_output=True, text=True, timeout=60),
                                range(count)))
    wall = time.perf_counter() - started
    failed = [r.stderr for r in results if r.returncode != 0]
    if failed:
        sys.exit(f"{len(failed)} of {count} failed: {failed[0]}")
    return wall, refreshes() - before, len({r.stdout for r in results})


singles, parallels = [], []
for _ in range(rounds):
    singles.append(run(1))
    parallels.append(run(50))
single = sorted(w for w, _, _ in singles)[len(singles) // 2]
parallel = sorted(w for w, _, _ in parallels)[len(parallels) // 2]
print(f"expired-token refresh, {rounds} rounds each, medians:")
print(f"  1 process:   {single * 1000:7.1f} ms   refreshes seen by the server per round: {[r for _, r, _ in singles]}")
print(f"  50 processes:{parallel * 1000:7.1f} ms   refreshes seen by the server per round: {[r for _, r, _ in parallels]}"
      f"   distinct tokens printed per round: {[t for _, _, t in parallels]}")
print(f"  ratio 50 parallel / 1: {parallel / single:.2f}x")
