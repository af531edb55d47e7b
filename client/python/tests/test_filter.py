"""Filters through the Python client against the real server: SQL text and
pyarrow Expressions give pyarrow's rows, explain shows what pruning kept,
last_stats counts the rows read and filtered, errors map to the client's
exceptions, and scand.polars.scan(filter=...) filters on the server."""

from __future__ import annotations

import pyarrow.compute as pc
import pytest

import scand
from scand_testlib import ROW_GROUP, N_ROWS, local

F = pc.field


def expected(root, expr, columns=None):
    t = local(root, "data/a.parquet").filter(expr)
    return t.select(columns) if columns else t


def test_sql_filter(conn, root):
    t = conn.read_table("data/a.parquet", columns=["id", "value"], filter="id >= 27000 AND value IS NOT NULL")
    assert t.equals(expected(root, (F("id") >= 27000) & F("value").is_valid(), ["id", "value"]))


def test_expression_filter_on_a_column_not_projected(conn, root):
    expr = (F("name") == "n3") & (F("id") < 1000)
    t = conn.read_table("data/a.parquet", columns=["id"], filter=expr)
    assert t.column_names == ["id"]
    assert t.equals(expected(root, expr, ["id"]))
    assert conn.last_stats.filter is expr


def test_filter_with_limit_counts_filtered_rows(conn, root):
    t = conn.read_table("data/a.parquet", columns=["id"], filter="name = 'n5'", limit=7)
    assert t.equals(expected(root, F("name") == "n5", ["id"]).slice(0, 7))


def test_last_stats_rows_read_and_filtered(conn):
    conn.read_table("data/a.parquet", columns=["id"], filter="id < 100")
    st = conn.last_stats
    assert st.rows == 100
    assert st.rows_read - st.rows_filtered == 100
    assert st.rows_read == ROW_GROUP  # the one row group whose ids can be < 100
    assert st.plan is not None and st.plan.row_groups_kept == 1, st.plan
    assert "rejected by the filter" in str(st)


def test_explain_shows_the_pruning_levels(conn):
    plan = conn.explain("data/a.parquet", columns=["id"], filter="id >= 29000")
    ps = plan.stats
    assert (ps.files, ps.files_kept, ps.row_groups, ps.row_groups_kept) == (1, 1, N_ROWS // ROW_GROUP, 1), ps
    assert ps.rows_with_filter == ROW_GROUP and ps.rows_without_filter == N_ROWS
    assert ps.bytes_with_filter < ps.bytes_without_filter
    text = str(plan)
    assert "row groups" in text and f"1 of {N_ROWS // ROW_GROUP} kept" in text
    assert ps.filter  # the server's reading of the filter
    assert "filter" in plan._repr_html_()


def test_explain_with_an_expression(conn):
    plan = conn.explain("data/a.parquet", filter=F("id") < 10)
    assert plan.request["filter_substrait"] and plan.stats.row_groups_kept == 1


def test_bad_sql_is_invalid_request(conn):
    with pytest.raises(scand.InvalidRequest) as ei:
        conn.scan("data/a.parquet", filter="id >")
    assert "position" in str(ei.value) and "Fix the filter" in ei.value.hint


def test_unknown_column_in_an_expression_is_invalid_request_before_any_scan(conn):
    with pytest.raises(scand.InvalidRequest, match="price"):
        conn.scan("data/a.parquet", filter=F("price") > 1)


def test_filter_over_the_limits_is_limit_exceeded(conn):
    with pytest.raises(scand.LimitExceeded) as ei:
        conn.scan("data/a.parquet", filter="(" * 101 + "id = 1" + ")" * 101)
    assert "filter" in ei.value.hint


def test_polars_scan_with_a_server_filter(conn, root):
    pl = pytest.importorskip("polars")
    import scand.polars

    lf = scand.polars.scan(conn, "data/a.parquet", columns=["id", "name"], filter="id < 3000")
    df = lf.filter(pl.col("name") == "n1").collect()
    want = expected(root, (F("id") < 3000) & (F("name") == "n1"), ["id", "name"])
    assert df.to_arrow().equals(pl.from_arrow(want).to_arrow())
    assert conn.last_stats.rows < N_ROWS  # the server sent only the rows of its filter


def test_filtered_limit_over_many_endpoints_stops_at_limit(conn, root):
    """Every endpoint of a filtered scan carries the whole limit (the server
    cannot know where the first matches are); the reader stops at limit."""
    want = local(root, *[f"multi/part-{i}.parquet" for i in range(4)]).filter(F("name") == "n2").select(["id"])
    t = conn.read_table("multi/", columns=["id"], filter="name = 'n2'", limit=300, split_bytes=1)
    assert conn.last_stats.endpoints > 1
    assert t.equals(want.slice(0, 300))
    assert conn.last_stats.done and conn.last_stats.error is None
