"""settings.resolve: flag > env > config file > default, named gateways, strict config errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hermes_task import settings
from hermes_task.failures import Code, ExitStatus, HermesError
from hermes_task.render.jsontext import explain

CONFIG = """\
default_gateway = "lab"

[gateways.lab]
url = "http://127.0.0.1:9200/"
profile = "labprofile"
token_file = "lab.token"
request_timeout = 3

[gateways.prod]
url = "https://Dash.Example:443/hermes/"
username = "admin"
password_file = "/abs/prod.password"
"""


def write(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "hermes-task" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return {"XDG_CONFIG_HOME": str(tmp_path), "HOME": "/nonexistent-home"}


def test_defaults_without_a_config_file(tmp_path: Path) -> None:
    s = settings.resolve(env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert s.url == "http://127.0.0.1:9119"
    assert (s.profile, s.token_file, s.token_env, s.username, s.gateway) == (None, None, None, None, None)
    assert s.request_timeout == 10.0
    assert dict(s.sources) == {}


def test_config_path_follows_xdg_and_ignores_a_relative_xdg_dir() -> None:
    assert settings.config_path({"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/h"}) == Path(
        "/x/cfg/hermes-task/config.toml"
    )
    assert settings.config_path({"XDG_CONFIG_HOME": "rel", "HOME": "/h"}) == Path(
        "/h/.config/hermes-task/config.toml"
    )
    assert settings.config_path({"HOME": "/h"}) == Path("/h/.config/hermes-task/config.toml")


def test_default_gateway_fills_in_and_relative_paths_are_relative_to_the_config_dir(tmp_path: Path) -> None:
    env = write(tmp_path, CONFIG)
    s = settings.resolve(env=env)
    assert s.gateway == "lab"
    assert s.url == "http://127.0.0.1:9200"
    assert s.profile == "labprofile"
    assert s.token_file == tmp_path / "hermes-task" / "lab.token"
    assert s.request_timeout == 3.0
    assert dict(s.sources) == {
        "gateway": "config",
        "url": "config",
        "profile": "config",
        "token_file": "config",
        "request_timeout": "config",
    }


def test_flag_beats_env_beats_config(tmp_path: Path) -> None:
    env = {
        **write(tmp_path, CONFIG),
        "HERMES_DASHBOARD_URL": "http://127.0.0.1:9300",
        "HERMES_TASK_PROFILE": "envp",
    }
    s = settings.resolve(env=env)
    assert (s.url, s.profile) == ("http://127.0.0.1:9300", "envp")
    assert (s.sources["url"], s.sources["profile"]) == ("env", "env")
    s = settings.resolve(env=env, url="http://localhost:1/", profile="flagp", request_timeout=7)
    assert (s.url, s.profile, s.request_timeout) == ("http://localhost:1", "flagp", 7)
    assert (s.sources["url"], s.sources["profile"], s.sources["request_timeout"]) == ("flag", "flag", "flag")


@pytest.mark.parametrize("timeout", [0, -1.5])
def test_a_request_timeout_that_is_not_positive_is_a_usage_error(tmp_path: Path, timeout: float) -> None:
    with pytest.raises(HermesError) as caught:
        settings.resolve(env={"XDG_CONFIG_HOME": str(tmp_path)}, request_timeout=timeout)
    assert (caught.value.code, caught.value.detail) == (Code.USAGE, "the request timeout must be positive")


def test_gateway_selection_flag_beats_env_beats_default(tmp_path: Path) -> None:
    env = {**write(tmp_path, CONFIG), "HERMES_TASK_GATEWAY": "prod"}
    s = settings.resolve(env=env)
    assert (s.gateway, s.sources["gateway"]) == ("prod", "env")
    assert s.url == "https://dash.example/hermes"
    assert s.username == "admin"
    assert s.password_file == Path("/abs/prod.password")
    assert s.token_file is None
    s = settings.resolve(env=env, gateway="lab")
    assert (s.gateway, s.sources["gateway"]) == ("lab", "flag")


def test_env_secret_beats_the_config_files_secret_file_but_a_flag_file_beats_both(tmp_path: Path) -> None:
    env = {**write(tmp_path, CONFIG), "HERMES_DASHBOARD_TOKEN": "tok-from-env"}
    s = settings.resolve(env=env)
    assert s.token_file is None
    assert s.token_env == "tok-from-env"
    s = settings.resolve(env=env, token_file="~/t")
    assert s.token_file == Path("~/t").expanduser()
    assert s.sources["token_file"] == "flag"
    env = {**env, "HERMES_TASK_GATEWAY": "prod", "HERMES_DASHBOARD_PASSWORD": "pw-from-env"}
    s = settings.resolve(env=env)
    assert (s.password_file, s.password_env) == (None, "pw-from-env")
    s = settings.resolve(env=env, password_file="/p")
    assert s.password_file == Path("/p")


def test_a_flag_path_stays_relative_to_the_working_directory(tmp_path: Path) -> None:
    s = settings.resolve(env=write(tmp_path, CONFIG), token_file="here.token")
    assert s.token_file == Path("here.token")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("default_gateway = \n", "Invalid value"),  # the line moved into the location: PATH:1:
        (
            'colour = "never"\n',
            "unknown key 'colour' (known: default_gateway, gateways, no_store, store)",
        ),
        (
            '[gateways.lab]\nurl = "http://x"\ntoken = "secret"\n',
            "gateway 'lab': unknown key 'token' (known: no_store, password_file, profile, request_timeout, store, token_file, url, username)",
        ),
        (
            "[gateways.lab]\nrequest_timeout = true\n",
            "gateway 'lab': request_timeout: Expected `float`, got `bool`",
        ),
        (
            "[gateways.lab]\nrequest_timeout = 0\n",
            "gateway 'lab': request_timeout: Expected `float` > 0.0",
        ),
        ('[gateways.lab]\nurl = ""\n', "gateway 'lab': url: Expected `str` of length >= 1"),
        ("[gateways.lab]\nurl = 3\n", "gateway 'lab': url: Expected `str`, got `int`"),
        ('gateways = "lab"\n', "gateways: Expected `object`, got `str`"),
        ("default_gateway = 1\n", "default_gateway: Expected `str`, got `int`"),
    ],
)
def test_a_bad_config_file_is_a_one_line_usage_error(tmp_path: Path, text: str, message: str) -> None:
    env = write(tmp_path, text)
    with pytest.raises(HermesError) as info:
        settings.resolve(env=env)
    path = tmp_path / "hermes-task" / "config.toml"
    assert info.value.code is Code.CONFIG
    assert info.value.exit_status is ExitStatus.USAGE
    assert re.match(rf"{re.escape(str(path))}:\d+: ", info.value.detail), "names the file and the line"
    assert info.value.detail.endswith(message)
    assert "\n" not in info.value.detail


@pytest.mark.parametrize(
    ("config", "env_extra", "flag", "shown"),
    [
        (CONFIG, {}, "nope", "nope (known: lab, prod)"),
        (CONFIG, {"HERMES_TASK_GATEWAY": "gone"}, None, "gone (known: lab, prod)"),
        ('default_gateway = "missing"\n', {}, None, "missing (known: none defined)"),
        (None, {}, "any", "any (known: none defined)"),
    ],
)
def test_an_unknown_gateway_is_a_usage_error_naming_the_known_ones(
    tmp_path: Path, config: str | None, env_extra: dict[str, str], flag: str | None, shown: str
) -> None:
    env = write(tmp_path, config) if config is not None else {"XDG_CONFIG_HOME": str(tmp_path)}
    with pytest.raises(HermesError) as info:
        settings.resolve(env={**env, **env_extra}, gateway=flag)
    assert info.value.code is Code.UNKNOWN_GATEWAY
    assert info.value.exit_status is ExitStatus.USAGE
    assert info.value.detail == shown


def test_gateway_names_for_completion_never_raise(tmp_path: Path) -> None:
    assert settings.gateway_names(write(tmp_path, CONFIG)) == ["lab", "prod"]
    assert settings.gateway_names(write(tmp_path, "not toml [")) == []
    assert settings.gateway_names({"XDG_CONFIG_HOME": str(tmp_path / "none")}) == []


def test_explain_describes_secrets_without_their_values(tmp_path: Path) -> None:
    env = write(tmp_path, CONFIG)
    token = tmp_path / "hermes-task" / "lab.token"
    token.write_text("tok-SECRET-in-file\n", encoding="utf-8")
    rows = {name: (value, source) for name, value, source in explain(settings.resolve(env=env), env)}
    assert rows["token"] == (f"set (from file {token})", "config")
    assert rows["password"] == ("not set", "default")
    assert rows["url"] == ("http://127.0.0.1:9200", "config")
    assert rows["request_timeout"] == (3.0, "config")
    token.unlink()
    rows = {n: (v, s) for n, v, s in explain(settings.resolve(env=env), env)}
    assert rows["token"] == (f"not readable (file {token})", "config")
    env = {
        **env,
        "HERMES_DASHBOARD_SESSION_TOKEN": "tok-SECRET-env",
        "HERMES_DASHBOARD_PASSWORD": "pw-SECRET",
    }
    rows = {n: (v, s) for n, v, s in explain(settings.resolve(env=env), env)}
    assert rows["token"] == ("set (from env HERMES_DASHBOARD_SESSION_TOKEN)", "env")
    assert rows["password"] == ("set (from env HERMES_DASHBOARD_PASSWORD)", "env")
    rows = {n: (v, s) for n, v, s in explain(settings.resolve(env=env, gateway="prod"), env)}
    assert rows["token"] == ("not used (password login)", "default")
    assert rows["username"] == ("admin", "config")
    assert "SECRET" not in repr(rows)


def test_explain_without_any_token_says_whether_discovery_applies(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    rows = {n: v for n, v, _ in explain(settings.resolve(env=env), env)}
    assert rows["token"] == "not set (discovered from the local dashboard when needed)"
    rows = {n: v for n, v, _ in explain(settings.resolve(env=env, url="https://remote.example"), env)}
    assert rows["token"] == "not set"
