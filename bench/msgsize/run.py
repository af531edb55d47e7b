"""Batch size for clients that accept larger messages (ScanRequest.max_message_bytes):
the same full scan of the suite's trips files (bench/suite/data.py, snappy
Parquet on local disk, in the page cache after a warm-up), read through
`scand serve` (defaults) by the Python package and by the Go client, each
with max_message_bytes 0 (what a stock client gets: 2 MiB batches, cut at
3 MiB) and with larger sizes. Turns are interleaved (each turn runs every
configuration, in an order that alternates from turn to turn), so that
noise from other processes falls on all of them alike.

    /work/main/.venv/bin/python bench/msgsize/run.py [--rows-per-file N] [--turns K] [--sizes 0,8,32,64]

Figures per configuration: batches per scan, MB/s of Arrow data (median of
the turns; min-max), and CPU seconds per GB of Arrow data of the client
(the Python process's own, or the Go reader's, measured inside it around
the scan) and of the server (/proc/PID/stat), and their sum. Server and
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


def build(tmp: Path) -> tuple[str, str]:
    scand_bin = os.environ.get("SCAND_BIN")
    if not scand_bin:
        scand_bin = str(tmp / "scand")
        subprocess.run(["go", "build", "-o", scand_bin, "./cmd/scand"], cwd=REPO, check=True)
    goread = str(tmp / "goread")
    subprocess.run(["go", "build", "-o", goread, "./bench/msgsize/goread"], cwd=REPO, check=True)
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


def python_turn(loc: str, paths: list[str], max_message_bytes: int) -> dict:
    with scand.connect(loc, max_message_bytes=max_message_bytes) as conn:
        c0, t0 = lib.self_cpu_seconds(), time.perf_counter()
        rows = nbytes = batches = 0
        for b in conn.scan(paths, progress=False):
            rows += b.num_rows
            nbytes += b.nbytes
            batches += 1
        return {"rows": rows, "bytes": nbytes, "batches": batches, "wall": time.perf_counter() - t0,
                "cpu": lib.self_cpu_seconds() - c0}


def go_turn(goread: str, loc: str, paths: list[str], max_message_bytes: int) -> dict:
    out = subprocess.run([goread, "-addr", loc, "-paths", ",".join(paths), "-max", str(max_message_bytes)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows-per-file", type=int, default=1_000_000, help="rows of each of the 4 trips files")
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--sizes", default="0,32", help="max_message_bytes values in MiB (0: none sent)")
    ap.add_argument("--readers", default="python,go")
    args = ap.parse_args()
    sizes = [int(s) * MIB for s in args.sizes.split(",")]
    data_dir = Path(os.environ.get("DATA_DIR", "/tmp/scand-msgsize"))
    files = data.tput_files(data_dir, args.rows_per_file)
    paths = [f"tput/{p.name}" for p in files]
    with tempfile.TemporaryDirectory() as tmp:
        scand_bin, goread = build(Path(tmp))
        server, loc = start_server(scand_bin, data_dir, Path(tmp) / "scand.log")
        try:
            configs = [(r, s) for r in args.readers.split(",") for s in sizes]
            results = run_turns(configs, loc, paths, goread, server.pid, args.turns)
        finally:
            server.terminate()
            server.wait()
    print_table(results, args, files)


def run_turns(configs, loc, paths, goread, server_pid, turns) -> dict:
    def one(reader, size):
        s0 = lib.cpu_seconds(server_pid)
        r = python_turn(loc, paths, size) if reader == "python" else go_turn(goread, loc, paths, size)
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
    print(f"bench/msgsize: {len(files)} trips files x {args.rows_per_file:,} rows, {args.turns} interleaved turns; "
          f"machine: {os.cpu_count()} cores, shared with the server")
    head = (f"{'reader':<7} {'max_message':>11} {'batches':>7} {'MB/s med':>9} {'MB/s min-max':>13} "
            f"{'client s/GB':>11} {'server s/GB':>11} {'total s/GB':>10}")
    print(head)
    print("-" * len(head))
    for (reader, size), turns in results.items():
        gb = sum(t["bytes"] for t in turns) / 1e9
        mbs = [t["bytes"] / 1e6 / t["wall"] for t in turns]
        cli = sum(t["cpu"] for t in turns) / gb
        srv = sum(t["server_cpu"] for t in turns) / gb
        label = f"{size // MIB} MiB" if size else "0 (stock)"
        print(f"{reader:<7} {label:>11} {turns[0]['batches']:>7} {statistics.median(mbs):>9.0f} "
              f"{min(mbs):>6.0f}-{max(mbs):<6.0f} {cli:>11.2f} {srv:>11.2f} {cli + srv:>10.2f}")


if __name__ == "__main__":
    main()
