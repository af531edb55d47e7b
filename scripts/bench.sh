#!/usr/bin/env bash
# The benchmark suite, in one run (see docs/benchmarks.md, which it writes):
#   bash scripts/bench.sh          (or: make bench)
# Steps: build .tools/bin/scand; install versitygw and toxiproxy
# (scripts/install-tools.sh); make sure .venv has pyarrow and matplotlib
# (bench/requirements.txt, installed on top of e2e/requirements.txt); run
# every experiment once (bench/suite/run.py, which also builds and runs
# bench/iosched, bench/sendpath and bench/orc); write docs/benchmarks.md and
# the plots in docs/benchmarks/ (bench/report.py). About 20-28 minutes on a
# 2-core machine at the default scale (bench/filter alone: up to 8).
#
# Environment:
#   BENCH_SCALE   multiplies the data sizes (default 1; 0.1 for a quick look)
#   BENCH_ONLY    comma-separated experiment ids to run (default: all); see
#                 bench/suite/run.py (BENCH_ONLY=scaleout: bench/scaleout alone,
#                 about a minute)
#
# Every server the suite starts listens on 127.0.0.1 and is stopped at the
# end, also when the run is interrupted; every phase has a time limit.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

section() { printf '\n==== %s ====\n' "$*"; }
started=$SECONDS
export BENCH_STARTED_EPOCH="$(date +%s)"
runner_pid=""
cleanup() {
  # The suite stops its own servers on SIGTERM; its children also die with it.
  if [[ -n "$runner_pid" ]] && kill -0 "$runner_pid" 2>/dev/null; then
    kill -TERM "$runner_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$runner_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$runner_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

section "build .tools/bin/scand"
mkdir -p .tools/bin
go build -o .tools/bin/scand ./cmd/scand
echo "built $ROOT/.tools/bin/scand ($(.tools/bin/scand version 2>/dev/null || echo '?'))"

section "tools: versitygw, toxiproxy (scripts/install-tools.sh)"
bash scripts/install-tools.sh
export PATH="$ROOT/.tools/bin:$PATH"

section "Python venv (.venv): e2e/requirements.txt + bench/requirements.txt + bench/filter/requirements.txt"
PY="$ROOT/.venv/bin/python"
if ! "$PY" -c 'import sys' >/dev/null 2>&1; then
  rm -rf .venv
  python3 -m venv .venv
fi
# Same stamp as scripts/test.sh for the e2e requirements, so neither script
# reinstalls what the other installed.
want="$(sha256sum e2e/requirements.txt | cut -d' ' -f1)"
stamp=".venv/.requirements.sha256"
if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]]; then
  "$PY" -m pip install --quiet --disable-pip-version-check -r e2e/requirements.txt
  echo "$want" >"$stamp"
fi
want_b="$(sha256sum bench/requirements.txt | cut -d' ' -f1)"
stamp_b=".venv/.bench-requirements.sha256"
if [[ "$(cat "$stamp_b" 2>/dev/null || true)" != "$want_b" ]]; then
  "$PY" -m pip install --quiet --disable-pip-version-check -r bench/requirements.txt
  echo "$want_b" >"$stamp_b"
  echo "installed bench/requirements.txt"
else
  echo "bench/requirements.txt unchanged; venv up to date"
fi
# DuckDB, the peer of bench/filter (experiment 9), pinned there.
want_f="$(sha256sum bench/filter/requirements.txt | cut -d' ' -f1)"
stamp_f=".venv/.bench-filter-requirements.sha256"
if [[ "$(cat "$stamp_f" 2>/dev/null || true)" != "$want_f" ]]; then
  "$PY" -m pip install --quiet --disable-pip-version-check -r bench/filter/requirements.txt
  echo "$want_f" >"$stamp_f"
  echo "installed bench/filter/requirements.txt"
fi
# bench/taxi pins the same DuckDB (its in-process peer).
want_t="$(sha256sum bench/taxi/requirements.txt | cut -d' ' -f1)"
stamp_t=".venv/.bench-taxi-requirements.sha256"
if [[ "$(cat "$stamp_t" 2>/dev/null || true)" != "$want_t" ]]; then
  "$PY" -m pip install --quiet --disable-pip-version-check -r bench/taxi/requirements.txt
  echo "$want_t" >"$stamp_t"
  echo "installed bench/taxi/requirements.txt"
fi
"$PY" -c 'import pyarrow, matplotlib, duckdb; print("pyarrow", pyarrow.__version__, "matplotlib", matplotlib.__version__, "duckdb", duckdb.__version__)'

section "experiments (bench/suite/run.py, BENCH_SCALE=${BENCH_SCALE:-1})"
mkdir -p docs/benchmarks
# Bounded as a whole too: every phase has its own limit, this is the backstop.
timeout --kill-after=30 2100 "$PY" bench/suite/run.py --out docs/benchmarks/results.json \
  --scale "${BENCH_SCALE:-1}" ${BENCH_ONLY:+--only "$BENCH_ONLY"} &
runner_pid=$!
rc=0
wait "$runner_pid" || rc=$?
runner_pid=""
if [[ $rc -ne 0 ]]; then
  echo "bench/suite/run.py exited with status $rc; reporting what it saved" >&2
fi

section "report (bench/report.py)"
if [[ -f docs/benchmarks/results.json ]]; then
  "$PY" bench/report.py --results docs/benchmarks/results.json --md docs/benchmarks.md --plots docs/benchmarks
else
  echo "no results to report" >&2
  rc=1
fi

section "done in $((SECONDS - started)) s: docs/benchmarks.md"
exit "$rc"
