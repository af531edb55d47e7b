"""Scans through the client against the real server, compared with
pyarrow.parquet reading the same files locally."""

from __future__ import annotations

import threading
import time
from pathlib import PurePosixPath

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import scand
from scand_testlib import N_ROWS, ROW_GROUP, assert_tables_equal, local, scan_threads

MULTI = [f"multi/part-{i}.parquet" for i in range(4)]


def test_reader_is_a_pyarrow_record_batch_reader(conn, root):
    reader = conn.scan("data/a.parquet")
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.schema.names == ["id", "name", "value", "ts", "nested", "tags", "flag"]
    assert_tables_equal(local(root, "data/a.parquet"), reader.read_all())


def test_columns_in_the_order_asked(conn, root):
    got = conn.scan("data/a.parquet", columns=["value", "id", "tags"]).read_all()
    assert_tables_equal(local(root, "data/a.parquet").select(["value", "id", "tags"]), got)


def test_single_column_as_a_string(conn, root):
    got = conn.scan("data/a.parquet", columns="name").read_all()
    assert_tables_equal(local(root, "data/a.parquet").select(["name"]), got)


def test_nested_field_by_dotted_path(conn, root):
    got = conn.scan("data/a.parquet", columns=["id", "nested.y"]).read_all()
    t = local(root, "data/a.parquet")
    y = t.column("nested").combine_chunks().field("y")
    want = pa.table({"id": t.column("id"),
                     "nested": pa.StructArray.from_arrays([y], names=["y"])})
    assert_tables_equal(want, got)


@pytest.mark.parametrize("limit", [1, 2_999, 3_001, N_ROWS, N_ROWS + 5])
def test_limit(conn, root, limit):
    got = conn.scan("data/a.parquet", columns=["id", "name"], limit=limit).read_all()
    assert_tables_equal(local(root, "data/a.parquet").select(["id", "name"]).slice(0, limit), got)


def test_multi_file_glob_in_file_order(conn, root):
    got = conn.scan("multi/part-*.parquet").read_all()
    assert_tables_equal(local(root, *MULTI), got)


def test_directory_and_list_of_paths(conn, root):
    want = local(root, *MULTI)
    assert_tables_equal(want, conn.scan("multi/").read_all())
    assert_tables_equal(want, conn.scan(MULTI).read_all())
    assert_tables_equal(want, conn.scan([PurePosixPath(p) for p in MULTI]).read_all())


def test_many_endpoints_with_small_split_bytes(conn, root):
    plan = conn.explain("data/a.parquet", split_bytes=1)
    assert plan.endpoints == N_ROWS // ROW_GROUP  # one row group per endpoint
    reader = conn.scan("data/a.parquet", split_bytes=1, max_workers=3, read_ahead=1)
    assert_tables_equal(local(root, "data/a.parquet"), reader.read_all())
    assert conn.last_stats.endpoints == plan.endpoints
    assert len(conn.last_stats.streams) == plan.endpoints


@pytest.mark.parametrize("workers", [1, 2, 8])
def test_same_rows_whatever_the_parallelism(conn, root, workers):
    got = conn.scan(["multi/", "data/a.parquet"], columns=["id", "value"], split_bytes=1,
                    max_workers=workers, read_ahead=2).read_all()
    want = local(root, *MULTI, "data/a.parquet").select(["id", "value"])
    assert_tables_equal(want, got)


def test_batch_rows(conn, root):
    reader = conn.scan("data/a.parquet", columns=["id"], batch_rows=1_000)
    sizes = [b.num_rows for b in reader]
    assert sum(sizes) == N_ROWS
    assert max(sizes) <= 1_000


def test_iterating_batches_in_order(conn):
    ids = []
    for batch in conn.scan("multi/", columns=["id"], split_bytes=1, batch_rows=700):
        assert isinstance(batch, pa.RecordBatch)
        ids.extend(batch.column(0).to_pylist())
    assert ids == list(range(20_000))


def test_empty_file(conn, root):
    t = conn.scan("empty/none.parquet").read_all()
    assert t.num_rows == 0
    assert t.schema.names == local(root, "empty/none.parquet").schema.names
    assert conn.last_stats.complete


def test_read_pandas(conn, root):
    got = conn.scan("data/a.parquet", columns=["id", "name", "value"]).read_pandas()
    want = local(root, "data/a.parquet").select(["id", "name", "value"]).to_pandas()
    assert got.equals(want)


def test_read_table_convenience(conn, root):
    assert_tables_equal(local(root, *MULTI), conn.read_table("multi/*.parquet", split_bytes=1))


def test_schema(conn, root):
    s = conn.schema("data/a.parquet", columns=["ts", "flag"])
    assert s.names == ["ts", "flag"]
    assert s.field("ts").type == pa.timestamp("us", tz="UTC")
    assert conn.schema("multi/").names == pq.read_schema(root / MULTI[0]).names


def test_concurrent_scans_on_one_connection(conn, root):
    want = local(root, *MULTI).select(["id", "name"])
    results, errors = [], []

    def work():
        try:
            st = scand.Stats()
            results.append((conn.scan("multi/", columns=["id", "name"], split_bytes=1, stats=st).read_all(), st))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(results) == 4
    for table, st in results:
        assert_tables_equal(want, table)
        assert st.complete and st.rows == want.num_rows


def test_list_files_and_version(conn):
    files = conn.list_files("multi/")
    assert [f.path for f in files] == MULTI
    assert all(f.size > 0 for f in files)
    assert isinstance(conn.version(), str) and conn.version()
    assert conn.server_version == conn.version()


def test_host_port_without_scheme(server):
    with scand.connect(f"127.0.0.1:{server.port}") as c:
        assert c.location == server.location
        assert c.read_table("data/a.parquet", columns=["id"], limit=3).column(0).to_pylist() == [0, 1, 2]


def test_token_and_headers_are_accepted(server):
    # scand does not check tokens yet; the header must not break a call.
    with scand.connect(server.location, token="secret", headers={"x-trace": "1"}) as c:
        assert c.read_table("data/a.parquet", limit=1).num_rows == 1


def test_closed_connection(server):
    c = scand.connect(server.location)
    c.close()
    c.close()
    with pytest.raises(scand.ScandError, match="closed"):
        c.scan("data/a.parquet")


def test_read_ahead_is_bounded(conn):
    """A slow consumer: at most max_workers streams open, none read past
    read_ahead batches, so no stream can reach its end."""
    reader = conn.scan("big/big.parquet", columns=["k"], split_bytes=1, batch_rows=100, max_workers=3, read_ahead=2)
    st = conn.last_stats
    assert st.endpoints == 20  # 200 batches each
    it = iter(reader)
    first = next(it)
    assert first.column(0).to_pylist() == list(range(100))
    time.sleep(0.3)
    alive = scan_threads()
    assert 1 <= len(alive) <= 3
    assert st.streams == []  # no stream got to its end
    assert st.rows_received == 100
    rest = sum(b.num_rows for b in it)
    assert rest == 400_000 - 100
    assert st.complete and len(st.streams) == 20
