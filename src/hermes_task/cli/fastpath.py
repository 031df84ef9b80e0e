"""`hermes-task show ...` without typer: the start path of the command users run most (issue 18).

Importing typer and building a command costs a `show` about a tenth of its run. For the
command lines a user types — the CHILD_ID, options spelled out in full, `--opt VALUE` or
`--opt=VALUE` — this module parses argv against `argspec.py`, the table `tools/regen.py`
writes from typer's own `show` command (`regen.py --check` fails when it is stale), and calls
`run_show` as typer would. Anything else goes to typer, which parses it or says what is
wrong: a usage error, `--help`, `--`, a value that starts with `-`, a number or choice not
written plainly, an option named twice where it is not repeatable. A unit test holds the
two paths to the same call on generated command lines.

Invariant: imports neither typer nor the command tree; answers only what typer would answer
the same way, else returns False and changes nothing.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_task.cli.argspec import ARGUMENTS, OPTIONS
from hermes_task.cli.common import PARAMETER_OF, ColorMode, Common, RoleName
from hermes_task.cli.environment import Environment

ENUMS: Mapping[str, type[ColorMode] | type[RoleName]] = {"color": ColorMode, "role": RoleName}
COMMON = frozenset(Common.__struct_fields__) - {"env"}
FIELD_OF = {name: field for field, name in PARAMETER_OF.items()}


def _plain_number(raw: str) -> bool:
    return raw.isascii() and raw.replace(".", "", 1).isdigit()


def _value(name: str, kind: str, limit: Any, raw: str) -> Any:
    """`raw` converted as click converts it, or None when typer should judge it."""
    if kind == "str":
        return raw
    if kind == "int" and raw.isascii() and raw.isdigit():
        return int(raw)
    if kind == "float" and _plain_number(raw) and float(raw) >= limit:
        return float(raw)
    if kind == "choice" and raw in limit and name in ENUMS:
        return ENUMS[name](raw)
    return None


def parse(argv: Sequence[str]) -> dict[str, Any] | None:
    """The parameters typer would call `show` with for `argv` (after `show`): only those given,
    the rest keep their defaults. None when typer should parse it."""
    given: dict[str, Any] = {}
    positional: list[str] = []
    args = iter(argv)
    for token in args:
        if not token.startswith("-") or token == "-":
            positional.append(token)
            continue
        flag, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if flag not in OPTIONS:
            return None
        name, kind, repeatable, limit = OPTIONS[flag]
        if kind in ("flag", "flag_off"):
            if eq:
                return None
            value: Any = kind == "flag"
        else:
            raw = inline if eq else next(args, None)
            if raw is None or (not eq and raw.startswith("-")):
                return None
            value = _value(name, kind, limit, raw)
            if value is None:
                return None
        if repeatable:
            given.setdefault(name, []).append(value)
        elif name in given:
            return None
        else:
            given[name] = value
    if len(positional) != len(ARGUMENTS):
        return None
    given.update(zip(ARGUMENTS, positional, strict=True))
    return {FIELD_OF.get(name, name): value for name, value in given.items()}


def run(argv: Sequence[str], env: Environment | None = None) -> bool:
    """Run `hermes-task show ARGV` without typer when `parse` takes it; False otherwise.

    Ends as typer's path ends: the command's own status (SystemExit), or typer's endings for
    what escapes the shell: Ctrl-C 130, end of input `error: aborted` (1), a closed pipe 1."""
    env = env if env is not None else Environment()
    if env.environ.get("_HERMES_TASK_COMPLETE"):  # a shell asks typer for completions
        return False
    params = parse(argv)
    if params is None:
        return False
    from hermes_task.cli.run_show import run_show

    common = Common(env=env, **{k: v for k, v in params.items() if k in COMMON})
    try:
        run_show(common, **{k: v for k, v in params.items() if k not in COMMON})
    except KeyboardInterrupt:  # outside the shell's own handling: typer exits 130, quietly
        sys.exit(130)
    except EOFError:  # typer: a new line, then the abort
        env.stderr.write("\nerror: aborted\n")
        sys.exit(1)
    except OSError as exc:  # a closed pipe the shell did not see: click exits 1
        if exc.errno != errno.EPIPE:
            raise
        from hermes_task.cli.shell import silence

        silence(env.stdout)
        sys.exit(1)
    return True
