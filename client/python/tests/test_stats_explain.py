"""IO figures of a scan (scand.Stats) and plans (conn.explain)."""

from __future__ import annotations

import subprocess

import pyarrow as pa
import pytest

import scand
from scand._ticket import PlanEndpoint, decode_ticket
from scand_testlib import N_ROWS, ROW_GROUP, require_bin


def test_stats_of_a_whole_scan(conn):
    reader = conn.scan("multi/", split_bytes=1)
    st = conn.last_stats
    assert not st.done
    table = reader.read_all()
    assert st is conn.last_stats
    assert st.done and st.complete and st.error is None
    assert st.endpoints == 20 and len(st.streams) == 20
    assert [s.endpoint for s in st.streams] == list(range(20))
    assert st.files == 4
    assert [s.path for s in st.streams[:5]] == ["multi/part-0.parquet"] * 5
    assert st.rows == st.rows_received == table.num_rows == st.total_records == 20_000
    assert st.batches >= 20
    assert st.reads >= 20
    assert 0 < st.bytes_used <= st.bytes_fetched
    assert st.bytes_planned > 0
    assert st.elapsed_seconds > 0 and st.wall_seconds > 0
    assert st.total_bytes > 0
    d = st.as_dict()
    assert d["rows"] == 20_000 and d["streams"] == 20 and d["complete"] is True


def test_packed_files_are_counted_and_named(conn):
    """Small files packed into one endpoint: last_stats counts and names
    every file read, and the bytes add up (fetched = used + wasted + unused)."""
    conn.scan("multi/").read_all()
    st = conn.last_stats
    assert st.complete
    names = [f"multi/part-{i}.parquet" for i in range(4)]
    assert st.files == 4 and st.file_paths == names
    assert sorted(p for s in st.streams for p in s.paths) == names
    assert len(st.streams) < 4  # packed: fewer endpoints than files
    for s in st.streams:
        assert s.files == len(s.paths) and s.paths[0] == s.path
        assert s.bytes_fetched == s.bytes_used + s.bytes_wasted + s.bytes_unused, s
    assert st.bytes_fetched == st.bytes_used + st.bytes_wasted + st.bytes_unused
    assert "4 file(s): multi/part-0.parquet" in str(st)
    # A limit reads fewer files, and says which.
    conn.scan("multi/", limit=6_000).read_all()
    assert conn.last_stats.file_paths == names[:2]


def test_stream_figures_sum_up(conn):
    conn.scan("data/a.parquet", columns=["id", "name"], split_bytes=1).read_all()
    st = conn.last_stats
    for key in ("rows", "batches", "reads", "bytes_fetched", "bytes_used", "bytes_planned", "bytes_wasted",
                "bytes_unused", "cache_hits"):
        assert getattr(st, key) == sum(getattr(s, key) for s in st.streams), key
    t = st.to_table()
    assert isinstance(t, pa.Table) and t.num_rows == N_ROWS // ROW_GROUP
    for col in ("endpoint", "path", "rows", "reads", "bytes_fetched", "bytes_used", "io_seconds", "elapsed_seconds"):
        assert col in t.column_names
    df = st.to_pandas()
    assert int(df["rows"].sum()) == N_ROWS


def test_stats_repr_and_html(conn):
    conn.scan("data/a.parquet", limit=10).read_all()
    st = conn.last_stats
    assert "complete" in repr(st) and "10 rows" in repr(st)
    text = str(st)
    assert "bytes fetched" in text and "reads" in text
    html = st._repr_html_()
    assert "<table>" in html and "bytes fetched" in html and "data/a.parquet" in html


def test_own_stats_object(conn):
    mine = scand.Stats()
    conn.scan("multi/part-1.parquet", stats=mine).read_all()
    assert mine.complete and mine.rows == 5_000
    assert conn.last_stats is mine


def test_stats_of_a_scan_stopped_early(conn):
    reader = conn.scan("big/big.parquet", split_bytes=1, batch_rows=1_000, max_workers=2, read_ahead=1)
    st = conn.last_stats
    it = iter(reader)
    for _ in range(3):
        next(it)
    del it, reader  # the reader goes away: the scan ends
    assert st.done and not st.complete
    assert st.rows_received == 3_000
    assert "stopped early" in repr(st)


def test_stats_of_an_empty_scan(conn):
    conn.scan("empty/none.parquet").read_all()
    st = conn.last_stats
    assert st.complete and st.rows == 0
    assert st.to_table().num_rows == len(st.streams)


def test_explain(conn):
    plan = conn.explain("data/a.parquet", columns=["id", "nested.x"], split_bytes=1)
    assert isinstance(plan, scand.Plan)
    assert plan.total_records == N_ROWS
    assert plan.endpoints == N_ROWS // ROW_GROUP
    assert plan.min_reads == plan.endpoints
    assert plan.total_bytes > 0
    assert plan.columns == ["id", "nested"]
    assert plan.schema.field("nested").type.num_fields == 1
    assert plan.paths == ["data/a.parquet"]
    # a scan of the same request runs exactly these endpoints
    conn.scan("data/a.parquet", columns=["id", "nested.x"], split_bytes=1).read_all()
    assert len(conn.last_stats.streams) == plan.endpoints
    assert conn.last_stats.reads >= plan.min_reads
    assert conn.last_stats.total_bytes == plan.total_bytes


def test_explain_limit_plans_fewer_endpoints(conn):
    full = conn.explain("data/a.parquet", split_bytes=1)
    few = conn.explain("data/a.parquet", split_bytes=1, limit=ROW_GROUP + 1)
    assert few.total_records == ROW_GROUP + 1
    assert few.endpoints == 2 < full.endpoints


def test_explain_reads_nothing(conn):
    conn.scan("multi/part-0.parquet").read_all()
    before = conn.last_stats
    conn.explain("big/")
    assert conn.last_stats is before


def test_plan_repr_and_html(conn):
    plan = conn.explain("multi/*.parquet", columns=["name"], limit=100)
    assert "100 rows" in repr(plan) and "endpoint" in repr(plan)
    text = str(plan)
    for word in ("paths", "rows", "bytes to read", "endpoints", "reads", "files:", "row groups"):
        assert word in text
    html = plan._repr_html_()
    assert "<table>" in html and "schema" in html
    assert plan.as_dict()["request"] == {"paths": ["multi/*.parquet"], "columns": ["name"], "limit": 100}


def _block(text, start):
    """The lines of text from the line `start` to the next blank line."""
    lines = text.splitlines()
    i = lines.index(start)
    j = next((k for k in range(i, len(lines)) if not lines[k].strip()), len(lines))
    return lines[i:j]


@pytest.mark.parametrize("args", [
    {"paths": "multi/", "split_bytes": 1},
    {"paths": "data/a.parquet", "split_bytes": 1, "limit": ROW_GROUP + 1},
])
def test_explain_lists_endpoints_as_scand_explain_does(server, conn, args):
    """conn.explain() decodes the tickets as the Go client does: its files
    and endpoints blocks are the lines `scand explain` prints."""
    plan = conn.explain(**args)
    cmd = [require_bin(), "explain", "--server", server.location, args["paths"], "--split-bytes", "1"]
    if "limit" in args:
        cmd += ["--limit", str(args["limit"])]
    cli = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=60).stdout
    ours = str(plan)
    for start in ("files:", "endpoints:"):
        assert _block(ours, start) == _block(cli, start)
    assert len(plan.splits) == plan.endpoints
    assert all(e.path and e.row_groups and e.rows for e in plan.splits)
    assert sum(e.returns for e in plan.splits) == plan.total_records
    assert sum(f.rows for f in plan.files) == plan.total_records


def test_decode_ticket_unsigned_signed_and_garbage():
    def varint(n):
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def fld(num, wire, v):
        key = varint(num << 3 | wire)
        return key + (varint(v) if wire == 0 else varint(len(v)) + v)

    task = (fld(1, 2, b"t/a.parquet") + fld(2, 0, 4096) + fld(4, 0, 2) +
            fld(5, 2, varint(3) + varint(4) + varint(5)) + fld(7, 0, 10) + fld(10, 0, 300))
    want = PlanEndpoint(path="t/a.parquet", row_groups=[3, 4, 5], rows=300, limit=10, size=4096, format="orc")
    assert decode_ticket(task) == want
    signed = fld(1, 0, 1) + fld(2, 2, b"k1") + fld(3, 2, fld(1, 0, 1) + fld(5, 2, task)) + fld(4, 2, b"\x01" * 32)
    assert decode_ticket(signed) == want
    assert want.returns == 10
    assert decode_ticket(b"\xff\xff") is None  # truncated varint
