"""`sfauth doctor`: one line per check with the fix; non-zero when something would stop a sign-in."""
import os
import subprocess
import sys

from test_accounts import login
from test_login import OK, STORAGE


def lines(result):
    return {line.split()[1]: line for line in result.stdout.splitlines()}


def test_doctor_on_a_healthy_machine(sfauth, server):
    login(sfauth)
    result = sfauth.run("doctor", "--server", server["SFAUTH_TEST_ISSUER"])
    assert result.returncode == OK, result.stdout + result.stderr
    checks = lines(result)
    assert {"display", "browser", "keyring", "store", "port", "proxy", "clock"} <= set(checks), result.stdout
    assert checks["store"].startswith("ok"), checks["store"]
    assert checks["clock"].startswith("ok") and ("ahead of" in checks["clock"] or "behind" in checks["clock"]), checks["clock"]
    assert checks["display"].startswith("note") and "--device" in checks["display"]       # the tests run without a display


def test_doctor_names_what_would_stop_a_sign_in_and_the_fix(sfauth):
    login(sfauth)
    os.chmod(sfauth.home, 0o777)
    holder = subprocess.Popen([sys.executable, "-c", "import socket,time\n"
                               "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                               "s.bind(('127.0.0.1', 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = holder.stdout.readline().strip()
        result = sfauth.run("doctor", "--port", port, HTTPS_PROXY="http://proxy.example:3128")
    finally:
        holder.kill()
        holder.wait()
        os.chmod(sfauth.home, 0o700)
    assert result.returncode == STORAGE, result.stdout
    checks = lines(result)
    assert checks["store"].startswith("PROBLEM") and "chmod 700" in checks["store"]
    assert checks["port"].startswith("PROBLEM") and f"held by python" in checks["port"] and f"(pid {holder.pid})" in checks["port"]
    assert checks["proxy"].startswith("note") and "HTTPS_PROXY" in checks["proxy"]
