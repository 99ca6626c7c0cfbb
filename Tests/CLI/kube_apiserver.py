"""A loopback HTTPS stand-in for a Kubernetes API server, for the kubectl tests.

Answers `/version` to anyone (with the installed kubectl's own version, so Google's kubectl
dispatcher runs no other kubectl), and discovery (`/api`, `/apis`, `/api/v1`) and
`/api/v1/namespaces/default/pods` only for a bearer token the test authorization server accepts —
checked by calling its resource endpoint (`SFAUTH_TEST_RESOURCE_URL`) with that token. Everything
else, and any other token, gets 401. A self-signed certificate for 127.0.0.1 is made with openssl
when it starts. Listens on 127.0.0.1 only; `stop()` ends it (and the fixture always calls it).
"""
import base64
import http.server
import json
import re
import ssl
import subprocess
import threading
import urllib.error
import urllib.request


def kubectl_client_version():
    """(major, minor, gitVersion) of /usr/bin/kubectl's client."""
    out = subprocess.run(["kubectl", "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=30)
    info = json.loads(out.stdout)["clientVersion"]
    minor = re.match(r"\d+", info["minor"]).group(0)
    git_version = re.match(r"v\d+\.\d+\.\d+", info["gitVersion"]).group(0)
    return info["major"], minor, git_version


class KubeAPIServer:
    def __init__(self, workdir, resource_url):
        self.resource_url = resource_url
        self.workdir = workdir
        self.requests = []             # (path, token or None, status)
        self.lock = threading.Lock()
        self._verdicts = {}
        self.major, self.minor, self.git_version = kubectl_client_version()
        cert, key = workdir / "apiserver.crt", workdir / "apiserver.key"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=30)
        self.ca_data = base64.b64encode(cert.read_bytes()).decode()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(cert), str(key))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.url = f"https://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def accepts(self, token):
        """Whether the test authorization server accepts `token` (cached per token)."""
        with self.lock:
            if token in self._verdicts:
                return self._verdicts[token]
        request = urllib.request.Request(self.resource_url, headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                verdict = response.status == 200
        except urllib.error.HTTPError:
            verdict = False
        with self.lock:
            self._verdicts[token] = verdict
        return verdict

    def tokens_seen(self):
        with self.lock:
            return [token for _, token, _ in self.requests if token]

    def kubeconfig(self, user_entry, user_name):
        """A kubeconfig with this server as its cluster and `user_entry` (YAML list item) as its user."""
        return "\n".join([
            "apiVersion: v1",
            "kind: Config",
            "clusters:",
            "- name: stand-in",
            "  cluster:",
            f"    server: {self.url}",
            f"    certificate-authority-data: {self.ca_data}",
            "contexts:",
            "- name: stand-in",
            "  context:",
            "    cluster: stand-in",
            f"    user: {user_name}",
            "    namespace: default",
            "current-context: stand-in",
            "users:",
            user_entry.rstrip("\n"),
            "",
        ])

    def _handler(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                path = self.path.split("?", 1)[0]
                header = self.headers.get("Authorization", "")
                token = header[7:] if header.startswith("Bearer ") else None
                if path == "/version":
                    status, body = 200, {"major": server.major, "minor": server.minor, "gitVersion": server.git_version,
                                         "platform": "linux/amd64"}
                elif token is None or not server.accepts(token):
                    status, body = 401, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                         "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
                else:
                    status, body = self._authorized(path)
                with server.lock:
                    server.requests.append((path, token, status))
                self._send(status, body)

            def _authorized(self, path):
                if path == "/api":
                    return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": f"127.0.0.1:{server.port}"}]}
                if path == "/apis":
                    return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": []}
                if path == "/api/v1":
                    return 200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
                         "verbs": ["get", "list"], "shortNames": ["po"]}]}
                if path == "/api/v1/namespaces/default/pods":
                    if "as=Table" in self.headers.get("Accept", ""):
                        return 200, {
                            "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": "1"},
                            "columnDefinitions": [
                                {"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0},
                                {"name": "Status", "type": "string", "format": "", "description": "", "priority": 0}],
                            "rows": [{"cells": ["sfauth-pod", "Running"], "object": {
                                "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                "metadata": {"name": "sfauth-pod", "namespace": "default"}}}]}
                    return 200, {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"},
                                 "items": [{"metadata": {"name": "sfauth-pod", "namespace": "default"},
                                            "status": {"phase": "Running"}}]}
                return 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}

        return Handler
