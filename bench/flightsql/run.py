"""The Flight SQL front door against its peers, in one run on the suite's
trips files (bench/suite/data.py: 4 snappy Parquet files, row groups of
512 Ki rows, in the page cache after a warm-up), served by `scand serve`
(defaults, .tools/bin/scand):

  - a full scan of 4 columns (id, pickup_at, fare, city) through ADBC's
    Flight SQL driver (`SELECT ... FROM tput`, fetch_arrow_table) against
    the same scan through scand's Python package (conn.scan(...).read_all());
  - COUNT(*) of the files without a condition, with a selective one the
    statistics cannot decide (fare > 80) and with one they decide for all
    row groups but one (id < 3000000), through ADBC against DuckDB's
    count(*) over the same files (read_parquet, in the same process as the
    client, its own threads).

Turns are interleaved (every configuration once per turn, the order
alternating), so noise falls on all alike. Printed per configuration: the
median seconds of the turns (min-max), MB/s of Arrow data for the scans,
the ratio against the peer, and for the counts the bytes scand read from
storage (scand_storage_read_bytes_total on --metrics-listen, per call).

    /work/main/.venv/bin/python bench/flightsql/run.py [--rows-per-file N] [--turns K]

DATA_DIR picks the data directory (default /tmp/scand-flightsql; files are
kept between runs). Needs adbc-driver-flightsql (e2e/requirements.txt) and
duckdb for the count peer (skipped without it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "suite"))
sys.path.insert(0, str(REPO / "client" / "python" / "src"))

import data  # noqa: E402  bench/suite/data.py
import lib  # noqa: E402  bench/suite/lib.py
import scand  # noqa: E402

COLUMNS = ["id", "pickup_at", "fare", "city"]
CONDITION = "fare > 80"     # straddles every row group: the statistics cannot decide
DECIDED = "id < 3000000"    # ids ascend: the statistics decide every row group but one


def storage_bytes(srv) -> float:
    return sum(v for (name, _), v in srv.metrics().items() if name == "scand_storage_read_bytes_total")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows-per-file", type=int, default=2_000_000)
    ap.add_argument("--turns", type=int, default=5)
    args = ap.parse_args()

    import adbc_driver_flightsql.dbapi as flightsql
    try:
        import duckdb
    except ImportError:
        duckdb = None

    data_dir = Path(os.environ.get("DATA_DIR", "/tmp/scand-flightsql"))
    files = data.tput_files(data_dir, args.rows_per_file)
    size = sum(p.stat().st_size for p in files)
    work = Path(tempfile.mkdtemp(prefix="scand-flightsql-bench-"))
    srv = lib.Scand(work, "flightsql", data_dir).start()
    try:
        conn = flightsql.connect(srv.location, autocommit=True)
        pkg = scand.connect(srv.location)
        glob = str(data_dir / "tput" / "*.parquet")
        duck = duckdb.connect() if duckdb else None

        def adbc_scan():
            with conn.cursor() as cur:
                cur.execute(f"SELECT {', '.join(COLUMNS)} FROM tput")
                t = cur.fetch_arrow_table()
            return t.num_rows, t.nbytes

        def package_scan():
            t = pkg.scan("tput/", columns=COLUMNS).read_all()
            return t.num_rows, t.nbytes

        def adbc_count(where: str = ""):
            with conn.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM tput" + (f" WHERE {where}" if where else ""))
                return cur.fetch_arrow_table().column(0)[0].as_py(), 0

        def duck_count(where: str = ""):
            q = f"SELECT count(*) FROM read_parquet('{glob}')" + (f" WHERE {where}" if where else "")
            return duck.execute(q).fetchone()[0], 0

        configs = {
            "scan 4 columns: ADBC (Flight SQL)": adbc_scan,
            "scan 4 columns: scand Python package": package_scan,
            "COUNT(*): ADBC (Flight SQL)": adbc_count,
            f"COUNT(*) WHERE {CONDITION}: ADBC (Flight SQL)": lambda: adbc_count(CONDITION),
            f"COUNT(*) WHERE {DECIDED}: ADBC (Flight SQL)": lambda: adbc_count(DECIDED),
        }
        if duck:
            configs["COUNT(*): DuckDB read_parquet"] = duck_count
            configs[f"COUNT(*) WHERE {CONDITION}: DuckDB read_parquet"] = lambda: duck_count(CONDITION)
            configs[f"COUNT(*) WHERE {DECIDED}: DuckDB read_parquet"] = lambda: duck_count(DECIDED)
        times = {k: [] for k in configs}
        results, read = {}, {k: [] for k in configs}
        for fn in configs.values():  # warm-up: page cache, metadata cache
            fn()
        for turn in range(args.turns):
            order = list(configs) if turn % 2 == 0 else list(reversed(configs))
            for name in order:
                before = storage_bytes(srv)
                t0 = time.perf_counter()
                results[name] = configs[name]()
                times[name].append(time.perf_counter() - t0)
                read[name].append(storage_bytes(srv) - before)
        print(f"# Flight SQL front door: {len(files)} files, {size / 1e6:.0f} MB on disk, "
              f"{args.rows_per_file * len(files):,} rows; {args.turns} turns, interleaved\n")
        print("| configuration | median s (min-max) | result | MB/s Arrow | vs peer | bytes read by scand per call |")
        print("|---|---|---|---|---|---|")
        peers = {"scan 4 columns: ADBC (Flight SQL)": "scan 4 columns: scand Python package",
                 "COUNT(*): ADBC (Flight SQL)": "COUNT(*): DuckDB read_parquet",
                 f"COUNT(*) WHERE {CONDITION}: ADBC (Flight SQL)": f"COUNT(*) WHERE {CONDITION}: DuckDB read_parquet",
                 f"COUNT(*) WHERE {DECIDED}: ADBC (Flight SQL)": f"COUNT(*) WHERE {DECIDED}: DuckDB read_parquet"}
        for name, ts in times.items():
            med = statistics.median(ts)
            rows, nbytes = results[name]
            mbs = f"{nbytes / med / 1e6:.0f}" if nbytes else ""
            vs = ""
            if name in peers and peers[name] in times:
                peer = statistics.median(times[peers[name]])
                vs = f"{peer / med:.2f}x the peer's speed" if name.startswith("scan") else f"{med / peer:.2f}x the peer's time"
            print(f"| {name} | {med:.3f} ({min(ts):.3f}-{max(ts):.3f}) | {rows:,} | {mbs} | {vs} | "
                  f"{statistics.median(read[name]):,.0f} |")
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
