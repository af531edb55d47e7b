"""Filters as users write them, against the real server, with pyarrow's
(and, for SQL text, DuckDB's) rows on the same files:

* pyarrow Expressions that pyarrow refuses to write as Substrait (a
  decimal column against a float or an int, a dictionary column's isin,
  an int8 column against 1000, a float32 column against 0.1, match_like)
  travel as SQL text with pyarrow's meaning;
* decimal and integer columns compare exactly with numbers they cannot
  hold (``fare > 10.123`` on decimal(10, 2) is ``fare >= 10.13``), through
  every pruning path: row-group statistics, the page index, bloom filters.
"""

from __future__ import annotations

import datetime
import random
from decimal import Decimal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from scand._expr_sql import expression_sql
from scand._filter import encode_filter

F = pc.field
N = 3_000

SCHEMA = pa.schema([
    ("id", pa.int64()),
    ("fare", pa.decimal128(10, 2)),
    ("payment_type", pa.dictionary(pa.int32(), pa.string())),
    ("n", pa.int8()),
    ("f32", pa.float32()),
    ("ts", pa.timestamp("us")),
    ("name", pa.string()),
])


def _table() -> pa.Table:
    rnd = random.Random(25)

    def maybe(v):
        return None if rnd.random() < 0.08 else v

    t0 = datetime.datetime(2026, 1, 1)
    return pa.table({
        "id": list(range(N)),
        # sorted-ish fares so that statistics and the page index prune
        "fare": [maybe(Decimal(i * 7 % 20_000) / 100 + Decimal("0.10") * (i % 3)) for i in range(N)],
        "payment_type": pa.array([maybe(rnd.choice(["cash", "card", "dispute", "it's"])) for _ in range(N)]
                                 ).dictionary_encode(),
        "n": [maybe(rnd.randint(-128, 127)) for _ in range(N)],
        "f32": [maybe(rnd.choice([0.1, 0.5, -2.25, 3.0e38, float("nan")])) for _ in range(N)],
        "ts": [maybe(t0 + datetime.timedelta(microseconds=rnd.randint(0, 5) * 250_000)) for _ in range(N)],
        "name": [maybe(rnd.choice(["cab", "bus", "ca_b", "c%b"])) for _ in range(N)],
    }, schema=SCHEMA)


@pytest.fixture(scope="module")
def files(root):
    """The same rows three ways: plain, with the page index in small pages,
    with bloom filters on fare, n and payment_type."""
    d = root / "forms"
    d.mkdir(exist_ok=True)
    t = _table()
    pq.write_table(t, d / "plain.parquet", row_group_size=500)
    pq.write_table(t, d / "pageindex.parquet", row_group_size=1_000, write_page_index=True, max_rows_per_page=50)
    pq.write_table(t, d / "bloom.parquet", row_group_size=500,
                   bloom_filter_options={c: {"ndv": 500, "fpp": 0.01} for c in ("fare", "n", "payment_type")})
    return d


FILES = ["plain.parquet", "pageindex.parquet", "bloom.parquet"]

# Each is refused by pyarrow's Substrait writer, or compares a number the
# column cannot hold; pyarrow.dataset takes every one.
EXPRESSIONS = [
    F("fare") > 100.5,
    F("fare") <= 55.0,
    F("fare") > Decimal("10.123"),
    F("fare") >= Decimal("10.125"),
    F("fare") < Decimal("99.999"),
    F("fare") == Decimal("10.123"),
    ~(F("fare") == Decimal("10.123")),
    F("fare") == 0.1,
    F("fare") != 20.1,
    F("fare") < 1e12,
    F("fare") > -1e12,
    F("fare") == float("nan"),
    ~(F("fare") < float("inf")),
    F("fare").isin(pa.array([Decimal("0.10"), Decimal("1.00")], pa.decimal128(10, 2))),
    F("payment_type").isin(["cash"]),
    ~F("payment_type").isin(["cash", None]),
    F("payment_type").isin(["card", "it's"]) | F("payment_type").is_null(),
    F("payment_type") == "cash",
    F("payment_type") != "card",
    pc.match_like(F("name"), r"c\_b"),
    F("n") < 1000,
    F("n") > -1000,
    F("n") < 1.5,
    F("n") >= 2.5,
    F("n") == 300,
    F("f32") > 0.1,
    F("f32") == 0.1,
    F("f32") == 0.5,
    F("f32") <= 3.1e38,
    F("f32") > 4.0e38,
    (F("fare") > 10.005) & F("payment_type").isin(["cash", "card"]) & (F("n") < 200),
]


def _want(path, expr) -> pa.Table:
    return ds.dataset(path, format="parquet").to_table(filter=expr)


def _same(got: pa.Table, want: pa.Table) -> None:
    assert got.num_rows == want.num_rows
    assert got.column("id").to_pylist() == want.column("id").to_pylist()


@pytest.mark.parametrize("expr", EXPRESSIONS, ids=[str(e).replace("\n", " ")[:60] for e in EXPRESSIONS])
def test_expressions_pyarrow_refuses_as_substrait_give_pyarrows_rows(conn, files, expr):
    want = _want(files / "plain.parquet", expr)
    for name in FILES:
        got = conn.read_table(f"forms/{name}", filter=expr)
        _same(got, want)


def test_the_reported_filters_are_sent_as_sql(conn, files):
    schema = conn.schema("forms/plain.parquet")
    assert encode_filter(F("fare") > 100.5, schema) == {"filter": '("fare" > 100.5)'}
    assert encode_filter(F("payment_type").isin(["cash"]), schema) == {
        "filter": "(\"payment_type\" IS NOT NULL AND \"payment_type\" IN ('cash'))"}
    # What pyarrow can write still travels as Substrait.
    assert "filter_substrait" in encode_filter(F("id") > 3, schema)


def test_an_expression_without_a_sql_form_says_so(conn, files):
    from scand import InvalidRequest

    with pytest.raises(InvalidRequest, match="no SQL form"):
        conn.read_table("forms/plain.parquet", filter=pc.match_like(F("name"), "c%", ignore_case=True))


# SQL text compares decimals exactly, as DuckDB and pyarrow (with a decimal
# literal) do: fare > 10.123 is fare >= 10.13, fare = 10.123 matches nothing.
SQL = [
    ("fare > 10.123", F("fare") > Decimal("10.123")),
    ("fare >= 10.123", F("fare") >= Decimal("10.123")),
    ("fare < 10.123", F("fare") < Decimal("10.123")),
    ("fare <= 10.129", F("fare") <= Decimal("10.129")),
    ("fare = 10.123", F("fare") == Decimal("10.123")),
    ("fare <> 10.123", F("fare") != Decimal("10.123")),
    # pyarrow's isin refuses a value set of another scale; = of each says the same
    ("fare IN (10.123, 0.10)", (F("fare") == Decimal("10.123")) | (F("fare") == Decimal("0.10"))),
    ("fare BETWEEN 10.001 AND 20.009", (F("fare") >= Decimal("10.001")) & (F("fare") <= Decimal("20.009"))),
    ("fare > 100000000000", F("fare") > Decimal("100000000000")),
    ("fare > 10", F("fare") > 10.0),  # pyarrow.dataset refuses an int64 against decimal(10, 2)
    ("n < 1.5", F("n") < 1.5),
    ("n <= 500", F("n") <= 500),
]


@pytest.mark.parametrize("text, expr", SQL, ids=[s for s, _ in SQL])
def test_sql_decimal_comparisons_are_exact(conn, files, text, expr):
    want = _want(files / "plain.parquet", expr)
    duck = duckdb.sql(f"SELECT id FROM read_parquet('{files / 'plain.parquet'}') WHERE {text} ORDER BY id").arrow()
    duck_ids = (duck.read_all() if hasattr(duck, "read_all") else duck).column("id").to_pylist()
    assert duck_ids == want.column("id").to_pylist()
    for name in FILES:
        _same(conn.read_table(f"forms/{name}", filter=text), want)


def test_pruning_still_prunes_with_inexact_literals(conn, files):
    """fare >= 10.13 over fares that rise with id: the row groups below it
    are pruned by statistics, and the page index skips pages."""
    conn.read_table("forms/plain.parquet", columns=["id"], filter="fare > 100000000000")
    assert conn.last_stats.rows == 0
    plan = conn.explain("forms/plain.parquet", filter="fare = 10.123").stats
    assert plan.row_groups_kept == 0, plan
    plan = conn.explain("forms/plain.parquet", filter="n < 1000").stats
    assert plan.row_groups_kept == plan.row_groups, plan


def test_expression_sql_forms():
    schema = SCHEMA
    assert expression_sql(F("fare") == float("nan"), schema) == '("fare" IS NULL AND "fare" = "fare")'
    assert expression_sql(F("f32") > 0.1, schema) == '("f32" >= 0.10000000149011612)'
    assert expression_sql(~F("payment_type").isin(["cash", None]), schema) == \
        "(NOT (\"payment_type\" IN ('cash') OR \"payment_type\" IS NULL))"
    assert expression_sql(pc.ends_with(F("name"), "_b"), schema) == "(\"name\" LIKE '%\\_b')"
