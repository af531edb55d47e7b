"""bench/iceberg: an Iceberg table of 200+ manifests, written by PyIceberg, read
by scand and by PyIceberg (and Spark with --spark) in interleaved turns, on
local disk and on versitygw behind toxiproxy (+LATENCY ms on every response).

    PATH=/work/main/.tools/bin:$PATH python bench/iceberg/run.py
        [--rows N] [--appends K] [--turns T] [--stores local,s3] [--spark]
        [--data DIR] [--scand BIN] [--latency-ms 30] [--serve-args '...']

The table (gen.py): APPENDS fast appends (one manifest each) of ROWS/APPENDS
rows, id sorted across the table, row groups of a quarter of an append. It
is written once per store under DIR (kept between runs; --rows/--appends
changes rewrite it): with PyIceberg's SQL catalog on local disk, and through
the S3 API into versitygw (directly, not through the proxy).

Deletes: PyIceberg 0.12 deletes copy-on-write (it rewrites files, so a
"deleted" table has no delete files to apply). The deleted table is written
by Spark (.venv-spark, Iceberg's runtime jar from scripts/install-tools.sh):
a merge-on-read DELETE of id % 10 = 3 (10 % of rows) on a copy of the local
table's metadata over the same data files, so every data file gets a
position-delete file. Spark writes it once when it is available (local disk
only: Spark has no S3 client here); --spark also times Spark's reads.
Spark's Python and jar are found as e2e/conftest.py finds them: <repo>/.venv-spark
and <repo>/.tools/spark, or $SCAND_SPARK_PYTHON and $SCAND_ICEBERG_SPARK_JAR.

Measured, each turn running every engine once in an order that rotates:
  plan cold    scand: GetFlightInfo on a server just started (no caches);
               PyIceberg: metadata load + plan_files() after
               clear_manifest_cache(), in this process
  plan warm    the same again on the warm server / the loaded table
  selective    0.1 % of rows by id (all columns): wall time of the whole
               read (scand "flight": GetFlightInfo + every endpoint's DoGet,
               one after another, through a stock pyarrow.flight client;
               scand "package": the scand Python package's conn.scan(table=)
               with its defaults, 4 streams at once; PyIceberg
               scan(row_filter).to_arrow(); Spark: the rows into its noop sink);
               scand's bytes fetched (its stream figures) against the bytes
               of the row groups that hold the matches (from the footers)
  full scan    every row and column; MB/s of data-file bytes
  deleted      the full scan of the Spark-deleted table, MB/s of the same
               data-file bytes, against the undeleted table's
Python: .venv with e2e/requirements.txt (PyIceberg 0.12 with its SQL catalog)
and bench/requirements.txt (numpy). The table shows the best of T turns. Ratios are scand against PyIceberg (or
deleted against undeleted), measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.flight as flight
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "bench" / "suite"))
sys.path.insert(0, str(REPO / "client" / "python" / "src"))

import gen  # noqa: E402
import lib  # noqa: E402

DELETE_PREDICATE = "id % 10 = 3"
# As e2e/conftest.py finds them (scripts/install-tools.sh installs both).
SPARK_PYTHON = Path(os.environ.get("SCAND_SPARK_PYTHON") or REPO / ".venv-spark" / "bin" / "python")
SPARK_JAR = Path(os.environ.get("SCAND_ICEBERG_SPARK_JAR") or REPO / ".tools" / "spark" / "iceberg-spark-runtime.jar")


def first_existing(*paths: Path) -> Path | None:
    return next((p for p in paths if p.exists()), None)


def s3_props(endpoint: str) -> dict:
    return {"s3.endpoint": endpoint, "s3.access-key-id": lib.ACCESS_KEY, "s3.secret-access-key": lib.SECRET_KEY,
            "s3.region": lib.REGION, "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}


class Store:
    """One copy of the table: where scand finds it, and how PyIceberg loads it."""

    def __init__(self, name: str, scand_table: str, metadata: str, props: dict, fs, deleted: tuple | None):
        self.name, self.scand_table, self.metadata, self.props, self.fs = name, scand_table, metadata, props, fs
        self.deleted = deleted  # (scand table, metadata file) of the Spark-deleted copy, or None

    def load(self, metadata: str | None = None):
        from pyiceberg.table import StaticTable
        return StaticTable.from_metadata(metadata or self.metadata, properties=self.props)


def fs_path(uri: str) -> str:
    for prefix in ("file://", "s3://"):
        if uri.startswith(prefix):
            return uri[len(prefix):]
    return uri


def table_facts(store: Store, lo: int, hi: int) -> dict:
    """Data-file bytes and rows, and the bytes of the row groups whose id range
    meets [lo, hi), from the files' footers."""
    tbl = store.load()
    files = [t.file for t in tbl.scan().plan_files()]
    rg_bytes, rg_count = 0, 0
    for f in files:
        if f.lower_bounds is not None:
            pass
        md = pq.ParquetFile(store.fs.open_input_file(fs_path(f.file_path))).metadata
        idcol = md.schema.to_arrow_schema().get_field_index("id")
        for i in range(md.num_row_groups):
            rg = md.row_group(i)
            st = rg.column(idcol).statistics
            if st.max < lo or st.min >= hi:
                continue
            rg_count += 1
            rg_bytes += sum(rg.column(c).total_compressed_size for c in range(rg.num_columns))
    return {"files": len(files), "bytes": sum(f.file_size_in_bytes for f in files),
            "rows": sum(f.record_count for f in files), "rg_bytes": rg_bytes, "rg_count": rg_count,
            "manifests": len(tbl.current_snapshot().manifests(tbl.io))}


class ScandServer:
    def __init__(self, binary: str, root: Path, workdir: Path, s3_endpoint: str | None, extra: list[str]):
        self.binary, self.root, self.workdir, self.s3_endpoint, self.extra = binary, root, workdir, s3_endpoint, extra
        self.proc = None
        self.loc = ""
        self.metrics = ""

    def start(self) -> "ScandServer":
        port, mport = lib.free_port(), lib.free_port()
        cmd = [self.binary, "serve", "--root", str(self.root), "--listen", f"127.0.0.1:{port}",
               "--metrics-listen", f"127.0.0.1:{mport}", "--pprof", *self.extra]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SCAND_", "AWS_"))}
        env["AWS_EC2_METADATA_DISABLED"] = "true"
        if self.s3_endpoint:
            cmd += ["--s3-endpoint", self.s3_endpoint, "--s3-path-style", "--s3-access-key", lib.ACCESS_KEY,
                    "--s3-region", lib.REGION]
            env["SCAND_S3_SECRET_KEY"] = lib.SECRET_KEY
        self.loc = f"grpc://127.0.0.1:{port}"
        self.metrics = f"http://127.0.0.1:{mport}"

        def ready():
            c = flight.FlightClient(self.loc)
            try:
                list(c.list_actions(options=flight.FlightCallOptions(timeout=3)))
            finally:
                c.close()
            return True

        self.proc = lib.Proc("scand", cmd, self.workdir / "scand.log", env).start(ready)
        self.client = flight.connect(self.loc)
        import scand
        self.conn = scand.connect(self.loc)
        return self

    def restart(self) -> None:
        self.client.close()
        self.conn.close()
        self.proc.stop()
        self.start()

    def stop(self) -> None:
        if self.proc:
            self.client.close()
            self.proc.stop()

    def plan(self, table: str, sql: str | None):
        req = {"table": table}
        if sql:
            req["filter"] = sql
        t0 = time.perf_counter()
        info = self.client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps(req)))
        return time.perf_counter() - t0, info

    def scan(self, table: str, sql: str | None):
        req = {"table": table}
        if sql:
            req["filter"] = sql
        t0 = time.perf_counter()
        res = lib.flight_scan(self.client, req)  # every endpoint in turn, as a stock client reads
        return time.perf_counter() - t0, res["rows"], res["bytes_fetched"]

    def package_scan(self, table: str, sql: str | None):
        """The scand Python package with its defaults (4 streams in parallel)."""
        t0 = time.perf_counter()
        rows = 0
        for b in self.conn.scan(table=table, filter=sql, progress=False):
            rows += b.num_rows
        return time.perf_counter() - t0, rows, self.conn.last_stats.bytes_fetched


class SparkPeer:
    def __init__(self, warehouse: Path, log: Path):
        self.proc = subprocess.Popen([str(SPARK_PYTHON), str(HERE / "spark_peer.py"), str(warehouse), str(SPARK_JAR),
                                      "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log.open("ab"), text=True, env=spark_env())
        line = self.proc.stdout.readline()
        if line.strip() != "ready":
            raise SystemExit(f"Spark did not start: {lib.tail(log)}")

    def scan(self, table: str, sql: str | None, count: bool = False):
        self.proc.stdin.write(json.dumps({"table": table, "filter": sql, "count": count}) + "\n")
        self.proc.stdin.flush()
        out = json.loads(self.proc.stdout.readline())
        return out["seconds"], out["rows"]

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(60)


def spark_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_"))}


def spark_available() -> bool:
    return SPARK_PYTHON.exists() and SPARK_JAR.exists() and shutil.which("java") is not None


def ensure_tables(args, gw: lib.VersityGW | None) -> dict:
    """Writes what is missing; returns {"local": metadata, "s3": metadata, "deleted": metadata}."""
    state_file = args.data / "tables.json"
    key = f"{args.rows}/{args.appends}"
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    if state.get("key") != key:
        state = {"key": key}
    if "local" not in state:
        lib.log(f"writing the local table: {args.appends} appends of {args.rows // args.appends:,} rows")
        wh = args.data / "local" / "wh"
        if wh.exists():
            shutil.rmtree(wh)
        wh.mkdir(parents=True)
        cat = gen.catalog("local", f"sqlite:///{args.data / 'local' / 'catalog.db'}", f"file://{wh}")
        state["local"] = gen.write(cat, args.appends, args.rows, lib.log)
        state.pop("deleted", None)
        state_file.write_text(json.dumps(state))
    if gw is not None and "s3" not in state:
        lib.log("writing the S3 table through versitygw")
        fs = lib.s3_filesystem(gw.endpoint)
        try:
            fs.create_dir(lib.BUCKET)
        except OSError:
            pass
        cat = gen.catalog("s3", f"sqlite:///{args.data / 's3-catalog.db'}", f"s3://{lib.BUCKET}/wh",
                          s3_props(gw.endpoint))
        state["s3"] = gen.write(cat, args.appends, args.rows, lib.log)
        state_file.write_text(json.dumps(state))
    if "deleted" not in state and spark_available():
        lib.log(f"Spark: merge-on-read DELETE WHERE {DELETE_PREDICATE} on a copy of the local table")
        wh = args.data / "local" / "spark"
        gen.prepare_spark_copies(Path(fs_path(state["local"])), wh)
        p = subprocess.run([str(SPARK_PYTHON), str(HERE / "spark_peer.py"), str(wh), str(SPARK_JAR), "delete",
                            DELETE_PREDICATE], capture_output=True, text=True, env=spark_env(), timeout=1800)
        if p.returncode != 0:
            raise SystemExit(f"Spark's DELETE failed:\n{p.stderr[-4000:]}")
        lib.log(f"  {p.stdout.strip()}")
        hint = (wh / "db" / "t_del" / "metadata" / "version-hint.text").read_text().strip()
        state["deleted"] = f"file://{wh / 'db' / 't_del' / 'metadata' / f'v{hint}.metadata.json'}"
        state["deleted_info"] = json.loads(p.stdout.strip().splitlines()[-1])
        state_file.write_text(json.dumps(state))
    if "deleted" not in state:
        lib.log(f"no deleted table: Spark needs {SPARK_PYTHON} and {SPARK_JAR} (SCAND_SPARK_PYTHON, "
                "SCAND_ICEBERG_SPARK_JAR) and java")
    return state


def rotate(xs: list, turn: int) -> list:
    return xs[turn % len(xs):] + xs[:turn % len(xs)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=8_000_000, help="rows in the table (default about 200 MB)")
    ap.add_argument("--appends", type=int, default=200, help="appends, so manifests")
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--stores", default="local,s3")
    ap.add_argument("--spark", action="store_true", help="also time Spark's reads (local disk)")
    ap.add_argument("--latency-ms", type=int, default=30)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "scand-bench-iceberg")
    ap.add_argument("--scand", default=str(REPO / ".tools" / "bin" / "scand"))
    ap.add_argument("--serve-args", default="", help="more flags for scand serve")
    args = ap.parse_args()
    stores = args.stores.split(",")
    tools = shutil.which("versitygw")
    if tools:
        lib.BIN = Path(tools).parent
    args.data.mkdir(parents=True, exist_ok=True)
    work = args.data / "run"
    work.mkdir(exist_ok=True)
    import atexit
    atexit.register(lib.stop_all)

    gw = proxy = None
    if "s3" in stores:
        gw = lib.VersityGW(args.data / "s3").start()
        tp = lib.Toxiproxy(work).start()
        proxy = tp.latency_proxy(gw.addr, args.latency_ms)
        os.environ["AWS_REQUEST_CHECKSUM_CALCULATION"] = "when_required"
        os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    state = ensure_tables(args, gw)

    import pyarrow.fs as pafs
    total = args.rows // args.appends * args.appends
    lo = int(total * 0.437) + 17
    hi = lo + total // 1000
    sel_sql = f"id >= {lo} AND id < {hi}"

    st: dict[str, Store] = {}
    local_root = args.data
    deleted = None
    if "deleted" in state:
        dpath = Path(fs_path(state["deleted"]))
        deleted = (str(dpath.parent.parent.relative_to(local_root)), state["deleted"])
    if "local" in stores:
        loc = Path(fs_path(state["local"])).parent.parent
        st["local"] = Store("local disk", str(loc.relative_to(local_root)), state["local"], {},
                            pafs.LocalFileSystem(), deleted)
    if "s3" in stores:
        key = fs_path(state["s3"]).rsplit("/metadata/", 1)[0]
        st["s3"] = Store(f"versitygw +{args.latency_ms} ms", "s3://" + key, state["s3"], s3_props(proxy),
                         lib.s3_filesystem(proxy), None)

    facts = {k: table_facts(s, lo, hi) for k, s in st.items()}
    for k, f in facts.items():
        lib.log(f"{k}: {f['files']} data files, {f['manifests']} manifests, {f['rows']:,} rows, "
                f"{f['bytes'] / 1e6:.1f} MB; filter {sel_sql!r} meets {f['rg_count']} row groups, "
                f"{f['rg_bytes'] / 1e6:.2f} MB")

    server = ScandServer(args.scand, local_root, work, proxy, args.serve_args.split()).start()
    spark = None
    if args.spark and "local" in stores and "deleted" in state:
        spark = SparkPeer(args.data / "local" / "spark", work / "spark.log")
        lib.log("Spark: a warm-up read (its first query compiles and loads classes)")
        spark.scan("t", sel_sql)
        spark.scan("t", None)

    from pyiceberg.manifest import clear_manifest_cache
    best: dict[tuple, tuple] = {}
    rows_seen: dict[tuple, set] = {}

    def keep(k, secs, *rest):
        if k not in best or secs < best[k][0]:
            best[k] = (secs, *rest)

    tables = {k: s.load() for k, s in st.items()}
    del_tables = {k: s.load(s.deleted[1]) for k, s in st.items() if s.deleted}
    for turn in range(args.turns):
        lib.log(f"turn {turn + 1}/{args.turns}")
        server.restart()
        for k, s in st.items():
            # Planning, cold then warm (scand's server was just restarted).
            for eng in rotate(["scand", "pyiceberg"], turn):
                if eng == "scand":
                    keep((k, "plan cold", eng), server.plan(s.scand_table, None)[0])
                else:
                    clear_manifest_cache()
                    t0 = time.perf_counter()
                    tbl = s.load()
                    n = len(list(tbl.scan().plan_files()))
                    keep((k, "plan cold", eng), time.perf_counter() - t0, n)
            for eng in rotate(["scand", "pyiceberg"], turn):
                if eng == "scand":
                    secs, info = server.plan(s.scand_table, None)
                    keep((k, "plan warm", eng), secs, info.total_records)
                else:
                    t0 = time.perf_counter()
                    n = len(list(tables[k].scan().plan_files()))
                    keep((k, "plan warm", eng), time.perf_counter() - t0, n)
            engines = ["scand", "package", "pyiceberg"] + (["spark"] if spark and k == "local" else [])
            for what, sql in (("selective", sel_sql), ("full scan", None)):
                for eng in rotate(engines, turn):
                    if eng == "scand":
                        secs, rows, fetched = server.scan(s.scand_table, sql)
                    elif eng == "package":
                        secs, rows, fetched = server.package_scan(s.scand_table, sql)
                    elif eng == "pyiceberg":
                        t0 = time.perf_counter()
                        scan = tables[k].scan(row_filter=sql) if sql else tables[k].scan()
                        rows, fetched = scan.to_arrow().num_rows, None
                        secs = time.perf_counter() - t0
                    else:
                        secs, rows = spark.scan("t", sql)
                        fetched = None
                    keep((k, what, eng), secs, rows, fetched)
                    rows_seen.setdefault((k, what), set()).add(rows) if rows >= 0 else None
            if s.deleted:
                for eng in rotate(engines, turn):
                    if eng == "scand":
                        secs, rows, _ = server.scan(s.deleted[0], None)
                    elif eng == "package":
                        secs, rows, _ = server.package_scan(s.deleted[0], None)
                    elif eng == "pyiceberg":
                        t0 = time.perf_counter()
                        rows = del_tables[k].scan().to_arrow().num_rows
                        secs = time.perf_counter() - t0
                    else:
                        secs, rows = spark.scan("t_del", None)
                    keep((k, "deleted", eng), secs, rows)
                    rows_seen.setdefault((k, "deleted"), set()).add(rows) if rows >= 0 else None
    if spark:
        spark.stop()
    server.stop()

    for key, rows in rows_seen.items():
        if len(rows) != 1:
            print(f"rows differ for {key}: {sorted(rows)}", file=sys.stderr)
    report(args, st, facts, best, sel_sql, state)


def report(args, st, facts, best, sel_sql, state) -> None:
    print(f"\nbench/iceberg: {args.rows:,} rows in {args.appends} appends (PyIceberg {pyiceberg_version()}), "
          f"best of {args.turns} interleaved turns; the machine was shared (2 cores, other jobs running)")
    print(f"selective filter: {sel_sql} (0.1 % of rows, all columns); deleted: Spark merge-on-read "
          f"DELETE WHERE {DELETE_PREDICATE} ({state.get('deleted_info', {})})")
    print("flight: scand through a stock pyarrow.flight client, endpoints one after another; package: the scand "
          "Python package (4 streams at once); met: flight / package\n")
    for k, s in st.items():
        f = facts[k]
        mb = f["bytes"] / 1e6
        spark = (k, "full scan", "spark") in best
        engines = ["scand", "package", "pyiceberg"] + (["spark"] if spark else [])
        print(f"### {s.name}: {f['files']} data files, {f['manifests']} manifests, {mb:.1f} MB\n")
        print("| measure | scand flight | scand package | PyIceberg |" + (" Spark |" if spark else "")
              + " flight/PyIceberg | package/PyIceberg | target | met |")
        print("|---|---:|---:|---:|" + ("---:|" if spark else "") + "---:|---:|---|---|")

        def cell(what, e, fn):
            b = best.get((k, what, e))
            return fn(b) if b else ""

        def row(what, fn, ratio_fn, target, ok_fn, unit, label=None):
            ratios, oks = [], []
            for e in ("scand", "package"):
                if (k, what, e) in best:
                    r = ratio_fn(best[(k, what, e)][0], best[(k, what, "pyiceberg")][0])
                    ratios.append(f"{r:.2f}x {unit}")
                    if target:
                        oks.append("yes" if ok_fn(r) else "NO")
                else:
                    ratios.append("")
            print(f"| {label or what} | " + " | ".join(cell(what, e, fn) for e in engines)
                  + f" | {' | '.join(ratios)} | {target} | {' / '.join(oks)} |")

        sec = lambda b: f"{b[0]:.3f} s"  # noqa: E731
        mbs = lambda b: f"{mb / b[0]:.0f} MB/s"  # noqa: E731
        time_ratio = lambda mine, peer: mine / peer  # noqa: E731
        speed_ratio = lambda mine, peer: peer / mine  # noqa: E731
        for what in ("plan cold", "plan warm"):
            row(what, sec, time_ratio, "<= 0.5x", lambda r: r <= 0.5, "time")
        row("selective", sec, time_ratio, "<= 0.3x", lambda r: r <= 0.3, "time")
        cells, oks = [], []
        for e in ("scand", "package"):
            fetched = best[(k, "selective", e)][2]
            br = fetched / f["rg_bytes"] if f["rg_bytes"] else float("nan")
            cells.append(f"{fetched / 1e6:.2f} MB ({br:.2f}x)")
            oks.append("yes" if br <= 2 else "NO")
        print(f"| selective, bytes fetched (x the {f['rg_count']} matching row groups' {f['rg_bytes'] / 1e6:.2f} MB) | "
              + " | ".join(cells) + " |" + " |" * (len(engines) - 2) + f" | | <= 2x | {' / '.join(oks)} |")
        row("full scan", mbs, speed_ratio, ">= 1.2x", lambda r: r >= 1.2, "MB/s")
        if (k, "deleted", "scand") in best:
            row("deleted", mbs, speed_ratio, "", lambda r: True, "MB/s", "deleted (10 %)")
            ratios, oks = [], []
            for e in engines:
                if (k, "deleted", e) in best:
                    r = best[(k, "full scan", e)][0] / best[(k, "deleted", e)][0]
                    ratios.append(f"{e if e != 'scand' else 'flight'} {r:.2f}x")
                    if e in ("scand", "package"):
                        oks.append("yes" if r >= 0.85 else "NO")
            print(f"\ndeleted / undeleted throughput (the same data-file MB/s): {', '.join(ratios)}; "
                  f"target >= 0.85x: {' / '.join(oks)}")
        rows = {w: best[(k, w, "scand")][1] for w in ("selective", "full scan", "deleted") if (k, w, "scand") in best}
        print(f"rows: {rows}\n")


def pyiceberg_version() -> str:
    import pyiceberg
    return pyiceberg.__version__


if __name__ == "__main__":
    main()
