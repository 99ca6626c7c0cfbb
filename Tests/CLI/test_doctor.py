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
    assert "another sign-in" not in checks["port"] and "another --port" in checks["port"]
    assert checks["proxy"].startswith("note") and "HTTPS_PROXY" in checks["proxy"]


def test_doctor_checks_the_browser_the_display_and_the_server_are_really_there(sfauth, tmp_path):
    """$BROWSER must name something that exists, something must answer at DISPLAY, and the server must
    answer: else a sign-in would fail, and doctor says so and exits 1 (issue 17 §18)."""
    from conftest import free_port
    import socket
    listener = None
    for port in range(6100, 6200):                     # an X11 display N listens on TCP 6000+N
        try:
            listener = socket.socket()
            listener.bind(("127.0.0.1", port))
            listener.listen()
            break
        except OSError:
            listener.close()
            listener = None
    assert listener, "no free port in 6100-6199"
    try:
        display = f"127.0.0.1:{listener.getsockname()[1] - 6000}"
        good = sfauth.run("doctor", DISPLAY=display)
        assert lines(good)["display"].startswith("ok") and display in lines(good)["display"], good.stdout
    finally:
        listener.close()
    dead = sfauth.run("doctor", DISPLAY=display, BROWSER="no-such-browser-here --new-window")
    assert dead.returncode == STORAGE, dead.stdout
    assert lines(dead)["display"].startswith("PROBLEM") and "nothing answers" in lines(dead)["display"]
    assert lines(dead)["browser"].startswith("PROBLEM") and "cannot be found" in lines(dead)["browser"]
    unreachable = sfauth.run("doctor", "--server", f"http://127.0.0.1:{free_port()}/")
    assert unreachable.returncode == STORAGE, unreachable.stdout
    assert lines(unreachable)["clock"].startswith("PROBLEM") and "could not reach" in lines(unreachable)["clock"]
