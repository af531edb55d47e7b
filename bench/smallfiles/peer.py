"""The Python peer of bench/smallfiles: a stock pyarrow.flight client and
pyarrow's own readers, driven by `go run ./bench/smallfiles` with the
venv's python, as

    peer.py S3_ENDPOINT ACCESS_KEY REGION     (secret key in $PEER_SECRET_KEY)

It prints {"ready": true, ...} once, then answers every JSON request line
on stdin with one JSON line: {"plan": seconds, "seconds": seconds, "rows":
n, "endpoints": n, "cpu": seconds of this process's CPU time} (or {"error":
"..."}). Requests:

  {"mode": "flight", "addr": "host:port", "path": "s3://bucket/prefix/"}
      a stock pyarrow.flight client: GetFlightInfo, then every endpoint's
      DoGet in turn, read whole (what a client that knows nothing of scand
      does); "plan" is the GetFlightInfo alone, "seconds" all of it.
  {"mode": "dataset", "path": "bucket/prefix/"}
      pyarrow.dataset over pyarrow's S3FileSystem (the same endpoint):
      listing, footers and data, to_table().
  {"mode": "read_table", "path": "/local/dir"}
      pq.read_table of a local directory of files.
"""

from __future__ import annotations

import json
import os
import sys
import time

os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")

import pyarrow as pa  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
import pyarrow.flight as flight  # noqa: E402
import pyarrow.fs as pafs  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402


def read_flight(addr: str, path: str) -> dict:
    client = flight.connect(f"grpc://{addr}")
    try:
        start = time.perf_counter()
        info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps({"paths": [path]})))
        plan = time.perf_counter() - start
        rows = 0
        for ep in info.endpoints:
            rows += client.do_get(ep.ticket).read_all().num_rows
        return {"plan": plan, "seconds": time.perf_counter() - start, "rows": rows, "endpoints": len(info.endpoints)}
    finally:
        client.close()


def main() -> None:
    endpoint, access_key, region = sys.argv[1:4]
    scheme, host = endpoint.split("://", 1)
    s3 = pafs.S3FileSystem(access_key=access_key, secret_key=os.environ["PEER_SECRET_KEY"], endpoint_override=host,
                           scheme=scheme, region=region)
    print(json.dumps({"ready": True, "pyarrow": pa.__version__, "cpu_count": pa.cpu_count(),
                      "io_thread_count": pa.io_thread_count()}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        cpu = time.process_time()
        try:
            if req["mode"] == "flight":
                out = read_flight(req["addr"], req["path"])
            else:
                start = time.perf_counter()
                if req["mode"] == "dataset":
                    t = ds.dataset(req["path"], filesystem=s3, format="parquet").to_table()
                else:
                    t = pq.read_table(req["path"])
                out = {"plan": 0.0, "seconds": time.perf_counter() - start, "rows": t.num_rows, "endpoints": 0}
            out["cpu"] = time.process_time() - cpu
            print(json.dumps(out), flush=True)
        except Exception as e:  # noqa: BLE001 - reported to the Go side
            print(json.dumps({"error": f"{type(e).__name__}: {e}"}), flush=True)


if __name__ == "__main__":
    main()
