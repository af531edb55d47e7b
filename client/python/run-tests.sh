#!/usr/bin/env bash
# Tests of the scand Python client (client/python/tests), against the real
# scand binary, including the headless run of examples/quickstart.ipynb:
#
#   bash client/python/run-tests.sh [PYTEST ARGS...]     # e.g. -k notebook -x
#   bash client/python/run-tests.sh --setup-only         # the venv alone
#
# Steps: a venv at <repo>/.venv-client (its own, apart from the e2e tests'
# .venv, so that duckdb/polars/jupyter never meet e2e's pins), pinned test
# dependencies (requirements-test.txt, reinstalled only when it,
# requirements-build.txt, pyproject.toml or hatch_build.py changes), the
# package itself in editable mode (pure Python: no bundled binary), then
# pytest under a time bound. tests/test_wheel.py builds the platform wheel
# (scripts/build-wheel.sh) and installs it into a fresh venv. Works from any
# directory; exits non-zero on failure.
#
# Environment:
#   SCAND_BIN       the scand binary (default <repo>/.tools/bin/scand, built
#                   with `go build` if it is missing and SCAND_BIN is unset;
#                   the script fails if there is no binary, where pytest
#                   alone would skip the server tests)
#   PYTHON          the interpreter that creates the venv (default python3)
#   PYTEST_TIMEOUT  bound of the whole pytest run in seconds (default 900: the
#                   wheel test compiles a static scand, minutes with a cold Go
#                   build cache, and pip-installs a fresh venv)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENV="$ROOT/.venv-client"
PY="$VENV/bin/python"

if ! "$PY" -c 'import sys' >/dev/null 2>&1; then
  rm -rf "$VENV"
  "${PYTHON:-python3}" -m venv "$VENV"
fi

want="$(cat "$HERE/requirements-test.txt" "$HERE/requirements-build.txt" "$HERE/pyproject.toml" "$HERE/hatch_build.py" \
  | sha256sum | cut -d' ' -f1)"
stamp="$VENV/.client-requirements.sha256"
if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]]; then
  "$PY" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements-test.txt"
  # hatchling (requirements-build.txt) and editables come from requirements-test.txt: no build isolation, no download.
  "$PY" -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps -e "$HERE"
  echo "$want" >"$stamp"
  echo "installed client/python/requirements-test.txt and the scand package into $VENV"
else
  echo "client/python requirements unchanged; $VENV up to date"
fi

if [[ "${1:-}" == "--setup-only" ]]; then
  exit 0
fi

if [[ -z "${SCAND_BIN:-}" ]]; then
  SCAND_BIN="$ROOT/.tools/bin/scand"
  if [[ ! -x "$SCAND_BIN" ]]; then
    echo "building $SCAND_BIN"
    mkdir -p "$ROOT/.tools/bin"
    (cd "$ROOT" && go build -o .tools/bin/scand ./cmd/scand)
  fi
fi
if [[ ! -x "$SCAND_BIN" ]]; then
  # pytest alone would skip every server test; from this script that is a failure.
  echo "scand binary not found or not executable: $SCAND_BIN (build it with \`go build -o .tools/bin/scand ./cmd/scand\`)" >&2
  exit 1
fi
export SCAND_BIN
echo "SCAND_BIN=$SCAND_BIN"

cd "$HERE"
# Each test has its own limit (pyproject.toml: pytest-timeout); this bounds the run.
exec timeout --kill-after=30 "${PYTEST_TIMEOUT:-900}" "$PY" -m pytest tests -q "$@"
