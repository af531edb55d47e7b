"""Filters (ScanRequest.filter: SQL text; filter_substrait: a pyarrow
Expression as Substrait) against files written with pyarrow and the
corpus's files with odd statistics: errors and their codes, the limits,
SQL's NULL semantics of IN next to pyarrow's, NaN, limit after filter,
projection, and equality with pyarrow.dataset's result for the same
predicate. The random cases are in test_filter_property.py."""

from __future__ import annotations

import base64
import datetime as dt
import shutil
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

import filtergen as fg
from filterlib import col_values, expr_scan, plan_stats, reference, sql_scan, substrait_filter
from scandlib import assert_tables_equal, expect_error, find_testdata, table_diff

F = pc.field


def write(gdir, name: str, table: pa.Table, **kw) -> str:
    pq.write_table(table, gdir / name, **kw)
    return f"{gdir.name}/{name}"


def trips(n: int = 1000) -> pa.Table:
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "city": pa.array([["Paris", "Rome", "Oslo", None][i % 4] for i in range(n)]),
        "fare": pa.array([float(i % 50) if i % 13 else None for i in range(n)]),
        "day": pa.array([dt.date(2026, 1, 1) + dt.timedelta(days=i // 100) for i in range(n)]),
    })


@pytest.fixture
def trips_path(gdir) -> str:
    return write(gdir, "trips.parquet", trips(), row_group_size=100)


# ----------------------------------------------------------------------------
# Errors: INVALID_ARGUMENT saying where and what; RESOURCE_EXHAUSTED beyond
# the limits (1 MiB of text, 100 levels, 100,000 IN values).
# ----------------------------------------------------------------------------

def test_syntax_error_gives_the_position(gen_client, trips_path):
    err = expect_error(gen_client, {"paths": [trips_path], "filter": "id = 1 AND AND fare > 2"},
                       "INVALID_ARGUMENT", "position")
    assert "position 11" in err.message, err.message  # the second AND


@pytest.mark.parametrize("text", ["id >", "(id = 1", "id = 1)", "id IN ()", "id = 'unterminated", "id == 1",
                                  "id BETWEEN 1", "fare > 1 fare < 2"])
def test_malformed_sql_is_invalid_argument(gen_client, trips_path, text):
    expect_error(gen_client, {"paths": [trips_path], "filter": text}, "INVALID_ARGUMENT", "filter")


def test_unknown_column_lists_the_available_ones(gen_client, trips_path):
    err = expect_error(gen_client, {"paths": [trips_path], "filter": "price > 10"}, "INVALID_ARGUMENT", "price")
    for name in ("id", "city", "fare", "day"):
        assert name in err.message, err.message


@pytest.mark.parametrize("text,column_type,literal_type", [
    ("id = 'abc'", ["int64"], ["string", "utf8"]),
    ("city > 3", ["utf8", "string"], ["integer", "int", "number"]),
    ("day < 'x'", ["date32"], ["string", "utf8", "date"]),
])
def test_type_mismatch_names_both_types(gen_client, trips_path, text, column_type, literal_type):
    err = expect_error(gen_client, {"paths": [trips_path], "filter": text}, "INVALID_ARGUMENT")
    low = err.message.lower()
    assert any(t in low for t in column_type), f"column type {column_type} not named: {err.message}"
    assert any(t in low for t in literal_type), f"literal type {literal_type} not named: {err.message}"


def test_substrait_garbage_is_invalid_argument(gen_client, trips_path):
    expect_error(gen_client, {"paths": [trips_path], "filter_substrait": base64.b64encode(b"\x01\x02garbage").decode()},
                 "INVALID_ARGUMENT")


def test_non_boolean_substrait_is_invalid_argument(gen_client, trips_path):
    b64 = substrait_filter(gen_client, [trips_path], F("id") + 1)
    expect_error(gen_client, {"paths": [trips_path], "filter_substrait": b64}, "INVALID_ARGUMENT")


def test_text_over_1_mib_is_resource_exhausted(gen_client, trips_path):
    text = "city = '" + "x" * (1 << 20) + "'"
    expect_error(gen_client, {"paths": [trips_path], "filter": text}, "RESOURCE_EXHAUSTED")


def test_nesting_over_100_is_resource_exhausted(gen_client, trips_path):
    expect_error(gen_client, {"paths": [trips_path], "filter": "(" * 101 + "id = 1" + ")" * 101},
                 "RESOURCE_EXHAUSTED")
    expect_error(gen_client, {"paths": [trips_path], "filter": "NOT " * 101 + "id = 1"}, "RESOURCE_EXHAUSTED")
    # well inside the limit: fine
    res = sql_scan(gen_client, [trips_path], "(" * 50 + "id = 1" + ")" * 50)
    assert col_values(res.table, "id") == [1]


def test_in_over_100000_values_is_resource_exhausted(gen_client, trips_path):
    values = ", ".join(str(i) for i in range(100_001))
    expect_error(gen_client, {"paths": [trips_path], "filter": f"id IN ({values})"}, "RESOURCE_EXHAUSTED")
    at_limit = ", ".join(str(i) for i in range(0, 200_000, 2))  # 100,000 values: allowed
    res = sql_scan(gen_client, [trips_path], f"id IN ({at_limit})", columns=["id"])
    assert col_values(res.table, "id") == list(range(0, 1000, 2))


def test_substrait_in_over_100000_values_is_resource_exhausted(gen_client, trips_path):
    b64 = substrait_filter(gen_client, [trips_path], F("id").isin(pa.array(range(100_001), pa.int64())))
    expect_error(gen_client, {"paths": [trips_path], "filter_substrait": b64}, "RESOURCE_EXHAUSTED")


def test_a_good_scan_after_the_errors(gen_client, trips_path):
    res = sql_scan(gen_client, [trips_path], "id < 3")
    assert col_values(res.table, "id") == [0, 1, 2]


# ----------------------------------------------------------------------------
# Semantics
# ----------------------------------------------------------------------------

@pytest.fixture
def xs(gdir) -> str:
    return write(gdir, "x.parquet", pa.table({"x": pa.array([1, 2, None, 4], pa.int32())}))


@pytest.mark.parametrize("sql,rows", [
    ("x IN (1, 2)", [1, 2]),
    ("x NOT IN (1, 2)", [4]),            # NULL NOT IN (...) is unknown: dropped
    ("x IN (1, NULL)", [1]),             # 2 IN (1, NULL) is unknown
    ("x NOT IN (1, NULL)", []),          # never true
    ("NOT (x IN (1, 2))", [4]),
    ("x IS NULL OR x IN (4)", [None, 4]),
])
def test_sql_in_follows_sql_null_logic(gen_client, xs, sql, rows):
    assert col_values(sql_scan(gen_client, [xs], sql).table, "x") == rows


@pytest.mark.parametrize("expr,rows", [
    (F("x").isin(pa.array([1, 2], pa.int32())), [1, 2]),
    (~F("x").isin(pa.array([1, 2], pa.int32())), [None, 4]),        # pyarrow: NULL isin [1, 2] is false
    (F("x").isin(pa.array([1, None], pa.int32())), [1, None]),      # NULL matches NULL
    (~F("x").isin(pa.array([1, None], pa.int32())), [2, 4]),
], ids=["in", "not-in", "in-null", "not-in-null"])
def test_substrait_in_keeps_pyarrow_meaning(gen_client, gdir, xs, expr, rows):
    res = expr_scan(gen_client, [xs], expr)
    assert col_values(res.table, "x") == rows
    assert col_values(reference([str(gdir / "x.parquet")], expr), "x") == rows  # what pyarrow says


@pytest.fixture
def floats(gdir) -> tuple[str, str]:
    # Row groups of two: one only NaN, one NaN next to numbers, one with -0.0 and inf.
    values = [float("nan"), float("nan"), 1.0, 2.0, float("nan"), 5.0, -0.0, float("inf"), None, 3.0]
    t = pa.table({"i": pa.array(range(len(values)), pa.int32()), "f": pa.array(values, pa.float64()),
                  "g": pa.array(values, pa.float32())})
    return write(gdir, "f.parquet", t, row_group_size=2), str(gdir / "f.parquet")


NAN_CASES = [
    (">", "0", [2, 3, 5, 7, 9]), ("<", "3", [2, 3, 6]), ("=", "0", [6]), ("<=", "-0.0", [6]),
    ("!=", "1", [0, 1, 3, 4, 5, 6, 7, 9]),  # NaN != 1 is true; NULL != 1 unknown
    (">=", "-1e30", [2, 3, 5, 6, 7, 9]),
]


def nan_expr(col: str, op: str, lit: str) -> pc.Expression:
    v = pa.scalar(float(lit), pa.float64() if col == "f" else pa.float32())
    return {">": F(col) > v, "<": F(col) < v, "=": F(col) == v, "<=": F(col) <= v, "!=": F(col) != v,
            ">=": F(col) >= v}[op]


@pytest.mark.parametrize("col", ["f", "g"])
@pytest.mark.parametrize("op,lit,ids", NAN_CASES)
def test_nan_compares_false_except_not_equal(gen_client, floats, col, op, lit, ids):
    rel, local = floats
    assert col_values(reference([local], nan_expr(col, op, lit), columns=["i"]), "i") == ids  # pyarrow agrees
    res = sql_scan(gen_client, [rel], f"{col} {op} {lit}", columns=["i"])
    assert col_values(res.table, "i") == ids


@pytest.mark.parametrize("col", ["f", "g"])
@pytest.mark.parametrize("op,lit,ids", NAN_CASES)
def test_nan_compares_false_except_not_equal_substrait(gen_client, floats, col, op, lit, ids):
    rel, _ = floats
    assert col_values(expr_scan(gen_client, [rel], nan_expr(col, op, lit), columns=["i"]).table, "i") == ids


def test_nan_under_not_and_between(gen_client, floats):
    rel, _ = floats
    assert col_values(sql_scan(gen_client, [rel], "NOT (f > 2)", columns=["i"]).table, "i") == [0, 1, 2, 3, 4, 6]
    assert col_values(sql_scan(gen_client, [rel], "f BETWEEN 0 AND 5", columns=["i"]).table, "i") == [2, 3, 5, 6, 9]
    assert col_values(sql_scan(gen_client, [rel], "f NOT BETWEEN 0 AND 5", columns=["i"]).table, "i") == [0, 1, 4, 7]
    assert col_values(sql_scan(gen_client, [rel], "f IS NULL", columns=["i"]).table, "i") == [8]  # NaN is not NULL


def test_is_null_on_every_type(gen_client, gdir):
    n = 9
    t = pa.table({
        "i8": pa.array([i if i % 3 else None for i in range(n)], pa.int8()),
        "u64": pa.array([i if i % 3 else None for i in range(n)], pa.uint64()),
        "f32": pa.array([float(i) if i % 3 else None for i in range(n)], pa.float32()),
        "s": pa.array([str(i) if i % 3 else None for i in range(n)]),
        "b": pa.array([i % 2 == 0 if i % 3 else None for i in range(n)]),
        "d": pa.array([dt.date(2026, 1, 1 + i) if i % 3 else None for i in range(n)]),
        "ts": pa.array([dt.datetime(2026, 1, 1, i) if i % 3 else None for i in range(n)], pa.timestamp("ns")),
        "dec9": pa.array([Decimal(i) / 4 if i % 3 else None for i in range(n)], pa.decimal128(9, 2)),
        "dec38": pa.array([Decimal(i) / 4 if i % 3 else None for i in range(n)], pa.decimal128(38, 10)),
    })
    rel = write(gdir, "n.parquet", t, row_group_size=4)
    local = [str(gdir / "n.parquet")]
    failures = []
    for name in t.column_names:
        for sql, expr in ((f"{name} IS NULL", F(name).is_null()), (f"{name} IS NOT NULL", F(name).is_valid())):
            try:
                diff = table_diff(reference(local, expr), sql_scan(gen_client, [rel], sql).table)
            except Exception as e:  # noqa: BLE001 - collect every column's outcome
                diff = str(e)[:200]
            if diff:
                failures.append(f"{sql}: {diff}")
    assert not failures, "\n".join(failures)


def test_strings_compare_as_utf8_bytes(gen_client, gdir):
    words = ["a", "B", "é", "z", "日本", "Z", "", "ab", "\uffff", "e\u0301"]
    rel = write(gdir, "s.parquet", pa.table({"s": words}), row_group_size=3)
    for lit in ("z", "é", "B", "", "e"):
        res = sql_scan(gen_client, [rel], f"s > '{lit}'")
        want = [w for w in words if w.encode() > lit.encode()]
        assert col_values(res.table, "s") == want, lit
    assert col_values(sql_scan(gen_client, [rel], "s LIKE '_'").table, "s") == ["a", "B", "é", "z", "Z", "\uffff"]
    assert col_values(sql_scan(gen_client, [rel], "starts_with(s, 'e')").table, "s") == ["e\u0301"]


@pytest.mark.parametrize("pattern,want", [
    ("%a\\\\", ["a\\", "%a\\"]),       # ends with a then a backslash (pyarrow's match_like says none)
    ("a\\\\", ["a\\"]),
    ("\\%%", ["%a\\", "%"]),             # starts with a percent sign
    ("%\\_%", ["a_b"]),                  # holds an underscore
    ("_", ["%"]),
])
def test_like_escapes(gen_client, gdir, pattern, want):
    """LIKE's backslash escapes, with answers written by hand: pyarrow's
    match_like, the reference elsewhere, misses '%a\\\\' (ends_with without
    unescaping)."""
    rel = write(gdir, "l.parquet", pa.table({"s": ["a\\", "%a\\", "a_b", "ab", "%", None]}))
    sql = "s LIKE '" + pattern.replace("'", "''") + "'"
    assert col_values(sql_scan(gen_client, [rel], sql).table, "s") == want, sql


def test_limit_counts_rows_after_the_filter(gen_client, gdir, trips_path):
    """Each endpoint of a filtered scan carries the whole limit (the server
    cannot know which holds the first matches): up to limit rows per
    endpoint, the first limit of them in order are the answer."""
    local = [str(gdir / "trips.parquet")]
    expected = reference(local, F("fare") > 40).slice(0, 25)
    res = sql_scan(gen_client, [trips_path], "fare > 40", limit=25)
    assert_tables_equal(expected, res.table.slice(0, 25), "the first 25 matching rows")
    assert all(sum(rows) <= 25 for rows in res.batch_rows), res.batch_rows
    assert res.table.num_rows >= 25
    many = sql_scan(gen_client, [trips_path], "fare > 40", limit=25, split_bytes=1)  # one endpoint per row group
    assert len(many.info.endpoints) > 1 and all(sum(rows) <= 25 for rows in many.batch_rows), many.batch_rows
    assert_tables_equal(expected, many.table.slice(0, 25), "the first 25 matching rows, many endpoints")
    every = reference(local, F("fare") > 48)
    assert_tables_equal(every, sql_scan(gen_client, [trips_path], "fare > 48", limit=10_000).table)


def test_filter_columns_are_not_returned_unless_projected(gen_client, gdir, trips_path):
    local = [str(gdir / "trips.parquet")]
    res = sql_scan(gen_client, [trips_path], "city = 'Rome' AND fare >= 10", columns=["id"])
    assert res.table.column_names == ["id"]
    assert_tables_equal(reference(local, (F("city") == "Rome") & (F("fare") >= 10), columns=["id"]), res.table)


def test_filter_columns_are_not_returned_unless_projected_substrait(gen_client, gdir, trips_path):
    local = [str(gdir / "trips.parquet")]
    res = expr_scan(gen_client, [trips_path], (F("city") == "Rome") & (F("fare") >= 10), columns=["day", "id"])
    assert res.table.column_names == ["day", "id"]
    assert_tables_equal(reference(local, (F("city") == "Rome") & (F("fare") >= 10), columns=["day", "id"]),
                        res.table)


def test_literal_coercions(gen_client, gdir):
    t = pa.table({"i8": pa.array([-128, 0, 5, 127], pa.int8()), "u64": pa.array([0, 1, 2**63, 2**64 - 1], pa.uint64()),
                  "d": pa.array([Decimal("1.25"), Decimal("-3.50"), None, Decimal("10.00")], pa.decimal128(9, 2)),
                  "ts": pa.array([dt.datetime(2026, 1, 31, 12), dt.datetime(2026, 2, 1), None, dt.datetime(2025, 1, 1)],
                                 pa.timestamp("us", tz="UTC"))})
    rel = write(gdir, "c.parquet", t)
    local = [str(gdir / "c.parquet")]
    cases = [
        ("i8 >= -128", F("i8") >= -128),
        ("i8 = 127", F("i8") == 127),
        ("u64 > 9223372036854775807", F("u64") > pa.scalar(2**63 - 1, pa.uint64())),
        ("u64 = 18446744073709551615", F("u64") == pa.scalar(2**64 - 1, pa.uint64())),
        ("d > 1", F("d") > pa.scalar(Decimal("1.00"), pa.decimal128(9, 2))),     # an integer against a decimal
        ("d = 1.25", F("d") == pa.scalar(Decimal("1.25"), pa.decimal128(9, 2))),
        ("d < -3.4", F("d") < pa.scalar(Decimal("-3.40"), pa.decimal128(9, 2))),
        ("ts >= TIMESTAMP '2026-01-31 12:00:00+00:00'",
         F("ts") >= pa.scalar(dt.datetime(2026, 1, 31, 12, tzinfo=dt.timezone.utc), pa.timestamp("us", tz="UTC"))),
        ("ts < TIMESTAMP '2026-01-31 13:00:00+01:00'",
         F("ts") < pa.scalar(dt.datetime(2026, 1, 31, 12, tzinfo=dt.timezone.utc), pa.timestamp("us", tz="UTC"))),
    ]
    for sql, expr in cases:
        assert_tables_equal(reference(local, expr), sql_scan(gen_client, [rel], sql).table, sql)


def _narrow_table() -> pa.Table:
    return pa.table({"i8": pa.array([-128, 0, None, 127], pa.int8()), "u8": pa.array([0, 1, 2, 255], pa.uint8()),
                     "d": pa.array([Decimal("1.25"), None, Decimal("-3.50"), Decimal("0")], pa.decimal128(9, 2)),
                     "g": pa.array([1.5, float("nan"), -3.4e38, None], pa.float32())})


@pytest.mark.parametrize("sql,expr", [
    ("i8 > 300", F("i8") > 300),               # beyond int8
    ("i8 != -129", F("i8") != -129),
    ("u8 >= -1", F("u8") >= -1),
    ("i8 = 1.5", F("i8") == 1.5),              # a fraction against an integer column
    ("i8 < 1.5", F("i8") < 1.5),
    ("d < -3.499", F("d") < Decimal("-3.499")),  # more decimal places than the column's scale
    ("d = 1.251", F("d") == Decimal("1.251")),
    ("NOT (d = 1.251)", ~(F("d") == Decimal("1.251"))),
], ids=lambda v: "".join(ch for ch in str(v) if ch.isalnum()) if isinstance(v, str) else "")  # '=' in a directory is a hive key
def test_numbers_the_column_type_cannot_hold_compare_exactly(gen_client, gdir, sql, expr):
    """docs/filters.md, exact comparisons: as pyarrow, which widens the
    column and compares."""
    rel = write(gdir, "r.parquet", _narrow_table())
    assert_tables_equal(reference([str(gdir / "r.parquet")], expr), sql_scan(gen_client, [rel], sql).table, sql)


def test_a_float_beyond_a_float32_column_is_refused(gen_client, gdir):
    """A float column keeps the nearest-float rule, and a number beyond its
    range is an error naming both."""
    rel = write(gdir, "r.parquet", _narrow_table())
    err = expect_error(gen_client, {"paths": [rel], "filter": "g > -1e308"}, "INVALID_ARGUMENT")
    for word in ["-1e308", "float"]:
        assert word in err.message, f"{word!r} not in {err.message!r}"


def test_pruning_skips_row_groups_by_statistics(gen_client, trips_path):
    res = sql_scan(gen_client, [trips_path], "id >= 950")
    ps = plan_stats(res)
    assert ps["row_groups"] == 10 and ps["row_groups_pruned"] == 9, ps
    assert ps["rows_with_filter"] == 100 and ps["rows_without_filter"] == 1000, ps
    assert ps["bytes_with_filter"] < ps["bytes_without_filter"], ps
    assert col_values(res.table, "id") == list(range(950, 1000))
    assert sum(m["rows_read"] for m in res.metadata) == 100, res.metadata
    assert sum(m["rows_filtered"] for m in res.metadata) == 50, res.metadata
    assert ps["filter"], ps  # the filter as the server read it
    # Nothing matches: every row group pruned, no rows, the schema still there.
    res = sql_scan(gen_client, [trips_path], "id < 0")
    assert res.table.num_rows == 0 and res.table.column_names == ["id", "city", "fare", "day"]
    assert plan_stats(res)["row_groups_pruned"] == 10


# ----------------------------------------------------------------------------
# The corpus's files with odd statistics: filtered scans equal pyarrow's.
# ----------------------------------------------------------------------------

CORPUS_PARQUET = [
    "nan_in_stats.parquet", "single_nan.parquet", "floating_orders_nan_count.parquet",  # NaN in min/max
    "binary_truncated_min_max.parquet",                                                  # truncated bounds
    "alltypes_plain.parquet", "alltypes_dictionary.parquet", "alltypes_tiny_pages.parquet",  # int96
    "byte_array_decimal.parquet", "fixed_length_decimal.parquet", "fixed_length_decimal_legacy.parquet",
    "int32_decimal.parquet", "int64_decimal.parquet",
    "datapage_v2.snappy.parquet", "nullable.impala.parquet", "delta_encoding_optional_column.parquet",  # old parquet-mr
    "data_index_bloom_encoding_stats.parquet",
    "delta_byte_array.parquet", "sort_columns.parquet", "int32_with_null_pages.parquet",
]
CORPUS_ORC = ["orc_split_elim.orc", "TestOrcFile.testStripeLevelStats.orc"]


def filterable(f: pa.Field) -> bool:
    t = f.type
    return (pa.types.is_integer(t) or pa.types.is_floating(t) and not pa.types.is_float16(t) or pa.types.is_string(t)
            or pa.types.is_boolean(t) or pa.types.is_date32(t) or pa.types.is_timestamp(t)
            or pa.types.is_decimal(t))


def corpus_predicates(table: pa.Table) -> list[fg.Pred]:
    """Comparisons on each primitive column at its minimum, median and
    maximum value, beyond them, BETWEEN and IS NULL."""
    preds = []
    for f in table.schema:
        if not filterable(f):
            continue
        col = fg.Column(f.name, f.type, sorted=False, null_frac=0)
        values = sorted(v for v in table.column(f.name).to_pylist() if v is not None and v == v)
        preds.append(fg.IsNull(col, negated=False))
        if not values:
            continue
        lo, mid, hi = values[0], values[len(values) // 2], values[-1]
        if pa.types.is_boolean(f.type):
            preds += [fg.Cmp(col, "=", True), fg.Cmp(col, "!=", False)]
            continue
        for op, v in (("=", mid), ("<", lo), (">", hi), ("<=", mid), (">", mid), ("!=", lo), (">=", lo)):
            preds.append(fg.Cmp(col, op, v))
        preds.append(fg.Between(col, lo, mid, negated=False))
        preds.append(fg.In(col, [lo, hi], negated=True))
    return preds


# Corpus files whose predicates (IS NULL on a decimal column) meet the bug above.
def corpus_cases():
    td = find_testdata()
    out = [(td / "parquet-testing" / n, "parquet") for n in CORPUS_PARQUET]
    out += [(td / "orc-examples" / n, "orc") for n in CORPUS_ORC]
    return [pytest.param(p, fmt, id=p.name) for p, fmt in out]


@pytest.mark.parametrize("src,fmt", corpus_cases())
def test_corpus_filters_equal_pyarrow(gen_client, gdir, src, fmt):
    dst = gdir / src.name
    shutil.copyfile(src, dst)
    rel = f"{gdir.name}/{src.name}"
    local = (po.read_table if fmt == "orc" else pq.read_table)(dst)
    columns = [f.name for f in local.schema if filterable(f)]
    failures = []
    for pred in corpus_predicates(local):
        try:
            expected = reference([str(dst)], pred.arrow_sql(), columns=columns, fmt=fmt)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            continue  # pyarrow cannot evaluate it (e.g. comparing a type it reads oddly): no reference
        res = sql_scan(gen_client, [rel], pred.sql(), columns=columns)
        diff = table_diff(expected, res.table)
        if diff:
            failures.append(f"{pred.sql()}: {diff} (expected {expected.num_rows} rows, got {res.table.num_rows}; "
                            f"plan {plan_stats(res)})")
    assert not failures, f"{src.name}: " + "\n".join(failures)
