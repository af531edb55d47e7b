"""The Parquet page index (docs/filters.md, "Page pruning"): a real server
reading a file of 2 M rows in 64 KiB pages, written by pyarrow with
write_page_index=True. A limit without a filter fetches only the first
pages; a filter at 0.01 % on the sorted column fetches only the pages that
can hold its rows (plus the footer and index); a repeat scan reads its
page index from the metadata cache; results equal pyarrow's."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from filterlib import reference, sql_scan
from scandlib import assert_tables_equal, scan

ROWS = 2_000_000
PAGE = 64 << 10


@pytest.fixture(scope="module")
def big_path(gen_root) -> str:
    d = gen_root / "pageindex"
    d.mkdir(exist_ok=True)
    path = d / "sorted.parquet"
    if not path.exists():
        n = ROWS
        ids = pa.array(range(n), pa.int64())
        table = pa.table({
            "id": ids,
            "v": pc.multiply(pc.cast(ids, pa.float64()), 0.5),
            "k": pc.cast(pc.bit_wise_and(ids, pa.scalar(1023, pa.int64())), pa.int32()),
        })
        pq.write_table(table, path, write_page_index=True, data_page_size=PAGE, row_group_size=1_000_000,
                       use_dictionary=False, compression="none")
    return f"{d.name}/{path.name}"


def totals(res, key: str) -> int:
    return sum((m or {}).get(key, 0) for m in res.metadata)


def test_limit_fetches_only_the_first_pages(gen_client, gen_root, big_path):
    res = scan(gen_client, {"paths": [big_path], "limit": 10})
    assert res.table.num_rows == 10
    want = pq.read_table(gen_root / big_path).slice(0, 10)
    assert_tables_equal(res.table, want)
    fetched = totals(res, "bytes_fetched")
    print(f"limit 10: {fetched} bytes fetched in {totals(res, 'reads')} reads")
    assert fetched <= 2_000_000, f"limit 10 fetched {fetched} bytes"
    assert totals(res, "pages_skipped") > 0


def test_selective_filter_fetches_only_matching_pages(gen_client, gen_root, big_path):
    lo, hi = 1_234_000, 1_234_200  # 200 rows: 0.01 %
    res = sql_scan(gen_client, [big_path], f"id >= {lo} AND id < {hi}")
    want = reference([str(gen_root / big_path)], (pc.field("id") >= lo) & (pc.field("id") < hi))
    assert_tables_equal(res.table.sort_by("id"), want.sort_by("id"))
    fetched, index = totals(res, "bytes_fetched"), totals(res, "index_bytes_fetched")
    # At most two pages per column hold 200 sorted rows; the footer comes
    # with its 64 KiB tail read.
    matching = 3 * 2 * PAGE
    print(f"0.01 %: {fetched} bytes fetched in {totals(res, 'reads')} reads, index {index} bytes in "
          f"{totals(res, 'index_reads')} reads, {totals(res, 'pages_skipped')} pages skipped")
    assert fetched <= 1.5 * matching + index + (64 << 10), f"fetched {fetched} bytes (index {index})"
    assert totals(res, "pages_skipped") > 100


def test_repeat_scan_reads_the_index_from_the_cache(gen_client, big_path):
    text = "id >= 500000 AND id < 500100"
    sql_scan(gen_client, [big_path], text)
    again = sql_scan(gen_client, [big_path], text)
    assert totals(again, "index_reads") == 0
    assert again.table.num_rows == 100


def test_filter_on_unsorted_column_equals_pyarrow(gen_client, gen_root, big_path):
    res = sql_scan(gen_client, [big_path], "k = 7 AND id < 300000", columns=["id", "v"])
    want = reference([str(gen_root / big_path)], (pc.field("k") == 7) & (pc.field("id") < 300000), columns=["id", "v"])
    assert_tables_equal(res.table.sort_by("id"), want.sort_by("id"))


def test_cli_peek_costs_kilobytes(gen_server, big_path):
    """`scand scan FILE` prints 100 rows and the file's row count, and
    fetches only the pages of those rows (its --stats say how much)."""
    import os
    import re
    import subprocess
    binary = os.environ["SCAND_BIN"]
    out = subprocess.run([binary, "scan", "--server", gen_server.location, "--progress", "off", "--stats", big_path],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == f"({ROWS:,} rows)".replace(",", "") and len(lines) == 100 + 4, out.stdout[-500:]
    assert f"... {ROWS - 100} more rows" in lines[-2]
    fetched = int(re.search(r"bytes fetched\s+.*?\((\d+)\)", out.stderr).group(1))
    print(f"CLI peek: {fetched} bytes fetched")
    assert fetched <= 2_000_000, out.stderr
