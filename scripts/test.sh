#!/usr/bin/env bash
# The single command that runs every test of scand on a fresh machine:
#   bash scripts/test.sh
# Steps: set-up (the e2e venv .venv, the Python client's venv .venv-client, the test tools: versitygw, toxiproxy,
# the cloud emulators, the Flight SQL JDBC driver, Spark with Iceberg's runtime in .venv-spark) in the background
# while gofmt, go vet and the decoders' tests run; the Go tests under -race; a build of the scand binary
# (.tools/bin/scand); then the pytest end-to-end suite (e2e/) against that binary with the Python client's suite
# beside it. Works from any directory; exits non-zero on the first failure, and prints how long each phase took
# at the end of every run, passed or failed (background jobs each with their own line).
#
# Where the time goes, and what this script chose (measured on the 2-core CI machine):
# - The race detector costs 5-10x. It runs where goroutines meet: the server and its stream, admission, the
#   planner, the sources, the IO scheduler, the cluster, the clients, storage. The format decoders
#   (scanner/parquet, scanner/orc) decode a column on one goroutine, are fuzzed and are compared with pqarrow and
#   pyarrow value by value: they run without -race (in scanner/parquet -race took 628 of the suite's 1,473 s),
#   except the tests of parallel column decoding and the shared buffer pool, which run again under -race.
# - Work that waits overlaps work that computes: the set-up (pip, npm, Maven: network and unpacking) runs beside
#   go vet and the decoders' tests; the Python client's suite runs beside e2e (both wait on servers, sockets and
#   sleeps). The Go race tests run alone: they keep both cores busy, and timing-bounded tests beside them would
#   only get flakier.
# - scripts/install-tools.sh keeps every pinned tool per version in ~/.cache/scand-tools, so a fresh clone on a
#   machine that installed them once copies them (seconds) instead of building or downloading them again.
# - The scand binary is built static (CGO_ENABLED=0, -trimpath) like the wheel's, so the Python client's wheel test
#   relinks it from the build cache instead of compiling everything once more.
# - pytest prints its slowest tests (--durations) so that the next slow test is seen where it lands.
#
# Environment:
#   SCAND_TESTDATA  the shared test corpus (default: <repo>/../shared/testdata)
#   PYTEST_ARGS     extra pytest arguments, e.g. PYTEST_ARGS="-k corpus -x"
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Phase timings: each section closes the one before it; the summary prints on exit, passed or failed.
started=$SECONDS
phase=""
phase_started=$SECONDS
timings=()
close_phase() {
  if [[ -n "$phase" ]]; then
    timings+=("$(printf '%6d s  %s' "$((SECONDS - phase_started))" "$phase")")
  fi
  phase=""
}
section() {
  close_phase
  phase="$*"
  phase_started=$SECONDS
  printf '\n==== %s ====\n' "$*"
}
# killtree PID: a background job that is still running when the run stops (a failure elsewhere) is stopped
# with everything it started.
killtree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do
    killtree "$child"
  done
  kill "$1" 2>/dev/null || true
}
summary() {
  local rc=$?
  for pid in "${job_pid[@]}"; do
    killtree "$pid"
  done
  close_phase
  printf '\n==== timings (%s) ====\n' "$([[ $rc -eq 0 ]] && echo passed || echo "failed, exit $rc")"
  printf '%s\n' "${timings[@]}"
  printf '%6d s  total\n' "$((SECONDS - started))"
}
declare -A job_pid=()
trap summary EXIT

# Background jobs: each writes its output to .tools/logs/NAME.log and its duration to NAME.secs; join prints the
# log, adds the duration to the summary, and fails the run if the job failed.
LOGS="$ROOT/.tools/logs"
mkdir -p "$LOGS"
# A job's files are named after it, with everything but letters and digits made '-'.
logname() { printf '%s' "$1" | tr -c 'A-Za-z0-9' '-'; }
spawn() {
  local name=$1 log
  shift
  log="$LOGS/$(logname "$name")"
  (
    s=$SECONDS
    rc=0
    "$@" >"$log.log" 2>&1 || rc=$?
    echo "$((SECONDS - s))" >"$log.secs"
    exit "$rc"
  ) &
  job_pid[$name]=$!
}
join() {
  local name=$1 rc=0 log
  log="$LOGS/$(logname "$name")"
  wait "${job_pid[$name]}" || rc=$?
  printf '\n---- %s (in the background) ----\n' "$name"
  cat "$log.log"
  timings+=("$(printf '%6s s  %s (in the background)' "$(cat "$log.secs" 2>/dev/null || echo '?')" "$name")")
  if [[ $rc -ne 0 ]]; then
    echo "$name failed (exit $rc)" >&2
    exit "$rc"
  fi
}

PY="$ROOT/.venv/bin/python"
e2e_venv() {
  if ! "$PY" -c 'import sys' >/dev/null 2>&1; then
    rm -rf .venv
    python3 -m venv .venv
  fi
  local want stamp=".venv/.requirements.sha256"
  want="$(sha256sum e2e/requirements.txt | cut -d' ' -f1)"
  if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]]; then
    "$PY" -m pip install --quiet --disable-pip-version-check -r e2e/requirements.txt
    echo "$want" >"$stamp"
    echo "installed e2e/requirements.txt"
  else
    echo "e2e/requirements.txt unchanged; venv up to date"
  fi
}

# Set-up is downloads and installs (network, pip, npm, go install): it runs beside gofmt and go vet, which
# compile and warm the build cache for the tests that follow. The decoders' tests (CPU, no venv, no tools) run
# then too: the set-up mostly waits on the network and on unpacking.
# The decoders run without the race detector (see the top of this file); their concurrent parts run with it.
decoders=(./scanner/parquet ./scanner/orc)
section "set-up in the background (the e2e venv, the Python client's venv, the test tools); gofmt -l, go vet ./...; go test ${decoders[*]}"
spawn "e2e venv (.venv)" e2e_venv
spawn "Python client venv (.venv-client)" bash client/python/run-tests.sh --setup-only
spawn "test tools (scripts/install-tools.sh)" bash scripts/install-tools.sh
export PATH="$ROOT/.tools/bin:$PATH"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*'))
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted (run gofmt -w on them):" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go test -count=1 -timeout 15m "${decoders[@]}"
# Heap figures (what a listing charges for a decoded Iceberg manifest) are measured without the race detector,
# which grows every allocation; the package's other tests run with it below.
go test -count=1 -timeout 5m -run 'TestManifestDecodeCharge' ./source/iceberg
# Under -race, the parallel decode is checked byte for byte against one goroutine's (flat and nested files); its
# comparison with pqarrow runs in the plain pass above (under -race it alone took 140 s).
go test -race -count=1 -timeout 10m \
  -run 'TestParallelDecodeIsByteIdentical|TestParallelDecodeConcurrentStreams|TestSetDecodeParallelism|TestPoolAllocatorConcurrent' \
  ./scanner/parquet
join "e2e venv (.venv)"
join "Python client venv (.venv-client)"
join "test tools (scripts/install-tools.sh)"

mapfile -t raced < <(go list ./... | grep -v -E '/scanner/(parquet|orc)$')
section "go test -race -count=1 (${#raced[@]} packages where goroutines meet)"
go test -race -count=1 -timeout 20m "${raced[@]}"

section "go build -o .tools/bin/scand ./cmd/scand (static, as the wheel's)"
mkdir -p .tools/bin
CGO_ENABLED=0 go build -trimpath -o .tools/bin/scand ./cmd/scand
echo "built $ROOT/.tools/bin/scand"

section "e2e: pytest e2e, and the Python client's suite beside it"
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
# The Python client's suite runs beside e2e: both wait on servers, sockets and sleeps more than they compute,
# so side by side they take little more than the longer of the two.
spawn "Python client: client/python/run-tests.sh" env SCAND_BIN="$ROOT/.tools/bin/scand" bash client/python/run-tests.sh --durations=10
# Each test has its own time limit (e2e/pytest.ini); this bounds the whole run.
# shellcheck disable=SC2086
timeout --kill-after=30 900 "$PY" -m pytest e2e -q --durations=15 ${PYTEST_ARGS:-}
close_phase
join "Python client: client/python/run-tests.sh"

section "all tests passed"
phase=""
