"""Shell completions are generated from the command definitions, so they name every command and
option `--help` does; each is valid for its shell."""
import shutil
import subprocess

import pytest

from test_login import OK

COMMANDS = ["login", "token", "accounts", "use", "whoami", "logout", "config", "exec", "request", "kube-credential",
            "kubeconfig", "git-credential", "setup-git", "docker-credential", "setup-docker", "export", "doctor", "proxy"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_name_every_command(sfauth, shell):
    result = sfauth.run("--generate-completion-script", shell)
    assert result.returncode == OK, result.stderr
    for command in COMMANDS:
        assert command in result.stdout, (shell, command)
    assert "sfdx-url-file" in result.stdout and "account" in result.stdout
    if shutil.which(shell):
        check = {"bash": ["bash", "-n"], "zsh": ["zsh", "-n"], "fish": ["fish", "--no-execute"]}[shell]
        syntax = subprocess.run(check, input=result.stdout, capture_output=True, text=True, timeout=30)
        assert syntax.returncode == 0, syntax.stderr


def test_help_lists_every_command(sfauth):
    listing = sfauth.run("--help").stdout
    assert all(f"  {command} " in listing or f"  {command}\n" in listing for command in COMMANDS), listing
