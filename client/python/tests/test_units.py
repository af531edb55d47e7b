"""Pieces that need no server: requests, stats, plans."""

from __future__ import annotations

from pathlib import PurePosixPath

import pyarrow as pa
import pytest

import scand
from scand._plan import Plan


def test_build_request_table():
    import datetime

    assert scand.build_request(None, "a, b", table="wh/db/t", snapshot_id=7) == {
        "table": "wh/db/t", "snapshot_id": 7, "columns": ["a", "b"]}
    assert scand.build_request(None, table="wh/db/t", ref="nightly") == {"table": "wh/db/t", "ref": "nightly"}
    assert scand.build_request(None, table="wh/db/t", as_of=datetime.datetime(2026, 1, 2, 3, 4, 5)) == {
        "table": "wh/db/t", "as_of": "2026-01-02T03:04:05+00:00"}
    assert scand.build_request(None, table="s3://b/t", as_of="2026-01-02T03:04:05Z")["as_of"] == "2026-01-02T03:04:05Z"
    with pytest.raises(scand.InvalidRequest, match="exclusive"):
        scand.build_request("a.parquet", table="wh/db/t")
    with pytest.raises(scand.InvalidRequest, match="pass table"):
        scand.build_request("a.parquet", snapshot_id=3)
    # A Delta table's version; 0 (the first version) is sent too.
    assert scand.build_request(None, table="sales", version=0) == {"table": "sales", "version": 0}
    assert scand.build_request(None, "id", table="sales", version=12) == {
        "table": "sales", "version": 12, "columns": ["id"]}
    with pytest.raises(scand.InvalidRequest, match="pass table"):
        scand.build_request("a.parquet", version=3)
    with pytest.raises(TypeError, match="version"):
        scand.build_request(None, table="sales", version="3")


def test_build_request():
    assert scand.build_request("a.parquet") == {"paths": ["a.parquet"]}
    assert scand.build_request(["a/*.parquet", PurePosixPath("b/c.parquet")], columns="x", limit=0,
                               batch_rows=None, split_bytes=10) == {
        "paths": ["a/*.parquet", "b/c.parquet"], "columns": ["x"], "split_bytes": 10}
    assert scand.build_request("d/", columns=["s.a", "t"], limit=5, batch_rows=7) == {
        "paths": ["d/"], "columns": ["s.a", "t"], "limit": 5, "batch_rows": 7}
    assert scand.build_request("d/", columns=[]) == {"paths": ["d/"]}
    with pytest.raises(TypeError):
        scand.build_request("d/", limit=True)
    with pytest.raises(TypeError):
        scand.build_request(["a", 3])


def test_stream_stats_from_metadata_keeps_unknown_keys():
    s = scand.StreamStats.from_metadata(3, {"path": "a.parquet", "rows": 10, "reads": 2, "bytes_fetched": 100,
                                            "io_seconds": 0.5, "new_figure": 7})
    assert (s.endpoint, s.path, s.rows, s.reads, s.bytes_fetched, s.io_seconds) == (3, "a.parquet", 10, 2, 100, 0.5)
    assert s.batches == 0 and s.extra == {"new_figure": 7}
    assert s.as_dict()["new_figure"] == 7


def test_stream_stats_reads_int64_as_numbers_or_strings():
    """scand sends int64 figures as JSON numbers; protojson writes them as strings,
    non-finite doubles as "NaN"/"Infinity", and names in lowerCamelCase."""
    big = 2**53 + 1  # beyond a double's exact integers: a string keeps it exact
    numbers = {"path": "a.parquet", "rows": 10, "batches": 2, "reads": 3, "bytes_fetched": big, "bytes_used": 90,
               "bytes_planned": 95, "bytes_wasted": 5, "cache_hits": 1, "hole": 4096, "io_seconds": 0.25,
               "elapsed_seconds": 1.5}
    strings = {k: (str(v) if isinstance(v, int) else v) for k, v in numbers.items()}
    camel = {"path": "a.parquet", "rows": "10", "batches": "2", "reads": "3", "bytesFetched": str(big),
             "bytesUsed": "90", "bytesPlanned": "95", "bytesWasted": "5", "cacheHits": "1", "hole": "4096",
             "ioSeconds": 0.25, "elapsedSeconds": 1.5}
    # A server older than paths names only the first file: it counts as one.
    want = scand.StreamStats(endpoint=0, files=1, paths=("a.parquet",), **numbers)
    for meta in (numbers, strings, camel):
        s = scand.StreamStats.from_metadata(0, meta)
        assert s == want, meta
        assert s.extra == {}
        assert isinstance(s.rows, int) and isinstance(s.io_seconds, float)
    assert scand.StreamStats.from_metadata(0, strings).bytes_fetched == big
    odd = scand.StreamStats.from_metadata(1, {"rows": "not a number", "reads": None, "hole": True,
                                              "io_seconds": "0.5", "elapsed_seconds": "Infinity"})
    assert (odd.rows, odd.reads, odd.hole, odd.io_seconds) == (0, 0, 0, 0.5)
    assert odd.elapsed_seconds == float("inf")


def test_stats_sums_in_endpoint_order():
    st = scand.Stats()
    st.endpoints, st.total_records = 2, 30
    st._add_stream(scand.StreamStats.from_metadata(1, {"path": "b", "rows": 20, "bytes_fetched": 5}))
    st._add_stream(scand.StreamStats.from_metadata(0, {"path": "a", "rows": 10, "bytes_fetched": 7}))
    assert [s.path for s in st.streams] == ["a", "b"]
    assert st.rows == 30 and st.bytes_fetched == 12 and st.files == 2
    assert "running" in repr(st)
    assert st.to_table().column("path").to_pylist() == ["a", "b"]
    assert scand.Stats().to_table().num_rows == 0


def test_stats_count_and_name_every_file_of_packed_streams():
    st = scand.Stats()
    st.endpoints = 2
    st._add_stream(scand.StreamStats.from_metadata(0, {
        "path": "f/000.parquet", "files": 3, "paths": ["f/000.parquet", "f/001.parquet", "f/002.parquet"],
        "bytes_fetched": 100, "bytes_used": 60, "bytes_wasted": 10, "bytes_unused": 30}))
    st._add_stream(scand.StreamStats.from_metadata(1, {
        "path": "f/002.parquet", "files": 2, "paths": ["f/002.parquet", "f/003.parquet"],
        "bytes_fetched": 50, "bytes_used": 50}))
    assert st.files == 4
    assert st.file_paths == ["f/000.parquet", "f/001.parquet", "f/002.parquet", "f/003.parquet"]
    assert st.streams[0].paths == ("f/000.parquet", "f/001.parquet", "f/002.parquet")
    assert st.bytes_fetched == st.bytes_used + st.bytes_wasted + st.bytes_unused == 150
    text = str(st)
    assert "4 file(s): f/000.parquet, f/001.parquet, f/002.parquet, ... 1 more" in text, text
    assert "= used + wasted + unused" in text and "unused" in text
    assert st.as_dict()["bytes_unused"] == 30
    assert st.to_table().column("paths").to_pylist()[1] == ["f/002.parquet", "f/003.parquet"]
    assert "stream" not in st.streams[0].extra and "paths" not in st.streams[0].extra


def test_plan_without_endpoints():
    p = Plan(request={"paths": ["x"]}, schema=pa.schema([("a", pa.int64())]), total_records=0, total_bytes=0,
             endpoints=0, planning_seconds=0.001, columns=["a"])
    assert p.bytes_per_endpoint == 0 and p.min_reads == 0
    assert "0 rows" in repr(p)
    assert "<table>" in p._repr_html_()


def test_listed_files_and_catalog_tables():
    import json

    import pyarrow.flight as flight

    from scand._connection import FileInfo, _listed

    schema = pa.schema([])
    path = flight.FlightInfo(schema, flight.FlightDescriptor.for_path("d/a.parquet"), [], 10, 1234)
    assert _listed(path) == FileInfo("d/a.parquet", 1234, "file")
    table = flight.FlightInfo(schema, flight.FlightDescriptor.for_command(json.dumps({"table": "lake.db.t"})), [], -1, -1)
    assert _listed(table) == FileInfo("lake.db.t", -1, "table")
    other = flight.FlightInfo(schema, flight.FlightDescriptor.for_command(b"\x00opaque"), [], -1, -1)
    assert _listed(other).kind == "command"
    # FileInfo stays a (path, size) pair to code that unpacks two fields by name.
    assert FileInfo("x", 1).kind == "file"
