"""Benchmarks against the real test server, run by scripts/benchmark under scripts/with-keyring:
  - 50 `sfauth token` processes started at once on an expired token, against one process refreshing
    alone: wall times, the ratio, and the refresh requests the server saw;
  - `sfauth token` with the refresh token in the keyring against the file: with a valid token
    (neither touches the keyring) and when it must refresh (reads and writes the keyring)."""
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


def environment(storage):
    home = tempfile.mkdtemp(prefix=f"sfauth-bench-{storage}-")
    env = dict(os.environ, SFAUTH_HOME=home, BROWSER=server["SFAUTH_TEST_BROWSER"], SFAUTH_TOKEN_LEEWAY="1",
               SFAUTH_TEST_BROWSER_LOG=home + "/browser.json", SFAUTH_STORAGE=storage)
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_CURRENT_DESKTOP"):
        env.pop(name, None)
    return home, env


def refreshes():
    with urllib.request.urlopen(server["SFAUTH_TEST_STATS_URL"], timeout=10) as response:
        return json.loads(response.read())["token_requests"].get("refresh_token", 0)




def login(env, home):
    result = subprocess.run([binary, "login", "--authorize-url", server["SFAUTH_TEST_AUTHORIZE_URL"],
                             "--token-url", server["SFAUTH_TEST_TOKEN_URL"], "--client-id", server["SFAUTH_TEST_SHORT_CLIENT_ID"],
                             "--scope", "openid"], env=env, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"login failed: {result.stderr}")
    [account] = os.listdir(home + "/accounts")
    return f"{home}/accounts/{account}"


def expire(path):
    expires_at = json.load(open(path))["expiresAt"]
    time.sleep(max(0.0, expires_at - time.time()) + 1.1)


home, env = environment("file")
path = login(env, home)


def run(count):
    expire(path)
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


# Keyring against file, alternating rounds so both see the same machine load.
keyring_home, keyring_env = environment("keyring")
keyring_path = login(keyring_env, keyring_home)
if "refreshToken" in json.load(open(keyring_path)):
    sys.exit("the keyring login kept its refresh token in the file: is a keyring running (scripts/with-keyring)?")


def timed(env):
    started = time.perf_counter()
    result = subprocess.run([binary, "token"], env=env, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        sys.exit(f"sfauth token failed: {result.stderr}")
    return time.perf_counter() - started


valid = {"file": [], "keyring": []}
refresh = {"file": [], "keyring": []}
for _ in range(rounds):
    for name, environment_, record in (("file", env, path), ("keyring", keyring_env, keyring_path)):
        expire(record)
        refresh[name].append(timed(environment_))
        valid[name] += [timed(dict(environment_, SFAUTH_TOKEN_LEEWAY="0")) for _ in range(20)]
median = lambda values: sorted(values)[len(values) // 2]
print(f"keyring vs file, {rounds} rounds, medians (whole process, including start-up):")
for label, table in (("valid token (no refresh)", valid), ("expired token (refresh)", refresh)):
    f, k = median(table["file"]), median(table["keyring"])
    print(f"  {label:26} file {f * 1000:6.1f} ms   keyring {k * 1000:6.1f} ms   ratio {k / f:.2f}x")
