"""bench/delta: scans of a Delta table with a long log, a checkpoint and 10 %
of its rows deleted, on local disk and on S3 (versitygw behind toxiproxy,
+LATENCY ms on every response), timed in interleaved turns against
deltalake's own readers:

  scand       `scand serve` read by a stock pyarrow.flight client
              (GetFlightInfo, then every endpoint's DoGet in turn)
  scand-log   scand's snapshot load alone (cold measure, local disk only):
              source/delta replaying the log into its file list with nothing
              cached, in bench/delta/snapload (Go), without the data files'
              footers that planning reads; the like-for-like peer of
              deltalake's DeltaTable(uri) and get_add_actions()
  scand-before  with --scand-before DIR: DIR/scand, another build (say the
              main branch's) as a server of its own, read as scand is: a
              before/after pair in one run, turns interleaved
  scand-pkg   the same server through the scand Python package
              (client/python: conn.scan(table=...), 4 endpoints at a time);
              its cold load is scand's (not timed twice)
  dl-pyarrow  deltalake's DeltaTable(...).to_pyarrow_dataset() scanned by
              pyarrow.dataset with the same filter (as a pyarrow Expression);
              deltalake refuses it on tables with deletion vectors
  dl-fusion   deltalake's QueryBuilder (DataFusion SQL): SELECT ... WHERE
              the same filter; on the dv table only with --fusion-dv (it
              applies deletion vectors, but deltalake 1.6.6 hung there in a
              turn of the first run: 512 tokio threads waiting, each holding
              the deletion vector file open, no CPU, for minutes)
  duckdb      DuckDB's delta_scan, when the installed DuckDB can load its
              delta extension (offline it cannot: the run says so)

    python bench/delta/run.py [--mb 200] [--commits 520] [--turns 3] [--storages local,s3]
                              [--deletes dv,rewrite] [--latency-ms 30] [--data DIR]

The table (written once under --data, reused while the parameters match):
--commits appends by deltalake of --mb MB in all (one file per commit, rows
sorted by id across the table), a checkpoint every 100 commits
(delta.checkpointInterval, deltalake's post-commit hook). Then 10 % of the
rows (id % 10 = 0) are deleted, two ways, each its own copy of the table:

  dv       by Spark (bench/delta/spark_dv.py in .venv-spark, pyspark 4.0
           with delta-spark 4.0): DELETE with deletion vectors enabled, one
           commit giving every file a deletion vector (deltalake 1.6 writes
           none);
  rewrite  by deltalake's DeltaTable.delete: every file rewritten without the
           rows (no deletion vectors; Snappy as the appends, not DataFusion's
           default zstd), which dl-pyarrow can read.

Measures, each a median of --turns turns (every engine once per turn, in an
order that rotates):

  cold       a snapshot load with nothing cached: scand's GetFlightInfo of the
             whole table on a freshly started server (log replay and planning),
             after one GetFlightInfo of a one-commit table (warm), so that the
             process's own start (connections, first allocations) is not counted;
             deltalake's DeltaTable(uri) and get_add_actions() (bench/deltalog's
             peer) in this process;
  selective  id in a range of 0.1 % of the rows (id is sorted: file statistics
             prune the other files), all columns;
  full       every row, all columns: seconds and MB/s of the snapshot's live
             Parquet bytes.

The peers keep their loaded DeltaTable across turns (their best case: a
service that loaded it once); scand's selective and full scans run on a
server whose snapshot cache the cold measure filled (its footers are read
anew each turn after the restart). Row counts must agree; a difference is
printed. scand's ratio is against dl-pyarrow: on the dv table, which
deltalake's to_pyarrow_dataset refuses, against dl-pyarrow's time on the
rewrite table (the same rows, rewritten without deletion vectors) for the
selective and full measures, and on the dv table itself for cold.

Needs: .tools/bin/{scand,versitygw,server} (scripts/install-tools.sh; --tools
to point elsewhere), deltalake (e2e/requirements.txt), and for dv Java with
.venv-spark and .tools/spark (scripts/install-tools.sh). --pprof DIR saves a
CPU profile of scand over extra full and selective scans of each table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.flight as flight

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "bench" / "suite"))
sys.path.insert(0, str(REPO / "client" / "python" / "src"))

import lib  # noqa: E402  (bench/suite/lib.py: versitygw, toxiproxy, scand serve)

from deltalake import DeltaTable, QueryBuilder, write_deltalake  # noqa: E402

CHECKPOINT_INTERVAL = 100
DELETE_SQL = "id % 10 = 0"
BYTES_PER_ROW = 30  # what a row of batch() costs in deltalake's Parquet, measured
CATS = [f"cat-{i:02d}" for i in range(16)]
ENGINES = ["scand", "scand-before", "scand-log", "scand-pkg", "dl-pyarrow", "dl-fusion", "duckdb"]
REWRITE = "snappy"  # what the rewrite table's stamp records: rewritten anew when it changes
MEASURES = ["cold", "selective", "full"]


# -- the table -----------------------------------------------------------------

def batch(start: int, n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = np.arange(start, start + n, dtype=np.int64)
    hexed = rng.bytes(12 * n).hex().encode()
    offsets = np.arange(0, 24 * (n + 1), 24, dtype=np.int32)
    return pa.table({
        "id": ids,
        "ts": pa.array(ids * 1_000_000 + 1_767_225_600_000_000, pa.timestamp("us", "UTC")),
        "cat": pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, len(CATS), n).astype(np.int32)),
                                              pa.array(CATS)).cast(pa.string()),
        "qty": rng.integers(0, 1000, n).astype(np.int32),
        "price": rng.random(n) * 1000,
        "note": pa.StringArray.from_buffers(n, pa.py_buffer(offsets.tobytes()), pa.py_buffer(hexed)),
    })


def generate(base: Path, mb: int, commits: int) -> int:
    """The appended table under base (kept while mb and commits match);
    returns its row count."""
    per = max(1, mb * 1_000_000 // BYTES_PER_ROW // commits)
    stamp = base.parent / f"{base.name}.json"
    # delta.targetFileSize: deltalake's delete rewrites the files into ones
    # of about this size (else into one file), so both tables keep the
    # appends' file sizes.
    file_size = max(1 << 20, mb * 1_000_000 // commits)
    config = {"delta.checkpointInterval": str(CHECKPOINT_INTERVAL), "delta.targetFileSize": str(file_size)}
    want = {"mb": mb, "commits": commits, "per": per, "config": config}
    if stamp.exists() and json.loads(stamp.read_text()) == want and base.exists():
        return per * commits
    shutil.rmtree(base, ignore_errors=True)
    stamp.unlink(missing_ok=True)
    t0 = time.monotonic()
    for c in range(commits):
        write_deltalake(base, batch(c * per, per, c), mode="append",
                        configuration=config if c == 0 else None)
        if c % 50 == 49:
            lib.log(f"generate: {c + 1}/{commits} commits, {time.monotonic() - t0:.0f} s")
    stamp.write_text(json.dumps(want))
    return per * commits


def derive(base: Path, out: Path, kind: str, spark_python: Path, jars: list[Path]) -> None:
    """out: a copy of base with 10 % of its rows deleted (kind dv: by Spark,
    with deletion vectors; rewrite: by deltalake); kind base is the appended
    table itself, nothing deleted (one file per commit: deltalake's delete
    compacts the files it rewrites)."""
    if kind == "base":
        return
    stamp = out.parent / f"{out.name}.done"
    if (stamp.exists() and stamp.stat().st_mtime >= (base.parent / f"{base.name}.json").stat().st_mtime
            and stamp.read_text() == REWRITE):
        return
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(base, out)
    t0 = time.monotonic()
    if kind == "rewrite":
        from deltalake import WriterProperties
        DeltaTable(out).delete(DELETE_SQL, writer_properties=WriterProperties(compression="SNAPPY"))
    else:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_"))}
        proc = subprocess.run([str(spark_python), str(HERE / "spark_dv.py"), str(out), DELETE_SQL,
                               ",".join(str(j) for j in jars)], env=env, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            raise SystemExit(f"Spark failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    lib.log(f"{kind}: deleted {DELETE_SQL} in {time.monotonic() - t0:.0f} s")
    stamp.write_text(REWRITE)


def describe(path: Path) -> dict:
    dt = DeltaTable(path)
    adds = pa.table(dt.get_add_actions(flatten=True))
    log = path / "_delta_log"
    # get_add_actions leaves deletion vectors out: count the adds that carry one.
    dv = sum(1 for commit in log.glob("*.json") for line in commit.read_text().splitlines()
             if line.startswith('{"add"') and '"deletionVector":{' in line)
    return {"version": dt.version(), "files": adds.num_rows, "bytes": pc.sum(adds.column("size_bytes")).as_py(),
            "checkpoints": len(list(log.glob("*.checkpoint*.parquet"))), "dv_files": dv,
            "commits": len(list(log.glob("*.json")))}


# -- the engines ---------------------------------------------------------------

class Store:
    """One table on one storage: its URIs for scand and deltalake."""

    def __init__(self, name: str, kind: str, scand_table: str, dl_uri: str, dl_options: dict | None, warm: str):
        self.name, self.kind, self.scand_table, self.dl_uri, self.dl_options = name, kind, scand_table, dl_uri, dl_options
        self.warm = warm  # a one-commit table scand plans after a restart, before the cold measure
        self.dt: DeltaTable | None = None

    def table(self) -> DeltaTable:
        if self.dt is None:
            self.dt = DeltaTable(self.dl_uri, storage_options=self.dl_options)
        return self.dt


def flight_scan(client: flight.FlightClient, req: dict) -> tuple[int, int]:
    """Rows and bytes fetched of a scan read as a stock client reads it
    (bench/suite/lib.py)."""
    res = lib.flight_scan(client, req)
    return res["rows"], res["bytes_fetched"]


def storage_requests(server: lib.Scand) -> dict:
    """The server's storage requests so far, by operation (an Open counts
    whether or not it sent a request: on S3 it sends a HEAD only when it
    knows no version)."""
    out = {}
    for (name, labels), v in server.metrics().items():
        if name == "scand_storage_requests_total":
            op = dict(labels).get("op", "")
            out[op] = out.get(op, 0) + v
    return out


def delta(after: dict, before: dict) -> dict:
    return {k: int(v - before.get(k, 0)) for k, v in after.items() if v - before.get(k, 0)}


class ScandAt(lib.Scand):
    """`scand serve` from another directory's binary (scand-before)."""

    def __init__(self, bin_dir: Path, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.bin_dir = bin_dir

    def start(self) -> "ScandAt":
        keep, lib.BIN = lib.BIN, self.bin_dir
        try:
            return super().start()
        finally:
            lib.BIN = keep


class Runner:
    def __init__(self, server: lib.Scand, lo: int, hi: int, duck, snapload: subprocess.Popen | None,
                 before: lib.Scand | None = None):
        self.server, self.lo, self.hi, self.duck, self.snapload = server, lo, hi, duck, snapload
        self.before = before
        self.before_client: flight.FlightClient | None = None
        self.requests = {}  # (engine, store name, kind) -> storage requests by op of its last cold plan
        self.client = flight.connect(server.location)
        self.conn = None

    @staticmethod
    def cold_start(server: lib.Scand, warm: str) -> flight.FlightClient:
        """server restarted, with a one-commit table planned (process start
        is not counted); a client of it."""
        server.stop()
        server.start()
        client = flight.connect(server.location)
        client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps({"table": warm})))
        return client

    def restart(self, warm: str) -> None:
        self.client.close()
        self.client = self.cold_start(self.server, warm)
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def sql(self, measure: str) -> str | None:
        return f"id >= {self.lo} AND id < {self.hi}" if measure == "selective" else None

    def expr(self, measure: str):
        return (pc.field("id") >= self.lo) & (pc.field("id") < self.hi) if measure == "selective" else None

    def run(self, engine: str, measure: str, s: Store) -> tuple[float, int | None]:
        """Seconds and rows (None for a cold load) of one measure."""
        if engine == "scand" and measure == "cold":
            self.restart(s.warm)
        if engine == "scand-before" and measure == "cold":
            if self.before_client is not None:
                self.before_client.close()
            self.before_client = self.cold_start(self.before, s.warm)
            m0 = storage_requests(self.before)
            t0 = time.perf_counter()
            self.before_client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps({"table": s.scand_table})))
            secs = time.perf_counter() - t0
            self.requests[(engine, s.name, s.kind)] = delta(storage_requests(self.before), m0)
            return secs, None
        if engine == "scand-before":
            if self.before_client is None:
                self.before_client = self.cold_start(self.before, s.warm)
            req = {"table": s.scand_table}
            if self.sql(measure):
                req["filter"] = self.sql(measure)
            t0 = time.perf_counter()
            rows = flight_scan(self.before_client, req)[0]
            return time.perf_counter() - t0, rows
        if engine == "scand" and measure == "cold":
            m0 = storage_requests(self.server)
            t0 = time.perf_counter()
            self.scand(measure, s)
            secs = time.perf_counter() - t0
            self.requests[(engine, s.name, s.kind)] = delta(storage_requests(self.server), m0)
            return secs, None
        t0 = time.perf_counter()
        rows = getattr(self, engine.replace("-", "_"))(measure, s)
        secs = time.perf_counter() - t0
        if engine == "scand-log":
            secs = float(self.last_snapload)
        return secs, rows

    def scand(self, measure: str, s: Store):
        req = {"table": s.scand_table}
        if measure == "cold":
            self.client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(req)))
            return None
        if self.sql(measure):
            req["filter"] = self.sql(measure)
        return flight_scan(self.client, req)[0]

    def scand_log(self, measure: str, s: Store):
        self.snapload.stdin.write(s.scand_table + "\n")
        self.snapload.stdin.flush()
        line = self.snapload.stdout.readline()
        if not line:
            raise SystemExit("bench/delta/snapload exited")
        self.last_snapload = line.split()[0]  # its own timing: no pipe round trip
        return None

    def scand_pkg(self, measure: str, s: Store):
        if self.conn is None:
            import scand
            self.conn = scand.connect(self.server.location)
        return self.conn.scan(table=s.scand_table, filter=self.sql(measure), progress=False).read_all().num_rows

    def dl_pyarrow(self, measure: str, s: Store):
        if measure == "cold":
            return self.cold_deltalake(s)
        return s.table().to_pyarrow_dataset().to_table(filter=self.expr(measure)).num_rows

    def dl_fusion(self, measure: str, s: Store):
        if measure == "cold":
            return self.cold_deltalake(s)
        q = "SELECT * FROM t" + (f" WHERE {self.sql(measure)}" if self.sql(measure) else "")
        reader = pa.RecordBatchReader.from_stream(QueryBuilder().register("t", s.table()).execute(q))
        return sum(b.num_rows for b in reader)

    @staticmethod
    def cold_deltalake(s: Store):
        DeltaTable(s.dl_uri, storage_options=s.dl_options).get_add_actions(flatten=True)
        return None

    def duckdb(self, measure: str, s: Store):
        where = f" WHERE {self.sql(measure)}" if self.sql(measure) else ""
        what = "count(*)" if measure == "cold" else "*"
        return self.duck.sql(f"SELECT {what} FROM delta_scan('{s.dl_uri}'){where}").to_arrow_table().num_rows


def duckdb_delta() -> tuple[object | None, str]:
    try:
        import duckdb
    except ImportError:
        return None, "duckdb is not installed"
    con = duckdb.connect()
    try:
        con.execute("LOAD delta")
        return con, ""
    except Exception as e:  # noqa: BLE001 - any failure means no delta_scan
        try:
            con.execute("INSTALL delta")
            con.execute("LOAD delta")
            return con, ""
        except Exception:  # noqa: BLE001
            return None, f"DuckDB {duckdb.__version__} cannot load its delta extension: {str(e).splitlines()[0]}"


def profile(server: lib.Scand, runner: Runner, stores: list[Store], out: Path, seconds: int) -> None:
    """A CPU profile of scand over repeated full and selective scans."""
    for s in stores:
        for measure in ("full", "selective"):
            path = out / f"scand-{s.name}-{s.kind}-{measure}.pprof"
            url = f"http://127.0.0.1:{server.metrics_port}/debug/pprof/profile?seconds={seconds}"
            box = {}
            th = threading.Thread(target=lambda: box.update(data=urllib.request.urlopen(url, timeout=seconds + 60).read()))
            th.start()
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                runner.scand(measure, s)
            th.join()
            path.write_bytes(box["data"])
            lib.log(f"profile: {path}")


# -- the run -------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=200, help="table size in MB (the issue's figure: 1000)")
    ap.add_argument("--commits", type=int, default=520)
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--storages", default="local,s3")
    ap.add_argument("--deletes", default="dv,rewrite", help="dv (Spark, deletion vectors), rewrite (deltalake)")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--measures", default=",".join(MEASURES))
    ap.add_argument("--latency-ms", type=int, default=30)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "scand-bench-delta")
    ap.add_argument("--tools", type=Path, default=REPO / ".tools" / "bin", help="scand, versitygw and toxiproxy")
    ap.add_argument("--spark-python", type=Path, default=REPO / ".venv-spark" / "bin" / "python")
    ap.add_argument("--spark-jars", type=Path, default=REPO / ".tools" / "spark")
    ap.add_argument("--serve-args", default="", help="more flags for scand serve")
    ap.add_argument("--fusion-dv", action="store_true", help="also run dl-fusion on the dv table (it can hang)")
    ap.add_argument("--pprof", type=Path, help="save CPU profiles of scand here (after the turns)")
    ap.add_argument("--pprof-seconds", type=int, default=10)
    ap.add_argument("--scand-before", type=Path, help="directory of another scand build: engine scand-before")
    args = ap.parse_args()
    lib.BIN = args.tools
    args.data.mkdir(parents=True, exist_ok=True)
    kinds = [k for k in args.deletes.split(",") if k]
    engines = [e for e in args.engines.split(",") if e]
    if args.scand_before and "scand-before" not in engines:
        engines.insert(1, "scand-before")
    if not args.scand_before and "scand-before" in engines:
        engines.remove("scand-before")
    measures = [m for m in args.measures.split(",") if m]

    base = args.data / "base"
    rows = generate(base, args.mb, args.commits)
    jars = [args.spark_jars / "delta-spark.jar", args.spark_jars / "delta-storage.jar"]
    for kind in kinds:
        derive(base, args.data / kind, kind, args.spark_python, jars)
    facts = {kind: describe(args.data / kind) for kind in kinds}
    if not (args.data / "warm" / "_delta_log").exists():
        write_deltalake(args.data / "warm", batch(0, 10, 0))
    lo = rows // 2
    hi = lo + max(1, rows // 1000)

    duck, duck_note = (None, "")
    if "duckdb" in engines:
        duck, duck_note = duckdb_delta()
        if duck is None:
            engines.remove("duckdb")
    if args.pprof and "--pprof" not in args.serve_args:
        args.serve_args += " --pprof"

    work = Path(tempfile.mkdtemp(prefix="scand-bench-delta-"))
    snapload_bin = work / "snapload"
    if "scand-log" in engines:
        subprocess.run(["go", "build", "-o", str(snapload_bin), "./bench/delta/snapload"], cwd=REPO, check=True)
    results = {}  # (storage, kind, measure, engine) -> [seconds], rows
    runner_requests = {}
    row_counts = {}
    try:
        for storage in [s for s in args.storages.split(",") if s]:
            if storage == "local":
                server = lib.Scand(work, "local", args.data, args.serve_args.split()).start()
                stores = [Store("local", k, k, str(args.data / k), None, "warm") for k in kinds]
            else:
                gw = lib.VersityGW(work / "gw").start()
                toxi = lib.Toxiproxy(work / "toxi").start()
                proxy = toxi.latency_proxy(gw.addr, args.latency_ms)
                fs = lib.s3_filesystem(gw.endpoint)
                fs.create_dir(lib.BUCKET)
                import pyarrow.fs as pafs
                for k in ["warm", *kinds]:
                    t0 = time.monotonic()
                    pafs.copy_files(str(args.data / k), f"{lib.BUCKET}/{k}", destination_filesystem=fs,
                                    use_threads=True)
                    lib.log(f"s3: uploaded {k} in {time.monotonic() - t0:.0f} s")
                server = lib.Scand(work, "s3", args.data, args.serve_args.split(), s3_endpoint=proxy).start()
                opts = {"AWS_ENDPOINT_URL": proxy, "AWS_ACCESS_KEY_ID": lib.ACCESS_KEY,
                        "AWS_SECRET_ACCESS_KEY": lib.SECRET_KEY, "AWS_REGION": lib.REGION, "AWS_ALLOW_HTTP": "true",
                        "AWS_S3_ALLOW_UNSAFE_RENAME": "true", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false"}
                stores = [Store("s3", k, f"s3://{lib.BUCKET}/{k}", f"s3://{lib.BUCKET}/{k}", opts, f"s3://{lib.BUCKET}/warm")
                          for k in kinds]
            snapload = None
            if storage == "local" and "scand-log" in engines:
                snapload = subprocess.Popen([str(snapload_bin), "-root", str(args.data)], stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, text=True)
            before = None
            if args.scand_before:
                before = ScandAt(args.scand_before, work, f"{storage}-before", args.data, args.serve_args.split(),
                                 s3_endpoint=proxy if storage != "local" else None)
            runner = Runner(server, lo, hi, duck, snapload, before)
            for turn in range(args.turns):
                for s in stores:
                    for measure in measures:
                        order = engines[turn % len(engines):] + engines[:turn % len(engines)]
                        for e in order:
                            if e == "dl-pyarrow" and s.kind == "dv" and measure != "cold":
                                continue  # deltalake refuses: to_pyarrow_dataset has no deletion vectors
                            if e == "scand-pkg" and measure == "cold":
                                continue
                            if e == "scand-log" and (measure != "cold" or snapload is None):
                                continue
                            if e == "dl-fusion" and s.kind == "dv" and not args.fusion_dv:
                                continue
                            secs, n = runner.run(e, measure, s)
                            results.setdefault((storage, s.kind, measure, e), []).append(secs)
                            if n is not None:
                                row_counts.setdefault((storage, s.kind, measure), {})[e] = n
                lib.log(f"{storage}: turn {turn + 1}/{args.turns} done")
            if args.pprof:
                args.pprof.mkdir(parents=True, exist_ok=True)
                profile(server, runner, stores, args.pprof, args.pprof_seconds)
            runner_requests.update(runner.requests)
            runner.client.close()
            server.stop()
            if runner.before_client is not None:
                runner.before_client.close()
                before.stop()
            if snapload is not None:
                snapload.stdin.close()
                snapload.wait(30)
            if storage != "local":
                lib.stop_all()
    finally:
        lib.stop_all()
        shutil.rmtree(work, ignore_errors=True)

    print(f"\nbench/delta: {rows:,} rows appended in {args.commits} commits (checkpoint every "
          f"{CHECKPOINT_INTERVAL}), then {DELETE_SQL} deleted (10 %); selective: id in [{lo}, {hi}) (0.1 %); "
          f"median of {args.turns} interleaved turns, seconds; S3 = versitygw + {args.latency_ms} ms (toxiproxy)")
    for kind in kinds:
        f = facts[kind]
        print(f"  {kind}: version {f['version']}, {f['commits']} commits, {f['checkpoints']} checkpoint files, "
              f"{f['files']} live files of {f['bytes'] / 1e6:.0f} MB, {f['dv_files']} with a deletion vector")
    if duck_note:
        print(f"  duckdb: {duck_note}")
    print()
    cols = [e for e in ENGINES if e in engines]
    print("| storage | table | measure | " + " | ".join(cols) + " | scand/peer | target | full MB/s (scand, peer) |")
    print("|---|---|---|" + "---:|" * len(cols) + "---:|---|---:|")
    targets = {"cold": ("<=", 0.5), "selective": ("<=", 0.3), "full": (">=", 1.2)}
    for storage in [s for s in args.storages.split(",") if s]:
        for kind in kinds:
            peer = "dl-pyarrow"
            for measure in measures:
                med = {e: statistics.median(results[(storage, kind, measure, e)])
                       for e in cols if (storage, kind, measure, e) in results}
                if kind == "dv" and measure != "cold" and (storage, "rewrite", measure, peer) in results:
                    # deltalake's pyarrow dataset refuses deletion vectors: its time on the same rows, rewritten
                    med[peer] = statistics.median(results[(storage, "rewrite", measure, peer)])
                cells = [f"{med[e]:.3f}" if e in med else "-" for e in cols]
                if kind == "dv" and measure != "cold" and peer in med:
                    cells[cols.index(peer)] = f"({med[peer]:.3f})"
                ratio = tput = target = ""
                if "scand" in med and peer in med:
                    r = med["scand"] / med[peer]
                    op, want = targets[measure]
                    pkg = med.get("scand-pkg")
                    if measure == "full":
                        speed = med[peer] / med["scand"]
                        ok = speed >= want
                        ratio = f"{speed:.2f}x faster" + (f" (pkg {med[peer] / pkg:.2f}x)" if pkg else "")
                        mbs = facts[kind]["bytes"] / 1e6
                        tput = f"{mbs / med['scand']:.0f}, {mbs / med[peer]:.0f}"
                    else:
                        ok = r <= want
                        ratio = f"{r:.2f}x" + (f" (pkg {pkg / med[peer]:.2f}x)" if pkg else "")
                    target = f"{op} {want}x {'met' if ok else 'MISSED'}"
                    if "scand-before" in med:
                        b = med["scand-before"]
                        ratio += (f" (before {med[peer] / b:.2f}x faster)" if measure == "full"
                                  else f" (before {b / med[peer]:.2f}x)")
                    if measure == "cold" and "scand-log" in med:
                        lr = med["scand-log"] / med[peer]
                        ratio += f" (log {lr:.2f}x)"
                        target += f", log {'met' if lr <= want else 'MISSED'}"
                print(f"| {storage} | {kind} | {measure} | " + " | ".join(cells) + f" | {ratio} | {target} | {tput} |")
                counts = row_counts.get((storage, kind, measure), {})
                if len(set(counts.values())) > 1:
                    print(f"  rows differ: {counts}", file=sys.stderr)
    if runner_requests:
        print("\nstorage requests of the last cold plan (scand_storage_requests_total by op):")
        for (engine, store, kind), ops in sorted(runner_requests.items()):
            print(f"  {store} {kind} {engine}: " + ", ".join(f"{op} {n}" for op, n in sorted(ops.items())))
    print("\nscand/peer: against dl-pyarrow; in parentheses on dv, dl-pyarrow's time on the rewrite table (the same "
          "rows; to_pyarrow_dataset refuses deletion vectors); full: peer seconds / scand seconds; pkg: scand-pkg; "
          "log: scand-log (the snapshot load alone)")


if __name__ == "__main__":
    main()
