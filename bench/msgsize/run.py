"""Batch size for clients that accept larger messages (ScanRequest.max_message_bytes):
the same full scan of the suite's trips files (bench/suite/data.py, snappy
Parquet on local disk, in the page cache after a warm-up), read through
`scand serve` (defaults) by the Python package and by the Go client, each
with max_message_bytes 0 (what a stock client gets: 2 MiB batches, cut at
3 MiB) and with larger sizes. Turns are interleaved (each turn runs every
configuration, in an order that alternates from turn to turn), so that
noise from other processes falls on all of them alike.

    /work/main/.venv/bin/python bench/msgsize/run.py [--rows-per-file N] [--turns K] [--sizes 0,8,32,64] [--columns id]

Figures per configuration: batches per scan, MB/s of Arrow data (median of
the turns; min-max), and CPU seconds per GB of Arrow data of the client
(the Python process's own, or the Go reader's, measured inside it around
the scan) and of the server (/proc/PID/stat), and their sum; the client's
minor page faults per GB (fresh memory for each large batch is one cause
of CPU growing with batch size). Server and
client share the machine's cores. SCAND_BIN picks the scand binary (else
it is built into a temporary directory), DATA_DIR the data directory
(default /tmp/scand-msgsize; the files are kept between runs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
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

MIB = 1 << 20


def wide_files(data_dir: Path, rows: int, cols: int = 64) -> list[Path]:
    """One snappy Parquet file of cols float64 and int64 columns: many
    columns, so each column's share of a 2 MiB batch is small (per-column,
    per-batch costs show)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    d = data_dir / f"wide{cols}"
    p = d / "part-0.parquet"
    stamp = d / ".stamp"
    if stamp.exists() and stamp.read_text() == str(rows) and p.exists():
        return [p]
    d.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    with pq.ParquetWriter(p, pa.schema([(f"c{i}", pa.float64() if i % 2 else pa.int64()) for i in range(cols)]),
                          compression="snappy") as w:
        for start in range(0, rows, 1 << 18):
            n = min(1 << 18, rows - start)
            w.write_table(pa.table({f"c{i}": rng.random(n) if i % 2 else rng.integers(0, 1 << 20, n)
                                    for i in range(cols)}), row_group_size=1 << 18)
    stamp.write_text(str(rows))
    return [p]


def build(tmp: Path) -> tuple[str, str]:
    scand_bin = os.environ.get("SCAND_BIN")
    if not scand_bin:
        scand_bin = str(tmp / "scand")
        subprocess.run(["go", "build", "-o", scand_bin, "./cmd/scand"], cwd=REPO, check=True)
    goread = str(tmp / "goread")
    subprocess.run(["go", "build", "-o", goread, "./bench/goread"], cwd=REPO, check=True)
    return scand_bin, goread


def start_server(scand_bin: str, root: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = lib.free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
    p = subprocess.Popen([scand_bin, "serve", "--listen", f"127.0.0.1:{port}", "--root", str(root)],
                         stdout=open(log, "wb"), stderr=subprocess.STDOUT, env=env)
    loc = f"grpc://127.0.0.1:{port}"
    end = time.monotonic() + 30
    while True:
        try:
            scand.connect(loc, timeout=2).close()
            return p, loc
        except scand.ConnectionFailed:
            if time.monotonic() > end or p.poll() is not None:
                p.kill()
                raise RuntimeError(f"scand did not start; see {log}")
            time.sleep(0.1)


def python_turn(loc: str, paths: list[str], columns: list[str] | None, max_message_bytes: int) -> dict:
    import resource
    with scand.connect(loc, max_message_bytes=max_message_bytes) as conn:
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        c0, t0 = lib.self_cpu_seconds(), time.perf_counter()
        rows = nbytes = batches = 0
        for b in conn.scan(paths, columns, progress=False):
            rows += b.num_rows
            nbytes += b.nbytes
            batches += 1
        return {"rows": rows, "bytes": nbytes, "batches": batches, "wall": time.perf_counter() - t0,
                "cpu": lib.self_cpu_seconds() - c0, "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0}


def go_turn(goread: str, loc: str, paths: list[str], columns: list[str] | None, max_message_bytes: int) -> dict:
    req = {"paths": paths, **({"columns": columns} if columns else {})}
    out = subprocess.run([goread, "-server", loc, "-request", json.dumps(req), "-max-message-bytes", str(max_message_bytes)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows-per-file", type=int, default=1_000_000, help="rows of each of the 4 trips files")
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--sizes", default="0,32", help="max_message_bytes values in MiB (0: none sent)")
    ap.add_argument("--readers", default="python,go")
    ap.add_argument("--shape", default="trips", choices=["trips", "wide"],
                    help="trips: the suite's 4 trips files (11 columns); wide: one file of 64 numeric columns")
    ap.add_argument("--columns", default="", help="comma-separated columns (default: all); e.g. id: narrow "
                    "rows, where the row cap, not the byte target, sizes batches")
    args = ap.parse_args()
    columns = args.columns.split(",") if args.columns else None
    sizes = [int(s) * MIB for s in args.sizes.split(",")]
    data_dir = Path(os.environ.get("DATA_DIR", "/tmp/scand-msgsize"))
    if args.shape == "wide":
        files = wide_files(data_dir, args.rows_per_file)
    else:
        files = data.tput_files(data_dir, args.rows_per_file)
    paths = [f"{p.parent.name}/{p.name}" for p in files]
    with tempfile.TemporaryDirectory() as tmp:
        scand_bin, goread = build(Path(tmp))
        server, loc = start_server(scand_bin, data_dir, Path(tmp) / "scand.log")
        try:
            configs = [(r, s) for r in args.readers.split(",") for s in sizes]
            results = run_turns(configs, loc, paths, columns, goread, server.pid, args.turns)
        finally:
            server.terminate()
            server.wait()
    print_table(results, args, files)


def run_turns(configs, loc, paths, columns, goread, server_pid, turns) -> dict:
    def one(reader, size):
        s0 = lib.cpu_seconds(server_pid)
        if reader == "python":
            r = python_turn(loc, paths, columns, size)
        else:
            r = go_turn(goread, loc, paths, columns, size)
        r["server_cpu"] = lib.cpu_seconds(server_pid) - s0
        return r

    for reader, size in configs:
        one(reader, size)  # warm-up: page cache, footers, connections
    results = {c: [] for c in configs}
    for turn in range(turns):
        order = configs if turn % 2 == 0 else list(reversed(configs))
        for c in order:
            results[c].append(one(*c))
    return results


def print_table(results: dict, args, files) -> None:
    print(f"bench/msgsize: {len(files)} {args.shape} files x {args.rows_per_file:,} rows, columns {args.columns or 'all'}, "
          f"{args.turns} interleaved turns; "
          f"machine: {os.cpu_count()} cores, shared with the server")
    head = (f"{'reader':<7} {'max_message':>11} {'batches':>7} {'MB/s med':>9} {'MB/s min-max':>13} "
            f"{'client s/GB':>11} {'server s/GB':>11} {'total s/GB':>10} {'client faults/GB':>16}")
    print(head)
    print("-" * len(head))
    for (reader, size), turns in results.items():
        gb = sum(t["bytes"] for t in turns) / 1e9
        mbs = [t["bytes"] / 1e6 / t["wall"] for t in turns]
        cli = sum(t["cpu"] for t in turns) / gb
        srv = sum(t["server_cpu"] for t in turns) / gb
        faults = sum(t.get("faults", 0) for t in turns) / gb
        label = f"{size // MIB} MiB" if size else "0 (stock)"
        print(f"{reader:<7} {label:>11} {turns[0]['batches']:>7} {statistics.median(mbs):>9.0f} "
              f"{min(mbs):>6.0f}-{max(mbs):<6.0f} {cli:>11.2f} {srv:>11.2f} {cli + srv:>10.2f} {faults:>16,.0f}")


if __name__ == "__main__":
    main()
