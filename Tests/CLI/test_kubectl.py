"""`sfauth kube-credential` as the real kubectl's exec credential plugin, and `sfauth kubeconfig`.

The real /usr/bin/kubectl against a loopback HTTPS stand-in for an API server (kube_apiserver.py)
that accepts only tokens the test authorization server accepts. Accounts are signed in with the
client credentials grant, so no browser is involved.
"""
import json
import os
import statistics
import subprocess
import time

import pytest

from kube_apiserver import KubeAPIServer

KUBECTL = "/usr/bin/kubectl"
LOGIN_REQUIRED = 3

pytestmark = pytest.mark.skipif(not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed")


@pytest.fixture
def apiserver(server, tmp_path):
    stand_in = KubeAPIServer(tmp_path, server["SFAUTH_TEST_RESOURCE_URL"])
    yield stand_in
    stand_in.stop()


def sign_in(sfauth, alias="svc"):
    result = sfauth.run("login", "--issuer", sfauth.server["SFAUTH_TEST_ISSUER"],
                        "--client-id", sfauth.server["SFAUTH_TEST_SERVICE_CLIENT_ID"], "--client-credentials",
                        "--alias", alias, SFAUTH_CLIENT_SECRET=sfauth.server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"],
                        XDG_CACHE_HOME=str(sfauth.home.parent / "cache"))
    assert result.returncode == 0, result.stderr


def write_kubeconfig(sfauth, apiserver, tmp_path, *kubeconfig_args, user="sfauth-user"):
    entry = sfauth.run("kubeconfig", "--name", user, *kubeconfig_args)
    assert entry.returncode == 0, entry.stderr
    path = tmp_path / "kubeconfig"
    path.write_text(apiserver.kubeconfig(entry.stdout, user))
    return path


def kubectl(sfauth, kubeconfig, *args, timeout=60):
    env = dict(sfauth.env, HOME=str(sfauth.home.parent))   # kubectl's discovery cache stays private
    started = time.monotonic()
    result = subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), *args], env=env, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=timeout)
    return result, time.monotonic() - started


def test_kubeconfig_prints_an_exec_stanza_that_runs_this_binary(sfauth):
    sign_in(sfauth, alias="work")
    [identifier] = [json.loads(p.read_text())["identifier"] for p in (sfauth.home / "accounts").iterdir()]
    result = sfauth.run("kubeconfig", "--account", "work")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "exec:"
    assert "  apiVersion: client.authentication.k8s.io/v1" in lines
    assert f'  command: "{os.path.realpath(sfauth.binary)}"' in lines
    # The account by its identifier, which no alias can take over (issue 17 §6); the default too.
    assert lines[lines.index("  args:") + 1:lines.index("  args:") + 4] == ['  - "kube-credential"', '  - "--account"', f'  - "{identifier}"']
    assert "  interactiveMode: IfAvailable" in lines
    assert "  provideClusterInfo: false" in lines
    assert sfauth.run("kubeconfig").stdout == result.stdout


def test_kubeconfig_names_an_account_that_exists(sfauth):
    nobody = sfauth.run("kubeconfig")
    assert nobody.returncode == LOGIN_REQUIRED and nobody.stdout == ""
    assert "no account is stored" in nobody.stderr
    sign_in(sfauth)
    unknown = sfauth.run("kubeconfig", "--account", "someone")
    assert unknown.returncode == 2 and "there is no stored account 'someone'" in unknown.stderr


def test_set_credentials_prints_the_kubectl_command_that_writes_the_user(sfauth, apiserver, tmp_path):
    sign_in(sfauth)
    printed = sfauth.run("kubeconfig", "--account", "svc", "--set-credentials", "sfauth user")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.count("\n") == 1 and printed.stdout.startswith("kubectl config set-credentials 'sfauth user' ")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(apiserver.kubeconfig("- name: placeholder\n  user: {}\n", "sfauth user"))
    env = dict(sfauth.env, KUBECONFIG=str(kubeconfig), HOME=str(sfauth.home.parent))
    wrote = subprocess.run(["sh", "-c", printed.stdout], env=env, capture_output=True, text=True, timeout=60)
    assert wrote.returncode == 0, wrote.stderr
    result, _ = kubectl(sfauth, kubeconfig, "get", "pods")
    assert result.returncode == 0, result.stderr
    assert "sfauth-pod" in result.stdout
    assert set(apiserver.tokens_seen()) == {sfauth.run("token", "--account", "svc").stdout.strip()}
    both = sfauth.run("kubeconfig", "--name", "a", "--set-credentials", "b")
    assert both.returncode == 2 and "not both" in both.stderr


def test_exec_credential_in_the_version_kubectl_asks_for(sfauth):
    sign_in(sfauth)
    token = sfauth.run("token").stdout.strip()
    for version in ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"):
        info = json.dumps({"kind": "ExecCredential", "apiVersion": version, "spec": {"interactive": False}})
        result = sfauth.run("kube-credential", "--account", "svc", KUBERNETES_EXEC_INFO=info)
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
        credential = json.loads(result.stdout)
        assert credential["kind"] == "ExecCredential" and credential["apiVersion"] == version
        assert credential["status"]["token"] == token
        assert credential["status"]["expirationTimestamp"].endswith("Z")
        assert time.strptime(credential["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
    absent = sfauth.run("kube-credential")
    assert json.loads(absent.stdout)["apiVersion"] == "client.authentication.k8s.io/v1"
    supplied = sfauth.run("kube-credential", SFAUTH_ACCESS_TOKEN="from-the-environment")
    assert json.loads(supplied.stdout)["status"] == {"token": "from-the-environment"}
    bad = sfauth.run("kube-credential", KUBERNETES_EXEC_INFO='{"apiVersion":"client.authentication.k8s.io/v2"}')
    assert bad.returncode == 2 and bad.stdout == "" and "v2" in bad.stderr


def test_kubectl_get_pods_with_the_plugin(sfauth, apiserver, tmp_path):
    sign_in(sfauth)
    kubeconfig = write_kubeconfig(sfauth, apiserver, tmp_path, "--account", "svc")
    result, _ = kubectl(sfauth, kubeconfig, "get", "pods")
    assert result.returncode == 0, result.stderr
    assert "sfauth-pod" in result.stdout and "Running" in result.stdout
    token = sfauth.run("token", "--account", "svc").stdout.strip()
    assert set(apiserver.tokens_seen()) == {token}
    assert ("/api/v1/namespaces/default/pods", token, 200) in apiserver.requests


def test_the_stand_in_refuses_other_tokens(sfauth, apiserver, tmp_path):
    """The success above means something: a token the authorization server does not know gets 401."""
    sign_in(sfauth)
    kubeconfig = write_kubeconfig(sfauth, apiserver, tmp_path, "--account", "svc")
    result, _ = kubectl(sfauth, kubeconfig, "get", "pods", "--request-timeout", "20s")
    assert result.returncode == 0, result.stderr
    forged = dict(sfauth.env, SFAUTH_ACCESS_TOKEN="not-a-token-the-server-issued")
    failed = subprocess.run([KUBECTL, "--kubeconfig", str(kubeconfig), "get", "pods"], env=dict(forged, HOME=str(tmp_path)),
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert failed.returncode != 0
    assert "Unauthorized" in failed.stderr or "must be logged in" in failed.stderr
    assert ("/api/v1/namespaces/default/pods", "not-a-token-the-server-issued", 200) not in apiserver.requests


def test_no_account_fails_fast_with_the_command_to_run(sfauth, apiserver, tmp_path):
    # A user entry written by hand, without --account (sfauth kubeconfig names one that exists).
    entry = (f'- name: sfauth-user\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n'
             f'      command: "{sfauth.binary}"\n      args: ["kube-credential"]\n      interactiveMode: IfAvailable\n')
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(apiserver.kubeconfig(entry, "sfauth-user"))
    result, elapsed = kubectl(sfauth, kubeconfig, "get", "pods")
    assert result.returncode != 0
    assert "sfauth: Not signed in: no account is stored. Run `sfauth login` first." in result.stderr
    assert "sfauth-pod" not in result.stdout
    assert elapsed < 30, f"kubectl took {elapsed:.1f} s"
    assert apiserver.tokens_seen() == []


def test_login_required_account_says_which_login_and_starts_none(sfauth, apiserver, tmp_path):
    """A client-credentials account whose token expired, without the secret: only a sign-in helps.
    kubectl runs the plugin non-interactively (no terminal): exit 3, one line, no browser."""
    sign_in(sfauth)
    account_file, = (sfauth.home / "accounts").iterdir()
    stored = json.loads(account_file.read_text())
    assert "expiresAt" in stored, stored.keys()
    stored["expiresAt"] = stored["issuedAt"]  # the same encoding as the server's times
    account_file.write_text(json.dumps(stored))
    direct = sfauth.run("kube-credential", "--account", "svc",
                        KUBERNETES_EXEC_INFO='{"apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":true}}')
    assert direct.returncode == LOGIN_REQUIRED
    assert direct.stdout == ""
    lines = direct.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sfauth: ")
    assert "sfauth login --account svc" in lines[0]
    kubeconfig = write_kubeconfig(sfauth, apiserver, tmp_path, "--account", "svc")
    result, elapsed = kubectl(sfauth, kubeconfig, "get", "pods")
    assert result.returncode != 0
    assert "SFAUTH_CLIENT_SECRET=… sfauth login --account svc" in result.stderr
    assert elapsed < 30
    assert not sfauth.browser_log.exists()


def test_time_the_plugin_adds_to_kubectl_get(sfauth, apiserver, tmp_path):
    """`kubectl get pods` with the plugin against the same with a static token in the kubeconfig, runs
    interleaved (the machine is shared; interleaving spreads other load over both), medians printed."""
    sign_in(sfauth)
    with_plugin = write_kubeconfig(sfauth, apiserver, tmp_path, "--account", "svc")
    token = sfauth.run("token", "--account", "svc").stdout.strip()
    static = tmp_path / "kubeconfig-static"
    static.write_text(apiserver.kubeconfig(f"- name: static\n  user:\n    token: {token}\n", "static"))
    kubectl(sfauth, with_plugin, "get", "pods")        # warm the discovery cache and the page cache
    kubectl(sfauth, static, "get", "pods")
    runs = 9
    plugin, baseline, alone = [], [], []
    for _ in range(runs):
        for kubeconfig, times in ((with_plugin, plugin), (static, baseline)):
            result, elapsed = kubectl(sfauth, kubeconfig, "get", "pods")
            assert result.returncode == 0, result.stderr
            assert "sfauth-pod" in result.stdout
            times.append(elapsed)
        started = time.monotonic()
        assert sfauth.run("kube-credential", "--account", "svc").returncode == 0
        alone.append(time.monotonic() - started)
    added = statistics.median(p - b for p, b in zip(plugin, baseline))
    print(f"\nkubectl get pods, median of {runs} interleaved runs: {statistics.median(plugin) * 1000:.1f} ms with "
          f"sfauth kube-credential, {statistics.median(baseline) * 1000:.1f} ms with a static token; the plugin adds "
          f"{added * 1000:.1f} ms (median of the paired differences); sfauth kube-credential alone: "
          f"{statistics.median(alone) * 1000:.1f} ms")
    assert added < 1.0


def authorization_code_grants(server):
    import urllib.request
    with urllib.request.urlopen(server["SFAUTH_TEST_STATS_URL"], timeout=10) as response:
        return json.loads(response.read())["token_requests"].get("authorization_code", 0)


def needing_sign_in(sfauth, alias="web"):
    """A browser-signed-in account whose refresh token the server has (as far as sfauth knows) rejected."""
    signed_in = sfauth.run(*sfauth.login_args(extra=("--alias", alias)))
    assert signed_in.returncode == 0, signed_in.stderr
    account_file, = (sfauth.home / "accounts").iterdir()
    stored = json.loads(account_file.read_text())
    stored["status"] = "login_required"
    account_file.write_text(json.dumps(stored))


def parallel_interactive_callers(sfauth, tmp_path, count=3, **env):
    """`count` kube-credential processes started at once, each with a terminal as standard input and
    `interactive: true`, as kubectl starts them on a terminal. Returns [((stdout, stderr), status)] and
    how many times the browser was launched."""
    launches = tmp_path / "browser-launches"
    wrapper = tmp_path / "counting-browser"
    wrapper.write_text(f"#!/bin/sh\necho launched >> '{launches}'\nexec '{sfauth.server['SFAUTH_TEST_BROWSER']}' \"$@\"\n")
    wrapper.chmod(0o755)
    info = json.dumps({"kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1",
                       "spec": {"interactive": True}})
    callers, terminals = [], []
    try:
        for _ in range(count):
            master, slave = os.openpty()
            terminals += [master, slave]
            callers.append(subprocess.Popen([sfauth.binary, "kube-credential", "--account", "web"], stdin=slave,
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                            env=dict(sfauth.env, KUBERNETES_EXEC_INFO=info, BROWSER=str(wrapper), **env)))
        results = [(p.communicate(timeout=120), p.returncode) for p in callers]
    finally:
        for p in callers:
            if p.poll() is None:
                p.kill()
        for fd in terminals:
            os.close(fd)
    return results, (launches.read_text().count("launched") if launches.exists() else 0)


def test_interactive_sign_in_runs_once_for_parallel_callers(sfauth, server, tmp_path):
    """kubectl, k9s and editors call the plugin in parallel: when a sign-in is needed and kubectl says
    the session is interactive, one process signs in (in the test browser) and the others wait for it
    and use its token — one browser, one authorization code grant, not one per caller."""
    needing_sign_in(sfauth)
    refused = sfauth.run("kube-credential", "--account", "web")   # no terminal: no sign-in
    assert refused.returncode == LOGIN_REQUIRED and "sfauth login --account web" in refused.stderr
    before = authorization_code_grants(server)
    results, launches = parallel_interactive_callers(sfauth, tmp_path)
    tokens = set()
    for (stdout, stderr), status in results:
        assert status == 0, stderr
        credential = json.loads(stdout)                        # stdout is the ExecCredential alone
        tokens.add(credential["status"]["token"])
    assert len(tokens) == 1
    assert launches == 1
    assert authorization_code_grants(server) - before == 1
    assert sfauth.run("token", "--account", "web").stdout.strip() in tokens


def test_a_failed_interactive_sign_in_is_everyone_s_result(sfauth, tmp_path):
    """When the one sign-in fails (the person denies it), the callers that waited for it fail too
    (exit 3, the command to run) instead of opening one browser each."""
    needing_sign_in(sfauth)
    results, launches = parallel_interactive_callers(sfauth, tmp_path, SFAUTH_TEST_BROWSER_ACTION="deny")
    assert launches == 1
    for (stdout, stderr), status in results:
        assert status == LOGIN_REQUIRED, stderr
        assert stdout == ""
        assert "sfauth login --account web" in stderr.splitlines()[-1]
    waited = [stderr for (_, stderr), _ in results if "that another sfauth process started did not complete" in stderr]
    assert len(waited) == 2
