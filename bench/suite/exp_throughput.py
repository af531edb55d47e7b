"""Experiment 4, throughput: a full scan of the tput files (snappy Parquet on
local disk, in the page cache after the warm-up) into pyarrow.

  pyarrow.parquet.read_table   each file read locally in this process (the
                               limit: no server, no network)
  scand -> pyarrow.flight      `scand serve` (defaults); one request for all
                               files, every endpoint's DoGet read in order by
                               a stock pyarrow.flight client
  pyarrow Flight server        bench/suite/pyarrow_flight_server.py (a Python
                               process) read the same way

Figures: rows/s, and MB/s of Arrow data (Table.nbytes of what arrived, the
same for every reader) and of Parquet file bytes; min/median/max of REPEATS
timed scans after one warm-up scan; CPU seconds per GB of Arrow data of the
server process (/proc/PID/stat) and of this process (the client).
Server and client share the 2 cores.
"""

from __future__ import annotations

import sys
import time

import lib


def start_pyarrow_server(ctx, root) -> tuple[lib.Proc, str]:
    import subprocess
    out = ctx.work / "pyarrow-flight-server.port"
    out.unlink(missing_ok=True)
    with open(out, "wb") as f:
        p = lib.Proc("pyarrow-flight", [sys.executable, lib.REPO / "bench" / "suite" / "pyarrow_flight_server.py",
                                        root], ctx.work / "pyarrow-flight-server.log")
        p.start(ready=lambda: out.read_text().startswith("port "), timeout=30, stdout=f)
    port = int(out.read_text().split()[1])
    import pyarrow.flight as flight
    loc = f"grpc://127.0.0.1:{port}"
    end = time.monotonic() + 20
    while True:
        try:
            c = flight.FlightClient(loc)
            c.wait_for_available(timeout=2)
            c.close()
            break
        except Exception:  # noqa: BLE001
            if time.monotonic() > end:
                raise
            time.sleep(0.1)
    return p, loc


def run(ctx) -> dict:
    import pyarrow as pa
    import pyarrow.flight as flight
    import pyarrow.parquet as pq

    deadline = lib.Deadline(ctx.budget("throughput"))
    files = ctx.tput_files
    root = files[0].parent
    rel = [f"{root.name}/{p.name}" for p in files]
    file_bytes = sum(p.stat().st_size for p in files)
    total_rows = sum(pq.ParquetFile(p).metadata.num_rows for p in files)
    res = {"files": len(files), "file_bytes": file_bytes, "rows": total_rows, "repeats": ctx.repeats,
           "row_groups": sum(pq.ParquetFile(p).metadata.num_row_groups for p in files), "readers": []}

    def measure(label, fn, server_pid=None):
        fn()  # warm-up (page cache, connections, metadata caches)
        times, nbytes, rows = [], 0, 0
        srv_cpu = cli_cpu = 0.0
        for _ in range(ctx.repeats):
            s0 = lib.cpu_seconds(server_pid) if server_pid else 0.0
            c0 = lib.self_cpu_seconds()
            t = time.perf_counter()
            rows, nbytes = fn()
            times.append(time.perf_counter() - t)
            cli_cpu += lib.self_cpu_seconds() - c0
            srv_cpu += (lib.cpu_seconds(server_pid) - s0) if server_pid else 0.0
            if deadline.expired():
                break
        gb = nbytes / 1e9 * len(times)
        if rows != total_rows:
            raise RuntimeError(f"{label}: {rows} rows, want {total_rows}")
        w = lib.mmm(times)
        r = {"reader": label, "wall": w, "arrow_bytes": nbytes,
             "rows_per_s": lib.mmm([rows / t for t in times]),
             "arrow_MBps": lib.mmm([nbytes / 1e6 / t for t in times]),
             "file_MBps": lib.mmm([file_bytes / 1e6 / t for t in times]),
             # CPU seconds per GB of Arrow data: of the server process, and of
             # this process (the client; for read_table, the whole read).
             "server_cpu_s_per_GB": srv_cpu / gb if server_pid else None,
             "client_cpu_s_per_GB": cli_cpu / gb}
        res["readers"].append(r)
        lib.log(f"throughput: {label}: median {w['median']:.2f} s, {r['arrow_MBps']['median']:.0f} MB/s Arrow, "
                f"{r['rows_per_s']['median'] / 1e6:.2f} M rows/s")
        return r

    def local():
        rows = nbytes = 0
        for p in files:
            t = pq.read_table(p)
            rows += t.num_rows
            nbytes += t.nbytes
            del t
        return rows, nbytes

    measure("pyarrow.parquet.read_table (local, the limit)", local)

    srv = lib.Scand(ctx.work, "tput", root.parent).start()
    try:
        client = flight.FlightClient(srv.location)

        endpoints = []

        def scand_scan():
            r = lib.flight_scan(client, {"paths": rel})
            endpoints.append(r["endpoints"])
            return r["rows"], r["nbytes"]
        r = measure("scand -> pyarrow.flight", scand_scan, srv.pid)
        r["endpoints"] = endpoints[-1]
        client.close()
    finally:
        srv.stop()

    proc, loc = start_pyarrow_server(ctx, root.parent)
    try:
        client = flight.FlightClient(loc)

        def py_scan():
            r = lib.flight_scan(client, {"paths": rel})
            return r["rows"], r["nbytes"]
        r = measure("pyarrow.dataset Flight server -> pyarrow.flight", py_scan, proc.pid)
        r["endpoints"] = len(rel)
        client.close()
    finally:
        proc.stop()
    res["pyarrow"] = pa.__version__
    return res
