"""Paste-back: the browser runs on another machine, so its redirect never reaches the listener; the
person pastes the address it ended up at on standard input (`state` is still checked)."""
import re
import time
import urllib.parse

import requests

from test_login import OK, call_api


def authorize_elsewhere(server, authorize_url, username="alice", password="alice-password"):
    """Does what a browser on another machine does: signs in to the server, approves, and returns the
    redirect address without following it (it points at a listener that machine cannot reach)."""
    session = requests.Session()
    page = session.get(authorize_url, timeout=10)                      # redirected to the login form
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    page = session.post(page.url, data={"csrfmiddlewaretoken": token, "username": username, "password": password},
                        headers={"Referer": page.url}, timeout=10)     # back to the consent page
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
    fields["allow"] = "Authorize"
    answer = session.post(page.url, data=fields, headers={"Referer": page.url}, allow_redirects=False, timeout=10)
    assert answer.status_code == 302, answer.text[:300]
    return answer.headers["Location"]


def start_login(sfauth):
    process = sfauth.start(*sfauth.login_args(extra=["--no-browser", "--paste", "--timeout", "60"]))
    deadline = time.time() + 15
    while time.time() < deadline:
        line = process.stderr.readline()
        if line.strip().startswith("http"):
            return process, line.strip()
    raise AssertionError("no URL printed")


def test_pasted_redirect_completes_the_login(sfauth, server):
    process, url = start_login(sfauth)
    redirect = authorize_elsewhere(server, url)
    assert redirect.startswith("http://127.0.0.1:")
    # Another login's address first: refused, and the login keeps waiting.
    foreign = re.sub(r"state=[^&]+", "state=someone-else", redirect)
    process.stdin.write(foreign + "\n")
    process.stdin.write(redirect + "\n")
    process.stdin.flush()
    process.wait(timeout=30)
    rest = process.stderr.read()
    assert process.returncode == OK, rest
    assert "Not used:" in rest and "does not match this login" in rest
    assert "Signed in as alice" in rest
    token = sfauth.run("token").stdout.strip()
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], token)[0] == 200
