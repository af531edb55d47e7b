"""The Python peers of bench/filter: pyarrow.dataset on S3 and DuckDB on
local copies of the same files, one query per request.

Run by `go run ./bench/filter` with the venv's python (pyarrow==26.0.1,
duckdb from bench/filter/requirements.txt), as

    peer.py ENDPOINT ACCESS_KEY REGION BUCKET LOCAL_DIR   (secret in $PEER_SECRET_KEY)

It prints {"ready": true, ...} once, then answers each JSON line on stdin

    {"engine": "pyarrow" | "duckdb", "sql": "...", "spec": [[col, op, kind, value], ...]}

with {"seconds": ..., "rows": ...} (or {"error": "..."}). The Go program
counts the HTTP requests between the two lines with its counting proxy
(ENDPOINT), so pyarrow's GETs are measured as scand's are.

  pyarrow  ds.dataset(BUCKET/events/, S3FileSystem, partitioning="hive")
           .to_table(filter=<spec as a pyarrow expression>): every column.
           The dataset is made anew for each query (pyarrow lists the
           prefix and reads the kept files' footers every time: it has no
           metadata cache; scand lists on every request too).
  duckdb   SELECT * FROM read_parquet('LOCAL_DIR/events/**/*.parquet',
           hive_partitioning=true) WHERE <sql>, fetched as an Arrow table,
           on one connection kept for the whole run (local files: the OS
           page cache is warm after the first query).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time

# Before pyarrow creates its S3 client: no instance-metadata lookups.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")

import duckdb  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
import pyarrow.fs as pafs  # noqa: E402


def expression(spec):
    """The AND of [col, op, kind, value] comparisons, as pyarrow.compute
    expressions (kind: timestamp, int, string)."""
    expr = None
    for col, op, kind, value in spec:
        if kind == "timestamp":
            v = pa.scalar(dt.datetime.fromisoformat(value), pa.timestamp("us"))
        elif kind == "int":
            v = int(value)
        else:
            v = str(value)
        f = pc.field(col)
        e = {"=": f == v, "<": f < v, "<=": f <= v, ">": f > v, ">=": f >= v}[op]
        expr = e if expr is None else expr & e
    return expr


def select(req) -> str:
    """The SELECT list of the request's columns (all when none are given)."""
    cols = req.get("columns")
    return ", ".join('"' + c.replace('"', '""') + '"' for c in cols) if cols else "*"


def main() -> None:
    endpoint, access_key, region, bucket, local_dir = sys.argv[1:6]
    scheme, host = endpoint.split("://", 1)
    fs = pafs.S3FileSystem(access_key=access_key, secret_key=os.environ["PEER_SECRET_KEY"], endpoint_override=host,
                           scheme=scheme, region=region)
    con = duckdb.connect()
    glob = os.path.join(local_dir, "events", "**", "*.parquet")
    print(json.dumps({"ready": True, "pyarrow": pa.__version__, "duckdb": duckdb.__version__,
                      "cpu_count": pa.cpu_count(), "io_thread_count": pa.io_thread_count(),
                      "duckdb_threads": con.sql("SELECT current_setting('threads')").fetchall()[0][0]}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            start = time.perf_counter()
            if req["engine"] == "pyarrow" and req.get("path"):  # limit on one file
                d = ds.dataset(f"{bucket}/{req['path']}", filesystem=fs, format="parquet")
                t = d.head(req["limit"], columns=req.get("columns"))
            elif req["engine"] == "pyarrow":
                d = ds.dataset(f"{bucket}/events/", filesystem=fs, format="parquet", partitioning="hive")
                cols = req.get("columns")
                t = d.to_table(filter=expression(req["spec"]), columns=cols) if req["spec"] else d.to_table(columns=cols)
            elif req["engine"] == "duckdb" and req.get("path"):
                path = os.path.join(local_dir, req["path"])
                t = con.sql(f"SELECT {select(req)} FROM read_parquet('{path}') LIMIT {int(req['limit'])}").to_arrow_table()
            elif req["engine"] == "duckdb":
                q = f"SELECT {select(req)} FROM read_parquet('{glob}', hive_partitioning=true)"
                if req["sql"]:
                    q += " WHERE " + req["sql"]
                t = con.sql(q).to_arrow_table()
            else:
                raise ValueError(f"unknown engine {req['engine']!r}")
            secs = time.perf_counter() - start
            print(json.dumps({"seconds": secs, "rows": t.num_rows, "columns": t.num_columns}), flush=True)
            del t
        except Exception as e:  # noqa: BLE001 - reported to the Go side
            print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)


if __name__ == "__main__":
    main()
