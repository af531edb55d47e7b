"""Batch sizing for clients that accept larger messages (ScanRequest.max_message_bytes).

A stock pyarrow.flight client that sends no max_message_bytes gets every
message under gRPC's default 4 MiB receive limit (it reads with that limit
set, as grpc-go and grpc-java clients have it); the scand Python package,
which sends the field and lifts its receive limit, gets fewer, larger
batches of the same table, equal to pyarrow's reading of the files."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

from scandlib import REPO, assert_tables_equal, call_options, command, expect_error, read_stream

sys.path.insert(0, str(REPO / "client" / "python" / "src"))
import scand  # noqa: E402

STOCK_LIMIT = 4 << 20
ROWS = 400_000


@pytest.fixture(scope="module")
def lineitem(gen_root: Path) -> str:
    """A lineitem-like file: ints, doubles, a date, short and long strings."""
    d = gen_root / "batchsize"
    d.mkdir(exist_ok=True)
    i = pa.array(range(ROWS), pa.int64())
    t = pa.table({
        "l_orderkey": i,
        "l_quantity": pc.add(pc.bit_wise_and(i, 31), 1),
        "l_extendedprice": pc.multiply(pc.cast(i, pa.float64()), 1.25),
        "l_shipdate": pc.cast(pc.add(pc.bit_wise_and(i, 2047), 8000), pa.int32()).cast(pa.date32()),
        "l_returnflag": pa.array(["ARN"[k % 3] for k in range(ROWS)]),
        "l_comment": pa.array([f"comment {k} " + "carefully final deposits " * (k % 4) for k in range(ROWS)]),
    })
    pq.write_table(t, d / "lineitem.parquet", row_group_size=100_000)
    return "batchsize/lineitem.parquet"


def stock_read(location: str, req: dict) -> list[pa.RecordBatch]:
    """GetFlightInfo and DoGet of every endpoint with a stock client whose
    receive limit is gRPC's default 4 MiB."""
    c = flight.FlightClient(location, generic_options=[("grpc.max_receive_message_length", STOCK_LIMIT)])
    try:
        info = c.get_flight_info(command(req), options=call_options())
        out = []
        for ep in info.endpoints:
            table, _, _, _ = read_stream(c.do_get(ep.ticket, options=call_options()))
            out.extend(table.to_batches())
        return out
    finally:
        c.close()


def test_stock_client_gets_messages_under_4_mib(gen_server, gen_root, lineitem):
    batches = stock_read(gen_server.location, {"paths": [lineitem]})
    assert max(b.nbytes for b in batches) <= 3 << 20  # the cut for stock clients
    assert_tables_equal(pq.read_table(gen_root / lineitem), pa.Table.from_batches(batches), "stock client")


def test_package_gets_fewer_larger_batches(gen_server, gen_root, lineitem):
    want = pq.read_table(gen_root / lineitem)
    stock = stock_read(gen_server.location, {"paths": [lineitem]})
    for max_message_bytes, fewer in ((None, 1.5), (32 << 20, 4)):  # None: the default, 8 MiB
        kw = {} if max_message_bytes is None else {"max_message_bytes": max_message_bytes}
        with scand.connect(gen_server.location, **kw) as conn:
            got = list(conn.scan(lineitem))
            limit = conn.max_message_bytes
        assert len(got) * fewer <= len(stock), f"{len(got)} batches with {limit}, {len(stock)} without"
        largest = max(b.nbytes for b in got)
        assert 3 << 20 < largest <= limit * 3 // 4
        assert_tables_equal(want, pa.Table.from_batches(got), f"package, max_message_bytes {limit}")
    with scand.connect(gen_server.location, max_message_bytes=0) as conn:
        assert len(list(conn.scan(lineitem))) == len(stock)


def test_stock_client_asking_for_more_than_it_accepts_fails_cleanly(gen_server, lineitem):
    with pytest.raises(flight.FlightError):
        stock_read(gen_server.location, {"paths": [lineitem], "max_message_bytes": 32 << 20})
    gen_server.assert_alive()
    assert len(stock_read(gen_server.location, {"paths": [lineitem], "limit": 10})[0]) == 10


def test_negative_is_invalid(gen_client, lineitem):
    expect_error(gen_client, {"paths": [lineitem], "max_message_bytes": -1}, "INVALID_ARGUMENT", "max_message_bytes")
