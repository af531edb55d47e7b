"""The zero-copy send path against the stock one, through a stock pyarrow
client: every stream must read identically.

Two extra servers share the corpus root: one with --send-path stock
(arrow-go's writer) and one with the default zero-copy path. The Go tests
prove the messages byte-identical; this proves a real pyarrow client sees
the same tables, compressed or not.
"""
from __future__ import annotations

import os
import subprocess
import time

import pyarrow as pa
import pyarrow.flight as flight
import pytest

from scandlib import _die_with_parent, free_port, scan, table_diff
from conftest import _scand_bin

FILES = [
    "parquet-testing/alltypes_plain.parquet",
    "parquet-testing/nested_lists.snappy.parquet",
    "parquet-testing/nested_maps.snappy.parquet",
    "parquet-testing/delta_byte_array.parquet",
    "parquet-testing/alltypes_tiny_pages.parquet",
    "parquet-testing/byte_stream_split_extended.gzip.parquet",
    "parquet-testing/nullable.impala.parquet",
    "parquet-testing/dict-page-offset-zero.parquet",
]


def _serve(root, log_path, *extra):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
    log = open(log_path, "ab")
    proc = subprocess.Popen([_scand_bin(), "serve", "--listen", f"127.0.0.1:{port}", "--root", str(root), *extra],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                            preexec_fn=_die_with_parent)
    client = flight.connect(f"grpc://127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while True:
        try:
            list(client.do_action("version"))
            return proc, client
        except flight.FlightUnavailableError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError(f"scand {extra} did not start; see {log_path}")
            time.sleep(0.1)


@pytest.fixture(scope="module")
def two_paths(corpus_root, tmp_path_factory):
    logs = tmp_path_factory.mktemp("sendpath-logs")
    stock, stock_client = _serve(corpus_root, logs / "stock.log", "--send-path", "stock")
    zc, zc_client = _serve(corpus_root, logs / "zerocopy.log", "--send-path", "zerocopy")
    yield stock_client, zc_client
    for p in (stock, zc):
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()


@pytest.mark.parametrize("compression", ["", "lz4", "zstd"])
@pytest.mark.parametrize("path", FILES)
def test_same_table_on_both_send_paths(two_paths, path, compression):
    stock_client, zc_client = two_paths
    req = {"paths": [path], "compression": compression, "batch_rows": 97}
    want = scan(stock_client, req).table
    got = scan(zc_client, req).table
    assert got.schema == want.schema
    diff = table_diff(want, got)
    assert diff is None, diff
    assert got.num_rows == want.num_rows > 0
