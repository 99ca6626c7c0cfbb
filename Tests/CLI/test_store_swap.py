"""Issue 17 §1: the store's trust check must not race. A local user who can write a parent of the
store swaps, in a loop, the user's store and a store of their own (a directory of another user, a
world-writable one, or a symbolic link) while sfauth reads it. Checked once and then opened again by
path, 416 of 3,000 `sfauth token` runs printed the attacker's token, and 27 of 1,500 refreshes of a
client-credentials account sent SFAUTH_CLIENT_SECRET to the attacker's token endpoint. Opened once,
checked on that descriptor and read through it, no run may do either.

The swap is renameat2(RENAME_EXCHANGE): both names always exist, one of them the user's store.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys

import pytest

from stub_server import StubServer
from test_front_end import OK, signed_in  # noqa: F401  (a fixture: a client-credentials account)

ATTACKER_TOKEN = "the-attackers-token"
SWAPPER = """
import ctypes, sys
renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE
"""


def attackers_store(sfauth, tmp_path, kind, token_endpoint):
    """A copy of the user's store whose account holds the attacker's token and token endpoint, as
    `kind`: a directory of another user, a world-writable one, or a symbolic link to one. Returns the
    path to swap with the store."""
    real = tmp_path / "attackers-store"
    shutil.copytree(sfauth.home, real)
    for path in (real / "accounts").glob("*.json"):
        record = json.loads(path.read_text())
        record["accessToken"] = ATTACKER_TOKEN
        record["expiresAt"] = 0 if token_endpoint else record.get("expiresAt")
        record["server"]["tokenEndpoint"] = token_endpoint or record["server"]["tokenEndpoint"]
        path.write_text(json.dumps(record))
    (real / "attackers").write_text("")
    if kind == "another user's":
        for path in [real, *real.rglob("*")]:
            os.chown(path, 4321, 4321)
        return real
    if kind == "world-writable":
        os.chmod(real, 0o777)
        return real
    link = tmp_path / "attackers-link"
    link.symlink_to(real)
    return link


class Swapping:
    """Swaps two paths in a loop in another process until the block ends, then puts them back."""

    def __init__(self, store, other):
        self.store, self.other = store, other

    def __enter__(self):
        self.process = subprocess.Popen([sys.executable, "-c", SWAPPER, str(self.store), str(self.other)])
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()
        if (self.store / "attackers").exists():
            libc = ctypes.CDLL(None, use_errno=True)
            assert libc.renameat2(-100, bytes(self.store), -100, bytes(self.other), 2) == 0


def kinds():
    return (["another user's"] if os.getuid() == 0 else []) + ["world-writable", "symbolic link"]


@pytest.mark.parametrize("kind", kinds())
def test_no_run_prints_the_attackers_token_while_the_store_is_swapped(sfauth, signed_in, tmp_path, kind):
    other = attackers_store(sfauth, tmp_path, kind, token_endpoint=None)
    outcomes = {"ours": 0, "refused": 0}
    with Swapping(sfauth.home, other):
        for _ in range(200):
            result = sfauth.run("token")
            assert ATTACKER_TOKEN not in result.stdout, "a run printed the token of a store that is not the user's"
            if result.returncode == OK:
                assert result.stdout == signed_in + "\n"
                outcomes["ours"] += 1
            else:
                # The front end handed over; the main program refused the store (or found no account in it).
                assert result.returncode in (1, 3) and result.stdout == "", result
                outcomes["refused"] += 1
    # The swap was seen both ways (else this test proved nothing).
    assert outcomes["ours"] > 0 and outcomes["refused"] > 0, outcomes


@pytest.mark.parametrize("kind", kinds())
def test_no_refresh_sends_the_client_secret_to_the_attackers_token_endpoint(sfauth, server, signed_in, tmp_path, kind):
    with StubServer() as attacker:
        attacker.answer("/token", 200, {"access_token": ATTACKER_TOKEN, "token_type": "Bearer", "expires_in": 3600})
        other = attackers_store(sfauth, tmp_path, kind, token_endpoint=attacker.url("/token"))
        renewed = 0
        with Swapping(sfauth.home, other):
            # A refresh succeeds only when the user's store is in place for all of its steps, which
            # on a loaded machine can take more than 60 runs: at least 60, and on until one succeeds.
            for attempt in range(300):
                result = sfauth.run("token", "--refresh", SFAUTH_CLIENT_SECRET=server["SFAUTH_TEST_SERVICE_CLIENT_SECRET"])
                assert ATTACKER_TOKEN not in result.stdout
                renewed += result.returncode == OK
                if renewed and attempt >= 59:
                    break
        assert attacker.requests() == [], "the client secret went to a token endpoint of a store that is not the user's"
        assert renewed > 0
