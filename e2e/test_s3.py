"""scand on S3: the real binary against a real S3 server (versitygw).

Every object here is also written to a local directory that is the scand
server's --root (conftest.S3Mirror), so each test can compare a scan of
s3://scand-e2e/KEY with a scan of the local file KEY through the same server.

  test_same_as_local      corpus Parquet and ORC files, generated files with
                          many row groups / stripes, whole and projected, one
                          and many endpoints
  test_glob / _prefix     s3://bucket/dir/*.parquet and s3://bucket/dir/
  test_list_flights       ListFlights with an s3:// prefix
  test_missing_*          NOT_FOUND for a missing key, bucket, or empty glob
  test_bad_credentials    PERMISSION_DENIED from a scand with a wrong secret
  test_object_replaced    FAILED_PRECONDITION when the object changes between
                          GetFlightInfo and DoGet (If-Match)
  test_get_counts_*       the GETs of a planned scan, counted two ways: the
                          `reads` of each stream's app_metadata and
                          scand_storage_requests_total{backend="s3",op="read"}
                          from --metrics-listen; they must agree
  test_cancel_stops_gets  through toxiproxy (30 ms latency): a client that
                          cancels a scan stops the server's GETs within 1 s

Needs versitygw (and toxiproxy for the cancel test): scripts/install-tools.sh.
"""

from __future__ import annotations

import os
import struct
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from scandlib import (REPO, assert_tables_equal, call_options, command, expect_error, grpc_code, grpc_message,
                      read_stream, scan)
from s3lib import S3_BUCKET, wait_for

# Corpus files scanned from S3 and from disk (skipped when absent).
CORPUS = [
    "parquet-testing/alltypes_plain.snappy.parquet",
    "parquet-testing/datapage_v2.snappy.parquet",
    "parquet-testing/nested_structs.rust.parquet",
    "parquet-testing/nested_maps.snappy.parquet",
    "parquet-testing/list_columns.parquet",
    "parquet-testing/delta_byte_array.parquet",
    "parquet-testing/byte_stream_split.zstd.parquet",
    "parquet-testing/lz4_raw_compressed_larger.parquet",
    "orc-examples/TestOrcFile.test1.orc",
    "orc-examples/demo-12-zlib.orc",
    "orc-examples/TestOrcFile.testSnappy.orc",
    "orc-examples/decimal.orc",
]
GENERATED = ["gen/mixed-10rg.parquet", "gen/strings-zstd-3rg.parquet", "gen/stripes.orc"]

# The planned case of the GET-count tests: 128 int64 columns, 4 row groups
# of 2048 rows, plain encoding, no compression: every column chunk is about
# 16 KiB, a row group about 2 MiB.
WIDE_KEY = "wide/wide128.parquet"
WIDE_COLS, WIDE_ROW_GROUPS, WIDE_RG_ROWS = 128, 4, 2048
ALTERNATE = [f"c{i:03d}" for i in range(0, WIDE_COLS, 2)]
# Pinned settings of the counting server: a 4 MiB hole merges every gap (one
# skipped column, ~16 KiB), and requests of at most 3 MiB split the 8 MiB of
# alternate columns into 3 GETs (merging runs across row groups).
PINNED_HOLE, PINNED_MAX_REQUEST = 4 << 20, 3 << 20
TAIL_SIZE = 64 << 10  # iosched.DefaultTailSize


def rand_int64(rows: int) -> pa.Array:
    """Random, incompressible int64 values (no numpy in the venv)."""
    return pa.Array.from_buffers(pa.int64(), rows, [None, pa.py_buffer(os.urandom(rows * 8))])


def mixed_table(rows: int) -> pa.Table:
    ids = pa.array(range(rows), pa.int64())
    return pa.table({
        "id": ids,
        "x": pa.array([i * 0.5 if i % 7 else None for i in range(rows)], pa.float64()),
        "name": pa.array([f"name-{i % 97}" if i % 11 else None for i in range(rows)]),
        "flag": pa.array([i % 3 == 0 for i in range(rows)]),
        "s": pa.array([{"a": i, "b": f"b{i % 5}"} for i in range(rows)]),
        "l": pa.array([[i, i + 1][: i % 3] for i in range(rows)], pa.list_(pa.int32())),
        "r": rand_int64(rows),
    })


@pytest.fixture(scope="module")
def s3_files(s3_mirror, testdata, tmp_path_factory) -> set[str]:
    """Uploads the corpus files and generated files; returns the keys."""
    keys = set()
    for rel in CORPUS:
        src = testdata / rel
        if src.exists():
            s3_mirror.put(f"corpus/{rel}", src)
            keys.add(f"corpus/{rel}")
    tmp = tmp_path_factory.mktemp("s3gen")
    t = mixed_table(10_000)
    pq.write_table(t, tmp / "a.parquet", row_group_size=1000, compression="snappy")
    s3_mirror.put("gen/mixed-10rg.parquet", tmp / "a.parquet")
    words = pa.table({"w": pa.array([f"word-{i % 300}" for i in range(30_000)]), "n": pa.array(range(30_000))})
    pq.write_table(words, tmp / "b.parquet", row_group_size=10_000, compression="zstd")
    s3_mirror.put("gen/strings-zstd-3rg.parquet", tmp / "b.parquet")
    orc.write_table(t.drop_columns(["s", "l"]), tmp / "c.orc", stripe_size=64 << 10, compression="zlib")
    assert orc.ORCFile(tmp / "c.orc").nstripes > 1
    s3_mirror.put("gen/stripes.orc", tmp / "c.orc")
    keys.update(GENERATED)

    # For globs and prefixes: three parts, one in a subdirectory, and the
    # names a listing skips (a _SUCCESS marker, a .crc file).
    for i, key in enumerate(["glob/part-0.parquet", "glob/part-1.parquet", "glob/sub/part-2.parquet"]):
        pq.write_table(mixed_table(100 + i), tmp / f"p{i}.parquet")
        s3_mirror.put(key, tmp / f"p{i}.parquet")
    s3_mirror.put("glob/_SUCCESS", b"")
    s3_mirror.put("glob/.part-0.parquet.crc", b"not parquet")
    s3_mirror.put("glob/sub/_tmp/part-9.parquet", b"not parquet either")
    return keys


def cases():
    return [pytest.param(key, id=key.rsplit("/", 1)[1]) for key in [f"corpus/{c}" for c in CORPUS] + GENERATED]


@pytest.mark.parametrize("key", cases())
def test_same_as_local(s3_client, s3_files, key):
    if key not in s3_files:
        pytest.skip(f"{key} is not in the test corpus")
    uri = f"s3://{S3_BUCKET}/{key}"
    local = scan(s3_client, {"paths": [key]})
    remote = scan(s3_client, {"paths": [uri]})
    assert_tables_equal(local.table, remote.table, f"{uri} vs local {key}")
    assert remote.info.total_records == local.info.total_records
    assert remote.info.total_bytes == local.info.total_bytes
    for meta in remote.metadata:
        assert meta and meta["path"] == uri and meta["reads"] >= 1, meta
        # Every byte fetched from S3 is used, wasted or unused.
        assert meta["bytes_fetched"] == meta["bytes_used"] + meta["bytes_wasted"] + meta["bytes_unused"], meta
        assert meta["paths"] == [uri], meta

    # A projection (last column first), and one endpoint per row group.
    names = local.table.schema.names
    cols = [names[-1], names[0]] if len(names) > 1 else names
    req = {"columns": cols, "split_bytes": 1}
    local = scan(s3_client, {"paths": [key], **req})
    remote = scan(s3_client, {"paths": [uri], **req})
    assert_tables_equal(local.table, remote.table, f"{uri} columns {cols}, split per row group")
    assert len(remote.info.endpoints) == len(local.info.endpoints)


def test_glob(s3_client, s3_files):
    local = scan(s3_client, {"paths": ["glob/*.parquet"]})
    # split_bytes 1: one endpoint per file (small files are packed
    # otherwise), so the streams' figures name every file matched.
    remote = scan(s3_client, {"paths": [f"s3://{S3_BUCKET}/glob/*.parquet"], "split_bytes": 1})
    assert_tables_equal(local.table, remote.table, "glob")
    assert [m["path"] for m in remote.metadata] == [f"s3://{S3_BUCKET}/glob/part-{i}.parquet" for i in range(2)]
    remote = scan(s3_client, {"paths": [f"s3://{S3_BUCKET}/glob/**/part-*.parquet"], "columns": ["id", "name"]})
    assert remote.table.num_rows == 100 + 101 + 102
    # Packed into one endpoint: its figures name each file, and add up.
    assert sorted(p for m in remote.metadata for p in m["paths"]) == [
        f"s3://{S3_BUCKET}/glob/part-0.parquet", f"s3://{S3_BUCKET}/glob/part-1.parquet",
        f"s3://{S3_BUCKET}/glob/sub/part-2.parquet"], remote.metadata
    for m in remote.metadata:
        assert m["files"] == len(m["paths"]), m
        assert m["bytes_fetched"] == m["bytes_used"] + m["bytes_wasted"] + m["bytes_unused"], m


def test_prefix(s3_client, s3_files):
    # Every object below the prefix, in key order, without the names that
    # start with "." or "_".
    local = scan(s3_client, {"paths": ["glob/"]})
    remote = scan(s3_client, {"paths": [f"s3://{S3_BUCKET}/glob/"], "split_bytes": 1})  # an endpoint per file
    assert_tables_equal(local.table, remote.table, "prefix")
    assert [m["path"] for m in remote.metadata] == [
        f"s3://{S3_BUCKET}/glob/part-0.parquet", f"s3://{S3_BUCKET}/glob/part-1.parquet",
        f"s3://{S3_BUCKET}/glob/sub/part-2.parquet"]


def test_list_flights(s3_client, s3_files):
    got = [fi.descriptor.path[0].decode() if isinstance(fi.descriptor.path[0], bytes) else fi.descriptor.path[0]
           for fi in s3_client.list_flights(f"s3://{S3_BUCKET}/glob/".encode(), options=call_options())]
    # Every object under the prefix, in key order, except those a scan of
    # the prefix skips: a path segment below it starting with "." or "_"
    # (the file under sub/_tmp/).
    parts = [f"s3://{S3_BUCKET}/glob/part-0.parquet", f"s3://{S3_BUCKET}/glob/part-1.parquet",
             f"s3://{S3_BUCKET}/glob/sub/part-2.parquet"]
    assert got == parts, got


def test_missing_key(s3_client, s3_files):
    uri = f"s3://{S3_BUCKET}/corpus/no-such-file.parquet"
    expect_error(s3_client, {"paths": [uri]}, "NOT_FOUND", uri)


def test_missing_bucket(s3_client, s3_server):
    uri = "s3://no-such-bucket-scand/x.parquet"
    err = expect_error(s3_client, {"paths": [uri]}, "NOT_FOUND", "no-such-bucket-scand")
    assert "bucket" in err.message, err.message
    # The clients' hints speak of the bucket, not of the local --root.
    import subprocess
    import sys
    out = subprocess.run([os.environ.get("SCAND_BIN") or str(REPO / ".tools" / "bin" / "scand"), "scan",
                          "--server", s3_server.location, uri], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "NOT_FOUND" in out.stderr and "no-such-bucket-scand" in out.stderr, out.stderr
    assert "hint: check the bucket (or container)" in out.stderr and "--root" not in out.stderr, out.stderr
    sys.path.insert(0, str(REPO / "client" / "python" / "src"))
    import scand
    with scand.connect(s3_server.location) as conn:
        with pytest.raises(scand.NotFound) as ei:
            conn.scan(uri).read_all()
    assert "no-such-bucket-scand" in str(ei.value) and "--root" not in ei.value.hint, ei.value.hint


def test_glob_matching_nothing(s3_client, s3_files):
    expect_error(s3_client, {"paths": [f"s3://{S3_BUCKET}/glob/*.orc"]}, "NOT_FOUND", "glob/*.orc")
    expect_error(s3_client, {"paths": [f"s3://{S3_BUCKET}/nothing-here/"]}, "NOT_FOUND")


def test_bad_credentials(s3_servers, versitygw, s3_files):
    srv = s3_servers.start("s3-wrong-secret", versitygw.endpoint, secret="not-the-secret-0123456789")
    try:
        c = srv.client()
        uri = f"s3://{S3_BUCKET}/glob/part-0.parquet"
        expect_error(c, {"paths": [uri]}, "PERMISSION_DENIED", uri)
        expect_error(c, {"paths": [f"s3://{S3_BUCKET}/glob/*.parquet"]}, "PERMISSION_DENIED")
        # The secret never shows in a message.
        err = expect_error(c, {"paths": [uri]}, "PERMISSION_DENIED")
        assert "not-the-secret" not in err.message and "not-the-secret" not in srv.log_tail()
        c.close()
        srv.assert_alive()
    finally:
        s3_servers.stop(srv)


def test_object_replaced(s3_client, s3_mirror, tmp_path):
    key = "replace/x.parquet"
    uri = f"s3://{S3_BUCKET}/{key}"
    pq.write_table(mixed_table(1000), tmp_path / "v1.parquet")
    pq.write_table(mixed_table(1000).slice(1), tmp_path / "v2.parquet")
    s3_mirror.put(key, tmp_path / "v1.parquet", local=False)
    info = s3_client.get_flight_info(command({"paths": [uri]}), options=call_options())
    assert info.total_records == 1000
    s3_mirror.put(key, tmp_path / "v2.parquet", local=False)
    with pytest.raises((flight.FlightError, pa.ArrowException)) as exc:
        read_stream(s3_client.do_get(info.endpoints[0].ticket, options=call_options()))
    assert grpc_code(exc.value) == "FAILED_PRECONDITION", str(exc.value)
    assert uri in grpc_message(exc.value), str(exc.value)
    # A new plan reads the new version.
    res = scan(s3_client, {"paths": [uri]})
    assert res.table.num_rows == 999


# --------------------------------------------------------------------------
# GET counts
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wide(s3_mirror, tmp_path_factory):
    """The planned case, uploaded; returns its local path."""
    path = tmp_path_factory.mktemp("wide") / "wide.parquet"
    rows = WIDE_ROW_GROUPS * WIDE_RG_ROWS
    t = pa.table({f"c{i:03d}": rand_int64(rows) for i in range(WIDE_COLS)})
    pq.write_table(t, path, row_group_size=WIDE_RG_ROWS, use_dictionary=False, compression="none")
    assert pq.ParquetFile(path).metadata.num_row_groups == WIDE_ROW_GROUPS
    s3_mirror.put(WIDE_KEY, path)
    return path


def chunk_ranges(path: Path, columns: list[str]) -> list[tuple[int, int]]:
    """(offset, length) of the column chunks a scan of columns reads, as
    scanner/parquet announces them to the IO scheduler."""
    md = pq.ParquetFile(path).metadata
    names = [md.schema.column(i).name for i in range(md.num_columns)]
    out = []
    for g in range(md.num_row_groups):
        for name in columns:
            cc = md.row_group(g).column(names.index(name))
            start = cc.data_page_offset
            if cc.has_dictionary_page and cc.dictionary_page_offset and cc.dictionary_page_offset < start:
                start = cc.dictionary_page_offset
            out.append((start, cc.total_compressed_size))
    return out


def planned_gets(ranges: list[tuple[int, int]], hole: int, max_request: int) -> int:
    """The GETs iosched.Coalesce plans: neighbours joined while the gap is at
    most hole and the request at most max_request; a longer single range is
    fetched in parts of max_request."""
    rs = sorted(ranges)
    reqs: list[list[int]] = []
    for off, n in rs:
        end = off + n
        if reqs and off - reqs[-1][1] <= hole and end - reqs[-1][0] <= max_request:
            reqs[-1][1] = max(reqs[-1][1], end)
        else:
            reqs.append([off, end])
    return sum(max(1, -(-(e - o) // max_request)) for o, e in reqs)


def footer_gets(path: Path, tail: int = TAIL_SIZE) -> int:
    """GETs of a first footer read: the speculative tail, and one more when
    the footer does not fit in it."""
    data = Path(path).read_bytes()
    footer = struct.unpack("<i", data[-8:-4])[0] + 8
    return 1 if footer <= min(tail, len(data)) else 2


class Counted:
    def __init__(self, info_gets, doget_gets, metas, fetched_metric, table):
        self.info_gets = info_gets      # GETs during GetFlightInfo (metrics)
        self.doget_gets = doget_gets    # GETs during the DoGets (metrics)
        self.metas = metas              # app_metadata of each stream
        self.reads = sum(m["reads"] for m in metas)
        self.cache_hits = sum(m["cache_hits"] for m in metas)
        self.bytes_fetched = sum(m["bytes_fetched"] for m in metas)
        self.fetched_metric = fetched_metric
        self.table = table

    def __repr__(self):
        return (f"GetFlightInfo {self.info_gets} GETs, DoGet {self.doget_gets} GETs (metrics), "
                f"app_metadata {[{k: m[k] for k in ('reads', 'cache_hits', 'hole', 'bytes_fetched')} for m in self.metas]}")


def counted_scan(srv, request: dict) -> Counted:
    """A scan whose GETs are counted on the server's /metrics before and
    after GetFlightInfo and after the last DoGet."""
    c = srv.client()
    try:
        g0 = srv.s3_gets()
        info = c.get_flight_info(command(request), options=call_options())
        g1 = srv.s3_gets()
        b1 = srv.metric("scand_storage_read_bytes_total", backend="s3")
        tables, metas = [], []
        for ep in info.endpoints:
            t, meta, _, _ = read_stream(c.do_get(ep.ticket, options=call_options()))
            tables.append(t)
            metas.append(meta)
        g2 = srv.s3_gets()
        b2 = srv.metric("scand_storage_read_bytes_total", backend="s3")
    finally:
        c.close()
    return Counted(g1 - g0, g2 - g1, metas, int(b2 - b1), pa.concat_tables(tables))


def check_counts(res: Counted, first: bool, footer: int, rg: int):
    # The two counts agree: every GET of a DoGet shows in its stream's
    # figures, and nothing else reads meanwhile.
    assert res.doget_gets == res.reads, res
    assert res.fetched_metric == res.bytes_fetched, res
    if first:
        # First touch: GetFlightInfo reads the footer (and caches it), the
        # DoGets then read only column chunks.
        assert res.info_gets == footer, res
        assert res.info_gets + res.doget_gets <= rg + 1, f"first scan over the bound of {rg + 1} GETs: {res}"
    else:
        assert res.info_gets == 0, f"repeat scan read a footer: {res}"
        assert res.doget_gets <= rg, f"repeat scan over the bound of {rg} GETs: {res}"
    assert res.cache_hits > 0, f"footer not served from the metadata cache: {res}"


@pytest.mark.timeout(90)
def test_get_counts_pinned_hole(s3_servers, versitygw, wide):
    srv = s3_servers.start("s3-pinned", versitygw.endpoint, "--io-hole", "4MiB", "--io-max-request", "3MiB")
    try:
        expected = planned_gets(chunk_ranges(wide, ALTERNATE), PINNED_HOLE, PINNED_MAX_REQUEST)
        # Greedy merging across row groups: 8 MiB of alternate columns in
        # requests of at most 3 MiB.
        assert expected == 3, expected
        want = pq.read_table(wide, columns=ALTERNATE)
        request = {"paths": [f"s3://{S3_BUCKET}/{WIDE_KEY}"], "columns": ALTERNATE}
        for i in range(3):
            res = counted_scan(srv, request)
            print(f"scan {i}: {res}")
            check_counts(res, first=i == 0, footer=footer_gets(wide), rg=WIDE_ROW_GROUPS)
            assert res.reads == expected, res
            assert all(m["hole"] == PINNED_HOLE for m in res.metas), res
            assert_tables_equal(want, res.table, f"scan {i}")
    finally:
        s3_servers.stop(srv)


@pytest.mark.timeout(90)
def test_get_counts_adaptive(s3_servers, versitygw, wide, s3_files):
    """The default, learned hole: within the bounds on the first scan, with
    the model untrained, and on repeats once it has learned from other
    scans."""
    srv = s3_servers.start("s3-adaptive", versitygw.endpoint)
    try:
        request = {"paths": [f"s3://{S3_BUCKET}/{WIDE_KEY}"], "columns": ALTERNATE}
        holes = []
        for i in range(6):
            if i == 1:
                # Teach the model: reads of many sizes.
                c = srv.client()
                for key in sorted(s3_files):
                    scan(c, {"paths": [f"s3://{S3_BUCKET}/{key}"]})
                scan(c, {"paths": [f"s3://{S3_BUCKET}/{WIDE_KEY}"], "split_bytes": 1})
                c.close()
            res = counted_scan(srv, request)
            print(f"scan {i}: {res}")
            check_counts(res, first=i == 0, footer=footer_gets(wide), rg=WIDE_ROW_GROUPS)
            holes += [m["hole"] for m in res.metas]
            assert res.table.num_rows == WIDE_ROW_GROUPS * WIDE_RG_ROWS
        print("holes:", holes)
        assert all(4 << 10 <= h <= 32 << 20 for h in holes), holes
        assert holes[0] == 1 << 20, f"an untrained model plans with the 1 MiB default: {holes}"
        assert any(h != 1 << 20 for h in holes[1:]), f"the model learned nothing from {len(s3_files)} scans: {holes}"
    finally:
        s3_servers.stop(srv)


# --------------------------------------------------------------------------
# Cancellation, through toxiproxy
# --------------------------------------------------------------------------

@pytest.mark.timeout(90)
def test_cancel_stops_gets(s3_servers, toxiproxy, versitygw, s3_mirror, tmp_path):
    """A client cancels a scan that has thousands of GETs to go, each 30 ms
    away: the server's GETs stop within a second."""
    cols, groups, rows = 128, 32, 256
    path = tmp_path / "many.parquet"
    t = pa.table({f"c{i:03d}": rand_int64(groups * rows) for i in range(cols)})
    pq.write_table(t, path, row_group_size=rows, use_dictionary=False, compression="none")
    key = "cancel/many.parquet"
    s3_mirror.put(key, path, local=False)

    proxy = toxiproxy.proxy(versitygw.addr)
    try:
        proxy.add_latency(30)
        # One GET per column chunk: 4096 of them, 16 in flight (pinned: with
        # S3 the default is 64), at least 30 ms each, about 8 s in all.
        srv = s3_servers.start("s3-toxi", proxy.endpoint, "--io-no-coalesce", "--io-concurrency", "16")
        c = srv.client()
        info = c.get_flight_info(command({"paths": [f"s3://{S3_BUCKET}/{key}"], "batch_rows": rows}),
                                 options=call_options())
        assert len(info.endpoints) == 1
        start_gets = srv.s3_gets()
        t0 = time.monotonic()
        reader = c.do_get(info.endpoints[0].ticket, options=call_options())
        first = reader.read_chunk()
        assert first.data.num_rows == rows
        reader.cancel()
        cancelled = time.monotonic()
        at_cancel = srv.s3_gets() - start_gets
        print(f"first batch after {cancelled - t0:.3f} s and {at_cancel} GETs")
        # Readahead goes in file order. The server holds each batch back
        # until the next one is decoded (the last carries the stream's
        # figures), so the first batch needs the first two row groups: it
        # arrives about when they are read, not after the rest of the file.
        assert at_cancel <= 2 * cols + 64, f"first batch only after {at_cancel} GETs"

        # Sample the GET counter: it must be still from 1 s after the cancel.
        samples = []
        while time.monotonic() - cancelled < 2.5:
            samples.append((time.monotonic() - cancelled, srv.s3_gets() - start_gets))
            time.sleep(0.1)
        after_1s = [n for dt, n in samples if dt >= 1.0]
        print(f"GETs after the cancel: {samples}")
        assert after_1s and max(after_1s) == min(after_1s), f"GETs still increasing 1 s after the cancel: {samples}"
        assert after_1s[-1] < 0.9 * cols * groups, f"the scan was not cut short: {after_1s[-1]} of {cols * groups} GETs"
        assert wait_for(lambda: srv.metric("scand_scans_total", result="canceled") >= 1, 5), \
            "the server did not count the scan as canceled"
        c.close()
        srv.assert_alive()
        s3_servers.stop(srv)
    finally:
        proxy.delete()
