"""Bloom filters and the ORC row index (docs/indexes.md), end to end: a
real server, stock pyarrow.flight. Point lookups on an unsorted
high-cardinality id prune Parquet row groups by their bloom filters and
ORC strides by theirs; a range on a sorted ORC column reads few strides;
and a generated set of = / IN predicates over files with bloom filters and
row indexes gives pyarrow.dataset's rows."""

from __future__ import annotations

import random
import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from filterlib import plan_stats, reference, sql_scan
from scandlib import assert_tables_equal

F = pc.field
ROWS = 20_000
GROUP_ROWS = 2_000   # Parquet row group
STRIDE = 1_000       # ORC row index stride
FPP = 0.01


def events() -> pa.Table:
    rnd = random.Random(15)
    ids = list(range(0, 2 * ROWS, 2))  # even: an odd id is absent
    rnd.shuffle(ids)
    return pa.table({
        "seq": pa.array(range(ROWS), pa.int64()),
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([f"user-{i}" for i in ids]),
        "score": pa.array([float(i % 997) for i in ids]),
        "k": pa.array([i % 7 for i in ids], pa.int32()),
    })


@pytest.fixture(scope="module")
def files(gen_root):
    d = gen_root / "bloom"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir()
    t = events()
    pq.write_table(t, d / "events.parquet", row_group_size=GROUP_ROWS,
                   bloom_filter_options={c: {"ndv": GROUP_ROWS, "fpp": FPP} for c in ("id", "name", "score")})
    # ORC column ids: 0 is the root struct, then seq=1, id=2, name=3, score=4, k=5.
    po.write_table(t, d / "events.orc", row_index_stride=STRIDE, stripe_size=1 << 20, batch_size=4096,
                   bloom_filter_columns=[2, 3, 4], bloom_filter_fpp=FPP)
    return {"parquet": (f"{d.name}/events.parquet", d / "events.parquet"),
            "orc": (f"{d.name}/events.orc", d / "events.orc")}, t


def rows_read(res) -> int:
    return sum(m.get("rows_read", 0) for m in res.metadata if m)


def check_equal(client, files, fmt, sql, expr):
    rel, path = files[fmt]
    res = sql_scan(client, [rel], sql)
    want = reference([str(path)], expr, fmt=fmt)
    assert_tables_equal(want.sort_by("seq"), res.table.sort_by("seq"), f"{fmt}: {sql}")
    return res


def test_parquet_point_lookup_reads_only_the_group_holding_it(gen_client, files):
    fs, t = files
    present = t.column("id")[12_345].as_py()
    for value, holding in ((present, 1), (present + 1, 0)):
        res = check_equal(gen_client, fs, "parquet", f"id = {value}", F("id") == value)
        ps = plan_stats(res)
        groups = ROWS // GROUP_ROWS
        kept = ps["row_groups"] - ps.get("row_groups_pruned", 0) - ps["row_groups_pruned_by_bloom"]
        # The group holding it, plus false positives (1 % each: 2 is ample).
        assert holding <= kept <= holding + 2, ps
        assert ps["row_groups"] == groups and ps.get("row_groups_pruned", 0) == 0, ps  # statistics cannot help
        assert len(res.info.endpoints) <= kept


def test_parquet_in_and_conjunctions(gen_client, files):
    fs, t = files
    a, b = t.column("id")[10].as_py(), t.column("id")[19_990].as_py()
    cases = [
        (f"id IN ({a}, {b}, 1, 3)", F("id").isin([a, b, 1, 3]), 2),
        (f"id = {a} AND k >= 0", (F("id") == a) & (F("k") >= 0), 1),
        (f"name = 'user-{a}' OR id = {b}", (F("name") == f"user-{a}") | (F("id") == b), 2),
        (f"score = 0.5", F("score") == 0.5, 0),  # no such score: every filter rules it out
    ]
    for sql, expr, holding in cases:
        ps = plan_stats(check_equal(gen_client, fs, "parquet", sql, expr))
        kept = ps["row_groups"] - ps.get("row_groups_pruned", 0) - ps["row_groups_pruned_by_bloom"]
        assert kept <= holding + 2, (sql, ps)


def test_orc_point_lookup_reads_few_strides(gen_client, files):
    fs, t = files
    present = t.column("id")[7_777].as_py()
    res = check_equal(gen_client, fs, "orc", f"id = {present}", F("id") == present)
    # The stride holding it, plus false positives (1 % of 20 strides each).
    assert rows_read(res) <= 3 * STRIDE, res.metadata
    res = check_equal(gen_client, fs, "orc", f"id = {present + 1}", F("id") == present + 1)
    assert rows_read(res) <= 2 * STRIDE, res.metadata


def test_orc_sorted_column_reads_few_strides(gen_client, files):
    fs, _ = files
    res = check_equal(gen_client, fs, "orc", "seq >= 4500 AND seq < 5200", (F("seq") >= 4500) & (F("seq") < 5200))
    assert res.table.num_rows == 700
    assert rows_read(res) == 2 * STRIDE, res.metadata  # strides 4 and 5, sliced exactly at their bounds


def generated_predicates(t: pa.Table, n: int, seed: int):
    """n predicates of = and IN (alone, under AND and OR, with ranges on
    seq) on values present and absent."""
    rnd = random.Random(seed)
    ids = t.column("id").to_pylist()

    def value():
        v = rnd.choice(ids)
        return v if rnd.random() < 0.6 else v + 1  # odd: absent

    def atom():
        kind = rnd.randrange(5)
        if kind == 0:
            v = value()
            return f"id = {v}", F("id") == v
        if kind == 1:
            vs = [value() for _ in range(rnd.randint(1, 5))]
            return f"id IN ({', '.join(map(str, vs))})", F("id").isin(vs)
        if kind == 2:
            v = value()
            return f"name = 'user-{v}'", F("name") == f"user-{v}"
        if kind == 3:
            s = float(rnd.randrange(0, 1000)) + rnd.choice([0.0, 0.5])
            return f"score = {s}", F("score") == s
        lo = rnd.randrange(ROWS)
        hi = lo + rnd.randrange(3000)
        return f"seq BETWEEN {lo} AND {hi}", (F("seq") >= lo) & (F("seq") <= hi)

    out = []
    while len(out) < n:
        a_sql, a_expr = atom()
        shape = rnd.randrange(3)
        if shape == 0:
            out.append((a_sql, a_expr))
            continue
        b_sql, b_expr = atom()
        if shape == 1:
            out.append((f"({a_sql}) AND ({b_sql})", a_expr & b_expr))
        else:
            out.append((f"({a_sql}) OR ({b_sql})", a_expr | b_expr))
    return out


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_generated_predicates_equal_pyarrow(gen_client, files, fmt):
    fs, t = files
    preds = generated_predicates(t, 60, seed=1 if fmt == "parquet" else 2)
    pruned = 0
    for sql, expr in preds:
        res = check_equal(gen_client, fs, fmt, sql, expr)
        if fmt == "parquet":
            pruned += plan_stats(res).get("row_groups_pruned_by_bloom", 0)
        else:
            pruned += ROWS - rows_read(res)
    assert pruned > 0, "the indexes never pruned anything"
