"""Pieces that need no server: requests, stats, plans."""

from __future__ import annotations

from pathlib import PurePosixPath

import pyarrow as pa
import pytest

import scand
from scand._plan import Plan


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


def test_plan_without_endpoints():
    p = Plan(request={"paths": ["x"]}, schema=pa.schema([("a", pa.int64())]), total_records=0, total_bytes=0,
             endpoints=0, planning_seconds=0.001, columns=["a"])
    assert p.bytes_per_endpoint == 0 and p.min_reads == 0
    assert "0 rows" in repr(p)
    assert "<table>" in p._repr_html_()
