"""Spark through scand vs Spark's own Parquet reader, on a TPC-H-shaped
lineitem table: prints one table.

    go build -o /tmp/scand ./cmd/scand
    python bench/spark/run.py --scand /tmp/scand [--rows 3000000] [--rounds 3] [--data /tmp/lineitem]

Both readers run in one local Spark session (local[2], same settings), on the
same files, in interleaved turns (scand, parquet, scand, parquet, ...):

* Q1-like: a full scan of 7 columns and an aggregate by flag and status;
* Q6-like: shipdate in one year, discount between 0.05 and 0.07, quantity
  below 24 (about 2% of the rows), sum(extendedprice * discount).

The scand source is given the columns each query needs (option "columns"),
since Spark does not push a projection into Python data sources; its filters
are pushed (spark.sql.python.filterPushdown.enabled). Bytes read: for scand
its storage counter (scand_storage_read_bytes_total, from --metrics-listen),
for Spark its stages' input bytes (the status store).

The full scan's cost is split three ways, each measured on its own:
"scand" is a Python client (scand.Connection.read_table) reading the same
columns, which includes the Flight transfer into one Python process; "into
Spark" is the source's scan written to Spark's noop sink (Python workers and
the Arrow hand-off to the JVM, no aggregate); the rest of Q1 is Spark's
aggregate.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
CLIENT_SRC = REPO / "client" / "python" / "src"
sys.path.insert(0, str(CLIENT_SRC))

Q1_COLUMNS = "l_returnflag,l_linestatus,l_quantity,l_extendedprice,l_discount,l_tax,l_shipdate"
Q6_COLUMNS = "l_shipdate,l_discount,l_quantity,l_extendedprice"

Q1 = """SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
  sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
  avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
FROM {t} WHERE l_shipdate <= DATE '1998-09-02' GROUP BY l_returnflag, l_linestatus"""

Q6 = """SELECT sum(l_extendedprice * l_discount) FROM {t}
WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01'
  AND l_discount >= 0.05 AND l_discount <= 0.07 AND l_quantity < 24"""


# -- data ---------------------------------------------------------------------

def lineitem(n: int, seed: int = 1) -> pa.Table:
    """Columns, types and value ranges of TPC-H lineitem (money as double),
    rows in order key order as dbgen writes them."""
    rng = np.random.default_rng(seed)
    orderkey = np.sort(rng.integers(1, max(2, n // 4), n)).astype(np.int64)
    epoch = np.datetime64("1992-01-01")
    orderdate = epoch + rng.integers(0, 2405, n).astype("timedelta64[D]")
    ship = orderdate + rng.integers(1, 122, n).astype("timedelta64[D]")
    commit = orderdate + rng.integers(30, 91, n).astype("timedelta64[D]")
    receipt = ship + rng.integers(1, 31, n).astype("timedelta64[D]")
    qty = rng.integers(1, 51, n).astype(np.float64)
    price = np.round(qty * rng.uniform(900, 2100, n), 2)
    cutoff = np.datetime64("1995-06-17")
    status = np.where(ship > cutoff, "O", "F")
    flag = np.where(receipt <= cutoff, rng.choice(np.array(["R", "A"]), n), "N")
    words = np.array(["carefully", "final", "deposits", "quickly", "ironic", "packages", "furiously", "bold"])
    comments = np.array([f"{a} {b} {c}" for a in words for b in words for c in words[:4]])
    return pa.table({
        "l_orderkey": orderkey,
        "l_partkey": rng.integers(1, 200_000, n).astype(np.int64),
        "l_suppkey": rng.integers(1, 10_000, n).astype(np.int64),
        "l_linenumber": rng.integers(1, 8, n).astype(np.int32),
        "l_quantity": qty,
        "l_extendedprice": price,
        "l_discount": np.round(rng.integers(0, 11, n) / 100.0, 2),
        "l_tax": np.round(rng.integers(0, 9, n) / 100.0, 2),
        "l_returnflag": pa.array(flag),
        "l_linestatus": pa.array(status),
        "l_shipdate": pa.array(ship.astype("datetime64[D]")),
        "l_commitdate": pa.array(commit.astype("datetime64[D]")),
        "l_receiptdate": pa.array(receipt.astype("datetime64[D]")),
        "l_shipinstruct": pa.array(rng.choice(np.array(["DELIVER IN PERSON", "COLLECT COD", "NONE",
                                                         "TAKE BACK RETURN"]), n)),
        "l_shipmode": pa.array(rng.choice(np.array(["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"]), n)),
        "l_comment": pa.array(rng.choice(comments, n)),
    })


def write_dataset(root: Path, rows: int, files: int) -> Path:
    d = root / "lineitem"
    marker = d / f".rows-{rows}-files-{files}"
    if marker.exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob("*.parquet"):
        old.unlink()
    t = lineitem(rows)
    per = -(-rows // files)
    for i in range(files):
        pq.write_table(t.slice(i * per, per), d / f"part-{i:03d}.parquet", row_group_size=128 * 1024,
                       compression="snappy")
    marker.touch()
    return d


# -- scand ----------------------------------------------------------------------

def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary: str, root: Path):
        self.port, self.metrics_port = free_port(), free_port()
        self.log = open(root / "scand.log", "ab")
        self.proc = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--root", str(root),
                                      "--metrics-listen", f"127.0.0.1:{self.metrics_port}"],
                                     stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.read_bytes()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("scand did not start: see scand.log")

    @property
    def location(self) -> str:
        return f"grpc://127.0.0.1:{self.port}"

    def read_bytes(self) -> float:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("scand_storage_read_bytes_total"):
                    return float(line.rsplit(" ", 1)[1])
        return 0.0

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


# -- Spark ----------------------------------------------------------------------

def spark_session():
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CLIENT_SRC), os.environ.get("PYTHONPATH")]))
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    from scand.spark import ScandDataSource

    spark = (SparkSession.builder.master("local[2]").appName("scand-bench")
             .config("spark.driver.memory", "2g")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.python.filterPushdown.enabled", "true")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(ScandDataSource)
    return spark


def spark_input_bytes(spark) -> float:
    """Input bytes of every stage so far (Spark's input metrics)."""
    gw = spark.sparkContext._gateway
    no_quantiles = gw.new_array(gw.jvm.double, 0)
    # AppStatusStore.stageList(statuses, details, withSummaries, quantiles, taskStatus): a Scala Seq
    stages = spark.sparkContext._jsc.sc().statusStore().stageList(None, False, False, no_quantiles, None)
    return float(sum(stages.apply(i).inputBytes() for i in range(stages.size())))


def timed(fn):
    started = time.perf_counter()
    out = fn()
    return time.perf_counter() - started, out


def run(args) -> None:
    root = Path(args.data)
    data = write_dataset(root, args.rows, args.files)
    size = sum(p.stat().st_size for p in data.glob("*.parquet"))
    srv = Server(args.scand, root)
    spark = spark_session()
    try:
        def scand_df(columns):
            # A new DataFrame per query: Spark 4.3.0 reuses a Python source's
            # last pushdown plan for a later query that pushes no filter.
            return (spark.read.format("scand").option("server", srv.location).option("paths", "lineitem/")
                    .option("columns", columns).load())

        spark.read.parquet(str(data)).createOrReplaceTempView("p")
        results = {}
        queries = [("Q1", Q1, Q1_COLUMNS), ("Q6", Q6, Q6_COLUMNS)]
        # A warm-up of each (JVM, Python workers, footers in scand's cache, page cache).
        for name, q, cols in queries:
            scand_df(cols).createOrReplaceTempView("s")
            spark.sql(q.format(t="s")).collect()
            spark.sql(q.format(t="p")).collect()
        for _ in range(args.rounds):
            for name, q, cols in queries:
                for engine in ("scand", "parquet"):
                    if engine == "scand":
                        scand_df(cols).createOrReplaceTempView("s")
                    before = srv.read_bytes() if engine == "scand" else spark_input_bytes(spark)
                    secs, rows = timed(lambda: spark.sql(q.format(t="s" if engine == "scand" else "p")).collect())
                    after = srv.read_bytes() if engine == "scand" else spark_input_bytes(spark)
                    results.setdefault((name, engine), []).append((secs, after - before, rows))
        # The full scan's parts.
        import scand

        split = {"scand": [], "into_spark": []}
        with scand.connect(srv.location) as conn:
            for _ in range(args.rounds):
                split["scand"].append(timed(lambda: conn.read_table("lineitem/", columns=Q1_COLUMNS.split(",")))[0])
                df = scand_df(Q1_COLUMNS)
                split["into_spark"].append(timed(lambda: df.write.format("noop").mode("overwrite").save())[0])
        check(results)
        print_table(args, size, results, split, {"Q1": chunk_bytes(data, Q1_COLUMNS), "Q6": chunk_bytes(data, Q6_COLUMNS)})
    finally:
        spark.stop()
        srv.stop()


def check(results) -> None:
    for q in ("Q1", "Q6"):
        a, b = results[(q, "scand")][0][2], results[(q, "parquet")][0][2]
        ok = sorted(map(tuple, a)) == sorted(map(tuple, b)) or all(
            abs(x - y) <= 1e-6 * max(1.0, abs(y)) for ra, rb in zip(sorted(map(tuple, a)), sorted(map(tuple, b)))
            for x, y in zip(ra, rb) if isinstance(x, float))
        if not ok:
            raise SystemExit(f"{q}: the two readers disagree: {a} vs {b}")


def chunk_bytes(data: Path, columns: str) -> int:
    """Compressed bytes of these columns' chunks in every row group: what
    a Parquet reader fetches for them without pruning (Spark's input metrics
    undercount local files)."""
    names = set(columns.split(","))
    total = 0
    for path in sorted(data.glob("*.parquet")):
        md = pq.ParquetFile(path).metadata
        for rg in range(md.num_row_groups):
            g = md.row_group(rg)
            total += sum(g.column(c).total_compressed_size for c in range(g.num_columns)
                         if g.column(c).path_in_schema in names)
    return total


def mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def print_table(args, size, results, split, chunks) -> None:
    print(f"lineitem: {args.rows:,} rows in {args.files} files, {mib(size)} (snappy); local[2], "
          f"{args.rounds} interleaved rounds after a warm-up; median (min) seconds")
    print(f"{'query':<6} {'reader':<24} {'wall s':>16} {'bytes read':>14}   (scand: its storage reads; "
          f"Spark: its input metrics)")
    for q in ("Q1", "Q6"):
        for engine, label in (("scand", 'format("scand")'), ("parquet", "spark.read.parquet")):
            runs = results[(q, engine)]
            secs = [r[0] for r in runs]
            print(f"{q:<6} {label:<24} {statistics.median(secs):>8.2f} ({min(secs):5.2f}) "
                  f"{mib(statistics.median(r[1] for r in runs)):>14}")
        print(f"{q:<6} {'(column chunks in files)':<24} {'':>16} {mib(chunks[q]):>14}")
    q1 = statistics.median(r[0] for r in results[("Q1", "scand")])
    s = statistics.median(split["scand"])
    into = statistics.median(split["into_spark"])
    print()
    print("Q1 through scand, split (medians; the parts overlap in a pipeline, so they bound, not add):")
    print(f"  scand: 7 columns into one Python client (read_table)     {s:6.2f} s")
    print(f"  + Python workers and Arrow hand-off to the JVM (noop sink) {into:6.2f} s total")
    print(f"  + Spark's aggregate (Q1 minus the noop scan)              {q1 - into:6.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scand", required=True, help="the scand binary")
    ap.add_argument("--rows", type=int, default=3_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", default=str(Path(tempfile.gettempdir()) / "scand-bench-spark"))
    run(ap.parse_args())


if __name__ == "__main__":
    main()
