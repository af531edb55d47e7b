"""Experiment 4, throughput: full scans, all columns, of five data sets of
snappy Parquet on local disk (in the page cache after the warm-up turn),
into each reader, in interleaved turns.

Data sets (data.py): trips (the tput files), lineitem with float64 prices,
lineitem with decimal(15,2) prices and a boolean, nested (lists of structs,
a map, a list of doubles), and 2,000 small files of 1,000 trips rows.

Readers, in this order within every turn:

  read_table                 pyarrow.parquet.read_table of each file in this
                             process (the limit: no server, no network)
  scand, stock, in turn      `scand serve` (defaults), one request for all
                             files, a stock pyarrow.flight client reading
                             every endpoint's DoGet one after another
  scand, stock, at once      the same, up to 8 endpoints at a time (threads)
  scand, Python package      scand.connect(...).scan(...) (its defaults)
  scand, Go client           bench/goread (package client, its defaults), a
                             child process timing the scan itself
  peer, in turn / at once    bench/suite/pyarrow_flight_server.py
                             (pyarrow.dataset behind pyarrow.flight, one
                             endpoint per file), read like scand

Figures per reader: median wall time and MB/s of Arrow data (the data set's
Table.nbytes from read_table, the same figure for every reader), CPU
seconds per GB of Arrow data of the server process (/proc/PID/stat) and of
the client (this process, or the Go child's getrusage). Server and clients
share the 2 cores; both servers stay up for the whole experiment, idle when
it is the other's turn.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import lib

# The Python package is read from the tree, as bench/spark does: the suite's
# venv has pyarrow, which is all it needs.
sys.path.insert(0, str(lib.REPO / "client" / "python" / "src"))

AT_ONCE = 8


def start_pyarrow_server(ctx, root) -> tuple[lib.Proc, str]:
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


def _read_stream(client, ticket, opts) -> int:
    reader = client.do_get(ticket, options=opts)
    rows = 0
    while True:
        try:
            chunk = reader.read_chunk()
        except StopIteration:
            return rows
        if chunk.data is not None:
            rows += chunk.data.num_rows


def stock_scan(client, request: dict, at_once: int) -> int:
    """A stock pyarrow.flight client: GetFlightInfo, then the endpoints in
    order (at_once 1) or up to at_once at a time; returns the rows."""
    import pyarrow.flight as flight
    opts = flight.FlightCallOptions(timeout=600)
    info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(request)), options=opts)
    if at_once <= 1:
        return sum(_read_stream(client, ep.ticket, opts) for ep in info.endpoints)
    with ThreadPoolExecutor(at_once) as pool:
        return sum(pool.map(lambda ep: _read_stream(client, ep.ticket, opts), info.endpoints))


def endpoints_of(client, request: dict) -> int:
    import pyarrow.flight as flight
    return len(client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(request))).endpoints)


def goread_binary(ctx) -> str:
    out = lib.BIN / "bench-goread"
    p = subprocess.run(["go", "build", "-o", str(out), "./bench/goread"], cwd=lib.REPO, capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"bench/goread does not build: {p.stderr.strip()[:300]}")
    return str(out)


class Readers:
    """The readers of one data set, each a function returning (rows, client
    CPU seconds or None for "measure this process")."""

    def __init__(self, files, scand_loc, peer_loc, goread):
        import pyarrow.flight as flight
        import scand
        self.files = files
        root = files[0].parent
        self.rel = [f"{root.name}/{p.name}" for p in files]
        self.scand_client = flight.FlightClient(scand_loc)
        self.peer_client = flight.FlightClient(peer_loc)
        self.conn = scand.connect(scand_loc)
        self.scand_loc, self.goread = scand_loc, goread

    def close(self):
        self.scand_client.close()
        self.peer_client.close()
        self.conn.close()

    def request(self):
        return {"paths": self.rel}

    def local(self):
        import pyarrow.parquet as pq
        return sum(pq.read_table(p).num_rows for p in self.files), None

    def package(self):
        rows = 0
        for b in self.conn.scan(self.rel):
            rows += b.num_rows
        return rows, None

    def go(self):
        p = subprocess.run([self.goread, "-server", self.scand_loc, "-request", json.dumps(self.request())],
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"goread: {p.stderr.strip()[:300]}")
        r = json.loads(p.stdout)
        return r["rows"], r["cpu"]

    def table(self):
        """(label, function, which server's CPU to count)."""
        req = self.request()
        return [
            ("read_table (local, the limit)", self.local, None),
            ("scand, stock client, in turn", lambda: (stock_scan(self.scand_client, req, 1), None), "scand"),
            ("scand, stock client, at once", lambda: (stock_scan(self.scand_client, req, AT_ONCE), None), "scand"),
            ("scand, Python package", self.package, "scand"),
            ("scand, Go client", self.go, "scand"),
            ("peer, stock client, in turn", lambda: (stock_scan(self.peer_client, req, 1), None), "peer"),
            ("peer, stock client, at once", lambda: (stock_scan(self.peer_client, req, AT_ONCE), None), "peer"),
        ]


def measure_set(name, files, readers, pids, repeats, deadline) -> dict:
    import pyarrow.parquet as pq
    arrow_bytes = sum(pq.read_table(p).nbytes for p in files)
    want_rows = sum(pq.ParquetFile(p).metadata.num_rows for p in files)
    table = readers.table()
    samples = {label: {"wall": [], "srv": 0.0, "cli": 0.0} for label, _, _ in table}
    for turn in range(repeats + 1):  # turn 0 warms up (page cache, connections, metadata caches)
        for label, fn, server in table:
            s0 = lib.cpu_seconds(pids[server]) if server else 0.0
            c0 = lib.self_cpu_seconds()
            t = time.perf_counter()
            rows, cli = fn()
            wall = time.perf_counter() - t
            if rows != want_rows:
                raise RuntimeError(f"{name}, {label}: {rows} rows, want {want_rows}")
            if turn == 0:
                continue
            sm = samples[label]
            sm["wall"].append(wall)
            sm["cli"] += cli if cli is not None else lib.self_cpu_seconds() - c0
            sm["srv"] += (lib.cpu_seconds(pids[server]) - s0) if server else 0.0
        if deadline.expired():
            break
    out = []
    for label, _, server in table:
        sm = samples[label]
        gb = arrow_bytes / 1e9 * max(1, len(sm["wall"]))
        out.append({"reader": label, "wall": lib.mmm(sm["wall"]),
                    "arrow_MBps": lib.mmm([arrow_bytes / 1e6 / t for t in sm["wall"]]),
                    "server_cpu_s_per_GB": sm["srv"] / gb if server else None,
                    "client_cpu_s_per_GB": sm["cli"] / gb})
        lib.log(f"throughput {name}: {label}: {out[-1]['arrow_MBps']['median']:.0f} MB/s")
    return {"files": len(files), "rows": want_rows, "arrow_bytes": arrow_bytes,
            "file_bytes": sum(p.stat().st_size for p in files), "turns": len(samples[table[0][0]]["wall"]),
            "endpoints": {"scand": endpoints_of(readers.scand_client, readers.request()), "peer": len(files)},
            "readers": out}


def run(ctx) -> dict:
    import pyarrow as pa

    import data
    deadline = lib.Deadline(ctx.budget("throughput"))
    sets = {"trips": ctx.tput_files, **data.matrix_sets(ctx.data, ctx.matrix_rows)}
    root = ctx.data
    goread = goread_binary(ctx)
    srv = lib.Scand(ctx.work, "tput", root).start()
    peer, peer_loc = start_pyarrow_server(ctx, root)
    res = {"repeats": ctx.repeats, "at_once": AT_ONCE, "sets": {}, "pyarrow": pa.__version__}
    try:
        pids = {"scand": srv.pid, "peer": peer.pid}
        for name, files in sets.items():
            if deadline.expired():
                res["sets"][name] = {"status": "not run: out of time"}
                continue
            readers = Readers(files, srv.location, peer_loc, goread)
            try:
                res["sets"][name] = measure_set(name, files, readers, pids, ctx.repeats, deadline)
            finally:
                readers.close()
    finally:
        srv.stop()
        peer.stop()
    return res
