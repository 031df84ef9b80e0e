"""`hermes-task config path|show` and config-file errors as every command reports them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
import typer
from typer.testing import CliRunner

from hermes_task.cli.app import app

SECRET_TOKEN = "tok-SECRET-0123456789"
SECRET_PASSWORD = "pw-SECRET-0123456789"


def config_env(tmp_path: Path, text: str) -> dict[str, str]:
    folder = tmp_path / "hermes-task"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text, encoding="utf-8")
    (folder / "lab.token").write_text(SECRET_TOKEN + "\n", encoding="utf-8")
    return {"XDG_CONFIG_HOME": str(tmp_path), "NO_COLOR": "1", "COLUMNS": "100"}


def invoke(args: list[str], env: dict[str, str]) -> Any:
    clean = {
        "HERMES_DASHBOARD_URL": None,
        "HERMES_TASK_GATEWAY": None,
        "HERMES_TASK_PROFILE": None,
        "HERMES_DASHBOARD_TOKEN": None,
        "HERMES_DASHBOARD_SESSION_TOKEN": None,
        "HERMES_DASHBOARD_USERNAME": None,
        "HERMES_DASHBOARD_PASSWORD": None,
        "HERMES_TASK_PAGER": None,
        "PAGER": None,
    }
    return CliRunner().invoke(app, args, env={**clean, **env})


CONFIG = """\
default_gateway = "lab"
[gateways.lab]
url = "http://127.0.0.1:9200"
token_file = "lab.token"
[gateways.gated]
url = "https://dash.example"
username = "admin"
"""


def test_config_path_prints_the_xdg_path(tmp_path: Path) -> None:
    result = invoke(["config", "path"], {"XDG_CONFIG_HOME": str(tmp_path)})
    assert result.exit_code == 0
    assert result.stdout == f"{tmp_path}/hermes-task/config.toml\n"
    assert result.stderr == ""


def test_config_show_human_lists_every_setting_with_its_source(tmp_path: Path) -> None:
    env = {**config_env(tmp_path, CONFIG), "HERMES_TASK_PROFILE": "envprof", "PAGER": "more"}
    result = invoke(["config", "show", "--request-timeout", "4"], env)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    token = tmp_path / "hermes-task" / "lab.token"
    width = len(f"set (from file {token})")
    rows = [
        ("gateway", "lab", "config"),
        ("url", "http://127.0.0.1:9200", "config"),
        ("profile", "envprof", "env"),
        ("request_timeout", "4.0", "flag"),
        ("username", "-", "default"),
        ("token", f"set (from file {token})", "config"),
        ("password", "not set", "default"),
        ("pager", "more", "env"),
    ]
    expected = [
        f"config file  {tmp_path}/hermes-task/config.toml",
        "gateways     gated, lab",
        "",
        *(f"{k:<15}  {v:<{width}}  {s}" for k, v, s in rows),
    ]
    assert result.stdout.splitlines() == expected


def test_config_show_json_is_one_document_without_secrets(tmp_path: Path) -> None:
    env = {
        **config_env(tmp_path, CONFIG),
        "HERMES_DASHBOARD_PASSWORD": SECRET_PASSWORD,
        "HERMES_TASK_PAGER": "",
    }
    result = invoke(["config", "show", "--json", "--gateway", "gated"], env)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    doc = json.loads(result.stdout)
    assert doc == {
        "schema_version": 1,
        "kind": "config",
        "path": f"{tmp_path}/hermes-task/config.toml",
        "exists": True,
        "gateways": ["gated", "lab"],
        "settings": {
            "gateway": {"value": "gated", "source": "flag"},
            "url": {"value": "https://dash.example", "source": "config"},
            "profile": {"value": None, "source": "default"},
            "request_timeout": {"value": 10.0, "source": "default"},
            "username": {"value": "admin", "source": "config"},
            "token": {"value": "not used (password login)", "source": "default"},
            "password": {"value": "set (from env HERMES_DASHBOARD_PASSWORD)", "source": "env"},
            "pager": {"value": "off", "source": "env"},
        },
        "error": None,
    }
    assert SECRET_PASSWORD not in result.stdout


def test_config_show_never_prints_the_token_from_env_or_file(tmp_path: Path) -> None:
    env = {**config_env(tmp_path, CONFIG), "HERMES_DASHBOARD_TOKEN": SECRET_TOKEN}
    for args in (["config", "show"], ["config", "show", "--json"], ["config", "show", "--token-file", "x"]):
        result = invoke(args, env)
        assert result.exit_code == 0, result.stderr
        assert SECRET_TOKEN not in result.stdout + result.stderr
    result = invoke(["config", "show", "--json"], env)
    assert json.loads(result.stdout)["settings"]["token"] == {
        "value": "set (from env HERMES_DASHBOARD_TOKEN)",
        "source": "env",
    }


def test_config_show_without_a_file_shows_defaults(tmp_path: Path) -> None:
    result = invoke(["config", "show", "--json"], {"XDG_CONFIG_HOME": str(tmp_path)})
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert (doc["exists"], doc["gateways"]) == (False, [])
    assert doc["settings"]["url"] == {"value": "http://127.0.0.1:9119", "source": "default"}
    assert doc["settings"]["pager"] == {"value": "less -FRX", "source": "default"}
    result = invoke(["config", "show"], {"XDG_CONFIG_HOME": str(tmp_path)})
    assert result.stdout.splitlines()[:2] == [
        f"config file  {tmp_path}/hermes-task/config.toml (not found)",
        "gateways     (none)",
    ]


def test_a_malformed_config_file_is_exit_2_with_one_line_naming_file_and_line(tmp_path: Path) -> None:
    env = config_env(tmp_path, 'url = "x"\ndefault_gateway = = 1\n')
    result = invoke(["show", "20260101_000000_aaaaaa"], env)
    assert result.exit_code == 2
    assert result.stdout == ""
    path = tmp_path / "hermes-task" / "config.toml"
    assert result.stderr.startswith(f"error: the config file is not valid: {path}:2: ")
    assert result.stderr.count("\n") == 1


def test_an_unknown_key_is_exit_2_with_one_line_naming_its_line(tmp_path: Path) -> None:
    env = config_env(tmp_path, '[gateways.lab]\nurl = "http://x"\ntoken = "' + SECRET_TOKEN + '"\n')
    result = invoke(["show", "20260101_000000_aaaaaa"], env)
    assert result.exit_code == 2
    path = tmp_path / "hermes-task" / "config.toml"
    assert result.stderr == (
        f"error: the config file is not valid: {path}:3: gateway 'lab': unknown key 'token' (known: no_store, password_file, profile, "
        "request_timeout, store, token_file, url, username)\n"
    )
    assert SECRET_TOKEN not in result.stderr


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('default_gateway = "lab"\n[gateways.lab]\nurl = "http://x"\nrequest_timeout = "fast"\n', 4),
        ('colour = "red"\n', 1),
        ("a = [\n", 2),
    ],
)
def test_config_show_with_an_invalid_file_says_where_then_what_it_can(
    tmp_path: Path, text: str, line: int
) -> None:
    env = {**config_env(tmp_path, text), "HERMES_DASHBOARD_TOKEN": SECRET_TOKEN}
    path = tmp_path / "hermes-task" / "config.toml"
    result = invoke(["config", "show", "--url", "http://127.0.0.1:9300"], env)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: the config file is not valid: {path}:{line}: ")
    assert result.stderr.count("\n") == 1
    out = result.stdout.splitlines()
    assert out[0] == f"config file  {path} (invalid: see the error above)"
    assert any(row.split() == ["url", "http://127.0.0.1:9300", "flag"] for row in out)
    assert SECRET_TOKEN not in result.stdout + result.stderr
    data = json.loads(invoke(["config", "show", "--json"], env).stdout)
    assert data["kind"] == "config"
    assert data["error"].startswith(f"the config file is not valid: {path}:{line}: ")
    assert data["settings"]["url"] == {"value": "http://127.0.0.1:9119", "source": "default"}


def test_config_path_with_an_invalid_file_prints_the_path_and_says_what_is_wrong(tmp_path: Path) -> None:
    env = config_env(tmp_path, "default_gateway = = 1\n")
    result = invoke(["config", "path"], env)
    assert result.exit_code == 0
    path = tmp_path / "hermes-task" / "config.toml"
    assert result.stdout == f"{path}\n"
    assert result.stderr.startswith(f"warning: the config file is not valid: {path}:1: ")


def test_gateway_completion_is_silent_on_an_invalid_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_task.cli.options import complete_gateway

    for key, value in config_env(tmp_path, "default_gateway = = 1\n").items():
        monkeypatch.setenv(key, value)
    assert complete_gateway(cast(typer.Context, None), "") == []  # the completion ignores its context


@pytest.mark.parametrize("command", [["config", "show"], ["show", "20260101_000000_aaaaaa"]])
def test_an_unknown_gateway_is_exit_2_with_one_line_and_json_error(
    tmp_path: Path, command: list[str]
) -> None:
    env = config_env(tmp_path, CONFIG)
    result = invoke([*command, "--gateway", "prod"], env)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "error: no such gateway in the config file: prod (known: gated, lab)\n"
    result = invoke([*command, "--gateway", "prod", "--json"], env)
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "schema_version": 1,
        "kind": "error",
        "error": {
            "code": "unknown_gateway",
            "message": "no such gateway in the config file: prod (known: gated, lab)",
            "retryable": False,
            "hint": None,
        },
        "rows": [],
        "task": None,
    }
