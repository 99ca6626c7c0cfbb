#!/usr/bin/env python
"""Headless-Chromium "person" for sfauth's end-to-end tests (started by sfauth-test-browser).

    browser_driver.py URL

Opens URL in headless Chromium (Selenium, /usr/bin/chromedriver, a fresh temporary profile),
signs in when a login form appears, then acts on the consent page:

  SFAUTH_TEST_BROWSER_ACTION  approve (default): click "Authorize", wait until the browser is on
                              the redirect URI's host:port and that page has loaded;
                              deny: click "Cancel", same wait;
                              login-only: stop once the page after the login form has loaded
                              (e.g. the server's error page for an unregistered redirect URI).

The same actions work on the device grant's verification pages (RFC 8628; URL = the
verification_uri_complete, or the verification_uri with SFAUTH_TEST_DEVICE_USER_CODE): sign in,
submit the user code ("Verify"), then "Accept" (approve) or "Deny" (deny), and wait for the
server's "Device Authorized" / "Device Denied" page. A user code the server refuses ("Incorrect
user code", "Expired user code", "User code has already been used") ends with ok=false and that
text in "error".

  SFAUTH_TEST_DEVICE_USER_CODE  typed into the user-code field (replacing what the URL prefilled)
  SFAUTH_TEST_USERNAME / SFAUTH_TEST_PASSWORD   credentials (default: from the test server's env
                              file, else alice / alice-password)
  SFAUTH_TEST_BROWSER_FORGE=1 first send a forged GET <redirect_uri>?code=forged-code&state=forged-state
                              (urllib, 5 s timeout) and record its status and body
  SFAUTH_TEST_BROWSER_LOG     write the result JSON here (atomically: temp file + rename)
  SFAUTH_TEST_BROWSER_SCREENSHOT  save a PNG of the final page here
  SFAUTH_TEST_BROWSER_TIMEOUT hard limit in seconds (default 60): then the result is written
                              with an error and Chromium is killed
  SFAUTH_TEST_CHROMIUM / SFAUTH_TEST_CHROMEDRIVER  binaries (/usr/bin/chromium, /usr/bin/chromedriver)

Result: {"ok", "action", "url", "final_url", "title", "page_text", "forged_status", "forged_body",
"device_status", "http_status", "server", "error", "seconds", "steps"}; device_status: "authorized" |
"denied" | null (the device grant's final page); http_status: the status of the last server page
when it was an HTTP error, else null; server: "glewlwyd" or "nanoidp" once one of its pages was
seen, else null.
Exit status 0 when ok.

Glewlwyd (the second test server, scripts/second-server; its pages are a single-page web app titled
"Glewlwyd ..."): the login form is filled the same way; its consent page has no deny button, so
`deny` ends there with ok=false and error "deny is not supported: ..." (nothing is clicked);
`approve` ticks every requested scope (optional scopes start unticked), clicks "Grant access" and
then "Continue". Its device pages: the verification_uri_complete leads to sign-in and the consent
page, then to "Authorization complete" (device_status "authorized"); on the plain verification_uri
the code is typed from SFAUTH_TEST_DEVICE_USER_CODE (Glewlwyd asks for it before the sign-in); a
refused code ends with ok=false and "user code refused: ..." ("Invalid code, please retry" when signed
in; "scope parameter is missing; Invalid login URL" before). An authorization endpoint that answers an HTTP error with no page of its own
(Glewlwyd's 403 for an unregistered redirect URI) ends with ok=false, "http_status" set and
error "the server answered HTTP <status> ...". One that answers JSON (NanoIDP's 400
{"error": ...} for an unregistered redirect URI) ends the same way, with the JSON in "error".

NanoIDP (the third test server, scripts/third-server; page titles "... - NanoIDP"): the sign-in form
is filled the same way, and NanoIDP then redirects at once -- it has no consent page, so `deny` ends on
the sign-in page with ok=false and error "deny is not supported: ..." (nothing is submitted). Its
device page is one form (user code, username, password, "Authorize Device" / "Deny"): the code is
typed from SFAUTH_TEST_DEVICE_USER_CODE when set (else the one the verification_uri_complete
prefilled), the form filled and the button of the action clicked; "Device authorized" / "Device
authorization denied" give device_status "authorized" / "denied". A refused sign-in or user code is
an alert on the same page: ok=false, "login rejected: ..." or "user code refused: ...".

From Python (a pytest): Tests/Browser/drive.py runs this in a subprocess and returns the result.
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

START = time.monotonic()
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never try to download a driver

ACTIONS = ("approve", "deny", "login-only")
DJANGO_ERROR_HEADINGS = ("Not Found", "Bad Request (400)", "Forbidden (403)", "Server Error (500)")


def log(msg):
    print(f"[{time.monotonic() - START:6.2f}s] {msg}", flush=True)


def env_float(name, default):
    try:
        return float(os.environ.get(name, "") or default)
    except ValueError:
        return default


def credentials():
    user = os.environ.get("SFAUTH_TEST_USERNAME")
    password = os.environ.get("SFAUTH_TEST_PASSWORD")
    if user and password:
        return user, password
    # Fall back to the running test server's env file.
    run_dir = os.environ.get("SFAUTH_TEST_RUN_DIR") or os.path.join(REPO, ".test-run", "server")
    values = {}
    try:
        import shlex

        with open(os.path.join(run_dir, "env")) as f:
            for line in f:
                if line.startswith("export ") and "=" in line:
                    k, v = line[len("export "):].rstrip("\n").split("=", 1)
                    values[k] = shlex.split(v)[0] if v else ""
    except OSError:
        pass
    return (
        user or values.get("SFAUTH_TEST_USERNAME", "alice"),
        password or values.get("SFAUTH_TEST_PASSWORD", "alice-password"),
    )


class Result:
    def __init__(self, url, action):
        self.lock = threading.Lock()
        self.written = False
        self.data = {
            "ok": False,
            "action": action,
            "url": url,
            "final_url": None,
            "title": None,
            "page_text": None,
            "forged_status": None,
            "forged_body": None,
            "device_status": None,
            "http_status": None,
            "server": None,
            "error": None,
            "seconds": None,
            "steps": [],
        }

    def step(self, what):
        log(what)
        self.data["steps"].append(f"{time.monotonic() - START:.2f}s {what}")

    def write(self):
        """Write once (the first caller wins: normal end or the hard-limit timer)."""
        with self.lock:
            if self.written:
                return False
            self.written = True
            self.data["seconds"] = round(time.monotonic() - START, 3)
            text = json.dumps(self.data, indent=2)
            path = os.environ.get("SFAUTH_TEST_BROWSER_LOG")
            if path:
                d = os.path.dirname(os.path.abspath(path))
                os.makedirs(d, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=".browser-result-", suffix=".tmp", dir=d)
                with os.fdopen(fd, "w") as f:
                    f.write(text + "\n")
                os.replace(tmp, path)
            log("result: " + text)
            return True


def forge(result, url):
    """Send GET <redirect_uri>?code=forged-code&state=forged-state before the real login."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    redirect_uri = (query.get("redirect_uri") or [None])[0]
    if not redirect_uri:
        result.data["forged_body"] = "no redirect_uri in the authorization URL"
        return
    sep = "&" if urllib.parse.urlsplit(redirect_uri).query else "?"
    target = redirect_uri + sep + "code=forged-code&state=forged-state"
    result.step(f"forged request: GET {target}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(target, timeout=5) as r:
            status, body = r.status, r.read(4096)
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read(4096)
    except Exception as e:  # noqa: BLE001 - connection refused, timeout, ...
        result.data["forged_body"] = None
        result.data["forged_error"] = f"{type(e).__name__}: {e}"
        result.step(f"forged request failed: {e}")
        return
    result.data["forged_status"] = status
    result.data["forged_body"] = body.decode("utf-8", "replace")[:200]
    result.step(f"forged request answered {status}")


def kill_profile_processes(profile_dir):
    """Kill any process still using our temporary profile (by pid; nothing else is touched)."""
    if not profile_dir:
        return
    needle = profile_dir.encode()
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if needle in f.read():
                    os.kill(int(name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass


def netloc_of(url):
    try:
        parts = urllib.parse.urlsplit(url)
        return (parts.scheme, (parts.netloc or "").lower())
    except ValueError:
        return (None, None)


def run(result, url, action, profile_dir, holder):
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    redirect_uri = (query.get("redirect_uri") or [None])[0]
    target = netloc_of(redirect_uri) if redirect_uri else None
    server = netloc_of(url)

    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("SFAUTH_TEST_CHROMIUM", "/usr/bin/chromium")
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile_dir}",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--password-store=basic",
        "--window-size=1024,768",
    ):
        options.add_argument(arg)
    # Never block inside WebDriver waiting for a page: get() and click() return at once and the
    # loop below watches URL and document.readyState itself (a hung listener then ends in a
    # result with the page as it is, not in a WebDriver timeout).
    options.page_load_strategy = "none"
    service = Service(
        executable_path=os.environ.get("SFAUTH_TEST_CHROMEDRIVER", "/usr/bin/chromedriver"),
        log_output=os.devnull,
    )
    result.step("starting chromium")
    driver = webdriver.Chrome(options=options, service=service)
    holder["driver"] = driver
    result.step("chromium ready")

    username, password = credentials()

    def ready():
        try:
            return driver.execute_script("return document.readyState") == "complete"
        except WebDriverException:
            return False

    def first(css):
        found = driver.find_elements(By.CSS_SELECTOR, css)
        return found[0] if found else None

    def net_error_code():
        """Chromium's own error page ("This site can't be reached ... ERR_CONNECTION_REFUSED")."""
        try:
            return driver.execute_script(
                "var e = document.getElementById('main-frame-error') ||"
                " (document.body && document.body.classList.contains('neterror') ? document.body : null);"
                "if (!e) return null;"
                "var m = (document.body.innerText || '').match(/\\bERR_[A-Z0-9_]+\\b/);"
                "return m ? m[0] : 'net error';"
            )
        except WebDriverException:
            return None

    def displayed(css):
        try:
            return [e for e in driver.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()]
        except WebDriverException:
            return []

    def http_status():
        """The HTTP status of the current document (Navigation Timing), None when unknown."""
        try:
            return driver.execute_script(
                "var n = performance.getEntriesByType('navigation')[0];"
                "return n && n.responseStatus ? n.responseStatus : null;"
            )
        except WebDriverException:
            return None

    def bare_error_page():
        """Chromium's own page for an HTTP error without a body ("HTTP ERROR 403"), or an empty page."""
        try:
            return driver.execute_script(
                "return !!document.getElementById('main-frame-error') ||"
                " !(document.body && document.body.innerText.trim());"
            )
        except WebDriverException:
            return False

    def glewlwyd_grant_buttons():
        """Glewlwyd's "Grant access" button (the consent page's primary button; not the login
        form's "OK", not the device page's "OK")."""
        return [b for b in displayed("button.btn-primary")
                if b.get_attribute("id") != "loginbut" and "btn-icon" not in (b.get_attribute("class") or "")]

    def is_glewlwyd():
        try:
            return (driver.title or "").startswith("Glewlwyd")
        except WebDriverException:
            return False

    def is_nanoidp():
        """NanoIDP's own pages (the third test server): "Authorize - NanoIDP", "Device Authorization -
        NanoIDP"."""
        try:
            return (driver.title or "").endswith("- NanoIDP")
        except WebDriverException:
            return False

    def json_error_body():
        """The text of a JSON document (an endpoint's error answer shown as it is), else None."""
        try:
            return driver.execute_script(
                "return /json/i.test(document.contentType || '') && document.body ?"
                " document.body.innerText : null;"
            )
        except WebDriverException:
            return None

    def on_target(current):
        if current.startswith("chrome-error://"):
            return False
        here = netloc_of(current)
        if target:
            return here == target
        return here[0] in ("http", "https") and here != server

    def finish(ok, error=None):
        result.data["ok"] = ok
        if error:
            result.data["error"] = error

    try:
        driver.get(url)
    except WebDriverException as e:
        # A page-load timeout or a redirect that cannot be loaded still leaves a page to inspect.
        result.step(f"initial navigation: {type(e).__name__}: {str(e).splitlines()[0]}")

    logged_in = False
    consent_clicked = False
    glewlwyd_continue_clicked = False
    user_code_submitted = False
    device_decided = False
    typed_user_code = os.environ.get("SFAUTH_TEST_DEVICE_USER_CODE") or None
    limit = env_float("SFAUTH_TEST_BROWSER_TIMEOUT", 60)
    deadline = START + max(limit * 0.8, limit - 5)  # leave time to collect the page before the hard limit
    while True:
        if time.monotonic() > deadline:
            finish(False, "timed out waiting for the flow to finish")
            break
        try:
            current = driver.current_url
            if current.startswith("chrome-error://"):
                finish(False, f"the browser could not load the page (at {current})")
                break
            if on_target(current):
                if ready():
                    result.step(f"on the redirect target: {current}")
                    net_error = net_error_code()
                    if net_error:
                        result.step(f"the redirect target could not be loaded: {net_error}")
                        finish(False, f"the browser could not load {current}: {net_error}")
                    elif action == "login-only":
                        finish(True)  # the server redirected without asking anything
                    elif consent_clicked or action == "approve":
                        finish(True)
                    else:
                        finish(False, "redirected before the consent page could be denied")
                    break
            elif not ready():
                pass
            elif first("#login-error, .errornote"):
                finish(False, "login rejected: " + first("#login-error, .errornote").text.strip())
                break
            elif logged_in and is_glewlwyd() and any(
                "error" in t.text.lower() for t in displayed(".toast")
            ):
                # Glewlwyd shows a refused sign-in as a toast ("Authentication error") on the login page.
                result.data["server"] = "glewlwyd"
                toast = next(t for t in displayed(".toast") if "error" in t.text.lower())
                bodies = toast.find_elements(By.CSS_SELECTOR, ".toast-body")
                text = (bodies[0].text if bodies else toast.text).strip()
                finish(False, "login rejected: " + " ".join(text.split()))
                break
            elif is_nanoidp() and (first(".decision-authorized") or first(".decision-denied")):
                # NanoIDP's device page after the decision: "Device authorized" / "... denied".
                result.data["server"] = "nanoidp"
                status = "authorized" if first(".decision-authorized") else "denied"
                result.data["device_status"] = status
                heading = first(".decision-message h5")
                result.step(f"nanoidp device page: {heading.text.strip() if heading else status}")
                wanted = {"approve": "authorized", "deny": "denied"}.get(action)
                finish(status == wanted, None if status == wanted else f"device grant ended as {status!r}")
                break
            elif is_nanoidp() and logged_in and displayed(".alert-danger"):
                # NanoIDP renders a refused sign-in or user code on the same page, in an alert.
                result.data["server"] = "nanoidp"
                text = " ".join(displayed(".alert-danger")[0].text.split())
                refused = "user code refused: " if "code" in text.lower() else "login rejected: "
                result.step(f"nanoidp refused: {text}")
                finish(False, refused + text)
                break
            elif (is_nanoidp() and first("form input[name=user_code]") is not None
                  and first("input[name=password]") is not None):
                # NanoIDP's device page: the user code, the username and the password in one form,
                # with "Authorize Device" and "Deny" buttons.
                result.data["server"] = "nanoidp"
                if logged_in:
                    pass  # submitted; navigation pending
                elif action == "login-only":
                    result.step("nanoidp device page reached (login-only: stopping)")
                    finish(True)
                    break
                else:
                    field = first("form input[name=user_code]")
                    if typed_user_code:
                        field.clear()
                        field.send_keys(typed_user_code)
                    code = field.get_attribute("value")
                    if not code:
                        finish(False, "the user-code page asks for a code: set SFAUTH_TEST_DEVICE_USER_CODE")
                        break
                    user_field = first("input[name=username]")
                    if user_field is not None:
                        user_field.clear()
                        user_field.send_keys(username)
                    pass_field = first("input[name=password]")
                    pass_field.clear()
                    pass_field.send_keys(password)
                    value = "authorize" if action == "approve" else "deny"
                    result.step(f"nanoidp device page: code {code}, signing in as {username}, clicking {value!r}")
                    first(f"form button[name=action][value={value}]").click()
                    logged_in = user_code_submitted = device_decided = True
                    login_url = current
            elif is_nanoidp() and action == "deny" and not logged_in and first("input[name=password]") is not None:
                # NanoIDP asks no consent: it redirects with a code as soon as the user has signed in.
                result.data["server"] = "nanoidp"
                result.step("nanoidp sign-in page: it has no deny button")
                finish(False, "deny is not supported: NanoIDP's sign-in page has no deny button (no consent step)")
                break
            elif first("input[name=password]") is not None and first("input[name=username]") is not None:
                if logged_in:
                    pass  # still on the login page (submitted; navigation pending)
                else:
                    user_field = first("input[name=username]")
                    pass_field = first("input[name=password]")
                    user_field.clear()
                    user_field.send_keys(username)
                    pass_field.clear()
                    pass_field.send_keys(password)
                    submit = first(
                        "form button[type=submit], form input[type=submit], form button:not([type])"
                    )
                    if is_nanoidp():
                        result.data["server"] = "nanoidp"
                    result.step(f"login form: signing in as {username}" + (" (nanoidp)" if is_nanoidp() else ""))
                    if submit is not None:
                        submit.click()
                    else:
                        pass_field.submit()
                    logged_in = True
                    login_url = current
            elif is_glewlwyd() and "prompt=deviceComplete" in current:
                result.data["server"] = "glewlwyd"
                result.data["device_status"] = "authorized"
                result.step("glewlwyd device page: authorization complete")
                finish(action in ("approve", "login-only"),
                       None if action in ("approve", "login-only") else "the device code was approved, not denied")
                break
            elif is_glewlwyd() and "prompt=deviceCodeError" in current:
                result.data["server"] = "glewlwyd"
                body = driver.execute_script("return document.body ? document.body.innerText : ''") or ""
                # Signed in: "Invalid code, please retry" under the code field. Not signed in yet:
                # only "scope parameter is missing" / "Invalid login URL".
                lines = [line.strip() for line in body.splitlines() if line.strip()]
                text = next((line for line in lines if "invalid code" in line.lower()), None) or "; ".join(
                    line for line in lines if line not in ("Glewlwyd", "Logout", "Manage", "Change user", "OK"))
                result.step(f"glewlwyd refused the user code: {text}")
                finish(False, "user code refused: " + text)
                break
            elif is_glewlwyd() and displayed("input[maxlength='9']") and not user_code_submitted:
                # Glewlwyd's device page on the plain verification_uri: type the user code.
                result.data["server"] = "glewlwyd"
                field = displayed("input[maxlength='9']")[0]
                if not typed_user_code:
                    finish(False, "the user-code page asks for a code: set SFAUTH_TEST_DEVICE_USER_CODE")
                    break
                field.clear()
                field.send_keys(typed_user_code)
                buttons = displayed("button.btn-primary")
                if buttons and buttons[0].is_enabled():
                    result.step(f"glewlwyd user-code page: submitting {typed_user_code}")
                    buttons[0].click()
                    user_code_submitted = True
            elif is_glewlwyd() and logged_in and not consent_clicked and glewlwyd_grant_buttons():
                # Glewlwyd's consent page ("Client access grant"): no deny button.
                result.data["server"] = "glewlwyd"
                if action == "login-only":
                    result.step("glewlwyd consent page reached (login-only: stopping)")
                    finish(True)
                    break
                if action == "deny":
                    result.step("glewlwyd consent page: it has no deny button")
                    finish(False, "deny is not supported: Glewlwyd's consent page has no deny button")
                    break
                ticked = []
                for box in displayed("input[type=checkbox][id^='grant-']"):
                    if not box.is_selected():
                        box.click()
                        ticked.append(box.get_attribute("id")[len("grant-"):])
                button = glewlwyd_grant_buttons()[0]
                result.step(f"glewlwyd consent page: ticking {ticked or 'nothing'}, clicking {button.text.strip()!r}")
                button.click()
                consent_clicked = True
            elif (is_glewlwyd() and logged_in and not glewlwyd_continue_clicked
                  and displayed("button.btn-success") and not glewlwyd_grant_buttons()):
                # After "Grant access" has been saved (its button is gone), or when the scopes were
                # granted before: "Continue".
                result.data["server"] = "glewlwyd"
                if action == "deny" and not consent_clicked:
                    result.step("glewlwyd: scopes already granted, no consent page to deny")
                    finish(False, "deny is not supported: Glewlwyd's consent page has no deny button")
                    break
                if action == "login-only":
                    result.step("glewlwyd continue page reached (login-only: stopping)")
                    finish(True)
                    break
                result.step("glewlwyd: clicking 'Continue'")
                displayed("button.btn-success")[0].click()
                glewlwyd_continue_clicked = True
                consent_clicked = True
            elif logged_in and action == "login-only" and current != login_url:
                result.step(f"after login: {current}")
                finish(True)
                break
            elif "/device-grant-status/" in current and first("h1") is not None:
                # The device grant's last page: "Device Authorized" / "Device Denied".
                heading = first("h1").text.strip()
                status = heading.split()[-1].lower() if heading.startswith("Device ") else None
                result.data["device_status"] = status
                result.step(f"device grant page: {heading}")
                wanted = {"approve": "authorized", "deny": "denied"}.get(action)
                finish(status == wanted, None if status == wanted else f"device grant ended as {heading!r}")
                break
            elif first("form button[name=action][value=accept]") is not None and not device_decided:
                if action == "login-only":
                    result.step("device confirmation page reached (login-only: stopping)")
                    finish(True)
                    break
                value = "accept" if action == "approve" else "deny"
                result.step(f"device confirmation page: clicking {value!r}")
                first(f"form button[name=action][value={value}]").click()
                device_decided = True
            elif first("form input[name=user_code]") is not None:
                errors = first("ul.errorlist")
                if errors is not None:
                    result.step(f"user code refused: {errors.text.strip()}")
                    finish(False, "user code refused: " + errors.text.strip())
                    break
                if not user_code_submitted:
                    field = first("form input[name=user_code]")
                    if typed_user_code:
                        field.clear()
                        field.send_keys(typed_user_code)
                    code = field.get_attribute("value")
                    if not code:
                        finish(False, "the user-code page asks for a code: set SFAUTH_TEST_DEVICE_USER_CODE")
                        break
                    result.step(f"user-code page: submitting {code}")
                    first("form button[type=submit], form button:not([type])").click()
                    user_code_submitted = True
            elif first("form#authorizationForm input[name=allow]") is not None and not consent_clicked:
                if action == "login-only":
                    result.step("consent page reached (login-only: stopping)")
                    finish(True)
                    break
                if action == "approve":
                    button = first("form#authorizationForm input[name=allow]")
                else:
                    button = first("form#authorizationForm input[type=submit]:not([name=allow])")
                result.step(f"consent page: clicking {button.get_attribute('value')!r}")
                button.click()
                consent_clicked = True
            elif first("h1") is not None and first("h1").text.strip() in DJANGO_ERROR_HEADINGS:
                # Django's own error pages (e.g. 404 for a device confirmation that is not pending).
                error_text = first("h1").text.strip()
                result.step(f"server error page: {error_text}")
                finish(False, f"server error page: {error_text}")
                break
            elif first("h2") is not None and first("h2").text.strip().startswith("Error"):
                error_text = first("h2").text.strip()
                paragraph = first("h2 + p")
                if paragraph is not None:
                    error_text += ": " + paragraph.text.strip()
                result.step(f"server error page: {error_text}")
                finish(action == "login-only" and logged_in, None if action == "login-only" else
                       f"server error page: {error_text}")
                break
            elif (http_status() or 0) >= 400 and bare_error_page():
                # An HTTP error with no page of its own (Glewlwyd: 403, empty body, for a redirect URI
                # that is not registered): nothing to click, and no redirect will come.
                status = http_status()
                result.data["http_status"] = status
                result.step(f"the server answered HTTP {status} with no page")
                finish(False, f"the server answered HTTP {status} with no page (at {current})")
                break
            elif (http_status() or 0) >= 400 and json_error_body() is not None:
                # An HTTP error answered as JSON, shown by the browser as it is (NanoIDP: 400
                # {"error": "invalid_request", ...} for a redirect URI that is not registered).
                status = http_status()
                body = " ".join((json_error_body() or "").split())[:300]
                result.data["http_status"] = status
                result.step(f"the server answered HTTP {status} with JSON: {body}")
                finish(False, f"the server answered HTTP {status}: {body} (at {current})")
                break
        except WebDriverException as e:
            # Stale elements while the page navigates, a slow load: look again.
            log(f"retrying after {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        time.sleep(0.1)

    try:
        result.data["final_url"] = driver.current_url
        result.data["title"] = driver.title
        result.data["page_text"] = (
            driver.execute_script("return document.body ? document.body.innerText : ''") or ""
        )[:2000]
    except WebDriverException as e:
        log(f"could not read the final page: {e}")
    shot = os.environ.get("SFAUTH_TEST_BROWSER_SCREENSHOT")
    if shot:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(shot)), exist_ok=True)
            driver.save_screenshot(shot)
        except (WebDriverException, OSError) as e:
            log(f"screenshot failed: {e}")


def main():
    if len(sys.argv) < 2:
        print("usage: browser_driver.py URL", file=sys.stderr)
        return 2
    url = sys.argv[1]
    action = (os.environ.get("SFAUTH_TEST_BROWSER_ACTION") or "approve").strip().lower()
    result = Result(url, action)
    log(f"pid {os.getpid()} action={action} url={url}")
    profile_dir = tempfile.mkdtemp(prefix="sfauth-test-browser-")
    holder = {}
    hard_limit = env_float("SFAUTH_TEST_BROWSER_TIMEOUT", 60)

    def on_hard_limit():
        last = result.data["steps"][-1] if result.data["steps"] else "nothing done yet"
        # Typically a redirect target that accepts the connection but never answers: WebDriver
        # calls block while a navigation is pending, so the page cannot be read any more.
        result.data["error"] = f"hard limit of {hard_limit:g} s reached (last step: {last})"
        result.data["ok"] = False
        result.write()
        driver = holder.get("driver")
        try:
            pid = driver.service.process.pid if driver else None
            if pid:
                os.kill(pid, signal.SIGKILL)
        except Exception:  # noqa: BLE001
            pass
        kill_profile_processes(profile_dir)
        shutil.rmtree(profile_dir, ignore_errors=True)
        os._exit(3)

    timer = threading.Timer(max(1.0, hard_limit - (time.monotonic() - START)), on_hard_limit)
    timer.daemon = True
    timer.start()

    try:
        if action not in ACTIONS:
            raise ValueError(f"SFAUTH_TEST_BROWSER_ACTION must be one of {', '.join(ACTIONS)}")
        if os.environ.get("SFAUTH_TEST_BROWSER_FORGE") == "1":
            forge(result, url)
        run(result, url, action, profile_dir, holder)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        result.data["ok"] = False
        result.data["error"] = f"{type(e).__name__}: {e}".strip()
    finally:
        driver = holder.get("driver")
        if driver is not None:
            try:
                driver.quit()
            except Exception as e:  # noqa: BLE001
                log(f"quit failed: {e}")
        kill_profile_processes(profile_dir)
        shutil.rmtree(profile_dir, ignore_errors=True)
        result.write()
        timer.cancel()
    return 0 if result.data["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
