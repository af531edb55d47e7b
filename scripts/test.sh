#!/usr/bin/env bash
# The single command that runs every test of scand on a fresh machine:
#   bash scripts/test.sh
# Steps: Python venv for the e2e tests (.venv), gofmt and go vet, Go unit tests with the
# race detector, build of the scand binary (.tools/bin/scand), then the pytest
# end-to-end suite (e2e/) against that binary. Works from any directory; exits
# non-zero on the first failure.
#
# Environment:
#   SCAND_TESTDATA  the shared test corpus (default: <repo>/../shared/testdata)
#   PYTEST_ARGS     extra pytest arguments, e.g. PYTEST_ARGS="-k corpus -x"
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

section() { printf '\n==== %s ====\n' "$*"; }
started=$SECONDS

section "Python venv (.venv) for the e2e tests"
PY="$ROOT/.venv/bin/python"
if ! "$PY" -c 'import sys' >/dev/null 2>&1; then
  rm -rf .venv
  python3 -m venv .venv
fi
want="$(sha256sum e2e/requirements.txt | cut -d' ' -f1)"
stamp=".venv/.requirements.sha256"
if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]]; then
  "$PY" -m pip install --quiet --disable-pip-version-check -r e2e/requirements.txt
  echo "$want" >"$stamp"
  echo "installed e2e/requirements.txt"
else
  echo "e2e/requirements.txt unchanged; venv up to date"
fi

section "tools for tests: versitygw, toxiproxy, fake-gcs-server, Azurite (scripts/install-tools.sh)"
bash scripts/install-tools.sh
export PATH="$ROOT/.tools/bin:$PATH"

section "gofmt -l, go vet ./..."
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*'))
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted (run gofmt -w on them):" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...

section "go test -race -count=1 ./..."
go test -race -count=1 -timeout 25m ./...

section "go build -o .tools/bin/scand ./cmd/scand"
mkdir -p .tools/bin
go build -o .tools/bin/scand ./cmd/scand
echo "built $ROOT/.tools/bin/scand"

section "e2e: pytest e2e"
export SCAND_BIN="$ROOT/.tools/bin/scand"
if [[ -z "${SCAND_TESTDATA:-}" ]]; then
  SCAND_TESTDATA="$ROOT/../shared/testdata"
fi
if [[ ! -d "$SCAND_TESTDATA/parquet-testing" ]]; then
  echo "test corpus not found at $SCAND_TESTDATA (set SCAND_TESTDATA)" >&2
  exit 1
fi
SCAND_TESTDATA="$(cd "$SCAND_TESTDATA" && pwd)"
export SCAND_TESTDATA
echo "SCAND_BIN=$SCAND_BIN"
echo "SCAND_TESTDATA=$SCAND_TESTDATA"
# Each test has its own time limit (e2e/pytest.ini); this bounds the whole run.
# shellcheck disable=SC2086
timeout --kill-after=30 900 "$PY" -m pytest e2e -q ${PYTEST_ARGS:-}

section "Python client: client/python/run-tests.sh"
SCAND_BIN="$ROOT/.tools/bin/scand" bash client/python/run-tests.sh

section "all tests passed ($((SECONDS - started)) s)"
