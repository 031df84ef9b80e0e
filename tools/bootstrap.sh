#!/usr/bin/env bash
# Create .venv (Python 3.11-3.13) and install hermes-task with its test tools into it.
# Sourced by tools/demo.sh and tools/check.sh; safe to run again (pip only adds what is missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py="${PYTHON:-}"
if [ -z "$py" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then py="$candidate"; break; fi
  done
fi
if [ -z "$py" ]; then echo "bootstrap: no python3 found (3.11 to 3.13 needed)" >&2; exit 1; fi
"$py" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] < (3, 14) else 1)' \
  || { echo "bootstrap: $py is not Python 3.11-3.13" >&2; exit 1; }
if [ ! -x "$root/.venv/bin/python" ]; then
  "$py" -m venv "$root/.venv"
fi
pip_quiet() { "$root/.venv/bin/python" -m pip --disable-pip-version-check -q "$@" 2> >(grep -v "is ignored: it is neither" >&2); }
pip_quiet install -e "$root[test,bench]"
