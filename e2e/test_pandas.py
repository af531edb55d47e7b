"""pandas round trips and schema unification like pyarrow.dataset
(docs/schemas.md): a DataFrame written with df.to_parquet comes back from
scand equal, dtypes and named index included, and a folder of files that
disagree on timestamp units scans to the table pyarrow.dataset reads."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pandas.testing as pdt
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from scandlib import scan


def frame(offset: int = 0) -> pd.DataFrame:
    n = 5
    return pd.DataFrame({
        "i": pd.array([1, None, 3, 4, 5], dtype="Int64"),
        "b": pd.array([True, None, False, True, None], dtype="boolean"),
        "s": pd.array(["x", None, "zz", "", "é"], dtype="string"),
        "c": pd.Categorical(["a", "b", "a", None, "c"]),
        "t": pd.Series(pd.to_datetime(["2026-01-01 00:00:00.123456789", None, "2026-06-30 12:00:00.0",
                                       "1999-12-31 00:00:00.0", "2026-03-29 02:30:00.0"]), dtype="datetime64[ns]")
             .dt.tz_localize("Europe/Paris", nonexistent="shift_forward"),
    }, index=pd.Index(range(offset, offset + n), name="row_id"))


def test_pandas_round_trip(gen_client, gdir):
    df = frame()
    df.to_parquet(gdir / "df.parquet")
    res = scan(gen_client, {"paths": [f"{gdir.name}/df.parquet"]})
    assert res.info.schema.metadata == res.table.schema.metadata, "FlightInfo and stream schemas differ"
    assert b"pandas" in res.table.schema.metadata
    pdt.assert_frame_equal(res.table.to_pandas(), df)
    pdt.assert_frame_equal(res.table.to_pandas(), pd.read_parquet(gdir / "df.parquet"))


def test_pandas_dataset_of_two_files(gen_client, gdir):
    """Two files of one frame: the first file's metadata, the rows of both,
    as pyarrow.dataset reads them."""
    frame(0).to_parquet(gdir / "p0.parquet")
    frame(5).to_parquet(gdir / "p1.parquet")
    res = scan(gen_client, {"paths": [f"{gdir.name}/"]})
    want = ds.dataset([gdir / "p0.parquet", gdir / "p1.parquet"]).to_table()
    assert res.table.schema.equals(want.schema, check_metadata=True)
    pdt.assert_frame_equal(res.table.to_pandas(), want.to_pandas())


def test_no_field_id_leak(gen_client, gdir):
    t = pa.table({"s": pa.array([{"x": 1, "y": [1, 2]}]), "m": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int64()))})
    pq.write_table(t, gdir / "n.parquet")
    res = scan(gen_client, {"paths": [f"{gdir.name}/n.parquet"]})
    assert "field_id" not in str(res.info.schema) and "field_id" not in str(res.table.schema), res.table.schema
    # (arrow-go names a map's entries "entries", pyarrow its own way: the
    # struct is compared, metadata included.)
    want = ds.dataset(gdir / "n.parquet").schema
    assert res.table.schema.field("s").equals(want.field("s"), check_metadata=True)


def write_ts(path, unit: str, values):
    pq.write_table(pa.table({"id": pa.array(range(len(values)), pa.int64()),
                             "t": pa.array(values, pa.timestamp(unit))}), path)


def test_mixed_timestamp_units_like_pyarrow_dataset(gen_client, gdir):
    day = dt.datetime(2026, 1, 1, 12, 30, 15, 250000)
    write_ts(gdir / "a_us.parquet", "us", [day, None])
    write_ts(gdir / "b_ms.parquet", "ms", [day])
    write_ts(gdir / "c_ns.parquet", "ns", [pd.Timestamp(day), pd.Timestamp("2000-01-01")])
    want = ds.dataset(str(gdir)).to_table()
    res = scan(gen_client, {"paths": [f"{gdir.name}/"]})
    assert res.table.schema.field("t").type == pa.timestamp("us")
    assert res.table.equals(want), f"{res.table}\n!=\n{want}"


def test_lossy_timestamp_cast_fails_naming_file_and_column(gen_client, gdir):
    write_ts(gdir / "a_us.parquet", "us", [dt.datetime(2026, 1, 1)])
    pq.write_table(pa.table({"id": pa.array([0], pa.int64()), "t": pa.array([1767225600123456789], pa.timestamp("ns"))}),
                   gdir / "b_ns.parquet")
    with pytest.raises(pa.ArrowInvalid):
        ds.dataset(str(gdir)).to_table()  # pyarrow refuses too
    with pytest.raises(Exception) as e:
        scan(gen_client, {"paths": [f"{gdir.name}/"]})
    assert "b_ns.parquet" in str(e.value) and '"t"' in str(e.value), str(e.value)
