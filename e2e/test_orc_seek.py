"""ORC row-index seeking (docs/indexes.md, "Seeking inside a stripe"), end
to end: a real server, stock pyarrow.flight. Files written by pyarrow.orc
with row_index_stride 1000 and four compressions, with nulls in most
columns. A generated set of filters gives pyarrow.orc's rows; a selective
filter on the sorted column fetches a fraction of the stripe, as the
stream's bytes_fetched shows.

The server runs with --io-hole 1, so that the IO scheduler does not read
through the gaps between kept strides (on local disk it learns to, and
the byte counts would then show the merging, not the seeking)."""

from __future__ import annotations

import decimal
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po
import pytest

from conftest import _scand_bin
from filterlib import sql_scan
from s3lib import S3ScandServer
from scandlib import assert_tables_equal

F = pc.field
ROWS = 100_000
STRIDE = 1_000
COMPRESSIONS = ["uncompressed", "zlib", "zstd", "snappy"]


def table() -> pa.Table:
    rng = np.random.default_rng(15)

    def nulls(a):
        return pa.array(a, mask=rng.random(ROWS) < 0.1)

    return pa.table({
        "seq": pa.array(np.arange(ROWS, dtype=np.int64)),
        "i32": nulls(rng.integers(-1 << 30, 1 << 30, ROWS).astype(np.int32)),
        "x": nulls(rng.random(ROWS)),
        "s": nulls([f"s{v:08x}" for v in rng.integers(0, 1 << 32, ROWS)]),
        "d": nulls([f"k{v}" for v in rng.integers(0, 50, ROWS)]),
        "b": nulls(rng.random(ROWS) < 0.5),
        "ts": nulls(rng.integers(-(1 << 62), 1 << 62, ROWS).astype("datetime64[ns]")),
        "dec": pa.array([decimal.Decimal(int(v)).scaleb(-3) for v in rng.integers(-10**12, 10**12, ROWS)],
                        pa.decimal128(20, 3), mask=rng.random(ROWS) < 0.1),
    })


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("orcseek")
    t = table()
    for comp in COMPRESSIONS:
        # dictionary_key_size_threshold 0.5: d (50 values) is DICTIONARY_V2, s DIRECT_V2.
        po.write_table(t, root / f"{comp}.orc", compression=comp, row_index_stride=STRIDE,
                       dictionary_key_size_threshold=0.5)
    return root, t


@pytest.fixture(scope="module")
def client(tmp_path_factory, files):
    root, _ = files
    logs = tmp_path_factory.mktemp("orcseeklogs")
    srv = S3ScandServer(_scand_bin(), root, logs / "orcseek.log", "orcseek", args=["--io-hole", "1"], env={})
    srv.start()
    c = srv.client()
    yield c
    c.close()
    srv.stop()


def fetched(res) -> int:
    return sum((m or {}).get("bytes_fetched", 0) for m in res.metadata)


def generated_filters(n: int, seed: int):
    rnd = random.Random(seed)

    def atom():
        kind = rnd.randrange(6)
        if kind <= 1:
            lo = rnd.randrange(ROWS)
            hi = lo + rnd.randrange(1, 4000)
            return f"seq >= {lo} AND seq < {hi}", (F("seq") >= lo) & (F("seq") < hi)
        if kind == 2:
            v = rnd.randrange(ROWS)
            return f"seq = {v}", F("seq") == v
        if kind == 3:
            k = f"k{rnd.randrange(60)}"
            return f"d = '{k}'", F("d") == k
        if kind == 4:
            v = rnd.random() / 500
            return f"x < {v}", F("x") < v
        return "b = true", F("b") == True  # noqa: E712 (an expression, not a test)

    out = []
    while len(out) < n:
        a_sql, a_expr = atom()
        b_sql, b_expr = atom()
        shape = rnd.randrange(3)
        if shape == 0:
            out.append((a_sql, a_expr))
        elif shape == 1:
            out.append((f"({a_sql}) OR ({b_sql})", a_expr | b_expr))
        else:
            out.append((f"({a_sql}) AND ({b_sql})", a_expr & b_expr))
    return out


@pytest.mark.parametrize("comp", COMPRESSIONS)
def test_generated_filters_equal_pyarrow_orc(client, files, comp):
    root, _ = files
    want_all = po.read_table(root / f"{comp}.orc")
    for sql, expr in generated_filters(20, seed=COMPRESSIONS.index(comp)):
        res = sql_scan(client, [f"{comp}.orc"], sql)
        assert_tables_equal(want_all.filter(expr).sort_by("seq"), res.table.sort_by("seq"), f"{comp}: {sql}")


@pytest.mark.parametrize("comp", COMPRESSIONS)
def test_selective_filter_fetches_a_fraction(client, files, comp):
    root, _ = files
    sql = "seq >= 54321 AND seq < 54400"  # one stride of 100
    res = sql_scan(client, [f"{comp}.orc"], sql)
    want = po.read_table(root / f"{comp}.orc").filter((F("seq") >= 54321) & (F("seq") < 54400))
    assert_tables_equal(want, res.table.sort_by("seq"), sql)
    # Every stride kept: the stripe is read whole, as without an index.
    whole = fetched(sql_scan(client, [f"{comp}.orc"], "seq >= 0"))
    seek = fetched(res)
    print(f"{comp}: {seek} bytes fetched for one stride, {whole} for the whole stripe")
    # Uncompressed, the bytes of one stride (plus an RLE run's slop per
    # stream); compressed, whole 64 KiB chunks of each stream.
    assert seek * (10 if comp == "uncompressed" else 3) < whole, (seek, whole)
