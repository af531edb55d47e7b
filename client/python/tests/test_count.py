"""Scans of no columns: ``conn.count()`` and ``scan(..., no_columns=True)``
equal pyarrow's counts, and without a filter the streams read nothing (the
plan read the footers)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

import scand


def _expected(root, rel: str, where=None) -> int:
    d = ds.dataset(root / rel, format="parquet")
    return d.count_rows(filter=where) if where is not None else d.count_rows()


@pytest.mark.parametrize("rel", ["data/a.parquet", "multi/", "empty/", "big/"])
def test_count_without_a_filter_reads_no_column_data(conn, root, rel):
    st = scand.Stats()
    n = conn.count(rel, stats=st)
    assert n == _expected(root, rel)
    assert st.rows == n
    assert st.bytes_fetched == 0, st.summary() if hasattr(st, "summary") else st


@pytest.mark.parametrize("sql, expr", [
    ("id >= 500", pc.field("id") >= 500),
    ("id < 3000 AND flag", (pc.field("id") < 3000) & pc.field("flag")),
    ("name = 'n3'", pc.field("name") == "n3"),
    ("value > 100 OR id < 10", (pc.field("value") > 100) | (pc.field("id") < 10)),
    ("id > 1000000", pc.field("id") > 1_000_000),
])
@pytest.mark.parametrize("rel", ["data/a.parquet", "multi/"])
def test_count_with_a_filter_equals_pyarrow(conn, root, rel, sql, expr):
    assert conn.count(rel, filter=sql) == _expected(root, rel, expr)


@pytest.mark.parametrize("sql, expr", [
    ("k >= 123456", pc.field("k") >= 123_456),
    ("k < 20000 OR s = 'row-00300000'", (pc.field("k") < 20_000) | (pc.field("s") == "row-00300000")),
    ("s LIKE 'row-0001%'", pc.starts_with(pc.field("s"), "row-0001")),
])
def test_count_of_many_row_groups_equals_pyarrow(conn, root, sql, expr):
    assert conn.count("big/", filter=sql) == _expected(root, "big/", expr)


def test_statistics_decide_without_reading(conn, root):
    """id >= 0 holds on every row group: counted from the footers."""
    st = scand.Stats()
    assert conn.count("multi/", filter="id >= 0", stats=st) == 20_000
    assert st.bytes_fetched == 0


def test_count_with_a_limit(conn):
    assert conn.count("data/a.parquet", limit=7) == 7
    assert conn.count("data/a.parquet", limit=7, filter="flag") == 7


def test_batches_have_no_columns(conn, root):
    t = conn.scan("multi/", no_columns=True).read_all()
    assert t.num_columns == 0 and t.schema == pa.schema([])
    assert t.num_rows == _expected(root, "multi/")


def test_no_columns_with_columns_is_refused(conn):
    with pytest.raises(scand.InvalidRequest):
        conn.scan("multi/", columns=["id"], no_columns=True)
