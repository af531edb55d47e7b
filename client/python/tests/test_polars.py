"""scand.polars.scan: a polars LazyFrame whose projection, slice and batch
size reach the server (seen in its IO figures), with the same results as
polars' own Parquet scan."""

from __future__ import annotations

import sys

import polars as pl
import pytest

import scand
import scand.polars
from scand_testlib import N_ROWS, ROW_GROUP

QUERIES = {
    "all": lambda lf: lf,
    "select": lambda lf: lf.select("name", "id"),
    "head": lambda lf: lf.head(7),
    "head then filter": lambda lf: lf.head(30).filter(pl.col("id") > 20),
    "filter then head": lambda lf: lf.filter(pl.col("value") > 1000).select("id", "value").head(5),
    "filter on a column not selected": lambda lf: lf.filter(pl.col("flag")).select("id"),
    "struct field": lambda lf: lf.select(pl.col("nested").struct.field("x")).head(4),
    "offset slice": lambda lf: lf.select("id", "tags").slice(4000, 10),
    "len": lambda lf: lf.select(pl.len()),
    "group by": lambda lf: lf.group_by("name").agg(pl.col("value").sum(), pl.len()).sort("name"),
    "tail": lambda lf: lf.tail(3),
}


@pytest.mark.parametrize("query", QUERIES.values(), ids=QUERIES.keys())
def test_results_match_polars_scan_parquet(conn, root, query):
    got = query(scand.polars.scan(conn, "data/a.parquet")).collect()
    want = query(pl.scan_parquet(root / "data" / "a.parquet")).collect()
    assert got.equals(want), f"got\n{got}\nwant\n{want}"


def test_projection_reaches_the_server(conn):
    lf = scand.polars.scan(conn, "data/a.parquet")
    assert lf.collect().height == N_ROWS
    everything = conn.last_stats
    assert everything.complete and everything.columns == []  # all columns

    assert lf.select("id", "flag").collect().columns == ["id", "flag"]
    projected = conn.last_stats
    assert projected.complete and projected.columns == ["id", "flag"]
    assert projected.rows == N_ROWS
    # bytes_planned: what the projection asks for. bytes_fetched also counts gaps read through to merge ranges, which
    # depends on the hole the server learns from timing, so it can reach the whole file on a fast disk.
    assert 0 < projected.bytes_planned < everything.bytes_planned / 3


def test_limit_reaches_the_server(conn):
    lf = scand.polars.scan(conn, "multi/", split_bytes=1)  # one endpoint per row group of 1,000 rows
    assert lf.select("id").collect().height == 20_000
    full = conn.last_stats

    got = lf.select("id").head(1_500).collect()
    assert got["id"].to_list() == list(range(1_500))
    limited = conn.last_stats
    assert limited.complete and limited.columns == ["id"]
    assert limited.rows == 1_500 and limited.total_records == 1_500
    assert limited.endpoints == 2 < full.endpoints
    assert limited.bytes_fetched < full.bytes_fetched / 4


def test_predicates_reach_the_server(conn, root):
    got = scand.polars.scan(conn, "data/a.parquet").filter(pl.col("id") < 10).select("id").collect()
    assert got["id"].to_list() == list(range(10))
    st = conn.last_stats
    assert st.rows == 10  # pushed: the server sent only the rows polars keeps


def test_float_predicates_stay_in_polars(conn, root):
    """polars orders NaN above every number; scand does not: a float
    comparison is applied by polars alone (see test_polars_pushdown.py)."""
    lf = scand.polars.scan(conn, "data/a.parquet")
    want = pl.scan_parquet(root / "data" / "a.parquet").filter(pl.col("value") > 1000).select("id").collect()
    assert lf.filter(pl.col("value") > 1000).select("id").collect().equals(want)
    if lf.collect_schema()["value"].is_float():
        assert conn.last_stats.rows == N_ROWS


def test_batch_size_reaches_the_server(conn):
    scand.polars.scan(conn, "data/a.parquet", batch_size=1_000).select("id").collect()
    assert conn.last_stats.batches == N_ROWS // 1_000
    scand.polars.scan(conn, "data/a.parquet").select("id").collect()
    # polars asks for more rows per batch than a row group holds: one batch per row group
    assert conn.last_stats.batches == N_ROWS // ROW_GROUP


def test_columns_as_a_string_with_a_nested_field(conn):
    lf = scand.polars.scan(conn, "data/a.parquet", columns="nested.x, id")
    assert lf.collect_schema() == pl.Schema({"nested": pl.Struct({"x": pl.Int32}), "id": pl.Int64})
    got = lf.select("nested").head(3).collect()
    assert got["nested"].struct.field("x").to_list() == [0, 1, 2]
    assert conn.last_stats.columns == ["nested.x"]


def test_an_early_stop_leaves_the_connection_usable(conn):
    lf = scand.polars.scan(conn, "big/big.parquet")
    assert lf.slice(100_000, 3).collect()["k"].to_list() == [100_000, 100_001, 100_002]
    assert scand.polars.scan(conn, "big/big.parquet").head(2).collect()["k"].to_list() == [0, 1]


def test_bad_requests_fail_at_scan(conn):
    with pytest.raises(scand.InvalidRequest, match="price"):
        scand.polars.scan(conn, "data/a.parquet", columns=["id", "price"])
    with pytest.raises(scand.NotFound):
        scand.polars.scan(conn, "nothing/*.parquet")


def test_without_polars_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "polars", None)  # import polars raises ImportError
    with pytest.raises(ImportError, match="scand.polars needs polars .*: pip install polars"):
        scand.polars.scan(None, "x.parquet")
