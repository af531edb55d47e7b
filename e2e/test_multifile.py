"""Small files packed into endpoints (ScanTask.more, docs/multifile.md).

2,000 Parquet files of 1,000 rows, written by pyarrow, served by the real
binary: GetFlightInfo answers with a handful of endpoints, not 2,000; a
stock pyarrow.flight client reading them in turn gets the table
pyarrow.dataset reads from the same directory; the Python package (parallel
streams) and explain agree. A small benchmark prints the time of the packed
scan against 2,000 single-file endpoints (split_bytes 1 disables packing)
and against a local pq.read_table of the same files; it asserts nothing
about time."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

from scandlib import REPO, assert_tables_equal, call_options, command, scan

sys.path.insert(0, str(REPO / "client" / "python" / "src"))
import scand  # noqa: E402

FILES, ROWS = 2000, 1000


@pytest.fixture(scope="module")
def small_files(gen_root: Path) -> Path:
    d = gen_root / "multifile"
    d.mkdir(exist_ok=True)
    for i in range(FILES):
        ids = pa.array(range(i * ROWS, (i + 1) * ROWS), pa.int64())
        t = pa.table({"id": ids, "x": pa.compute.multiply(ids, 0.5), "s": pa.array([f"s{j % 97}" for j in range(ROWS)])})
        pq.write_table(t, d / f"part-{i:05d}.parquet")
    return d


def expected(d: Path) -> pa.Table:
    return ds.dataset(d, format="parquet").to_table()


def read_in_turn(client: flight.FlightClient, req: dict) -> tuple[pa.Table, int, float]:
    """A stock client's scan: plan, then every endpoint one after another."""
    start = time.perf_counter()
    info = client.get_flight_info(command(req), call_options())
    t = pa.concat_tables([client.do_get(ep.ticket, call_options()).read_all() for ep in info.endpoints])
    return t, len(info.endpoints), time.perf_counter() - start


def test_small_files_share_a_handful_of_endpoints(gen_server, gen_client, small_files):
    want = expected(small_files)
    got, endpoints, packed_cold_s = read_in_turn(gen_client, {"paths": ["multifile/"]})
    assert 1 <= endpoints <= 16, f"{endpoints} endpoints for {FILES} small files, want a handful"
    assert_tables_equal(want, got, "packed scan vs pyarrow.dataset")

    # Warm: every footer is in the server's cache after the first scan, so
    # the turns below measure reading, interleaved, best of three.
    packed_s, single_s, local_s = [], [], []
    for _ in range(3):
        packed_s.append(read_in_turn(gen_client, {"paths": ["multifile/"]})[2])
        _, single, t = read_in_turn(gen_client, {"paths": ["multifile/"], "split_bytes": 1})
        single_s.append(t)
        start = time.perf_counter()
        local = pa.concat_tables([pq.read_table(p) for p in sorted(small_files.glob("*.parquet"))])
        local_s.append(time.perf_counter() - start)
    assert single == FILES and local.num_rows == FILES * ROWS
    p, s1, lo = min(packed_s), min(single_s), min(local_s)
    print(f"\n{FILES} files of {ROWS} rows, stock pyarrow.flight client reading endpoints in turn (best of 3, warm):"
          f"\n  packed:              {endpoints:5d} endpoints {p:6.2f} s"
          f"\n  a file per endpoint: {single:5d} endpoints {s1:6.2f} s (packed takes {p / s1:.2f}x its time)"
          f"\n  local pq.read_table of each file:    {lo:6.2f} s (packed is {lo / p:.2f}x local's speed)"
          f"\n  first (cold) packed scan, planning included: {packed_cold_s:.2f} s")


def test_python_package_and_explain(gen_server, small_files):
    want = expected(small_files)
    with scand.connect(gen_server.location) as conn:
        plan = conn.explain("multifile/")
        assert 1 <= plan.endpoints <= 16
        assert len(plan.files) == FILES and sum(f.rows for f in plan.files) == FILES * ROWS
        assert "(endpoint 0: " in str(plan)
        got = conn.scan("multifile/").read_all()
        assert_tables_equal(want, got, "Python package vs pyarrow.dataset")
        limited = conn.scan("multifile/", limit=123_456).read_all()
        assert limited.num_rows == 123_456 and limited.column("id").to_pylist() == list(range(123_456))


def test_filter_and_limit_across_files(gen_client, small_files):
    res = scan(gen_client, {"paths": ["multifile/"], "filter": "(id >= 5998 AND id < 6003) OR id >= 1999998", "limit": 6})
    assert res.table.column("id").to_pylist() == [5998, 5999, 6000, 6001, 6002, 1999998]
