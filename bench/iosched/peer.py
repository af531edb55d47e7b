"""The pyarrow peer of bench/iosched: reads Parquet objects from S3 with
pyarrow's own S3 filesystem, one scan per request, and reports the time.

Run by `go run ./bench/iosched` with the venv's python (pyarrow==26.0.1), as

    peer.py ENDPOINT ACCESS_KEY REGION        (secret key in $PEER_SECRET_KEY)

It speaks JSON lines: it prints {"ready": true, ...} once, then for every
request line it reads from stdin

    {"path": "bucket/key", "columns": ["c000", ...] or null, "mode": MODE}

it runs one scan and prints {"seconds": ..., "rows": ..., "columns": ...}
(or {"error": "..."}). The Go program counts the HTTP requests between the
two lines with its counting proxy (the endpoint given here), so GETs are
measured the same way for pyarrow and scand.

MODE is one of
  parquetfile          pq.ParquetFile(fs.open_input_file(path)).read(columns)
                       (pre_buffer=False, ParquetFile's default)
  read_table_prebuf    pq.read_table(path, filesystem=fs, columns, pre_buffer=True)
                       (read_table's default: coalesced, concurrent reads)
  read_table_nobuf     pq.read_table(path, filesystem=fs, columns, pre_buffer=False)

No state carries over between scans but the filesystem object (its HTTP
connections): pyarrow has no metadata cache, every scan reads the footer.
"""

from __future__ import annotations

import json
import os
import sys
import time

# Before pyarrow creates its S3 client: no instance-metadata lookups.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")

import pyarrow as pa  # noqa: E402
import pyarrow.fs as pafs  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402


def main() -> None:
    endpoint, access_key, region = sys.argv[1:4]
    scheme, host = endpoint.split("://", 1)
    fs = pafs.S3FileSystem(access_key=access_key, secret_key=os.environ["PEER_SECRET_KEY"], endpoint_override=host,
                           scheme=scheme, region=region)
    print(json.dumps({"ready": True, "pyarrow": pa.__version__, "cpu_count": pa.cpu_count(),
                      "io_thread_count": pa.io_thread_count()}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            start = time.perf_counter()
            table = scan(fs, req["path"], req.get("columns"), req["mode"])
            secs = time.perf_counter() - start
            print(json.dumps({"seconds": secs, "rows": table.num_rows, "columns": table.num_columns}), flush=True)
        except Exception as e:  # noqa: BLE001 - reported to the Go side
            print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)


def scan(fs, path: str, columns, mode: str) -> pa.Table:
    if mode == "parquetfile":
        with fs.open_input_file(path) as f:
            return pq.ParquetFile(f).read(columns=columns)
    if mode == "read_table_prebuf":
        return pq.read_table(path, filesystem=fs, columns=columns, pre_buffer=True)
    if mode == "read_table_nobuf":
        return pq.read_table(path, filesystem=fs, columns=columns, pre_buffer=False)
    raise ValueError(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
