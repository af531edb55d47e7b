"""Late materialization (docs/filters.md, "Late materialization"): real
servers, one with --late-materialization=auto (the default) and one with
off, read a file pyarrow wrote with the page index, 20 double columns in
small pages beside a dictionary-encoded filter column whose page
statistics prune nothing. At 1 % selectivity the late path fetches at
most half the bytes of the one-pass path; where most rows survive, auto
stops reading late after the first row group; results equal
pyarrow.dataset's. Both servers run with --io-hole 1 so that the bytes
fetched are the pages chosen, not merges across the gaps between them
(on local disk the scheduler learns to read through any gap)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from conftest import _scand_bin
from filterlib import reference, sql_scan
from s3lib import S3ScandServer
from scandlib import assert_tables_equal

ROWS = 200_000
GROUP = 50_000
VALUES = [f"v{i}" for i in range(20)]


@pytest.fixture(scope="module")
def lm_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("latemat")
    ids = pa.array(range(ROWS), pa.int64())
    # Runs of 1000 rows per value (1 % of the rows each), but rows 64k and
    # 64k+1 hold 0 and 200: every page's min/max spans every value.
    cat = pc.add(pc.remainder(pc.divide(ids, 1000), 100), 1)
    mod = pc.bit_wise_and(ids, pa.scalar(63, pa.int64()))
    cat = pc.if_else(pc.equal(mod, 0), 0, pc.if_else(pc.equal(mod, 1), 200, cat))
    cols = {"id": ids, "cat": cat}
    for i, name in enumerate(VALUES):
        cols[name] = pc.multiply(pc.cast(pc.bit_wise_xor(ids, pa.scalar(i * 7919, pa.int64())), pa.float64()), 0.25)
    pq.write_table(pa.table(cols), root / "events.parquet", write_page_index=True, data_page_size=8 << 10,
                   row_group_size=GROUP, use_dictionary=["cat"], compression="none")
    return root


def _server(tmp_path_factory, root, mode: str) -> S3ScandServer:
    logs = tmp_path_factory.mktemp(f"latemat-{mode}")
    srv = S3ScandServer(_scand_bin(), root, logs / f"{mode}.log", mode,
                        args=["--late-materialization", mode, "--io-hole", "1"], env={})
    srv.start()
    return srv


@pytest.fixture(scope="module")
def servers(tmp_path_factory, lm_root):
    started = {mode: _server(tmp_path_factory, lm_root, mode) for mode in ("auto", "off")}
    yield started
    for srv in started.values():
        srv.stop()


def totals(res, key: str) -> int:
    return sum((m or {}).get(key, 0) for m in res.metadata)


def scan_both(servers, text: str, columns):
    out = {}
    for mode, srv in servers.items():
        c = srv.client()
        try:
            out[mode] = sql_scan(c, ["events.parquet"], text, columns=columns)
        finally:
            c.close()
    return out


CASES = [
    ("cat = 8", pc.field("cat") == 8),
    ("cat = 8 AND v3 > 100", (pc.field("cat") == 8) & (pc.field("v3") > 100)),
    ("cat <= 50", pc.field("cat") <= 50),
    ("cat = 1000", pc.field("cat") == 1000),
    ("cat IN (0, 200)", pc.field("cat").isin([0, 200])),
]


@pytest.mark.parametrize("text,expr", CASES, ids=[c[0] for c in CASES])
def test_results_equal_pyarrow(servers, lm_root, text, expr):
    columns = ["id", "cat", *VALUES]
    want = reference([str(lm_root / "events.parquet")], expr, columns=columns).sort_by("id")
    for mode, res in scan_both(servers, text, columns).items():
        assert_tables_equal(want, res.table.sort_by("id"), f"{mode}: {text}")


def test_one_percent_fetches_half_the_bytes_or_less(servers):
    got = scan_both(servers, "cat = 8", ["id", "cat", *VALUES])
    late, off = got["auto"], got["off"]
    assert late.table.num_rows == off.table.num_rows > 1900
    fl, fo = totals(late, "bytes_fetched"), totals(off, "bytes_fetched")
    print(f"1 %, 22 columns: late {fl} bytes in {totals(late, 'reads')} reads ({totals(late, 'late_row_groups')} "
          f"groups late), one pass {fo} bytes in {totals(off, 'reads')} reads: {fl / fo:.3f}x")
    assert totals(late, "late_row_groups") > 0 and totals(off, "late_row_groups") == 0
    assert fl <= 0.5 * fo, f"late fetched {fl} bytes, one pass {fo}"


def test_auto_stops_when_most_rows_survive(servers):
    res = scan_both(servers, "cat <= 50", ["id", "cat", *VALUES])["auto"]
    per_stream = [(m or {}).get("late_row_groups", 0) for m in res.metadata]
    assert all(n <= 1 for n in per_stream), per_stream


def test_filter_columns_only_reads_in_one_pass(servers):
    res = scan_both(servers, "cat = 8", ["cat"])["auto"]
    assert res.table.num_rows > 1900
    assert totals(res, "late_row_groups") == 0
