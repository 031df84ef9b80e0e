#!/usr/bin/env bash
# The demo: install hermes-task (runtime dependencies only, no test tool) into its own venv,
# .venv-demo, then walk the workflow against a real local Hermes dashboard (tools/demo.py).
# The test tools are installed by the test command (tools/check.sh, via tools/bootstrap.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv-demo"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then py="$candidate"; break; fi
  done
fi
# (Re)install when the venv is missing or was installed from another pyproject.toml: an old
# venv keeps old dependencies and an old console script.
stamp="$(cksum < "$root/pyproject.toml")"
if [ ! -x "$venv/bin/hermes-task" ] || [ "$(cat "$venv/.pyproject-cksum" 2>/dev/null)" != "$stamp" ]; then
  if [ -z "$py" ]; then echo "demo: no python3 found (3.11 to 3.13 needed)" >&2; exit 1; fi
  "$py" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] < (3, 14) else 1)' \
    || { echo "demo: $py is not Python 3.11-3.13" >&2; exit 1; }
  if [ -x "$venv/bin/python" ]; then
    echo "demo: pyproject.toml changed: reinstalling hermes-task into $venv" >&2
  else
    echo "demo: first run: building $venv (hermes-task and its runtime dependencies, about 30 s)" >&2
    "$py" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip --disable-pip-version-check -q install -e "$root" \
    2> >(grep -v "is ignored: it is neither" >&2)
  printf '%s\n' "$stamp" > "$venv/.pyproject-cksum"
fi
# The demo drives the suite's backend harness (tests/support/harness/): the repository root
# goes on PYTHONPATH so `tests.support` imports without any path edit in the script.
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec "$venv/bin/python" "$root/tools/demo.py" "$@"
