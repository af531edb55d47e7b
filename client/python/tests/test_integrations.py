"""The reader goes straight into DuckDB, pandas and polars."""

from __future__ import annotations

import duckdb
import pandas as pd
import polars as pl
import pyarrow.parquet as pq

from scand_testlib import assert_tables_equal, local

MULTI = [f"multi/part-{i}.parquet" for i in range(4)]

QUERY = "select name, count(*) as n, sum(value) as total, min(id) as first from {} group by name order by name"


def test_duckdb_sql_over_the_reader(conn, root):
    reader = conn.scan("multi/", columns=["id", "name", "value"], split_bytes=1)  # noqa: F841 - in the query
    got = duckdb.sql(QUERY.format("reader")).to_arrow_table()
    expected_t = local(root, *MULTI)  # noqa: F841 - named in the query
    want = duckdb.sql(QUERY.format("expected_t")).to_arrow_table()
    assert_tables_equal(want, got)
    assert conn.last_stats.complete


def test_duckdb_from_arrow(conn, root):
    reader = conn.scan("data/a.parquet", columns=["id", "name", "flag"])
    rel = duckdb.from_arrow(reader)
    got = rel.filter("flag").aggregate("count(*) as n, max(id) as m").fetchall()
    t = local(root, "data/a.parquet")
    flags = t.column("flag").to_pylist()
    ids = t.column("id").to_pylist()
    assert got == [(sum(flags), max(i for i, f in zip(ids, flags) if f))]


def test_duckdb_reads_parquet_locally_the_same(conn, root):
    r = conn.scan("data/a.parquet", columns=["id", "value", "ts"])  # noqa: F841 - in the query
    got = duckdb.sql("select * from r order by id").to_arrow_table()
    path = str(root / "data" / "a.parquet")
    want = duckdb.sql(f"select id, value, ts from read_parquet('{path}') order by id").to_arrow_table()
    assert_tables_equal(want, got)


def test_pandas(conn, root):
    got = conn.scan("multi/*.parquet", columns=["id", "name", "value", "ts"]).read_pandas()
    want = pd.concat([pd.read_parquet(root / m, columns=["id", "name", "value", "ts"]) for m in MULTI],
                     ignore_index=True)
    pd.testing.assert_frame_equal(got, want)


def test_polars_from_arrow_reader(conn, root):
    got = pl.from_arrow(conn.scan("multi/", columns=["id", "name", "value", "tags"], split_bytes=1))
    want = pl.concat([pl.read_parquet(root / m, columns=["id", "name", "value", "tags"]) for m in MULTI])
    assert got.equals(want)


def test_polars_from_table_with_nested(conn, root):
    got = pl.from_arrow(conn.scan("data/a.parquet").read_all())
    want = pl.from_arrow(pq.read_table(root / "data" / "a.parquet"))
    assert got.equals(want)
