"""The filter of a request, without a server: SQL text as it is, pyarrow
Expressions as Substrait against the scan's schema, PlanStats and the
filter figures of StreamStats."""

from __future__ import annotations

import base64
import dataclasses
import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.substrait as substrait
import pytest

import scand
from scand._plan import Plan

SCHEMA = pa.schema([("id", pa.int64()), ("city", pa.string()), ("fare", pa.float64()), ("year", pa.int32())])


def decode(req: dict) -> pc.Expression:
    """The Expression a request's filter_substrait holds, read back the way
    pyarrow reads Substrait."""
    raw = base64.b64decode(req["filter_substrait"], validate=True)
    return substrait.deserialize_expressions(raw).expressions["filter"]


def test_sql_text_goes_as_is():
    req = scand.build_request("trips/", columns="city", filter="fare > 10 AND city IN ('Paris', 'Rome')")
    assert req == {"paths": ["trips/"], "columns": ["city"], "filter": "fare > 10 AND city IN ('Paris', 'Rome')"}
    assert "filter_substrait" not in req
    json.dumps(req)  # the request is JSON


def test_no_filter_sends_neither_field():
    req = scand.build_request("trips/", filter=None)
    assert "filter" not in req and "filter_substrait" not in req


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_empty_sql_text_is_refused(text):
    with pytest.raises(scand.InvalidRequest, match="filter is empty"):
        scand.build_request("trips/", filter=text)


def test_expression_goes_as_substrait_against_the_schema():
    expr = (pc.field("fare") > 10) & pc.field("city").isin(["Paris", "Rome"])
    req = scand.build_request("trips/", columns=["city"], filter=expr, schema=SCHEMA)
    assert set(req) == {"paths", "columns", "filter_substrait"}
    back = decode(req)
    # Substrait names columns by position: bound to SCHEMA, "fare" is field 2
    # and "city" field 1, whatever the projection.
    t = pa.table({"id": [1, 2, 3], "city": ["Paris", "Oslo", "Rome"], "fare": [11.0, 20.0, 5.0],
                  "year": [1, 2, 3]}, schema=SCHEMA)
    assert t.filter(back).column("id").to_pylist() == [1]
    assert t.filter(expr).equals(t.filter(back))


def test_expression_needs_the_schema():
    with pytest.raises(TypeError, match="schema"):
        scand.build_request("trips/", filter=pc.field("fare") > 10)


def test_expression_on_unknown_column_lists_the_columns():
    with pytest.raises(scand.InvalidRequest) as ei:
        scand.build_request("trips/", filter=pc.field("price") > 10, schema=SCHEMA)
    msg = str(ei.value)
    assert "price" in msg and "fare (double)" in msg and "city (string)" in msg


def test_expression_pyarrow_cannot_serialize_goes_as_sql():
    req = scand.build_request("trips/", filter=pc.match_like(pc.field("city"), "P%"), schema=SCHEMA)
    assert req["filter"] == "(\"city\" LIKE 'P%')"
    assert "filter_substrait" not in req


def test_expression_without_a_sql_form_points_to_sql():
    with pytest.raises(scand.InvalidRequest, match="SQL text"):
        scand.build_request("trips/", filter=pc.match_like(pc.field("city"), "P%", ignore_case=True), schema=SCHEMA)


def test_serialized_substrait_bytes_go_as_they_are():
    raw = bytes(substrait.serialize_expressions([pc.field("id") == 3], ["filter"], SCHEMA))
    for value in (raw, bytearray(raw), pa.py_buffer(raw)):
        req = scand.build_request("trips/", filter=value)
        assert base64.b64decode(req["filter_substrait"]) == raw


@pytest.mark.parametrize("bad", [42, ["fare > 10"], {"fare": 10}])
def test_other_filter_types_are_refused(bad):
    with pytest.raises(TypeError, match="filter must be"):
        scand.build_request("trips/", filter=bad)


def test_plan_stats_from_app_metadata():
    meta = {"files": 10, "files_pruned_by_partition": 6, "files_pruned_by_stats": 1, "row_groups": 12,
            "row_groups_pruned": 9, "bytes_without_filter": 10_000, "bytes_with_filter": 2_500,
            "rows_with_filter": 3_000, "rows_without_filter": 40_000, "filter": "year = 2026", "new_figure": 1}
    ps = scand.PlanStats.from_metadata(json.dumps(meta).encode())
    assert (ps.files, ps.files_kept, ps.row_groups_kept, ps.rows_with_filter) == (10, 3, 3, 3_000)
    assert ps.filter == "year = 2026" and ps.extra == {"new_figure": 1}
    assert ps.as_dict()["files_kept"] == 3
    # protojson's form: lowerCamelCase names, int64 as strings
    camel = {"files": "10", "filesPrunedByPartition": "6", "filesPrunedByStats": "1", "rowGroups": "12",
             "rowGroupsPruned": "9", "bytesWithoutFilter": "10000", "bytesWithFilter": "2500",
             "rowsWithFilter": "3000", "rowsWithoutFilter": "40000", "filter": "year = 2026", "newFigure": 1}
    from_camel = scand.PlanStats.from_metadata(camel)
    assert dataclasses.replace(from_camel, extra={}) == dataclasses.replace(ps, extra={})
    assert from_camel.extra == {"newFigure": 1}
    for none in (b"", b"not json", b"[1, 2]", None):
        assert scand.PlanStats.from_metadata(none) is None


def test_plan_shows_the_pruning_levels():
    ps = scand.PlanStats(files=4, files_pruned_by_partition=2, files_pruned_by_stats=1, row_groups=8,
                         row_groups_pruned=6, bytes_without_filter=4096, bytes_with_filter=1024,
                         rows_with_filter=100, rows_without_filter=800, filter="fare > 10")
    p = Plan(request={"paths": ["x"], "filter": "fare > 10"}, schema=SCHEMA, total_records=100, total_bytes=1024,
             endpoints=1, planning_seconds=0.001, columns=SCHEMA.names, stats=ps)
    text = str(p)
    assert "1 of 4 kept: 2 pruned by partition, 1 by statistics" in text
    assert "2 of 8 kept" in text and "6 pruned by statistics" in text
    assert "1.0 KiB (1,024) of 4.0 KiB without" in text
    assert "at most 100 of 800" in text
    assert "fare &gt; 10" in p._repr_html_()
    assert p.as_dict()["stats"]["files_kept"] == 1
    # A server before filters sends no PlanStats.
    bare = Plan(request={"paths": ["x"]}, schema=SCHEMA, total_records=1, total_bytes=1, endpoints=1,
                planning_seconds=0.0, columns=SCHEMA.names)
    assert bare.stats is None and bare.as_dict()["stats"] is None and "pruned" not in str(bare)


def test_stream_stats_filter_figures():
    s = scand.StreamStats.from_metadata(0, {"path": "a", "rows": 3, "rows_read": 10, "rows_filtered": 7})
    assert (s.rows_read, s.rows_filtered, s.extra) == (10, 7, {})
    camel = scand.StreamStats.from_metadata(0, {"path": "a", "rows": "3", "rowsRead": "10", "rowsFiltered": "7"})
    assert camel == s
    old = scand.StreamStats.from_metadata(0, {"path": "a", "rows": 3})  # a server before filters
    assert (old.rows_read, old.rows_filtered) == (0, 0)
    st = scand.Stats()
    st._add_stream(s)
    st._add_stream(scand.StreamStats.from_metadata(1, {"path": "b", "rows": 1, "rows_read": 5, "rows_filtered": 4}))
    assert (st.rows_read, st.rows_filtered) == (15, 11)
    assert st.as_dict()["rows_filtered"] == 11
    assert "15 decoded, 11 rejected by the filter" in str(st)
    assert st.to_table().column("rows_read").to_pylist() == [10, 5]


def test_expression_against_a_schema_with_field_metadata():
    """Parquet field ids come back as field metadata, nested ones too;
    Substrait cannot carry them, so they are dropped (positions stay)."""
    meta = {b"PARQUET:field_id": b"1"}
    s = pa.schema([pa.field("id", pa.int64(), metadata=meta),
                   pa.field("nested", pa.struct([pa.field("x", pa.int32(), metadata=meta)]), metadata=meta)],
                  metadata={b"k": b"v"})
    req = scand.build_request("t/", filter=pc.field("id") > 3, schema=s)
    t = pa.table({"id": [1, 5], "nested": [{"x": 1}, {"x": 2}]})
    assert t.filter(decode(req)).column("id").to_pylist() == [5]


def test_row_groups_kept_counts_bloom_pruning():
    from scand._plan import PlanStats
    st = PlanStats.from_metadata(b'{"row_groups": 20, "row_groups_pruned": 12, "row_groups_pruned_by_bloom": 7}')
    assert st.row_groups_kept == 1
    assert "7 by bloom filters" in dict(st.rows())["row groups"]


def test_plan_stats_of_a_table():
    from scand._plan import PlanStats
    st = PlanStats.from_metadata(b'{"files": 3, "manifests_read": 2, "manifests_skipped": 5, '
                                 b'"table_files_pruned": 9, "delete_files": 1}')
    assert (st.manifests_read, st.manifests_skipped, st.table_files_pruned, st.delete_files) == (2, 5, 9, 1)
    assert st.extra == {}
    rows = dict(st.rows())
    assert rows["manifests"] == "2 read, 5 skipped by partition summaries"
    assert rows["table data files"] == "9 pruned by partition values and column statistics; 1 delete files attached"
    assert "manifests" not in dict(PlanStats.from_metadata(b'{"files": 3}').rows())
