"""`config path` and `config show`'s work, once typer has parsed their arguments
(`cli/meta.py` declares the commands): where the config file is, and which settings are in
force with each one's source; secrets are described, never printed.
"""

from __future__ import annotations

from typing import Any

from hermes_task import settings
from hermes_task.cli.common import Common
from hermes_task.cli.environment import Environment
from hermes_task.cli.pager import pager_setting
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run
from hermes_task.core.documents import ConfigDoc, ConfigValue
from hermes_task.core.sanitize import clean_line
from hermes_task.failures import Code, HermesError
from hermes_task.render.jsontext import document, explain


def config_path(env: Environment) -> None:
    """`config path`: the config file's path on stdout; what is wrong with the file, if
    anything, as a warning on stderr (the path is still the answer)."""
    path = settings.config_path(dict(env.environ))
    env.write_stdout(f"{path}\n")
    try:
        settings.load_config(path)
    except HermesError as exc:
        env.stderr.write(f"warning: {clean_line(exc.message)}\n")


def config_show(common: Common) -> None:
    """`config show`: the effective settings and where each came from, as text or JSON; a
    broken config file is said (file and line) and ends the command with its status."""

    def body(session: Session) -> None:
        env = dict(common.env.environ)
        path = settings.config_path(env)
        invalid: HermesError | None = None
        try:
            resolved = session.settings
        except HermesError as exc:
            if exc.code is not Code.CONFIG:
                raise
            # Say what is wrong (file and line), then what can be said without the file.
            invalid = exc
            resolved = settings.resolve(
                env=env,
                url=common.url,
                profile=common.profile,
                token_file=common.token_file,
                username=common.username,
                password_file=common.password_file,
                request_timeout=common.request_timeout,
                use_config=False,
            )
        values = {name: ConfigValue(value=v, source=s) for name, v, s in explain(resolved, env)}
        pager, pager_from = pager_setting(env)
        values["pager"] = ConfigValue(
            value=pager or "off", source="default" if pager_from == "default" else "env"
        )
        doc = ConfigDoc(
            path=str(path),
            exists=path.exists(),
            gateways=settings.gateway_names(env),
            settings=values,
            error=invalid.message if invalid is not None else None,
        )
        if common.json:
            common.env.write_stdout(document(doc))
        else:
            if invalid is not None:
                _error_line(session, invalid.message)
            common.env.write_stdout(_config_text(doc))
        if invalid is not None:
            raise SystemExit(int(invalid.exit_status))

    run(Session(common), body)


def _error_line(session: Session, message: str) -> None:
    from rich.text import Text  # lazy: rich, only for a broken config file's error line

    line = Text("error: ", style="bold red")
    line.append(message)
    session.err_console().print(line)


def _config_text(doc: Any) -> str:
    found = " (invalid: see the error above)" if doc.error else "" if doc.exists else " (not found)"
    lines = [
        f"config file  {clean_line(doc.path)}{found}",
        f"gateways     {', '.join(clean_line(g) for g in doc.gateways) or '(none)'}",
        "",
    ]
    shown = {k: "-" if v.value is None else clean_line(str(v.value)) for k, v in doc.settings.items()}
    key_w = max(len(k) for k in shown)
    val_w = max(len(v) for v in shown.values())
    for key, value in shown.items():
        lines.append(f"{key:<{key_w}}  {value:<{val_w}}  {doc.settings[key].source}".rstrip())
    return "\n".join(lines) + "\n"
