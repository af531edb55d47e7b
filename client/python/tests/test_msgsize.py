"""Batch sizing for clients that accept larger messages (max_message_bytes)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

import scand

ROWS = 20_000  # of about 1 KiB each: about 20 MB decoded
STOCK_LIMIT = 4 << 20  # gRPC's default receive limit (grpc-go, grpc-java)


@pytest.fixture(scope="module")
def wide_server(tmp_path_factory, own_server_module):
    d = tmp_path_factory.mktemp("wide")
    table = pa.table({"s": [f"{i}" + "x" * 1000 for i in range(ROWS)]})
    pq.write_table(table, d / "wide.parquet", row_group_size=ROWS)
    return own_server_module(d), table


@pytest.fixture(scope="module")
def own_server_module(tmp_path_factory):
    from scand_testlib import ScandProcess, require_bin
    started = []

    def start(rootdir):
        p = ScandProcess(require_bin(), rootdir, tmp_path_factory.mktemp("logs") / "server.log")
        p.start()
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()


def batches(conn) -> list:
    return list(conn.scan("wide.parquet"))


@pytest.mark.parametrize("max_message_bytes, want_batches, largest_over, largest_at_most", [
    (None, 5, 3 << 20, 6 << 20),                # the default, 8 MiB: 4 MiB batches
    (32 << 20, 2, STOCK_LIMIT, 24 << 20),
    (0, 10, 1 << 20, 3 << 20),                  # disabled: stock sizes
])
def test_batch_sizes(wide_server, max_message_bytes, want_batches, largest_over, largest_at_most):
    server, table = wide_server
    kw = {} if max_message_bytes is None else {"max_message_bytes": max_message_bytes}
    with scand.connect(server.location, **kw) as conn:
        got = batches(conn)
    largest = max(b.nbytes for b in got)
    assert len(got) == want_batches
    assert largest_over < largest <= largest_at_most
    assert pa.Table.from_batches(got).equals(table)


def test_reads_what_a_stock_client_cannot(wide_server):
    """With 32 MiB the package's stream has messages over 4 MiB: a client
    with gRPC's default receive limit fails on it; the package reads it."""
    server, table = wide_server
    with scand.connect(server.location, max_message_bytes=32 << 20) as conn:
        info = conn._plan(scand.build_request("wide.parquet"))
        stock = flight.FlightClient(server.location, generic_options=[("grpc.max_receive_message_length", STOCK_LIMIT)])
        try:
            # Iterated: read_all turns the CANCELLED it gets into a
            # KeyboardInterrupt (pyarrow's SignalStopHandler).
            with pytest.raises(flight.FlightError):
                for _ in stock.do_get(info.endpoints[0].ticket):
                    pass
        finally:
            stock.close()
        assert conn.read_table("wide.parquet").equals(table)


def test_request_field_only_with_the_limit_lifted(wide_server):
    server, _ = wide_server
    with scand.connect(server.location) as conn:
        assert conn.max_message_bytes == scand.DEFAULT_MAX_MESSAGE_BYTES
        assert conn.explain("wide.parquet").request.get("max_message_bytes") is None  # added when planning
    with scand.connect(server.location, max_message_bytes=1 << 40) as conn:
        assert conn.max_message_bytes == 64 << 20  # the server's cap
    with scand.connect(server.location, max_message_bytes=0) as conn:
        assert conn.max_message_bytes == 0
    with pytest.raises(scand.InvalidRequest):
        scand.connect(server.location, max_message_bytes=-1)


def test_stock_request_stays_under_4_mib(wide_server):
    server, _ = wide_server
    stock = flight.FlightClient(server.location, generic_options=[("grpc.max_receive_message_length", STOCK_LIMIT)])
    try:
        info = stock.get_flight_info(flight.FlightDescriptor.for_command(json.dumps({"paths": ["wide.parquet"]}).encode()))
        got = [chunk.data for chunk in stock.do_get(info.endpoints[0].ticket)]
        assert sum(b.num_rows for b in got) == ROWS
        assert max(b.nbytes for b in got) <= 3 << 20
    finally:
        stock.close()


class OldServer(flight.FlightServerBase):
    """A server older than max_message_bytes: it refuses unknown request
    fields, as protojson does."""

    def __init__(self):
        super().__init__("grpc://127.0.0.1:0")
        self.requests = []

    def get_flight_info(self, context, descriptor):
        req = json.loads(descriptor.command)
        self.requests.append(req)
        if "max_message_bytes" in req:
            raise pa.ArrowInvalid('command is not a valid JSON ScanRequest: proto: unknown field "max_message_bytes"')
        return flight.FlightInfo(pa.schema([("s", pa.string())]), flight.FlightDescriptor.for_command(b"x"), [], 0, 0)

    def do_action(self, context, action):
        return [b"old"]


def test_old_server_gets_requests_without_the_field():
    srv = OldServer()
    try:
        with scand.connect(f"grpc://127.0.0.1:{srv.port}") as conn:
            assert conn.read_table("a.parquet").num_rows == 0
            assert conn.read_table("a.parquet").num_rows == 0
            assert conn.max_message_bytes == 0
        assert ["max_message_bytes" in r for r in srv.requests] == [True, False, False]
    finally:
        srv.shutdown()
