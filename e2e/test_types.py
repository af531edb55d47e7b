"""The type matrix: every type pyarrow 26 and pandas write, to
Parquet and (where pyarrow.orc writes the type) to ORC, scanned through
scand and compared with pyarrow's own read of the same file.

Each type is a file of its own (one column, nulls included), so that one
type's failure does not hide another's. A scan must equal pyarrow's read
(table_diff: values, types, field names and nullability; schema and field
metadata are not compared), or differ as KNOWN_DIFFERENCES says, with the
reason. The list is exact: a listed case that starts to match fails until
it is removed. docs/parquet-types.md has the same list as a table.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from scandlib import ScanError, scan, table_diff

N = 24  # rows per file; every third row is null where the type allows


def _nulls(values: list) -> list:
    return [None if i % 3 == 1 else v for i, v in enumerate(values)]


def _arr(values: list, typ: pa.DataType) -> pa.Array:
    return pa.array(_nulls(values), typ)


def _ints(lo: int, hi: int) -> list[int]:
    return [lo + (hi - lo) * i // (N - 1) for i in range(N)]


_TS = [dt.datetime(1970, 1, 1) + dt.timedelta(days=397 * i, seconds=3.5 * i) for i in range(N)]
_TD = [dt.timedelta(days=i - 5, seconds=i * 7, microseconds=i * 11) for i in range(N)]
_STR = [f"s{i}é" * (i % 4) for i in range(N)]
_BIN = [s.encode() for s in _STR]


def _columns() -> dict[str, pa.Array]:
    """One array per matrix case, by name."""
    c: dict[str, pa.Array] = {}
    for bits in (8, 16, 32, 64):
        c[f"int{bits}"] = _arr(_ints(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1), getattr(pa, f"int{bits}")())
        c[f"uint{bits}"] = _arr(_ints(0, 2 ** bits - 1), getattr(pa, f"uint{bits}")())
    import numpy as np
    c["float16"] = pa.array(np.array([i / 4 for i in range(N)], dtype=np.float16), pa.float16(),
                            mask=np.array([i % 3 == 1 for i in range(N)]))
    c["float32"] = _arr([i / 3 for i in range(N)], pa.float32())
    c["float64"] = _arr([i / 7 if i != 5 else float("nan") for i in range(N)], pa.float64())
    c["decimal128(9,2)"] = _arr([decimal.Decimal(i * 1001) / 100 for i in range(N)], pa.decimal128(9, 2))
    c["decimal128(38,10)"] = _arr([decimal.Decimal(10 ** 27 + i) / 10 ** 10 for i in range(N)], pa.decimal128(38, 10))
    c["decimal256(76,20)"] = _arr([decimal.Decimal(10 ** 55 + i) / 10 ** 20 for i in range(N)], pa.decimal256(76, 20))
    c["bool"] = _arr([i % 2 == 0 for i in range(N)], pa.bool_())
    c["string"] = _arr(_STR, pa.string())
    c["large_string"] = _arr(_STR, pa.large_string())
    c["string_view"] = _arr(_STR, pa.string_view())
    c["binary"] = _arr(_BIN, pa.binary())
    c["large_binary"] = _arr(_BIN, pa.large_binary())
    c["binary_view"] = _arr(_BIN, pa.binary_view())
    c["fixed_size_binary(3)"] = _arr([bytes([i, i + 1, 255 - i]) for i in range(N)], pa.binary(3))
    c["date32"] = _arr([dt.date(1900, 1, 1) + dt.timedelta(days=1000 * i) for i in range(N)], pa.date32())
    c["date64"] = _arr([dt.date(1900, 1, 1) + dt.timedelta(days=1000 * i) for i in range(N)], pa.date64())
    c["time32[s]"] = _arr([i * 3599 for i in range(N)], pa.time32("s"))
    c["time32[ms]"] = _arr([i * 3599_123 for i in range(N)], pa.time32("ms"))
    c["time64[us]"] = _arr([i * 3599_123_456 for i in range(N)], pa.time64("us"))
    c["time64[ns]"] = _arr([i * 3599_123_456_789 for i in range(N)], pa.time64("ns"))
    for unit in ("s", "ms", "us", "ns"):
        c[f"timestamp[{unit}]"] = _arr(_TS, pa.timestamp(unit))
        c[f"timestamp[{unit},tz]"] = _arr(_TS, pa.timestamp(unit, "Europe/Paris"))
        c[f"duration[{unit}]"] = _arr(_TD, pa.duration(unit))
    c["dictionary<string>"] = pa.array(_nulls(["a", "bb", "a", "ccc"] * (N // 4))).dictionary_encode()
    c["dictionary<int64>"] = pa.array(_nulls([7, 8, 7, 9] * (N // 4)), pa.int64()).dictionary_encode()
    ints = [list(range(i % 5)) for i in range(N)]
    c["list<int32>"] = _arr(ints, pa.list_(pa.int32()))
    c["list<string>"] = _arr([[s, None] for s in _STR], pa.list_(pa.string()))
    c["large_list<int64>"] = _arr(ints, pa.large_list(pa.int64()))
    c["fixed_size_list<float64,2>"] = _arr([[i, -i] for i in range(N)], pa.list_(pa.float64(), 2))
    c["list_view<int32>"] = _arr(ints, pa.list_view(pa.int32()))
    c["struct"] = _arr([{"a": i, "b": s} for i, s in enumerate(_STR)], pa.struct([("a", pa.int32()), ("b", pa.string())]))
    c["map<string,int64>"] = _arr([[(s, i), ("k", None)] for i, s in enumerate(_STR)], pa.map_(pa.string(), pa.int64()))
    c["list<struct<list<int32>>>"] = _arr([[{"x": v}] for v in ints], pa.list_(pa.struct([("x", pa.list_(pa.int32()))])))
    c["struct<struct,map,list>"] = _arr(
        [{"s": {"t": t}, "m": [("k", i)], "l": [t, None]} for i, t in enumerate(_TS)],
        pa.struct([("s", pa.struct([("t", pa.timestamp("us"))])), ("m", pa.map_(pa.string(), pa.int32())),
                   ("l", pa.list_(pa.timestamp("ms")))]))
    c["list<duration[ns]>"] = _arr([[d, None] for d in _TD], pa.list_(pa.duration("ns")))
    c["struct<duration[ms]>"] = _arr([{"d": d} for d in _TD], pa.struct([("d", pa.duration("ms"))]))
    c["null"] = pa.nulls(N)
    return c


COLUMNS = _columns()

# KNOWN_DIFFERENCES: (format, case) -> (kind, why scand's scan differs
# from pyarrow's read). kind "type": the same values under another Arrow
# type (the test casts pyarrow's table to scand's types and requires equal
# values); "metadata": equal tables, but to_pandas() differs because schema
# metadata (the pandas key) is not sent yet. Same list in
# docs/parquet-types.md.
_VIEW = ("arrow-go v18.8.0 has no reader for Arrow's view types: pqarrow reads the column as the "
         "plain type the file stores")
KNOWN_DIFFERENCES: dict[tuple[str, str], tuple[str, str]] = {
    ("parquet", "string_view"): ("type", "string, not string_view: " + _VIEW),
    ("parquet", "binary_view"): ("type", "binary, not binary_view: " + _VIEW),
    ("parquet", "list_view<int32>"): ("type", "list, not list_view: " + _VIEW),
}

# ORC cases pyarrow.orc cannot write (checked at collection): not tested.
_ORC_UNWRITABLE: dict[str, str] = {}


def _orc_writable(name: str) -> bool:
    import io
    try:
        po.write_table(pa.table({"c": COLUMNS[name]}), io.BytesIO())
        return True
    except (pa.ArrowException, NotImplementedError, TypeError) as e:
        _ORC_UNWRITABLE[name] = f"{type(e).__name__}: {str(e)[:80]}"
        return False


def _cases():
    out = [pytest.param("parquet", n, id=f"parquet-{n}") for n in COLUMNS]
    out += [pytest.param("orc", n, id=f"orc-{n}") for n in COLUMNS if _orc_writable(n)]
    return out


def _write(fmt: str, table: pa.Table, path: Path) -> pa.Table:
    """Writes table as fmt and returns pyarrow's read of the file."""
    if fmt == "parquet":
        pq.write_table(table, path)
        return pq.read_table(path)
    po.write_table(table, path)
    return po.read_table(path)


def _scan(client, rel: str) -> tuple[pa.Table | None, str | None]:
    try:
        return scan(client, {"paths": [rel]}).table, None
    except ScanError as e:
        return None, f"{e.code}: {e.message[:200]}"


@pytest.mark.parametrize("fmt,name", _cases())
def test_type(gen_client, gdir, fmt, name):
    fname = "t." + fmt
    local = _write(fmt, pa.table({"c": COLUMNS[name]}), gdir / fname)
    got, err = _scan(gen_client, f"{gdir.name}/{fname}")
    assert err is None, f"{fmt} {name}: scand fails where pyarrow reads: {err}"
    diff = table_diff(local, got)
    known = KNOWN_DIFFERENCES.get((fmt, name))
    if known is None:
        assert diff is None, f"{fmt} {name}: scand differs from pyarrow: {diff}"
        return
    kind, why = known
    assert diff is not None, f"{fmt} {name} is listed in KNOWN_DIFFERENCES ({why}) but matches: remove it"
    assert kind == "type", f"{fmt} {name}: {kind} differences are for the pandas cases"
    # Compared as Python values: pyarrow 26 casts list_view to list into
    # an invalid array.
    assert local.to_pylist() == got.to_pylist(), f"{fmt} {name}: the values differ"


def _frame():
    """A DataFrame with pandas' own dtypes and a named index."""
    pd = pytest.importorskip("pandas")
    n = N
    df = pd.DataFrame({
        "Int64": pd.array([None if i % 3 == 1 else i for i in range(n)], dtype="Int64"),
        "boolean": pd.array([None if i % 3 == 1 else i % 2 == 0 for i in range(n)], dtype="boolean"),
        "string": pd.array([None if i % 3 == 1 else f"s{i}" for i in range(n)], dtype="string"),
        "category": pd.Categorical(["a", "b", "a", None] * (n // 4)),
        "timedelta": pd.to_timedelta([i * 1.5 for i in range(n)], unit="s"),
        "datetime_tz": pd.date_range("2024-03-30", periods=n, freq="7h", tz="Europe/Paris"),
        "float": [i / 3 for i in range(n)],
    }, index=pd.Index([f"r{i}" for i in range(n)], name="key"))
    return df


def test_pandas_frame(gen_client, gdir):
    """A pandas-written file: the scan equals pq.read_table of it; the
    DataFrame it gives back is the one written once schema metadata is
    sent (see KNOWN_DIFFERENCES)."""
    df = _frame()
    df.to_parquet(gdir / "df.parquet", engine="pyarrow")
    local = pq.read_table(gdir / "df.parquet")
    got, err = _scan(gen_client, f"{gdir.name}/df.parquet")
    assert err is None, err
    assert table_diff(local, got) is None, table_diff(local, got)
    back = got.to_pandas()
    same = back.equals(df) and list(back.dtypes) == list(df.dtypes) and back.index.name == df.index.name
    known = KNOWN_DIFFERENCES.get(("parquet", "pandas DataFrame"))
    assert same == (known is None), f"round trip {'matches' if same else 'differs'}; known: {known}"


def test_int96_timestamps(gen_client, gdir):
    """INT96 timestamps (as Spark writes them), flat and nested, in and out
    of the nanosecond range (years 1677..2262): pyarrow reads them as
    timestamp[ns], wrapping the values outside around, and so does scand."""
    ts = [dt.datetime(1500, 1, 1), dt.datetime(2024, 2, 29, 12, 0, 0, 123456), None, dt.datetime(3000, 6, 1)]
    typ = pa.timestamp("us")
    table = pa.table({
        "ts": pa.array(ts, typ),
        "list": pa.array([[t, None] for t in ts], pa.list_(typ)),
        "struct": pa.array([{"t": t} for t in ts], pa.struct([("t", typ)])),
        "map": pa.array([[("k", t)] for t in ts], pa.map_(pa.string(), typ)),
    })
    pq.write_table(table, gdir / "int96.parquet", use_deprecated_int96_timestamps=True, store_schema=False)
    assert pq.ParquetFile(gdir / "int96.parquet").schema.column(0).physical_type == "INT96"
    local = pq.read_table(gdir / "int96.parquet")
    got, err = _scan(gen_client, f"{gdir.name}/int96.parquet")
    assert err is None, err
    assert table_diff(local, got) is None, table_diff(local, got)
