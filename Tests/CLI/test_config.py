"""Configuration files, presets and `sfauth config`, end to end: the built binary, the real test server
and the real headless browser."""
import json
import textwrap

import pytest

from test_login import OK, USAGE, call_api


@pytest.fixture
def config_home(sfauth, tmp_path):
    """A private XDG_CONFIG_HOME (and discovery cache), so no real configuration leaks in."""
    home = tmp_path / "xdg-config"
    (home / "sfauth").mkdir(parents=True)
    sfauth.env["XDG_CONFIG_HOME"] = str(home)
    sfauth.env["XDG_CACHE_HOME"] = str(tmp_path / "xdg-cache")
    for variable in ("SFAUTH_CONFIG", "SFAUTH_PROFILE", "SFAUTH_PRESET", "SFAUTH_LOGIN_URL", "SFAUTH_ISSUER",
                     "SFAUTH_CLIENT_ID", "SFAUTH_SCOPES", "SFAUTH_USERNAME", "SFAUTH_JWT_KEY_FILE"):
        sfauth.env.pop(variable, None)
    return home


def write(path, text):
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def profile_for(server, name="test", extra=""):
    """A profile that names the test server by its endpoints and client."""
    return f"""
        [profile.{name}]
        authorize_url = "{server['SFAUTH_TEST_AUTHORIZE_URL']}"
        token_url = "{server['SFAUTH_TEST_TOKEN_URL']}"
        revoke_url = "{server['SFAUTH_TEST_REVOKE_URL']}"
        userinfo_url = "{server['SFAUTH_TEST_USERINFO_URL']}"
        client_id = "{server['SFAUTH_TEST_CLIENT_ID']}"
        scopes = ["openid", "profile"]
        {extra}
        """


def config_json(sfauth, *args, **env):
    result = sfauth.run("config", "--json", *args, **env)
    assert result.returncode == OK, result.stderr
    assert result.stderr == ""
    return json.loads(result.stdout)


def test_nothing_configured_shows_the_salesforce_preset(sfauth, config_home):
    report = config_json(sfauth)
    assert report["file"] == {"path": str(config_home / "sfauth" / "config.toml"), "exists": False, "source": "default"}
    assert report["profile"] is None
    settings = report["settings"]
    assert settings["preset"] == {"value": "salesforce", "source": "default"}
    assert settings["client_id"] == {"value": "PlatformCLI", "source": "preset salesforce"}
    assert settings["scopes"] == {"value": ["refresh_token", "api", "web"], "source": "preset salesforce"}
    assert settings["callback_port"] == {"value": 1717, "source": "preset salesforce"}
    assert settings["authorize_url"]["value"] == "https://login.salesforce.com/services/oauth2/authorize"

    table = sfauth.run("config")
    assert table.returncode == OK and table.stderr == ""
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["KEY", "VALUE", "SOURCE"]
    assert ["client_id", "PlatformCLI", "preset", "salesforce"] in [line.split() for line in lines]


def test_values_come_from_flag_environment_file_preset_and_default(sfauth, server, config_home):
    path = write(config_home / "sfauth" / "config.toml", f"""
        default_profile = "idp"

        [profile.idp]
        preset = "oidc"
        issuer = "{server['SFAUTH_TEST_ISSUER']}"
        client_id = "from-file"
        callback_port = 8400

        [profile.idp.params]
        prompt = "consent"
        """)
    report = config_json(sfauth, "--scope", "openid email", SFAUTH_CLIENT_ID=server["SFAUTH_TEST_CLIENT_ID"])
    assert report["file"] == {"path": str(path), "exists": True, "source": "default"}
    assert report["profile"] == {"name": "idp", "source": f"{path}:1"}
    settings = report["settings"]
    assert settings["preset"] == {"value": "oidc", "source": f"{path}:4 [profile.idp]"}
    assert settings["issuer"] == {"value": server["SFAUTH_TEST_ISSUER"], "source": f"{path}:5 [profile.idp]"}
    assert settings["client_id"] == {"value": server["SFAUTH_TEST_CLIENT_ID"], "source": "env SFAUTH_CLIENT_ID"}
    assert settings["scopes"] == {"value": ["openid", "email"], "source": "flag --scope"}
    assert settings["callback_port"] == {"value": 8400, "source": f"{path}:7 [profile.idp]"}
    assert settings["callback_path"] == {"value": "/callback", "source": "preset oidc"}
    assert "authorize_url" not in settings                  # discovered when signing in, not by `config`
    assert report["params"] == {"prompt": {"value": "consent", "source": f"{path}:10 [profile.idp.params]"}}


def test_profile_choice_flag_over_environment_over_default_profile(sfauth, server, config_home):
    path = write(config_home / "named.toml", 'default_profile = "a"\n'
                 + "".join(profile_for(server, name, f'login_hint = "{name}@example.test"') for name in ("a", "b", "c")))
    def chosen(*args, **env):
        report = config_json(sfauth, "--config", str(path), *args, **env)
        return report["profile"], report["settings"]["login_hint"]["value"]
    assert chosen() == ({"name": "a", "source": f"{path}:1"}, "a@example.test")
    assert chosen(SFAUTH_PROFILE="b") == ({"name": "b", "source": "env SFAUTH_PROFILE"}, "b@example.test")
    assert chosen("--profile", "c", SFAUTH_PROFILE="b") == ({"name": "c", "source": "flag --profile"}, "c@example.test")
    # SFAUTH_CONFIG names the file when --config does not.
    assert config_json(sfauth, SFAUTH_CONFIG=str(path))["file"] == {"path": str(path), "exists": True, "source": "env SFAUTH_CONFIG"}


@pytest.mark.parametrize("text, line, message", [
    ('[profile.w]\nclientid = "x"\n', 2, "unknown key 'clientid' in [profile.w]; did you mean 'client_id'? known keys: preset, "),
    ('[profile.w]\ncallback_port = "1717"\n', 2, "callback_port must be a port number (an integer without quotes), not a string"),
    ('# c\n[profile.w]\nissuer = "https://idp.example\n', 3, 'unterminated string (missing closing ")'),
    ('[profile.w]\nscopes = ["a"]\nscopes = ["b"]\n', 3, "duplicate key 'scopes' in [profile.w] (first set on line 2)"),
    ('[profile.w]\npreset = "salesforce-prod"\n', 2, "unknown preset 'salesforce-prod'; presets: auth0, cognito, entra, github, gitlab, google, keycloak, oidc, okta, salesforce, "),
    ('[profile.w]\nissuer = "http://idp.example"\nclient_id = "c"\n', 2, "the issuer 'http://idp.example' uses plain http"),
])
def test_a_bad_file_says_file_line_and_what_is_wrong(sfauth, config_home, text, line, message):
    path = config_home / "sfauth" / "config.toml"
    path.write_text(text)
    for command in (["config", "--profile", "w"], ["login", "--profile", "w", "--no-browser"]):
        result = sfauth.run(*command)
        assert result.returncode == USAGE, result.stderr
        assert result.stdout == ""
        assert f"{path}:{line}: {message}" in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1
    assert sfauth.stored_accounts() == []


def test_unknown_profile_and_missing_files(sfauth, server, config_home):
    path = write(config_home / "sfauth" / "config.toml", profile_for(server, "work") + profile_for(server, "home"))
    unknown = sfauth.run("config", "--profile", "wrok")
    assert unknown.returncode == USAGE and unknown.stdout == ""
    assert f"flag --profile: no profile 'wrok' in {path}; known profiles: work, home" in unknown.stderr

    from_environment = sfauth.run("login", "--no-browser", SFAUTH_PROFILE="nope")
    assert from_environment.returncode == USAGE
    assert "env SFAUTH_PROFILE: no profile 'nope'" in from_environment.stderr

    missing = sfauth.run("config", "--config", str(config_home / "missing.toml"))
    assert missing.returncode == USAGE
    assert f"flag --config: the configuration file {config_home / 'missing.toml'} does not exist" in missing.stderr
    missing_env = sfauth.run("config", SFAUTH_CONFIG=str(config_home / "missing.toml"))
    assert missing_env.returncode == USAGE and "env SFAUTH_CONFIG: the configuration file" in missing_env.stderr

    path.unlink()                                             # a missing default file is no configuration
    assert config_json(sfauth)["settings"]["preset"]["value"] == "salesforce"


def test_conflicting_servers_name_their_sources(sfauth, config_home):
    result = sfauth.run("config", "--sandbox", "--instance-url", "https://acme.my.salesforce.com")
    assert result.returncode == USAGE
    assert ("instance_url (flag --instance-url) and preset 'salesforce-sandbox' (flag --sandbox) name two different servers"
            in result.stderr)


def test_login_with_a_profile_from_the_configuration_file(sfauth, server, config_home):
    write(config_home / "sfauth" / "config.toml", profile_for(server, extra="""
        [profile.test.params]
        ui_locales = "de"
        """))
    login = sfauth.run("login", "--profile", "test")
    assert login.returncode == OK, login.stderr
    assert "Signed in as alice" in login.stderr
    url = sfauth.browser_report()["url"]
    assert url.startswith(server["SFAUTH_TEST_AUTHORIZE_URL"] + "?")
    assert f"client_id={server['SFAUTH_TEST_CLIENT_ID']}" in url and "&ui_locales=de" in url
    token = sfauth.run("token")
    assert token.returncode == OK
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], token.stdout.strip())[0] == 200
    # The profile's revocation endpoint went with the account: logout revokes there.
    logout = sfauth.run("logout")
    assert "revoked the refresh token" in logout.stderr, logout.stderr
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], token.stdout.strip())[0] == 401


def test_login_through_the_oidc_preset_and_the_default_profile(sfauth, server, config_home):
    write(config_home / "idp.toml", f"""
        default_profile = "idp"
        [profile.idp]
        preset = "oidc"
        issuer = "{server['SFAUTH_TEST_ISSUER']}"
        client_id = "{server['SFAUTH_TEST_CLIENT_ID']}"
        """)
    login = sfauth.run("login", SFAUTH_CONFIG=str(config_home / "idp.toml"))
    assert login.returncode == OK, login.stderr
    url = sfauth.browser_report()["url"]
    assert "&scope=openid%20offline_access&" in url          # the oidc preset's scopes
    assert "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in url
    assert call_api(server["SFAUTH_TEST_RESOURCE_URL"], sfauth.run("token").stdout.strip())[0] == 200


def test_an_issuer_flag_replaces_the_profiles_endpoints_as_a_group(sfauth, server, config_home):
    # The profile's endpoints point at a server that does not exist; --issuer replaces all of them,
    # so the login reaches the test server and none of the dead endpoints is used.
    dead = "http://127.0.0.1:9"
    write(config_home / "sfauth" / "config.toml", f"""
        [profile.old]
        authorize_url = "{dead}/authorize"
        token_url = "{dead}/token"
        revoke_url = "{dead}/revoke"
        client_id = "{server['SFAUTH_TEST_CLIENT_ID']}"
        scopes = "openid profile"
        """)
    report = config_json(sfauth, "--profile", "old", "--issuer", server["SFAUTH_TEST_ISSUER"])
    assert "token_url" not in report["settings"] and "revoke_url" not in report["settings"]
    assert report["settings"]["client_id"]["source"].endswith("[profile.old]")

    login = sfauth.run("login", "--profile", "old", "--issuer", server["SFAUTH_TEST_ISSUER"])
    assert login.returncode == OK, login.stderr
    assert sfauth.browser_report()["url"].startswith(server["SFAUTH_TEST_AUTHORIZE_URL"])
    logout = sfauth.run("logout")
    assert "revoked the refresh token" in logout.stderr, logout.stderr   # the discovered endpoint, not the dead one


def test_config_takes_the_grant_settings_login_takes(sfauth, config_home):
    settings = config_json(sfauth, "--username", "bob", "--jwt-key-file", "ci.key", "--audience", "https://aud.example",
                           SFAUTH_USERNAME="alice")["settings"]
    assert settings["username"] == {"value": "bob", "source": "flag --username"}
    assert settings["jwt_key_file"] == {"value": "ci.key", "source": "flag --jwt-key-file"}
    assert settings["audience"] == {"value": "https://aud.example", "source": "flag --audience"}
