"""The hole policy per kind of store (docs/io-scheduler.md, "The hole
policy"), through the real server with the defaults a user gets:

  test_taxi_filtered_*   bench/taxi's data set (pyarrow's defaults, hive by
                         service and month, 18 files; SCAND_E2E_TAXI_ROWS
                         rows, 600,000 by default) and its six filtered
                         queries on local disk: the rows pyarrow.dataset
                         gives, bytes fetched at most 1.3x bytes used, and
                         figures that add up (fetched = used + wasted +
                         unused in every stream, every file named)
  test_limit_big_group_* `limit 10` on one 120 MB row group with a page
                         index (SCAND_E2E_BIG_MB): at most 1 MB fetched
                         locally, at most 2 MB on S3 (versitygw), where the
                         selective plan's pages are not merged across the
                         column chunks between them
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from scandlib import REPO, assert_tables_equal, command, read_stream, scan

sys.path.insert(0, str(REPO / "bench" / "taxi"))
import gen  # noqa: E402
from queries import QUERIES  # noqa: E402

TAXI_ROWS = int(os.environ.get("SCAND_E2E_TAXI_ROWS", "600000"))
BIG_MB = int(os.environ.get("SCAND_E2E_BIG_MB", "120"))
FILTERED = [q for q in QUERIES if q[2] is not None]


@pytest.fixture(scope="module")
def taxi(gen_root):
    gen.generate(gen_root / "taxi", TAXI_ROWS)
    return gen_root / "taxi" / "trips"


def figures(res) -> list[dict]:
    return [m for m in res.metadata if m]


@pytest.mark.parametrize("query", FILTERED, ids=[q[0] for q in FILTERED])
def test_taxi_filtered_fetches_what_it_uses(gen_client, gen_root, taxi, query):
    name, columns, sql, expr = query
    req = {"paths": ["taxi/trips/"], "filter": sql}
    if columns:
        req["columns"] = columns
    res = scan(gen_client, req)
    want = ds.dataset(taxi, format="parquet", partitioning="hive").to_table(columns=columns, filter=expr)
    assert res.table.num_rows == want.num_rows, name
    key = columns[0] if columns else "pickup_ts"
    if want.num_rows <= 50_000:
        got = res.table.select(want.column_names).cast(want.schema)
        assert_tables_equal(want.sort_by(key), got.sort_by(key), name)
    ms = figures(res)
    fetched = sum(m.get("bytes_fetched", 0) for m in ms)
    used = sum(m.get("bytes_used", 0) for m in ms)
    print(f"{name}: fetched {fetched:,} used {used:,} ({fetched / max(used, 1):.3f}x) in "
          f"{sum(m.get('reads', 0) for m in ms)} reads, hole {max(m.get('hole', 0) for m in ms):,}")
    assert fetched <= 1.3 * used, f"{name}: fetched {fetched:,} bytes for {used:,} used"
    for m in ms:
        assert m.get("bytes_fetched", 0) == m.get("bytes_used", 0) + m.get("bytes_wasted", 0) + \
            m.get("bytes_unused", 0), m
        assert m.get("hole", 0) <= 64 << 10, f"a local read merged across {m.get('hole')} bytes"


def test_taxi_streams_name_every_file(gen_client, taxi):
    """Small files packed into one endpoint: its stream names (counts) each."""
    info = gen_client.get_flight_info(command({"paths": ["taxi/trips/"], "columns": ["fare"]}))
    files = 0
    for ep in info.endpoints:
        _, meta, _, _ = read_stream(gen_client.do_get(ep.ticket))
        files += meta.get("files", 1)
    assert files == len(list(taxi.rglob("*.parquet")))


@pytest.fixture(scope="module")
def big_group(gen_root) -> str:
    """One row group of about BIG_MB MB: a sorted id and three random
    doubles, with a page index, in pages of 128 KiB without dictionaries
    (so that the pages a limit needs are well under 1 MB: pyarrow's
    defaults would give each column a 1 MiB dictionary page first)."""
    path = gen_root / "holes" / "big-group.parquet"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        n = BIG_MB * 1_000_000 // 32
        rng = np.random.default_rng(7)
        table = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                          **{f"x{i}": pa.array(rng.random(n)) for i in range(3)}})
        pq.write_table(table, path, row_group_size=n, write_page_index=True, data_page_size=128 << 10,
                       use_dictionary=False)
    return "holes/big-group.parquet"


def fetched_by(client, req) -> tuple[int, int, pa.Table]:
    res = scan(client, req)
    ms = figures(res)
    return sum(m.get("bytes_fetched", 0) for m in ms), sum(m.get("bytes_used", 0) for m in ms), res.table


def test_limit_big_group_local(gen_client, gen_root, big_group):
    fetched, used, table = fetched_by(gen_client, {"paths": [big_group], "limit": 10})
    assert_tables_equal(pq.read_table(gen_root / big_group).slice(0, 10), table)
    print(f"limit 10, local: fetched {fetched:,}, used {used:,}")
    assert fetched <= 1_000_000 and fetched <= 1.3 * used
    n = BIG_MB * 1_000_000 // 32
    lo, hi = n // 2, n // 2 + n // 10000
    fetched, used, table = fetched_by(gen_client, {"paths": [big_group], "filter": f"id >= {lo} AND id < {hi}"})
    assert table.num_rows == n // 10000
    print(f"0.01 % on the sorted column, local: fetched {fetched:,}, used {used:,}")
    assert fetched <= 1_000_000 and fetched <= 1.3 * used


def test_limit_big_group_s3(s3_mirror, s3_client, gen_root, big_group):
    key = "holes/big-group.parquet"
    s3_mirror.put(key, gen_root / big_group, local=False)
    fetched, used, table = fetched_by(s3_client, {"paths": [s3_mirror.uri(key)], "limit": 10})
    assert_tables_equal(pq.read_table(gen_root / big_group).slice(0, 10), table)
    print(f"limit 10, S3: fetched {fetched:,}, used {used:,}")
    assert fetched <= 2_000_000
