"""Sign-in from an SSH session without a forwarded display, and from WSL, where the browser is a
Windows program. Fake openers on the PATH record what they were asked to open."""
import os

from test_login import CANCELLED


def opener(tmp_path, name, exit_status=0):
    """A stand-in for `name` on the PATH that records its arguments, one per line."""
    directory = tmp_path / "bin"
    directory.mkdir(exist_ok=True)
    log = tmp_path / f"{name}.log"
    script = directory / name
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{log}'\nexit {exit_status}\n")
    script.chmod(0o755)
    return directory, log


def test_ssh_without_a_display_prints_the_url_and_the_port_forward_and_opens_nothing(sfauth, tmp_path):
    directory, log = opener(tmp_path, "xdg-open")
    result = sfauth.run(*sfauth.login_args(extra=["--timeout", "2"]), BROWSER="", PATH=f"{directory}:{os.environ['PATH']}",
                        SSH_CONNECTION="192.0.2.7 50022 192.0.2.1 22")
    assert result.returncode == CANCELLED, result.stderr
    assert "Not opening a browser: this is an SSH session without a forwarded display." in result.stderr
    assert "ssh -L " in result.stderr and "You are connected over SSH" in result.stderr
    assert len([line for line in result.stderr.splitlines() if "/authorize/?" in line]) == 1
    assert not log.exists(), "a browser was started in an SSH session without a display"


def test_wsl_opens_the_windows_browser_and_still_prints_the_url(sfauth, tmp_path):
    directory, log = opener(tmp_path, "wslview")
    result = sfauth.run(*sfauth.login_args(extra=["--timeout", "2"]), BROWSER="", PATH=f"{directory}:{os.environ['PATH']}",
                        WSL_DISTRO_NAME="Ubuntu")
    assert result.returncode == CANCELLED, result.stderr
    url = log.read_text().strip()
    assert url.startswith(sfauth.server["SFAUTH_TEST_AUTHORIZE_URL"]), url
    assert url in result.stderr and "If it does not open" in result.stderr


def test_wsl_without_wslview_uses_powershell(sfauth, tmp_path):
    directory, log = opener(tmp_path, "powershell.exe")
    # Only the fake's directory and the system's: no wslview anywhere.
    result = sfauth.run(*sfauth.login_args(extra=["--timeout", "2"]), BROWSER="", PATH=f"{directory}:/usr/bin:/bin",
                        WSL_DISTRO_NAME="Ubuntu")
    assert result.returncode == CANCELLED, result.stderr
    arguments = log.read_text().splitlines()
    assert arguments[:4] == ["-NoProfile", "-NonInteractive", "-Command", arguments[3]]
    assert arguments[3].startswith("Start-Process '" + sfauth.server["SFAUTH_TEST_AUTHORIZE_URL"]), arguments


def test_a_profile_names_the_browser_as_an_argument_list(sfauth, tmp_path):
    directory, log = opener(tmp_path, "my browser")                  # a space in the name: one argument all the same
    config = tmp_path / "config.toml"
    config.write_text(f'[profile.work]\nbrowser = ["{directory}/my browser", "--profile-directory=Work", "--app=%s"]\n')
    result = sfauth.run(*sfauth.login_args(extra=["--profile", "work", "--timeout", "2"]), SFAUTH_CONFIG=str(config))
    assert result.returncode == CANCELLED, result.stderr
    arguments = log.read_text().splitlines()
    assert arguments[0] == "--profile-directory=Work" and arguments[1].startswith("--app=" + sfauth.server["SFAUTH_TEST_AUTHORIZE_URL"])
    shown = sfauth.run("config", "--profile", "work", SFAUTH_CONFIG=str(config))
    assert "--profile-directory=Work" in shown.stdout and "[profile.work]" in shown.stdout, shown.stdout
