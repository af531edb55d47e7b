"""Failover and resume: endpoints read from their locations, the next
replica on UNAVAILABLE, resumed at the next row after batches arrived.

The servers are real `scand serve` processes sharing one --ticket-key-file,
as the replicas of a deployment do. Until scand's planner lists locations
itself (--peers), the tests give the planned endpoints their locations by
wrapping Connection._plan.
"""

from __future__ import annotations

import base64
import os
import signal
import socket

import pyarrow as pa
import pyarrow.flight as flight
import pytest

import scand
from scand._replicas import Replicas
from scand_testlib import BreakingProxy, ScandProcess, assert_tables_equal, local, require_bin


@pytest.fixture(scope="module")
def key_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("keys") / "ticket.keys"
    p.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    p.chmod(0o600)
    return p


@pytest.fixture(scope="module")
def replicas(tmp_path_factory, root, key_file):
    """Three servers of one deployment; a test may kill them (then the
    fixture of the next test starts them again)."""
    started = []

    def start(i):
        p = ScandProcess(require_bin(), root, tmp_path_factory.mktemp("replica") / "server.log",
                         args=("--ticket-key-file", str(key_file), "--split-bytes", "1"))
        p.start()
        started.append(p)
        return p

    procs = [start(i) for i in range(3)]

    def fresh():
        for i, p in enumerate(procs):
            if not p.alive():
                procs[i] = start(i)
        return procs

    yield fresh
    for p in started:
        p.stop()


def dead_location() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"grpc://127.0.0.1:{s.getsockname()[1]}"


def with_locations(conn, monkeypatch, locations_of):
    """Makes conn's plans give endpoint i the locations locations_of(i)."""
    plan = conn._plan

    def planned(req):
        info = plan(req)
        eps = [flight.FlightEndpoint(ep.ticket, [flight.Location(u) for u in locations_of(i)])
               for i, ep in enumerate(info.endpoints)]
        return flight.FlightInfo(info.schema, info.descriptor, eps, info.total_records, info.total_bytes,
                                 app_metadata=info.app_metadata)

    monkeypatch.setattr(conn, "_plan", planned)


def test_first_location_dead(replicas, root, monkeypatch):
    a, b, _ = replicas()
    with scand.connect(a.location) as conn:
        dead = dead_location()
        with_locations(conn, monkeypatch, lambda i: [dead, b.location])
        reader = conn.scan("multi/")
        got = reader.read_all()
        st = conn.last_stats
        assert_tables_equal(local(root, *[f"multi/part-{i}.parquet" for i in range(4)]), got)
        assert st.endpoints == 20 and st.failovers == 20, (st.endpoints, st.failovers)
        assert conn._replicas.count() == 2  # the dead one and b; a is the connection's own


def test_resume_mid_stream(replicas, root, monkeypatch):
    a, b, c = replicas()
    proxy = BreakingProxy(b.port, budget=1 << 20)
    try:
        with scand.connect(a.location) as conn:
            with_locations(conn, monkeypatch, lambda i: [proxy.location, c.location])
            got = conn.read_table("big/big.parquet", batch_rows=2_000, max_workers=2)
            assert_tables_equal(local(root, "big/big.parquet"), got)
            assert proxy.broken.is_set()
            st = conn.last_stats
            assert st.failovers >= 1 and "failovers" in str(st)
            assert st.rows == st.rows_received == got.num_rows  # resumed streams count the rows skipped
    finally:
        proxy.close()


def test_read_endpoint_resumes_mid_stream(replicas, root):
    """Connection.read_endpoint (what scand.spark's tasks call) reads an
    endpoint planned elsewhere like scan does: the broken stream resumes on
    the next location, and the rows are exactly the endpoint's."""
    a, b, c = replicas()
    proxy = BreakingProxy(b.port, budget=1 << 20)
    try:
        with scand.connect(a.location) as planner:
            info = planner._plan(planner._request("big/big.parquet", None, None, 2_000, 1 << 30, None))
        assert len(info.endpoints) == 1
        with scand.connect(c.location) as conn:
            got = pa.Table.from_batches(list(conn.read_endpoint(info.endpoints[0].ticket.ticket,
                                                                [proxy.location, c.location])))
            assert_tables_equal(local(root, "big/big.parquet"), got)
            assert proxy.broken.is_set()
            assert conn.last_stats.failovers >= 1 and conn.last_stats.rows == got.num_rows
    finally:
        proxy.close()


def test_killed_replica_mid_scan(replicas, root, monkeypatch):
    a, b, c = replicas()
    with scand.connect(a.location) as conn:
        with_locations(conn, monkeypatch, lambda i: [b.location, c.location] if i % 2 else [c.location, b.location])
        reader = conn.scan("big/big.parquet", batch_rows=2_000, max_workers=2, read_ahead=1)
        batches = []
        for batch in reader:
            batches.append(batch)
            if len(batches) == 3:
                b.proc.send_signal(signal.SIGKILL)
                b.proc.wait(10)
        assert_tables_equal(local(root, "big/big.parquet"), pa.Table.from_batches(batches))
        assert conn.last_stats.failovers >= 1


def test_cannot_resume_says_how_many_rows(replicas, monkeypatch):
    a, _, _ = replicas()
    proxy = BreakingProxy(a.port, budget=1 << 20)
    try:
        with scand.connect(proxy.location) as conn:
            with_locations(conn, monkeypatch, lambda i: [proxy.location])
            with pytest.raises(scand.ResumeFailed) as ei:
                conn.read_table("big/big.parquet", batch_rows=2_000, max_workers=1, split_bytes=1 << 30)  # one endpoint
            e = ei.value
            assert e.rows > 0 and f"after {e.rows} rows had arrived" in str(e), str(e)
            assert "cannot resume exactly" in str(e) and e.code == "UNAVAILABLE"
            assert isinstance(e, scand.ConnectionFailed)
    finally:
        proxy.close()


def test_pool_one_client_per_replica(replicas, root, monkeypatch):
    a, b, c = replicas()
    conn = scand.connect(a.location)
    owners = [[b.location, c.location], [c.location, b.location], [a.location]]
    with_locations(conn, monkeypatch, lambda i: owners[i % 3])
    for _ in range(2):  # reused across scans
        got = conn.read_table("multi/", max_workers=6)
        assert got.num_rows == 20_000
    assert conn._replicas.count() == 2
    conn.close()
    assert conn._replicas.count() == 0


def test_stock_pyarrow_ignores_locations(replicas, root):
    """Any replica serves any ticket, so a stock client that redeems every
    ticket where it planned reads the same rows."""
    a, b, _ = replicas()
    client = flight.FlightClient(b.location)
    try:
        info = client.get_flight_info(flight.FlightDescriptor.for_command(b'{"paths": ["multi/"]}'))
        got = pa.concat_tables([client.do_get(ep.ticket).read_all() for ep in info.endpoints])
        assert_tables_equal(local(root, *[f"multi/part-{i}.parquet" for i in range(4)]), got)
    finally:
        client.close()


@pytest.mark.parametrize("uris, want", [
    ([], ["grpc://127.0.0.1:7001"]),
    (["grpc://127.0.0.1:7002", "grpc://127.0.0.1:7003"],
     ["grpc://127.0.0.1:7002", "grpc://127.0.0.1:7003", "grpc://127.0.0.1:7001"]),
    (["grpc+tcp://127.0.0.1:7001/", "grpc://127.0.0.1:7002"], ["grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002"]),
    (["grpc://127.0.0.1:7002", "grpc+tcp://127.0.0.1:7002"], ["grpc://127.0.0.1:7002", "grpc://127.0.0.1:7001"]),
    (["arrow-flight-reuse-connection://?", "grpc://127.0.0.1:7002"], ["grpc://127.0.0.1:7001", "grpc://127.0.0.1:7002"]),
    (["http://x:1", "grpc://127.0.0.1:7003"], ["grpc://127.0.0.1:7003", "grpc://127.0.0.1:7001"]),
])
def test_candidates(uris, want):
    own = flight.FlightClient("grpc://127.0.0.1:7001")  # connects lazily
    pool = Replicas("grpc://127.0.0.1:7001", own, {})
    try:
        ep = flight.FlightEndpoint(b"t", [flight.Location(u) for u in uris])
        assert [loc for loc, _ in pool.candidates(ep)] == want
    finally:
        pool.close()
        own.close()
