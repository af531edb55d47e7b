"""A minimal Arrow Flight server over pyarrow.dataset: the peer a user would
write in a few lines to serve Parquet files with pyarrow. The benchmark suite
(bench/suite/run.py) compares scand with it.

    python pyarrow_flight_server.py ROOT [--port 0]

It prints "port N" on stdout once it listens on 127.0.0.1. Requests are the
same JSON as scand's ({"paths": [...], "columns": [...]}, paths relative to
ROOT, no globs) or a path descriptor. GetFlightInfo returns one endpoint per
file; DoGet streams that file's record batches from a dataset scanner
(pyarrow's own threads read and decode ahead).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import pyarrow.dataset as ds
import pyarrow.flight as flight


class Server(flight.FlightServerBase):
    def __init__(self, root: str, location: str):
        super().__init__(location)
        self.root = os.path.realpath(root)

    def _path(self, rel: str) -> str:
        p = os.path.realpath(os.path.join(self.root, rel))
        if not p.startswith(self.root + os.sep):
            raise flight.FlightServerError(f"{rel}: outside the root")
        return p

    def _request(self, descriptor) -> dict:
        if descriptor.descriptor_type == flight.DescriptorType.PATH:
            return {"paths": [p.decode() for p in descriptor.path], "columns": []}
        return json.loads(descriptor.command)

    def get_flight_info(self, context, descriptor):
        req = self._request(descriptor)
        columns = req.get("columns") or None
        paths = [self._path(p) for p in req["paths"]]
        dataset = ds.dataset(paths, format="parquet")
        schema = dataset.schema if columns is None else ds.dataset(paths[:1], format="parquet").scanner(
            columns=columns).projected_schema
        endpoints = [flight.FlightEndpoint(json.dumps({"path": p, "columns": columns}).encode(), [])
                     for p in paths]
        return flight.FlightInfo(schema, descriptor, endpoints, -1, -1)

    def do_get(self, context, ticket):
        t = json.loads(ticket.ticket)
        scanner = ds.dataset(self._path(os.path.relpath(t["path"], self.root)), format="parquet").scanner(
            columns=t["columns"])
        return flight.RecordBatchStream(scanner.to_reader())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    server = Server(args.root, f"grpc://127.0.0.1:{args.port}")
    print(f"port {server.port}", flush=True)
    server.serve()


if __name__ == "__main__":
    sys.exit(main())
