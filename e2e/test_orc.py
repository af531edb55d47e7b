"""ORC through scand, compared with pyarrow.orc reading the same files.

Generated files (written with pyarrow.orc.write_table into the gen server's
root): every Arrow type pyarrow's ORC writer takes, with nulls, nested
types, small and large strings, every codec pyarrow writes (uncompressed,
zlib, snappy, lz4, zstd), both string encodings (dictionary_key_size_threshold
0 = direct, 1 = dictionary), both file versions (0.11 writes RLE v1, 0.12
RLE v2) and several stripes each. scand must return what
pyarrow.orc.read_table returns for the same file; then projections (dotted
struct fields too), limits, one endpoint per stripe, ORC and Parquet in one
scan, and the IO cost of a projection of a wide file.

The orc-examples corpus ($SCAND_TESTDATA/orc-examples, copied into the gen
server's root by the orc_corpus fixture): files pyarrow reads must read the
same through scand (or be listed below with the reason), LZO and the future
version1999.orc included; corrupt ones and zero.orc must fail with a clean
status, and the server must keep serving. Results go to the corpus report (see conftest.py).
"""

from __future__ import annotations

import os
import random
import shutil
import string
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from scandlib import (CLEAN_DATA_ERROR_CODES, CORPUS_RESULTS, ScanError, assert_tables_equal, cast_like,
                      expect_error, find_testdata, project, scan, table_diff)

CODECS = ["uncompressed", "zlib", "snappy", "lz4", "zstd"]

# KNOWN_TYPE_DIFFERENCES: scand returns the same values as pyarrow under
# another Arrow type, by design (scanner/orc/doc.go, "Arrow mapping"). The
# test casts scand's table to pyarrow's schema and then requires equal
# values. Keyed by corpus file name; generated files have no differences
# (pyarrow's ORC writer cannot write char or varchar).
#
# Empty today: pyarrow reads every type of the generated files and of the
# corpus as scand does (timestamps as timestamp[ns], timestamp with local time
# zone as timestamp[ns, tz=UTC], unions as sparse unions). The one deliberate
# difference, char(n) (scand: utf8 as stored; pyarrow: fixed_size_binary(n)),
# occurs in no corpus file, and pyarrow cannot write char. A corpus file with
# such a column belongs here, e.g.
#   "some_file.orc": "char(n): scand returns utf8 (space-padded), pyarrow fixed_size_binary(n)",
KNOWN_TYPE_DIFFERENCES: dict[str, str] = {}

# Corpus files pyarrow reads but scand answers with a clean error, by design.
KNOWN_UNREADABLE: dict[str, tuple[str, str]] = {}

# Corpus files that must fail cleanly (pyarrow fails too), with the
# expected gRPC code.
MUST_FAIL: dict[str, str] = {
    "corrupt/missing_blob_stream_in_string_dict.orc": "DATA_LOSS",
    "corrupt/missing_length_stream_in_string_dict.orc": "DATA_LOSS",
    "corrupt/negative_dict_entry_lengths.orc": "DATA_LOSS",
    "corrupt/stripe_footer_bad_column_encodings.orc": "DATA_LOSS",
    "zero.orc": "INVALID_ARGUMENT",  # 0 bytes: neither Parquet nor ORC
}

GOOD_ORC = "orc-examples/TestOrcFile.test1.orc"


def rel(gdir: Path, name: str) -> str:
    return f"{gdir.name}/{name}"


def write_orc(gdir: Path, name: str, table: pa.Table, **kw) -> str:
    p = gdir / name
    p.parent.mkdir(parents=True, exist_ok=True)
    po.write_table(table, p, **kw)
    return rel(gdir, name)


def read_local(gdir: Path, name: str) -> pa.Table:
    return po.read_table(gdir / name)


def n_stripes(gdir: Path, name: str) -> int:
    return po.ORCFile(gdir / name).nstripes


# --------------------------------------------------------------------------
# Generated data
# --------------------------------------------------------------------------

def _nulls(values: list, rnd: random.Random, rate: float = 0.1) -> list:
    return [None if rnd.random() < rate else v for v in values]


def all_types_table(n: int = 4000, seed: int = 1) -> pa.Table:
    """Every Arrow type pyarrow's ORC writer accepts, with nulls, extremes,
    empty and large values, nested types several levels deep."""
    rnd = random.Random(seed)
    ints = lambda lo, hi: [rnd.randint(lo, hi) for _ in range(n)]  # noqa: E731
    words = ["", "a", "alpha", "beta", "gamma", "delta", "\u00e9t\u00e9", "\u65e5\u672c", "x" * 40]
    small = [rnd.choice(words) for _ in range(n)]
    large = ["".join(rnd.choice(string.ascii_letters) for _ in range(rnd.choice([0, 10, 300, 3000, 20000])))
             for _ in range(n)]
    floats = [rnd.uniform(-1e6, 1e6) for _ in range(n)]
    for i, v in enumerate([float("inf"), float("-inf"), float("nan"), 0.0, -0.0, 5e-324, 1.7976931348623157e308]):
        floats[i * 7] = v
    # Timestamps before 1970 with fractions (the reader's negative-seconds
    # correction), around 2015 (ORC's epoch), DST changes, and far away.
    ts_ns = [rnd.randint(-2_000_000_000, 4_000_000_000) * 1_000_000_000 + rnd.choice([0, 1, 999_999_999, 500_000_000,
                                                                                      123_456_789, 1000])
             for _ in range(n)]
    ts_ns[:4] = [0, -1, 1_420_070_400_000_000_000, -62_135_596_800 * 10 ** 9 // 100]
    dates = ints(-719_162, 2_932_896)  # 0001-01-01 .. 9999-12-31
    dates[:3] = [0, -1, 25_567]

    def dec(p: int, s: int) -> list:
        return [Decimal(f"{rnd.randint(-(10 ** p) + 1, 10 ** p - 1)}E-{s}") for _ in range(n)]

    st = pa.struct([("a", pa.int32()), ("b", pa.string()),
                    ("c", pa.struct([("d", pa.float64()), ("e", pa.list_(pa.string()))]))])
    struct_rows = [None if rnd.random() < 0.1 else
                   {"a": None if i % 5 == 0 else i, "b": rnd.choice(words) if i % 4 else None,
                    "c": None if i % 13 == 0 else {"d": i / 3, "e": [f"e{i}", None][: i % 3]}}
                   for i in range(n)]
    cols = {
        "bool": pa.array(_nulls([rnd.random() < 0.5 for _ in range(n)], rnd), pa.bool_()),
        "i8": pa.array(_nulls(ints(-128, 127), rnd), pa.int8()),
        "i16": pa.array(_nulls(ints(-32768, 32767), rnd), pa.int16()),
        "i32": pa.array(_nulls(ints(-(2 ** 31), 2 ** 31 - 1), rnd), pa.int32()),
        "i64": pa.array(_nulls([-(2 ** 63), 2 ** 63 - 1] + ints(-(2 ** 63), 2 ** 63 - 1)[2:], rnd), pa.int64()),
        "i64_seq": pa.array(range(n), pa.int64()),  # no nulls; RLE delta runs
        "i32_small": pa.array(_nulls([i % 7 for i in range(n)], rnd), pa.int32()),  # repeats
        "f32": pa.array(_nulls(floats, rnd), pa.float32()),
        "f64": pa.array(_nulls(floats, rnd), pa.float64()),
        "str_small": pa.array(_nulls(small, rnd), pa.string()),
        "str_large": pa.array(_nulls(large, rnd), pa.string()),
        "str_unique": pa.array([f"u{i}-{rnd.random()}" for i in range(n)], pa.string()),
        "large_str": pa.array(_nulls(small, rnd), pa.large_string()),
        "bin": pa.array(_nulls([bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 50))) for _ in range(n)],
                               rnd), pa.binary()),
        "large_bin": pa.array(_nulls([s.encode() for s in small], rnd), pa.large_binary()),
        "fixed_bin": pa.array(_nulls([bytes([i % 256, 7, 9]) for i in range(n)], rnd), pa.binary(3)),
        "date": pa.array(_nulls(dates, rnd), pa.date32()),
        # date64 is written as an ORC timestamp, which pyarrow reads as
        # timestamp[ns]: keep it within 1678..2261.
        "date64": pa.array(_nulls([(d % 150_000 - 75_000) * 86_400_000 for d in dates], rnd), pa.date64()),
        "ts_ns": pa.array(_nulls(ts_ns, rnd), pa.timestamp("ns")),
        "ts_us": pa.array(_nulls([t // 1000 for t in ts_ns], rnd), pa.timestamp("us")),
        "ts_s": pa.array(_nulls([t // 10 ** 9 for t in ts_ns], rnd), pa.timestamp("s")),
        "ts_utc": pa.array(_nulls(ts_ns, rnd), pa.timestamp("ns", tz="UTC")),
        "ts_zone": pa.array(_nulls([t // 10 ** 6 for t in ts_ns], rnd), pa.timestamp("ms", tz="America/New_York")),
        "dec_10_2": pa.array(_nulls(dec(10, 2), rnd), pa.decimal128(10, 2)),
        "dec_18_0": pa.array(_nulls(dec(18, 0), rnd), pa.decimal128(18, 0)),
        "dec_38_10": pa.array(_nulls(dec(38, 10), rnd), pa.decimal128(38, 10)),
        "dec_5_5": pa.array(_nulls(dec(5, 5), rnd), pa.decimal128(5, 5)),
        "list_i64": pa.array(_nulls([ints(-5, 5)[: i % 6] for i in range(n)], rnd), pa.list_(pa.int64())),
        "list_str": pa.array(_nulls([[rnd.choice(words), None][: i % 3] for i in range(n)], rnd),
                             pa.list_(pa.string())),
        "list_list": pa.array(_nulls([[[i, None], [], None][: i % 4] for i in range(n)], rnd),
                              pa.list_(pa.list_(pa.int32()))),
        "large_list": pa.array(_nulls([[i] * (i % 3) for i in range(n)], rnd), pa.large_list(pa.int16())),
        "fixed_list": pa.array(_nulls([[i, -i] for i in range(n)], rnd), pa.list_(pa.int64(), 2)),
        "struct": pa.array(struct_rows, st),
        "map": pa.array(_nulls([[(f"k{j}", None if j == 1 else i * j) for j in range(i % 4)] for i in range(n)], rnd),
                        pa.map_(pa.string(), pa.int64())),
        "map_nested": pa.array(_nulls([[(i, [f"v{i}"] * (i % 2))] for i in range(n)], rnd),
                               pa.map_(pa.int32(), pa.list_(pa.string()))),
        "list_struct": pa.array(_nulls([[{"p": i, "q": rnd.choice(words)}] * (i % 3) for i in range(n)], rnd),
                                pa.list_(pa.struct([("p", pa.int64()), ("q", pa.string())]))),
        "all_null": pa.array([None] * n, pa.int64()),
        "all_null_str": pa.array([None] * n, pa.string()),
    }
    return pa.table(cols)


def union_table(n: int = 30_000, seed: int = 2) -> pa.Table:
    rnd = random.Random(seed)
    types = pa.array([rnd.randrange(3) for _ in range(n)], pa.int8())
    counts = [types.to_pylist().count(k) for k in range(3)]
    offsets, seen = [], [0, 0, 0]
    for t in types.to_pylist():
        offsets.append(seen[t])
        seen[t] += 1
    children = [pa.array(_nulls(list(range(counts[0])), rnd), pa.int64()),
                pa.array(_nulls([f"s{i}" for i in range(counts[1])], rnd), pa.string()),
                pa.array(_nulls([i / 2 for i in range(counts[2])], rnd), pa.float64())]
    u = pa.UnionArray.from_dense(types, pa.array(offsets, pa.int32()), children)
    return pa.table({"id": pa.array(range(n), pa.int32()), "u": u})


_ALL_TYPES: pa.Table | None = None


def all_types() -> pa.Table:
    global _ALL_TYPES
    if _ALL_TYPES is None:
        _ALL_TYPES = all_types_table()
    return _ALL_TYPES


def assert_matches_pyarrow(client, gdir: Path, name: str, what: str = "") -> pa.Table:
    """scand's scan of the file equals pyarrow.orc.read_table of it."""
    expected = read_local(gdir, name)
    res = scan(client, {"paths": [rel(gdir, name)]})
    assert_tables_equal(expected, res.table, what or name)
    return expected


# --------------------------------------------------------------------------
# Types, codecs, encodings, versions
# --------------------------------------------------------------------------

@pytest.mark.parametrize("compression", CODECS)
@pytest.mark.parametrize("encoding", ["direct", "dictionary"])
def test_all_types(gen_client, gdir, compression, encoding):
    threshold = 1.0 if encoding == "dictionary" else 0.0
    name = write_orc(gdir, "all.orc", all_types(), compression=compression, stripe_size=256 << 10,
                     batch_size=512, dictionary_key_size_threshold=threshold).split("/", 1)[1]
    assert n_stripes(gdir, name) >= 3, "the file should have several stripes"
    expected = assert_matches_pyarrow(gen_client, gdir, name, f"{compression}/{encoding}")
    assert expected.num_rows == all_types().num_rows


@pytest.mark.parametrize("encoding", ["direct", "dictionary"])
def test_file_version_0_11(gen_client, gdir, encoding):
    """Version 0.11 files use RLE v1 and DIRECT/DICTIONARY (not _V2)."""
    threshold = 1.0 if encoding == "dictionary" else 0.0
    write_orc(gdir, "v11.orc", all_types(), file_version="0.11", compression="zlib", stripe_size=256 << 10,
              batch_size=512, dictionary_key_size_threshold=threshold)
    assert_matches_pyarrow(gen_client, gdir, "v11.orc")


@pytest.mark.parametrize("compression", ["zlib", "zstd"])
@pytest.mark.parametrize("block_size", [64 << 10, 1 << 20])
def test_compression_block_sizes(gen_client, gdir, compression, block_size):
    """The smallest block pyarrow writes (64 KiB: large strings straddle
    chunks) and a large one, in one stripe."""
    write_orc(gdir, "blocks.orc", all_types(), compression=compression, compression_block_size=block_size)
    assert_matches_pyarrow(gen_client, gdir, "blocks.orc")


def test_union(gen_client, gdir):
    """pyarrow writes dense unions as ORC uniontype and reads them back as
    sparse unions, as scand does."""
    write_orc(gdir, "union.orc", union_table(), compression="snappy", stripe_size=16 << 10, batch_size=256)
    assert n_stripes(gdir, "union.orc") > 1
    assert_matches_pyarrow(gen_client, gdir, "union.orc")


def test_empty_and_tiny_files(gen_client, gdir):
    t = all_types()
    for name, table in (("empty.orc", t.slice(0, 0)), ("one.orc", t.slice(5, 1))):
        write_orc(gdir, name, table, compression="zstd")
        assert_matches_pyarrow(gen_client, gdir, name)


def test_long_runs_and_repeats(gen_client, gdir):
    """Long constant runs, deltas, patched bases (a few outliers among small
    values) and long dictionary runs."""
    n = 50_000
    t = pa.table({
        "const": pa.array([42] * n, pa.int64()),
        "delta": pa.array(range(0, 3 * n, 3), pa.int64()),
        "outliers": pa.array([(1 << 40) if i % 997 == 0 else i % 100 for i in range(n)], pa.int64()),
        "neg": pa.array([-(i % 1000) for i in range(n)], pa.int32()),
        "bools": pa.array([i % 17 < 9 for i in range(n)]),
        "rep_str": pa.array(["same"] * n),
        "sparse": pa.array([None if i % 1000 else i for i in range(n)], pa.int64()),
    })
    for ver in ("0.11", "0.12"):
        write_orc(gdir, f"runs{ver}.orc", t, file_version=ver, compression="zlib")
        assert_matches_pyarrow(gen_client, gdir, f"runs{ver}.orc")


# --------------------------------------------------------------------------
# Projection, limit, splits, batch sizes
# --------------------------------------------------------------------------

@pytest.fixture
def multi_stripe(gdir):
    """all_types() in several stripes, zstd, dictionary strings."""
    name = write_orc(gdir, "m.orc", all_types(), compression="zstd", stripe_size=128 << 10, batch_size=256,
                     dictionary_key_size_threshold=0.5).split("/", 1)[1]
    return name, read_local(gdir, name)


@pytest.mark.parametrize("cols", [
    ["i32"],
    ["str_large", "i8", "dec_38_10"],
    ["struct.b"],
    ["struct.c.d", "struct.a"],
    ["struct.c.e", "map", "list_struct"],
    ["map_nested", "ts_ns", "bool"],
    ["all_null", "date"],
])
def test_projection(gen_client, gdir, multi_stripe, cols):
    name, local = multi_stripe
    res = scan(gen_client, {"paths": [rel(gdir, name)], "columns": cols})
    assert_tables_equal(project(local, cols), res.table, f"columns={cols}")


def test_projection_all_columns_reversed(gen_client, gdir, multi_stripe):
    name, local = multi_stripe
    cols = list(reversed(local.column_names))
    res = scan(gen_client, {"paths": [rel(gdir, name)], "columns": cols})
    assert_tables_equal(local.select(cols), res.table)


def test_unknown_column(gen_client, gdir, multi_stripe):
    name, _ = multi_stripe
    expect_error(gen_client, {"paths": [rel(gdir, name)], "columns": ["i32", "nope"]}, "INVALID_ARGUMENT", "nope")
    expect_error(gen_client, {"paths": [rel(gdir, name)], "columns": ["struct.zz"]}, "INVALID_ARGUMENT", "struct.zz")


@pytest.mark.parametrize("limit", [1, 100, 1234, 3999, 4000, 10_000])
def test_limit(gen_client, gdir, multi_stripe, limit):
    name, local = multi_stripe
    for split in (0, 1):
        res = scan(gen_client, {"paths": [rel(gdir, name)], "limit": limit, "split_bytes": split,
                                "columns": ["i64_seq", "str_small", "struct"]})
        want = local.select(["i64_seq", "str_small", "struct"]).slice(0, limit)
        assert_tables_equal(want, res.table, f"limit={limit} split={split}")


def test_stripes_split_into_endpoints(gen_client, gdir, multi_stripe):
    name, local = multi_stripe
    stripes = n_stripes(gdir, name)
    assert stripes >= 4
    res = scan(gen_client, {"paths": [rel(gdir, name)], "split_bytes": 1})
    assert len(res.info.endpoints) == stripes
    assert res.info.total_records == local.num_rows
    assert_tables_equal(local, res.table)
    # Each endpoint holds whole stripes: its rows are one stripe's rows.
    f = po.ORCFile(gdir / name)
    want = [f.read_stripe(i).num_rows for i in range(stripes)]
    assert [sum(r) for r in res.batch_rows] == want
    # The default split target keeps the whole (small) file in one.
    res = scan(gen_client, {"paths": [rel(gdir, name)]})
    assert len(res.info.endpoints) == 1


@pytest.mark.parametrize("batch_rows", [1, 7, 1000])
def test_batch_rows(gen_client, gdir, multi_stripe, batch_rows):
    name, local = multi_stripe
    cols = ["i32", "struct", "list_list", "map"]
    res = scan(gen_client, {"paths": [rel(gdir, name)], "columns": cols, "batch_rows": batch_rows,
                            "limit": 2000})
    assert_tables_equal(local.select(cols).slice(0, 2000), res.table)
    assert max(max(b) for b in res.batch_rows) <= batch_rows


def test_orc_and_parquet_in_one_scan(gen_client, gdir):
    """The same table written as ORC and as Parquet: one scan of both, and a
    glob over both, give the rows of both files in request order."""
    n = 3000
    rnd = random.Random(5)
    t = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "i32": pa.array(_nulls([rnd.randint(-1000, 1000) for _ in range(n)], rnd), pa.int32()),
        "f": pa.array(_nulls([rnd.random() for _ in range(n)], rnd), pa.float64()),
        "s": pa.array(_nulls([f"s{rnd.randint(0, 50)}" for _ in range(n)], rnd), pa.string()),
        "b": pa.array(_nulls([rnd.random() < 0.3 for _ in range(n)], rnd), pa.bool_()),
        "d": pa.array(_nulls([rnd.randint(0, 20000) for _ in range(n)], rnd), pa.date32()),
        "dec": pa.array(_nulls([Decimal(f"{rnd.randint(-99999, 99999)}E-2") for _ in range(n)], rnd),
                        pa.decimal128(9, 2)),
        "l": pa.array(_nulls([list(range(i % 4)) for i in range(n)], rnd), pa.list_(pa.int64())),
        "st": pa.array(_nulls([{"x": i, "y": f"y{i}"} for i in range(n)], rnd),
                       pa.struct([("x", pa.int64()), ("y", pa.string())])),
    })
    write_orc(gdir, "both/a.orc", t, compression="zstd", stripe_size=32 << 10, batch_size=256)
    pq.write_table(t, gdir / "both/b.parquet", row_group_size=1000)
    orc_local = po.read_table(gdir / "both/a.orc")
    pq_local = pq.read_table(gdir / "both/b.parquet")
    assert_tables_equal(pq_local, orc_local, "pyarrow reads both files the same")
    for paths in ([rel(gdir, "both/b.parquet"), rel(gdir, "both/a.orc")], [rel(gdir, "both/*")]):
        for split in (0, 1):
            res = scan(gen_client, {"paths": paths, "split_bytes": split})
            first, second = (pq_local, orc_local) if paths[0].endswith("parquet") else (orc_local, pq_local)
            assert_tables_equal(pa.concat_tables([first, second]), res.table, f"{paths} split={split}")
    cols = ["st.y", "s", "l"]
    res = scan(gen_client, {"paths": [rel(gdir, "both/a.orc"), rel(gdir, "both/b.parquet")], "columns": cols,
                            "limit": 4000})
    assert_tables_equal(project(pa.concat_tables([orc_local, pq_local]), cols).slice(0, 4000), res.table)


def test_orc_and_parquet_disagreeing_types(gen_client, gdir):
    write_orc(gdir, "x/a.orc", pa.table({"v": pa.array([1, 2], pa.int64())}))
    pq.write_table(pa.table({"v": pa.array(["1", "2"])}), gdir / "x/b.parquet")
    expect_error(gen_client, {"paths": [rel(gdir, "x/a.orc"), rel(gdir, "x/b.parquet")]}, "INVALID_ARGUMENT",
                 "a.orc", "b.parquet")


# --------------------------------------------------------------------------
# IO: a projection of a wide file costs one read per stripe
# --------------------------------------------------------------------------

def _wide_table(n: int, ncols: int = 128) -> pa.Table:
    """Even columns (the ones projected) hold a few KiB to a few hundred KiB
    each; odd ones (skipped) compress to well under the IO scheduler's
    smallest hole (iosched.MinHole, 4 KiB), so that merging across them is
    always worth it, whatever the learned hole."""
    rnd = random.Random(9)
    cols = {}
    for i in range(ncols):
        if i % 2:
            cols[f"c{i:03d}"] = pa.array([j // 1000 + i for j in range(n)], pa.int64())
        elif i % 4 == 2:
            cols[f"c{i:03d}"] = pa.array([f"v{rnd.randint(0, 500)}" for _ in range(n)])
        else:
            cols[f"c{i:03d}"] = pa.array([rnd.randint(0, 1 << (i % 40)) for _ in range(n)], pa.int64())
    return pa.table(cols)


@pytest.mark.parametrize("stripes", ["one", "several"])
def test_alternate_columns_of_wide_file_one_read_per_stripe(gen_client, gdir, stripes):
    """Every other column of a 128-column file. GetFlightInfo reads and caches
    the file tail and the stripe footers; each DoGet then reads its stripe's
    projected streams, which the IO scheduler merges across the skipped
    columns into one request per stripe."""
    t = _wide_table(20_000)
    kw = {"stripe_size": 256 << 10, "batch_size": 1024} if stripes == "several" else {}
    write_orc(gdir, "wide.orc", t, compression="zstd", **kw)
    ns = n_stripes(gdir, "wide.orc")
    assert (ns == 1) == (stripes == "one")
    cols = t.column_names[::2]
    for split in (0, 1):
        res = scan(gen_client, {"paths": [rel(gdir, "wide.orc")], "columns": cols, "split_bytes": split})
        assert_tables_equal(po.read_table(gdir / "wide.orc").select(cols), res.table)
        reads = [m["reads"] for m in res.metadata]
        assert sum(reads) <= ns, f"split={split}: {reads} reads for {ns} stripes ({res.metadata})"
        if split:
            assert len(res.info.endpoints) == ns
            assert all(r <= 1 for r in reads), f"{reads}: a DoGet of one stripe made more than one read"
        wasted = sum(m["bytes_wasted"] for m in res.metadata)
        used = sum(m["bytes_used"] for m in res.metadata)
        assert used > 0 and wasted <= used, f"merged reads wasted {wasted} bytes for {used} used"
        for m in res.metadata:  # every byte fetched is used, wasted or unused
            assert m["bytes_fetched"] == m["bytes_used"] + m["bytes_wasted"] + m["bytes_unused"], m


# --------------------------------------------------------------------------
# The orc-examples corpus
# --------------------------------------------------------------------------

def _corpus_files() -> list[str]:
    d = find_testdata() / "orc-examples"
    if not d.is_dir():
        return []
    return sorted(p.relative_to(d).as_posix() for p in d.rglob("*.orc"))


@pytest.fixture(scope="module")
def orc_corpus(gen_root, gen_server) -> Path:
    """$SCAND_TESTDATA/orc-examples copied (writable) to <gen root>/orc-examples."""
    src = find_testdata() / "orc-examples"
    if not src.is_dir():
        pytest.skip(f"ORC examples not found at {src} (set SCAND_TESTDATA)")
    dst = gen_root / "orc-examples"
    if not dst.exists():
        shutil.copytree(src, dst, symlinks=False, ignore=shutil.ignore_patterns("expected", "*.txt", "*.keystore"))
        for dirpath, _, filenames in os.walk(dst):
            os.chmod(dirpath, 0o755)
            for f in filenames:
                os.chmod(os.path.join(dirpath, f), 0o644)
    return dst


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _good_scan_works(server, client, root: Path) -> None:
    server.assert_alive()
    res = scan(client, {"paths": [GOOD_ORC]})
    assert_tables_equal(po.read_table(root / "TestOrcFile.test1.orc"), res.table, "good scan after an error")


@pytest.mark.parametrize("relpath", _corpus_files())
def test_orc_corpus_file(gen_server, gen_client, orc_corpus, relpath):
    path = orc_corpus / relpath
    key = f"orc-examples/{relpath}"
    try:
        local = po.read_table(path)
        local_s = f"ok {local.num_rows} rows"
    except Exception as e:  # noqa: BLE001
        local = None
        local_s = f"error {type(e).__name__}: {_short(str(e), 80)}"
    try:
        res, err = scan(gen_client, {"paths": [key]}, timeout=30), None
    except ScanError as e:
        res, err = None, e
    scand_s = f"ok {res.table.num_rows} rows" if err is None else f"{err.code}: {_short(err.message)}"

    def record(verdict):
        CORPUS_RESULTS[key] = ("orc corpus", local_s, scand_s, verdict)

    gen_server.assert_alive()
    if err is not None:
        _good_scan_works(gen_server, gen_client, orc_corpus)

    if relpath in MUST_FAIL:
        code = MUST_FAIL[relpath]
        if err is None:
            record("FAIL: must fail, scand read it")
            pytest.fail(f"{relpath}: must fail with {code}, scand read {res.table.num_rows} rows")
        if err.code != code:
            record(f"FAIL: expected {code}, got {err.code}")
            pytest.fail(f"{relpath}: expected {code}, got {err}")
        assert relpath.split("/")[-1] in err.message, f"the message should name the file: {err.message}"
        record(f"ok-clean-error: {code}")
        return
    name = Path(relpath).name
    if name in KNOWN_UNREADABLE:
        code, reason = KNOWN_UNREADABLE[name]
        if err is None:
            record("FAIL: listed in KNOWN_UNREADABLE but scand read it")
            pytest.fail(f"{relpath} is listed in KNOWN_UNREADABLE ({reason}) but scand read it: remove it")
        if err.code != code:
            record(f"FAIL: known unreadable, expected {code}, got {err.code}")
            pytest.fail(f"{relpath}: known unreadable ({reason}): expected {code}, got {err}")
        record(f"known-limit: {reason}")
        return
    if err is not None and err.code not in CLEAN_DATA_ERROR_CODES:
        record(f"FAIL: unclean error status {err.code}")
        pytest.fail(f"{relpath}: scand failed with {err.code}: {err}")
    if local is None:
        # pyarrow refuses files whose root type is not a struct; scand reads
        # them as one column named _col0 (scanner/orc/doc.go).
        if err is not None:
            record("FAIL: pyarrow cannot read it, and scand fails")
            pytest.fail(f"{relpath}: scand fails: {err} (pyarrow: {local_s})")
        record("ok-pyarrow-cannot-read: scand reads it")
        return
    if err is not None:
        record("FAIL: pyarrow reads it, scand does not")
        pytest.fail(f"{relpath}: pyarrow reads it ({local.num_rows} rows) but scand fails: {err}")

    type_note = KNOWN_TYPE_DIFFERENCES.get(name)

    def compare(expected, got):
        if type_note is not None:
            if table_diff(expected, got) is None:
                return "equal to pyarrow without the cast: remove it from KNOWN_TYPE_DIFFERENCES"
            got = cast_like(got, expected.schema)
        return table_diff(expected, got)

    diff = compare(local, res.table)
    if diff is not None:
        record(f"FAIL: values differ: {_short(diff, 200)}")
        pytest.fail(f"{relpath}: scand's table differs from pyarrow's: {diff}")
    checks = []
    cols = list(reversed(local.column_names))
    if len(cols) > 1:
        checks.append(({"paths": [key], "columns": cols}, local.select(cols)))
    if local.num_rows > 1:
        n = max(1, local.num_rows // 2)
        checks.append(({"paths": [key], "limit": n}, local.slice(0, n)))
    if po.ORCFile(path).nstripes > 1:
        checks.append(({"paths": [key], "split_bytes": 1}, local))
    for req, expected in checks:
        try:
            r2 = scan(gen_client, req, timeout=30)
        except ScanError as e:
            record(f"FAIL: {req} -> {e.code}")
            pytest.fail(f"{req}: {e}")
        d2 = compare(expected, r2.table)
        if d2 is not None:
            record(f"FAIL: {req}: {_short(d2, 200)}")
            pytest.fail(f"{req}: {d2}")
    record("ok" if type_note is None else f"ok-other-type: same values; {type_note}")


def test_orc_corpus_failures_back_to_back(gen_server, gen_client, orc_corpus):
    """Every failing file, then the corrupt/ folder as one scan, then a good
    scan: clean errors, no crash."""
    for relpath, code in MUST_FAIL.items():
        with pytest.raises(ScanError) as e:
            scan(gen_client, {"paths": [f"orc-examples/{relpath}"]}, timeout=30)
        assert e.value.code == code, f"{relpath}: {e.value}"
    with pytest.raises(ScanError) as e:
        scan(gen_client, {"paths": ["orc-examples/corrupt/"]}, timeout=30)
    assert e.value.code == "DATA_LOSS", e.value
    _good_scan_works(gen_server, gen_client, orc_corpus)
