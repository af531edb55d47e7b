"""Concurrent decoding and read-ahead (--decode-parallelism, docs/parallel-decode.md)
against sequential decoding, through a stock pyarrow client: every scan must
read identically, also with many clients at once.

The Go tests prove the batches byte-identical; this proves real servers
(--decode-parallelism 1 and 0) give a real client the same tables.
"""
from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from scandlib import scan, table_diff
from test_sendpath import _serve


@pytest.fixture(scope="module")
def wide_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("pardecode-root")
    n = 200_000
    rng = np.random.default_rng(7)
    cols = {f"i{i}": rng.integers(0, 1 << 40, n) for i in range(6)}
    cols.update({f"f{i}": rng.random(n) for i in range(4)})
    cols["s"] = pa.array(rng.choice(["AIR", "MAIL", "SHIP", "TRUCK"], n))
    cols["b"] = pa.array(rng.random(n) < 0.3)
    cols["n"] = pa.array(np.where(rng.random(n) < 0.2, None, rng.integers(0, 100, n)), type=pa.int64())
    pq.write_table(pa.table(cols), root / "wide.parquet", row_group_size=50_000)
    return root


@pytest.fixture(scope="module")
def two_servers(wide_root, tmp_path_factory):
    logs = tmp_path_factory.mktemp("pardecode-logs")
    seq, seq_client = _serve(wide_root, logs / "sequential.log", "--decode-parallelism", "1")
    par, par_client = _serve(wide_root, logs / "parallel.log", "--decode-parallelism", "0")
    yield seq_client, par_client
    for p in (seq, par):
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()


@pytest.mark.parametrize("req", [
    {"paths": ["wide.parquet"]},
    {"paths": ["wide.parquet"], "batch_rows": 997},
    {"paths": ["wide.parquet"], "columns": ["i0", "f1", "s", "n"]},
    {"paths": ["wide.parquet"], "limit": 12345},
], ids=["all", "batch-997", "projection", "limit"])
def test_same_table_with_and_without_parallel_decode(two_servers, req):
    seq_client, par_client = two_servers
    want = scan(seq_client, req).table
    got = scan(par_client, req).table
    assert got.schema == want.schema
    diff = table_diff(want, got)
    assert diff is None, diff
    assert got.num_rows == want.num_rows > 0


def test_sixteen_clients_at_once(two_servers):
    seq_client, par_client = two_servers
    req = {"paths": ["wide.parquet"], "batch_rows": 4096}
    want = scan(seq_client, req).table
    with ThreadPoolExecutor(16) as pool:
        tables = list(pool.map(lambda _: scan(par_client, req).table, range(16)))
    for got in tables:
        assert table_diff(want, got) is None
