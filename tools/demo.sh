#!/usr/bin/env bash
# The main job: install hermes-task, start a real local Hermes dashboard with a seeded
# delegated task, run `hermes-task recover` and `hermes-task show` against it, stop it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/bootstrap.sh"
exec "$root/.venv/bin/python" "$root/tools/demo.py" "$@"
