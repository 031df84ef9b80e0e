#!/usr/bin/env bash
# Build the venv that runs the unit tests at one end of pyproject.toml's dependency ranges:
#   bash tools/dependency_venv.sh lowest   # .venv-lowest: Python 3.11, every direct
#                                           # dependency at its lower bound (tools/lowest_constraints.py)
#   bash tools/dependency_venv.sh newest   # .venv-newest: Python 3.13, the newest releases
#                                           # the ranges allow (upgraded on every run)
# then: .venv-lowest/bin/pytest -p no:cacheprovider -q -m "not integration" tests/unit
# tools/check.sh calls it for both. The interpreter is python3.X on PATH when it runs, else
# pyenv's ~/.pyenv/versions/3.X.*; HERMES_TASK_PYTHON_3_11 / _3_13 name another.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kind="${1:-}"
case "$kind" in
  lowest) version=3.11 ;;
  newest) version=3.13 ;;
  *) echo "usage: $0 lowest|newest" >&2; exit 2 ;;
esac
venv="$root/.venv-$kind"
override_var="HERMES_TASK_PYTHON_${version/./_}"

find_python() {
  local candidate
  # A pyenv shim is on PATH even when its version is not selected: run it to know.
  for candidate in ${!override_var:-} "python$version" "$HOME"/.pyenv/versions/"$version".*/bin/python"$version"; do
    if "$candidate" -c "import sys; sys.exit('%d.%d' % sys.version_info[:2] != '$version')" >/dev/null 2>&1; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

pip_quiet() { "$venv/bin/python" -m pip --disable-pip-version-check -q "$@" 2> >(grep -v "is ignored: it is neither" >&2); }

stamp="$(cksum < "$root/pyproject.toml")"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.pyproject-cksum" 2>/dev/null)" != "$stamp" ]; then
  # A new pyproject.toml starts from an empty venv: nothing of the old ranges stays behind.
  py="$(find_python)" || { echo "dependency_venv: no Python $version found (python$version, ~/.pyenv/versions/$version.*, or \$$override_var)" >&2; exit 1; }
  rm -rf "$venv"
  "$py" -m venv "$venv"
fi
case "$kind" in
  lowest)
    "$venv/bin/python" "$root/tools/lowest_constraints.py" > "$venv/constraints.txt"
    pip_quiet install -c "$venv/constraints.txt" -e "$root[test]"
    ;;
  newest)
    pip_quiet install --upgrade --upgrade-strategy eager -e "$root[test]"
    ;;
esac
printf '%s\n' "$stamp" > "$venv/.pyproject-cksum"
