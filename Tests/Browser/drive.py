"""Run the headless-Chromium "person" from Python and get its result (for pytests).

    import sys; sys.path.insert(0, "<repo>/Tests/Browser")
    from drive import run_browser
    result = run_browser(verification_uri_complete, action="approve")
    assert result["ok"] and result["device_status"] == "authorized", result

browser_driver.py runs in the foreground in its own process (so Chromium and its profile are
cleaned up whatever happens), with SFAUTH_TEST_BROWSER_ACTION and, when given,
SFAUTH_TEST_DEVICE_USER_CODE set; the result is the JSON it writes (see browser_driver.py).
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DRIVER = os.path.join(HERE, "browser_driver.py")


def run_browser(url, action="approve", user_code=None, timeout=60, env=None, log_dir=None):
    """Open `url`, sign in, and approve or deny (action: approve | deny | login-only). `user_code` is
    typed into the device grant's user-code field. `env` adds variables (e.g. SFAUTH_TEST_USERNAME).
    Returns the result dict; its "stdio" holds the driver's own log lines."""
    environment = dict(os.environ, **(env or {}))
    environment["SFAUTH_TEST_BROWSER_ACTION"] = action
    environment["SFAUTH_TEST_BROWSER_TIMEOUT"] = str(timeout)
    environment.pop("SFAUTH_TEST_DEVICE_USER_CODE", None)
    if user_code is not None:
        environment["SFAUTH_TEST_DEVICE_USER_CODE"] = user_code
    python = os.path.join(environment.get("SFAUTH_TEST_VENV", os.path.join(REPO, ".venv")), "bin", "python")
    with tempfile.TemporaryDirectory(prefix="sfauth-browser-", dir=log_dir) as work:
        result_path = os.path.join(work, "result.json")
        environment["SFAUTH_TEST_BROWSER_LOG"] = result_path
        completed = subprocess.run(
            [python if os.path.exists(python) else sys.executable, DRIVER, url],
            env=environment, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout + 30,
        )
        try:
            with open(result_path) as f:
                result = json.load(f)
        except (OSError, ValueError):
            result = {"ok": False, "error": f"the driver wrote no result (exit {completed.returncode})"}
    result["stdio"] = completed.stdout + completed.stderr
    return result
