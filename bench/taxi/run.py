"""bench/taxi: nine everyday queries on a taxi data set written with pyarrow's
defaults (gen.py), timed four ways in interleaved turns:

  flight    scand through a stock pyarrow.flight client (GetFlightInfo, then
            every endpoint's DoGet in turn), reading the stream's figures
  package   scand through its Python package (client/python), conn.last_stats
  dataset   pyarrow.dataset on the same files (hive partitioning)
  duckdb    DuckDB in process, read_parquet(hive_partitioning), threads = cores

    python bench/taxi/run.py [--rows N] [--repeat K] [--data DIR] [--scand BIN] [--only 1,3]
                             [--serve-args '--late-materialization off']
                             [--baseline OTHER_BIN [--baseline-args '...']]
                             [--store s3 [--latency-ms 30]]

--baseline serves the same data from a second binary (another build, or the
same one with other --baseline-args) and adds it as the engine "baseline",
the stock client against that server, in the same interleaved turns: a
before/after comparison that the machine's load cannot skew.

--store s3 puts the same files in a bucket of versitygw (an S3 gateway over a
directory) behind toxiproxy adding --latency-ms (30) to every response, serves
scand with the --s3-* flags through the proxy and points pyarrow.dataset at
the same proxy (pyarrow.fs.S3FileSystem); the ratios are then against
pyarrow.dataset. DuckDB is left out there: reading S3 needs its httpfs
extension, which DuckDB downloads on first use, and this bench installs
nothing at run time. versitygw and toxiproxy's `server` come from
scripts/install-tools.sh ($SCAND_VERSITYGW / $SCAND_TOXIPROXY, $SCAND_TOOLS,
.tools/bin or PATH). pyarrow.dataset lists the bucket once, before the turns,
as it reads the local directory once; scand lists it in every query.

It builds nothing: BIN defaults to .tools/bin/scand (CGO_ENABLED=0 go build
-trimpath -o .tools/bin/scand ./cmd/scand), DuckDB comes from
bench/taxi/requirements.txt. Each query's turn runs every engine once, in an
order that rotates between turns; the table shows the best of K turns, the
rows, and for scand the bytes fetched and used (sums over the streams) and
fetched / used. Ratios are against DuckDB (pyarrow.dataset with --store s3)
measured in the same run. For
the scand engines it also prints the server's CPU seconds per query (user +
system, from /proc, the least of the K turns): on a loaded machine a steadier
measure of what a change costs than wall time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.flight as flight

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "client" / "python" / "src"))
sys.path.insert(0, str(REPO / "e2e"))
sys.path.insert(0, str(REPO / "bench" / "suite"))

import gen  # noqa: E402
import lib  # noqa: E402  (bench/suite/lib.py: a stock client's scan, CPU seconds)
from queries import QUERIES  # noqa: E402
from lib import cpu_seconds  # noqa: E402

ENGINES = ["flight", "package", "dataset", "duckdb"]


def start_server(binary: str, root: Path, log: Path, extra: list[str], env: dict[str, str] | None = None,
                 probe: str = "trips/") -> tuple[subprocess.Popen, str]:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, "serve", "--root", str(root), "--listen", f"127.0.0.1:{port}", *extra],
                            stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            env={**os.environ, **env} if env else None)
    loc = f"grpc://127.0.0.1:{port}"
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            flight.connect(loc).get_schema(flight.FlightDescriptor.for_command(json.dumps({"paths": [probe]})))
            return proc, loc
        except Exception:
            if proc.poll() is not None:
                raise SystemExit(f"scand exited: {log.read_text()[-2000:]}")
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("scand did not start")


class S3Store:
    """The data set in a versitygw bucket behind toxiproxy (+latency_ms on
    every response), with e2e/s3lib.py's processes and helpers."""

    BUCKET = "scand-bench-taxi"

    def __init__(self, work: Path, latency_ms: int):
        import s3lib
        self.s3lib = s3lib
        self.work = work
        self.latency_ms = latency_ms
        self.gw = s3lib.VersityGW(self.tool("versitygw", "SCAND_VERSITYGW"), work)
        self.toxi = s3lib.Toxiproxy(self.tool("server", "SCAND_TOXIPROXY"), work)
        self.proxy = None

    def tool(self, name: str, env: str) -> str:
        path = self.s3lib.find_tool(name, env) or shutil.which(name)
        if not path:
            raise SystemExit(f"--store s3 needs {name}: {self.s3lib.INSTALL_HINT}, then put .tools/bin on PATH")
        return path

    def start(self, trips: Path) -> None:
        """Starts both, uploads OUT_DIR/trips to the bucket directly, then
        makes the proxy with its latency."""
        self.work.mkdir(parents=True, exist_ok=True)
        self.gw.start()
        self.toxi.start()
        fs = self.s3lib.s3_filesystem(self.gw.endpoint)
        fs.create_dir(self.BUCKET)
        for f in sorted(trips.rglob("*.parquet")):
            self.s3lib.upload(fs, f, f"{self.BUCKET}/trips/{f.relative_to(trips).as_posix()}")
        self.proxy = self.toxi.proxy(self.gw.addr)
        self.proxy.add_latency(self.latency_ms)

    def stop(self) -> None:
        self.toxi.stop()
        self.gw.stop()

    def server_args(self) -> list[str]:
        return self.s3lib.s3_server_args(self.proxy.endpoint)

    def server_env(self) -> dict[str, str]:
        return self.s3lib.s3_server_env()

    def filesystem(self):
        """pyarrow's S3 filesystem through the proxy (the added latency)."""
        return self.s3lib.s3_filesystem(self.proxy.endpoint)


class Engines:
    def __init__(self, loc: str, root: Path, baseline_loc: str | None = None, s3: S3Store | None = None):
        import scand
        self.client = flight.connect(loc)
        self.baseline_client = flight.connect(baseline_loc) if baseline_loc else None
        self.conn = scand.connect(loc)
        self.root = root
        if s3:
            self.path = f"s3://{s3.BUCKET}/trips/"
            self.dataset = ds.dataset(f"{s3.BUCKET}/trips", filesystem=s3.filesystem(), format="parquet",
                                      partitioning="hive")
            self.duck = None
        else:
            import duckdb
            self.path = "trips/"
            self.dataset = ds.dataset(root, format="parquet", partitioning="hive")
            self.duck = duckdb.connect()
            self.duck.execute(f"SET threads = {os.cpu_count() or 1}")

    def flight(self, cols, sql, _expr, client=None):
        client = client or self.client
        req = {"paths": [self.path]}
        if cols:
            req["columns"] = cols
        if sql:
            req["filter"] = sql
        res = lib.flight_scan(client, req)  # bench/suite/lib.py: every endpoint in turn
        return res["rows"], res["bytes_fetched"], res["bytes_used"]

    def baseline(self, cols, sql, expr):
        return self.flight(cols, sql, expr, self.baseline_client)

    def package(self, cols, sql, _expr):
        t = self.conn.scan(self.path, columns=cols, filter=sql).read_all()
        st = self.conn.last_stats
        return t.num_rows, st.bytes_fetched, st.bytes_used

    def dataset_(self, cols, _sql, expr):
        return self.dataset.to_table(columns=cols, filter=expr).num_rows, None, None

    def duckdb(self, cols, sql, _expr):
        what = ", ".join(cols) if cols else "*"
        q = f"SELECT {what} FROM read_parquet('{self.root}/**/*.parquet', hive_partitioning = true)"
        if sql:
            q += f" WHERE {sql}"
        return self.duck.sql(q).to_arrow_table().num_rows, None, None

    def run(self, engine, cols, sql, expr):
        fn = {"flight": self.flight, "package": self.package, "dataset": self.dataset_, "duckdb": self.duckdb,
              "baseline": self.baseline}[engine]
        t0 = time.perf_counter()
        rows, fetched, used = fn(cols, sql, expr)
        return time.perf_counter() - t0, rows, fetched, used


def mb(n):
    return "" if n is None else f"{n / 1e6:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=3_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "scand-bench-taxi")
    ap.add_argument("--scand", default=str(REPO / ".tools" / "bin" / "scand"))
    ap.add_argument("--only", default="", help="comma-separated query numbers (1-9)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated engines to run")
    ap.add_argument("--serve-args", default="", help="more flags for scand serve, e.g. '--late-materialization off'")
    ap.add_argument("--baseline", default="", help="a second scand binary, timed as the engine 'baseline'")
    ap.add_argument("--baseline-args", default="", help="flags for the baseline's scand serve")
    ap.add_argument("--store", choices=["local", "s3"], default="local",
                    help="s3: the files in versitygw behind toxiproxy; DuckDB left out")
    ap.add_argument("--latency-ms", type=int, default=30, help="with --store s3: added to every response")
    args = ap.parse_args()
    gen.generate(args.data, args.rows)
    engine_names = args.engines.split(",")
    peer = "duckdb"
    s3 = None
    store_args, store_env, probe = [], None, "trips/"
    proc, base_proc = None, None
    try:
        if args.store == "s3":
            peer = "dataset"
            if "duckdb" in engine_names:
                engine_names.remove("duckdb")
                print("--store s3: DuckDB left out (reading S3 needs its httpfs extension, not installed here)",
                      file=sys.stderr)
            s3 = S3Store(Path(tempfile.mkdtemp(prefix="scand-bench-taxi-s3-")), args.latency_ms)
            s3.start(args.data / "trips")
            store_args, store_env, probe = s3.server_args(), s3.server_env(), f"s3://{s3.BUCKET}/trips/"
        proc, loc = start_server(args.scand, args.data, args.data / "scand.log", args.serve_args.split() + store_args,
                                 store_env, probe)
        base_loc = None
        if args.baseline:
            base_proc, base_loc = start_server(args.baseline, args.data, args.data / "scand-baseline.log",
                                               args.baseline_args.split() + store_args, store_env, probe)
        eng = Engines(loc, args.data / "trips", base_loc, s3)
        picked = [int(x) - 1 for x in args.only.split(",") if x] or range(len(QUERIES))
        best = {}
        cpu = {}  # (query, engine): least server CPU seconds of a turn
        pids = {"flight": proc.pid, "baseline": base_proc.pid if base_proc else None}
        for turn in range(args.repeat):
            for qi in picked:
                _, cols, sql, expr = QUERIES[qi]
                engines = engine_names + (["baseline"] if args.baseline else [])
                order = engines[turn % len(engines):] + engines[:turn % len(engines)]
                for e in order:
                    pid = pids.get(e)
                    c0 = cpu_seconds(pid) if pid else 0.0
                    secs, rows, fetched, used = eng.run(e, cols, sql, expr)
                    if pid:
                        c = cpu_seconds(pid) - c0
                        cpu[(qi, e)] = min(c, cpu.get((qi, e), c))
                    prev = best.get((qi, e))
                    if prev is None or secs < prev[0]:
                        best[(qi, e)] = (secs, rows, fetched, used)
        where = (f"S3 (versitygw behind toxiproxy, +{args.latency_ms} ms per response; DuckDB left out: "
                 f"no httpfs extension)" if s3 else "local disk")
        print(f"bench/taxi: {args.rows:,} rows, 18 files, {where}, best of {args.repeat} interleaved turns, "
              f"seconds; bytes in MB (scand's stream figures)\n")
        extra = ["baseline"] if args.baseline else []
        shown = [e for e in ENGINES if e in engine_names]
        print("| # | query | " + " | ".join(shown) + f" | flight/{peer} | "
              + "".join(f"{e} | {e}/{peer} | flight/{e} | " for e in extra) + "rows | fetched | used | fetched/used | "
              + "server CPU |" + "".join(f" {e} CPU |" for e in extra))
        print("|---|---|" + "---:|" * (len(shown) + 1) + "---:|---:|---:|" * len(extra) + "---:|---:|---:|---:|---:|"
              + "---:|" * len(extra))
        base_ratios = []
        ratios = []
        for qi in picked:
            if any((qi, e) not in best for e in ["flight", peer] + extra):
                for e in engine_names + extra:
                    secs, rows, f, u = best[(qi, e)]
                    print(f"| {qi + 1} | {QUERIES[qi][0]} | {e} | {secs:.3f} | {rows:,} | {mb(f)} | {mb(u)} |")
                continue
            r = {e: best[(qi, e)] for e in ENGINES + extra if (qi, e) in best}
            rows = {e: r[e][1] for e in r}
            if len(set(rows.values())) != 1:
                print(f"rows differ for query {qi + 1}: {rows}", file=sys.stderr)
            ratio = r["flight"][0] / r[peer][0]
            ratios.append(ratio)
            f, u = r["flight"][2], r["flight"][3]
            cells = ""
            for e in extra:
                base_ratios.append(r[e][0] / r[peer][0])
                cells += f"{r[e][0]:.3f} | {base_ratios[-1]:.2f}x | {r['flight'][0] / r[e][0]:.2f}x | "
            print(f"| {qi + 1} | {QUERIES[qi][0]} | " + " | ".join(f"{r[e][0]:.3f}" if e in r else "" for e in shown)
                  + f" | {ratio:.2f}x | {cells}{rows['flight']:,} | {mb(f)} | {mb(u)} | "
                  + f"{f / u if u else float('nan'):.2f} | "
                  + " | ".join(f"{cpu.get((qi, e), 0):.3f}" for e in ["flight"] + extra) + " |")
        if ratios:
            print(f"\ngeometric mean of flight/{peer}: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x")
        if base_ratios:
            print(f"geometric mean of baseline/{peer}: {math.exp(sum(map(math.log, base_ratios)) / len(base_ratios)):.2f}x")
    finally:
        for pr in (proc, base_proc):
            if pr is not None:
                pr.terminate()
                pr.wait(10)
        if s3:
            s3.stop()


if __name__ == "__main__":
    main()
