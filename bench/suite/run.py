"""Runs every experiment of the benchmark suite once and writes the results as
JSON (bench/report.py turns them into docs/benchmarks.md and the plots).

    python bench/suite/run.py --out docs/benchmarks/results.json [--scale 1.0]
                              [--only seek,orc_alt,...] [--work DIR]

scripts/bench.sh is the command to use: it builds .tools/bin/scand, installs
the tools and the venv, then runs this and the report.

Experiments (ids):
  seek         1  seek vs read on S3 (+30 ms), and scand's learned S3 hole
  orc_alt      2  ORC alternate columns on S3: scand's three IO modes, pyarrow.orc
  parquet_alt  3  bench/iosched (Parquet alternate columns vs pyarrow; memory line)
  throughput   4  full scans of five data sets (trips, lineitem float64 and decimal,
                  nested, 2,000 small files): scand by stock pyarrow.flight (in
                  turn, at once), the Python package and the Go client; the
                  pyarrow.dataset Flight peer; read_table
  sendpath     5  bench/sendpath (stock vs zero-copy send path)
  concurrency  6  1/4/16 concurrent clients: throughput and peak RSS, scand vs pyarrow
  orc_decode   7  bench/orc (ORC decode vs pyarrow.orc)
  security     8  full scan and GetFlightInfo latency with TLS + tokens vs plaintext
  filter       9  bench/filter (filters on a hive-partitioned events set on S3:
                  scand vs pyarrow.dataset vs DuckDB)
  scaleout    10  bench/scaleout (1, 2, 3 replicas with --peers, each behind its
                  own bandwidth-limited link to S3; metadata cache hit rate)

Every phase has a time limit; a phase that fails or runs out of time is
recorded with its reason and the run goes on.
"""

from __future__ import annotations

import argparse
import atexit
import datetime as dt
import json
import os
import platform
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import lib  # noqa: E402

EXPERIMENTS = ["seek", "orc_alt", "parquet_alt", "throughput", "sendpath", "concurrency", "orc_decode", "security", "filter", "scaleout"]

# Upper bounds in seconds of each phase (at any scale; the work itself is
# scaled by BENCH_SCALE). Typical run times at scale 1 are well below.
BUDGETS = {"setup": 240, "seek": 90, "orc_alt": 150, "parquet_alt": 480, "throughput": 600, "sendpath": 300,
           "concurrency": 200, "orc_decode": 240, "security": 150, "filter": 480, "scaleout": 240}

LATENCY_MS = 30


class Ctx:
    pass


def machine_info() -> dict:
    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=lib.REPO).stdout.strip()
        except Exception as e:  # noqa: BLE001
            return f"unknown ({e})"
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    import pyarrow as pa
    try:
        import matplotlib
        mpl = matplotlib.__version__
    except ImportError:
        mpl = "not installed"
    head = sh(["git", "rev-parse", "--short", "HEAD"])
    dirty = sh(["git", "status", "--porcelain", "--untracked-files=no"])
    return {"nproc": os.cpu_count(), "cpu": cpu, "memory_bytes": mem, "kernel": platform.release(),
            "go": sh(["go", "version"]), "python": platform.python_version(), "pyarrow": pa.__version__,
            "matplotlib": mpl, "scand": lib.scand_version(),
            "git": head + (" (uncommitted changes)" if dirty else ""),
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(lib.REPO / "docs" / "benchmarks" / "results.json"))
    ap.add_argument("--scale", type=float, default=float(os.environ.get("BENCH_SCALE", "1") or 1))
    ap.add_argument("--only", default="", help="comma-separated experiment ids (default: all)")
    ap.add_argument("--work", default=str(lib.REPO / ".tools" / "bench-run"))
    ap.add_argument("--merge-into", default="", help="results.json of an earlier full run: write it to --out with "
                    "the experiments of this run (--only) replacing its own, each marked as re-run")
    args = ap.parse_args()
    only = [e for e in args.only.split(",") if e] or EXPERIMENTS
    for e in only:
        if e not in EXPERIMENTS:
            ap.error(f"unknown experiment {e!r}; known: {', '.join(EXPERIMENTS)}")

    def on_signal(signum, _frame):
        lib.log(f"signal {signum}: stopping")
        lib.stop_all()
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    atexit.register(lib.stop_all)

    started = time.monotonic()
    s = args.scale
    ctx = Ctx()
    ctx.scale = s
    ctx.work = Path(args.work)
    ctx.work.mkdir(parents=True, exist_ok=True)
    for old in ctx.work.glob("*.log"):
        old.unlink()
    ctx.data = lib.REPO / ".tools" / "bench-data"
    ctx.data.mkdir(parents=True, exist_ok=True)
    ctx.latency_ms = LATENCY_MS
    ctx.repeats = 3
    ctx.io_memory = "256MiB"
    ctx.seek_x = 1 << 20
    ctx.seek_max_gap = 32 << 20
    ctx.seek_repeats = 5
    ctx.budget = lambda name: BUDGETS[name]
    # Throughput files: 4 x 2.5 Mi rows at scale 1 (about 0.6 GB of snappy
    # Parquet, 1.1 GB of Arrow data; 1 GB of Parquet, BENCH_SCALE=1.7, does
    # not fit the suite's 20 minutes on 2 cores); see data.py.
    tput_rows = max(1 << 16, int(2_621_440 * s))
    seek_rows = max(1 << 12, int(262_144 * s))
    ctx.matrix_rows = max(1 << 14, int(600_000 * s))

    # Time scripts/bench.sh spent before this (build, tools, venv).
    setup = time.time() - float(os.environ["BENCH_STARTED_EPOCH"]) if os.environ.get("BENCH_STARTED_EPOCH") else None
    out_path = Path(args.out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    results = {"suite_version": 1, "scale": s, "machine": machine_info(), "latency_ms": LATENCY_MS,
               "setup_seconds": setup,
               "experiments": {}, "scaling": {
                   "BENCH_SCALE": s,
                   "orc_alt": f"ORC files of {max(64, int(65536 * s)):,} x 128 and {max(64, int(6554 * s)):,} x 400 "
                              f"rows x columns (65,536 and 6,554 rows at scale 1)",
                   "parquet_alt": f"bench/iosched -scale {s:g} -repeats 3 (it times its slowest pyarrow rows, cold scan over "
                                   "8 s, once)",
                   "throughput": f"{4} files x {tput_rows:,} rows (2,621,440 per file at scale 1: about 0.6 GB of snappy "
                                 "Parquet and 1.1 GB of Arrow data); lineitem (float64 and decimal) 4 files x "
                                 f"{ctx.matrix_rows:,} rows each, nested 4 x {ctx.matrix_rows // 2:,}, and 2,000 "
                                 "files of 1,000 trips rows (600,000 matrix rows per file at scale 1)",
                   "seek": "X = 1 MiB, gaps 64 KiB..32 MiB (not scaled)",
                   "seek_hole_object": f"{seek_rows:,} rows x 32 columns, 8 row groups",
                   "sendpath": f"bench/sendpath -rows {max(10000, int(500_000 * s)):,} -reps 3 "
                               f"-floor-mb {max(32, int(256 * s))} (1,000,000 rows, 5 reps and 512 MB are its own "
                               "defaults)",
                   "orc_decode": f"bench/orc -scale {s:g} -repeats 5 (its defaults at scale 1)",
                   "concurrency": "the throughput files; each client scans one whole file",
                   "security": "the throughput files, one request for all of them, by a stock pyarrow.flight client",
                   "filter": f"bench/filter -scale {s:g}: {max(10_000, int(1_200_000 * s)):,} events (1,200,000 at scale 1, "
                             "about 100 MB of snappy Parquet; the issue's 2 GB would be BENCH_SCALE=20, far over the "
                             "8 minutes it may take on 2 cores), 10 days, 17 files, row groups of 65,536 rows",
               }}

    def save():
        results["total_seconds"] = time.monotonic() - started
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(results, indent=1, default=str))
        tmp.replace(out_path)

    def phase(name, fn):
        if name not in only:
            results["experiments"][name] = {"status": "not run: left out of this run (--only)"}
            return
        t = time.monotonic()
        load0 = os.getloadavg()[0]
        lib.log(f"=== {name} === (load average {load0:.1f})")
        try:
            r = fn()
            if "status" not in r:
                r["status"] = "ok"
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            r = {"status": f"not run: failed: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
        r["seconds"] = time.monotonic() - t
        r["load_average"] = [load0, os.getloadavg()[0]]
        results["experiments"][name] = r
        save()
        lib.log(f"=== {name}: {r['status']} ({r['seconds']:.0f} s) ===")

    import data
    t = time.monotonic()
    need_tput = any(e in only for e in ("throughput", "concurrency", "security"))
    if need_tput:
        lib.log(f"data: throughput files, 4 x {tput_rows:,} rows")
        ctx.tput_files = data.tput_files(ctx.data, tput_rows)
    results["data_seconds"] = time.monotonic() - t

    # S3 for experiments 1 and 2: versitygw <- toxiproxy (+30 ms) <- readers.
    if any(e in only for e in ("seek", "orc_alt")):
        try:
            ctx.gw = lib.VersityGW(ctx.work).start()
            toxi = lib.Toxiproxy(ctx.work).start()
            ctx.proxy_endpoint = toxi.latency_proxy(ctx.gw.addr, LATENCY_MS)
            ctx.admin_fs = lib.s3_filesystem(ctx.gw.endpoint)
            ctx.admin_fs.create_dir(lib.BUCKET)
            p = data.seekhole_file(ctx.data, seek_rows)
            ctx.seek_parquet_key = "seek/hole.parquet"
            ctx.seek_parquet_cols = [f"c{i:03d}" for i in range(32)]
            lib.upload(ctx.admin_fs, p, ctx.seek_parquet_key)
            s3_ok = None
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            s3_ok = f"not run: S3 setup failed: {e}"
        import exp_orc_alt
        import exp_seek
        for name, mod in (("seek", exp_seek), ("orc_alt", exp_orc_alt)):
            if s3_ok:
                results["experiments"][name] = {"status": s3_ok}
            else:
                phase(name, lambda mod=mod: mod.run(ctx))
        lib.stop_all()  # the S3 servers: the next programs start their own

    import subprograms
    logs = ctx.work
    phase("parquet_alt", lambda: subprograms.run_program(
        "iosched", [("scale", f"{s:g}"), ("repeats", "3"), ("latency", f"{LATENCY_MS}ms")], BUDGETS["parquet_alt"], logs))
    import exp_throughput
    phase("throughput", lambda: exp_throughput.run(ctx))
    phase("sendpath", lambda: subprograms.run_program(
        "sendpath", [("rows", str(max(10000, int(500_000 * s)))), ("reps", "3"), ("floor-mb", str(max(32, int(256 * s))))],
        BUDGETS["sendpath"], logs))
    import exp_concurrency
    phase("concurrency", lambda: exp_concurrency.run(ctx))
    phase("orc_decode", lambda: subprograms.run_program(
        "orc", [("scale", f"{s:g}"), ("repeats", "5"), ("dir", str(ctx.data / "orc-decode"))],
        BUDGETS["orc_decode"], logs))
    import exp_security
    phase("security", lambda: exp_security.run(ctx))
    # The program stops starting rounds after -budget, below the suite's
    # limit, so that it prints its table instead of being killed.
    phase("filter", lambda: subprograms.run_program(
        "filter", [("scale", f"{s:g}"), ("repeats", "3"), ("latency", f"{LATENCY_MS}ms"),
                   ("budget", f"{BUDGETS['filter'] - 60}s"), ("data", str(ctx.data / "filter"))],
        BUDGETS["filter"], logs))
    # Not scaled: the replica count, not the data, is what varies.
    phase("scaleout", lambda: subprograms.run_program("scaleout", [("repeats", "2")], BUDGETS["scaleout"], logs))

    save()
    if args.merge_into:
        merge_into(Path(args.merge_into), results, only, out_path)
    lib.log(f"all experiments done in {time.monotonic() - started:.0f} s; results in {out_path}")


def merge_into(base_path: Path, results: dict, only: list[str], out_path: Path) -> None:
    """Writes base_path's results with this run's experiments in place of
    its own, each marked with this run's date and commit."""
    base = json.loads(base_path.read_text())
    m = results["machine"]
    for name in only:
        e = dict(results["experiments"][name])
        e["rerun"] = {"date": m["date"], "git": m["git"]}
        base["experiments"][name] = e
        if name in results.get("scaling", {}):
            base.setdefault("scaling", {})[name] = results["scaling"][name]
    out_path.write_text(json.dumps(base, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
