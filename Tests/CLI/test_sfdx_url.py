"""SFDX auth URLs (force://client:secret:refresh-token@instance), as `sf org login sfdx-url` reads and
CI secret stores keep them: sign in with one, export one. The stub plays a Salesforce instance."""
import subprocess
import time

from stub_server import StubServer
from test_login import OK, USAGE


def salesforce_stub(stub, rotated=None):
    base = stub.url("")
    answer = {"access_token": "00D!at-1", "instance_url": base, "id": base + "/id/00D000000000001EAA/005000000000001AAA",
              "token_type": "Bearer", "issued_at": str(int(time.time() * 1000)), "scope": "refresh_token api"}
    if rotated:
        answer["refresh_token"] = rotated
    stub.answer("/services/oauth2/token", 200, answer)
    stub.answer("/id/00D000000000001EAA/005000000000001AAA", 200,
                {"user_id": "005000000000001AAA", "organization_id": "00D000000000001EAA", "username": "ci@acme.example"})


def test_sign_in_with_an_sfdx_auth_url_and_export_it_again(sfauth):
    with StubServer() as stub:
        salesforce_stub(stub)
        url = f"force://PlatformCLI::5Aep861-imported@{stub.url('')}"
        login = subprocess.run([sfauth.binary, "login", "--sfdx-url-file", "-"], input=url + "\n", env=sfauth.env,
                               capture_output=True, text=True, timeout=60)
        assert login.returncode == OK, login.stderr
        assert "Signed in as ci@acme.example" in login.stderr
        assert "refresh_token=5Aep861-imported" in stub.requests("/services/oauth2/token")[0]
        assert sfauth.run("token").stdout.strip() == "00D!at-1"
        exported = sfauth.run("export", "--sfdx-url")
        assert exported.returncode == OK, exported.stderr
        assert exported.stdout.strip() == url
        assert "secret store" in exported.stderr and "5Aep861" not in exported.stderr


def test_a_bad_sfdx_auth_url_says_what_is_wrong_without_echoing_it(sfauth, tmp_path):
    file = tmp_path / "auth-url.txt"
    file.write_text("force://PlatformCLI:only-two-parts-secret-token@acme.my.salesforce.com\n")
    result = sfauth.run("login", "--sfdx-url-file", str(file))
    assert result.returncode == USAGE and "<client id>:<secret>:<refresh token>" in result.stderr
    assert "only-two-parts-secret-token" not in result.stderr
    assert sfauth.run("export", "--sfdx-url").returncode != OK
