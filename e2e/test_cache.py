"""The page cache (--cache-dir): scand on versitygw behind a counting HTTP
proxy, so every GET that reaches the store is seen outside scand.

  test_repeat_scan_no_gets_and_restart
                                a repeated scan sends no data GETs; after a
                                restart with the same --cache-dir, still none
  test_overwrite_new_content    an overwritten object returns its new content
  test_corrupt_page_refetched   a corrupted page file gives the exact result,
                                and scand_cache_corrupt_pages_total rises
  test_cache_dir_bounded        the directory stays within --cache-size while
                                scanning twice its size
  test_concurrent_cold_scans    16 concurrent scans of one cold file fetch
                                each page once

Needs versitygw: scripts/install-tools.sh.
"""

from __future__ import annotations

import http.client
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from scandlib import assert_tables_equal, read_stream, call_options, command, scan
from s3lib import wait_for

PAGE = 1 << 20  # rangecache.DefaultPageSize
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


class CountingProxy:
    """An HTTP reverse proxy in front of versitygw that counts the GETs that
    carry a Range header (object data; listings and HEADs carry none) and
    the bytes they asked for. The Host header is passed on unchanged, so
    SigV4 signatures stay valid."""

    def __init__(self, upstream: str):
        host, port = upstream.split(":")
        self.lock = threading.Lock()
        self.data_gets: list[tuple[str, str]] = []  # (path, range)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _forward(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                if self.command == "GET" and self.headers.get("Range"):
                    with proxy.lock:
                        proxy.data_gets.append((self.path, self.headers["Range"]))
                conn = http.client.HTTPConnection(host, int(port), timeout=60)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data = resp.read()
                finally:
                    conn.close()
                self.send_response(resp.status, resp.reason)
                head = self.command == "HEAD"
                for k, v in resp.getheaders():
                    if k.lower() not in HOP_BY_HOP and (head or k.lower() != "content-length"):
                        self.send_header(k, v)
                if not head:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def gets(self, key: str) -> list[str]:
        """The ranges of the data GETs of key so far."""
        with self.lock:
            return [r for p, r in self.data_gets if p.split("?")[0].endswith("/" + key)]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def proxy(versitygw):
    p = CountingProxy(versitygw.addr)
    yield p
    p.stop()


def rand_table(rows: int) -> pa.Table:
    """Incompressible int64 columns (no numpy in the venv), new each call."""
    cols = {}
    for i in range(4):
        cols[f"c{i}"] = pa.Array.from_buffers(pa.int64(), rows, [None, pa.py_buffer(os.urandom(rows * 8))])
    cols["id"] = pa.array(range(rows), pa.int64())
    return pa.table(cols)


def put_table(s3_mirror, tmp: Path, key: str, rows: int, version: int = 0) -> pa.Table:
    t = rand_table(rows)
    path = tmp / f"{key.replace('/', '_')}.{version}"
    pq.write_table(t, path, row_group_size=max(1, rows // 4), compression="none", use_dictionary=False)
    s3_mirror.put(key, path, local=False)
    return pq.read_table(path)


def settled(srv) -> bool:
    """The disk writer has written every fetched page (page files carry a
    header, so written bytes exceed fetched bytes once all are written)."""
    written = srv.metric("scand_cache_written_bytes_total")
    fetched = srv.metric("scand_cache_fetched_bytes_total")
    return fetched > 0 and written >= fetched


def dir_bytes(d: Path) -> int:
    return sum(f.stat().st_size for f in d.rglob("*") if f.is_file())


def start(s3_servers, proxy, name: str, cache_dir: Path, *flags: str):
    return s3_servers.start(name, proxy.endpoint, "--cache-dir", str(cache_dir), *flags)


def check_scan(srv, uri: str, want: pa.Table):
    c = srv.client()
    try:
        res = scan(c, {"paths": [uri]})
    finally:
        c.close()
    assert_tables_equal(want, res.table, uri)
    return res


def test_repeat_scan_no_gets_and_restart(s3_servers, s3_mirror, proxy, tmp_path):
    key = "cache/repeat.parquet"
    want = put_table(s3_mirror, tmp_path, key, 200_000)  # ~8 MiB
    cache_dir = tmp_path / "cache"
    srv = start(s3_servers, proxy, "cache-repeat", cache_dir)
    check_scan(srv, s3_mirror.uri(key), want)
    cold = len(proxy.gets(key))
    assert cold > 0
    res = check_scan(srv, s3_mirror.uri(key), want)
    assert len(proxy.gets(key)) == cold, f"warm scan sent data GETs: {proxy.gets(key)[cold:]}"
    assert srv.metric("scand_cache_hit_bytes_total", tier="memory") > 0
    # The stream's figures say where the bytes came from.
    assert sum(m["reads"] for m in res.metadata) == 0, res.metadata
    assert sum(m["bytes_from_cache"] for m in res.metadata) >= sum(m["bytes_used"] for m in res.metadata) > 0, res.metadata
    assert wait_for(lambda: settled(srv), 10), "page cache writes did not settle"

    # Restart on the same directory: the index is rebuilt, the footer and
    # the data come from disk.
    s3_servers.stop(srv)
    srv = start(s3_servers, proxy, "cache-restart", cache_dir)
    check_scan(srv, s3_mirror.uri(key), want)
    assert len(proxy.gets(key)) == cold, f"scan after restart sent data GETs: {proxy.gets(key)[cold:]}"
    assert srv.metric("scand_cache_hit_bytes_total", tier="disk") > 0
    s3_servers.stop(srv)


def test_overwrite_new_content(s3_servers, s3_mirror, proxy, tmp_path):
    key = "cache/overwrite.parquet"
    old = put_table(s3_mirror, tmp_path, key, 50_000)
    srv = start(s3_servers, proxy, "cache-overwrite", tmp_path / "cache")
    check_scan(srv, s3_mirror.uri(key), old)
    check_scan(srv, s3_mirror.uri(key), old)
    new = put_table(s3_mirror, tmp_path, key, 50_000, version=1)
    assert not new.equals(old)
    check_scan(srv, s3_mirror.uri(key), new)
    assert srv.metric("scand_cache_stale_versions_total") >= 1
    s3_servers.stop(srv)


def test_corrupt_page_refetched(s3_servers, s3_mirror, proxy, tmp_path):
    key = "cache/corrupt.parquet"
    want = put_table(s3_mirror, tmp_path, key, 100_000)
    cache_dir = tmp_path / "cache"
    srv = start(s3_servers, proxy, "cache-corrupt", cache_dir)
    check_scan(srv, s3_mirror.uri(key), want)
    assert wait_for(lambda: settled(srv), 10), "page cache writes did not settle"
    s3_servers.stop(srv)
    pages = sorted(cache_dir.rglob("*.page"))
    assert len(pages) >= 3, pages
    for p in pages[:2]:  # a flipped bit, and a torn page
        b = bytearray(p.read_bytes())
        b[len(b) // 2] ^= 0x40
        p.write_bytes(bytes(b))
    pages[2].write_bytes(pages[2].read_bytes()[:1000])
    before = len(proxy.gets(key))
    srv = start(s3_servers, proxy, "cache-corrupt-2", cache_dir)
    check_scan(srv, s3_mirror.uri(key), want)
    assert srv.metric("scand_cache_corrupt_pages_total") == 3
    assert 1 <= len(proxy.gets(key)) - before <= 3, "the corrupt pages were not fetched again, or more was"
    s3_servers.stop(srv)


def test_cache_dir_bounded(s3_servers, s3_mirror, proxy, tmp_path):
    key = "cache/big.parquet"
    want = put_table(s3_mirror, tmp_path, key, 250_000)  # ~10 MiB: twice the cache
    size = 5 << 20
    cache_dir = tmp_path / "cache"
    srv = start(s3_servers, proxy, "cache-bounded", cache_dir, "--cache-size", str(size), "--cache-memory", "2MiB")
    for _ in range(2):
        check_scan(srv, s3_mirror.uri(key), want)
        assert dir_bytes(cache_dir) <= size + 4096, dir_bytes(cache_dir)  # + the marker file
    assert wait_for(lambda: srv.metric("scand_cache_evictions_total", tier="disk") > 0, 10)
    assert dir_bytes(cache_dir) <= size + 4096
    assert srv.metric("scand_cache_bytes", tier="disk") <= size
    s3_servers.stop(srv)


def test_concurrent_cold_scans(s3_servers, s3_mirror, proxy, tmp_path):
    key = "cache/concurrent.parquet"
    want = put_table(s3_mirror, tmp_path, key, 150_000)
    obj_size = len(s3_mirror.fs.open_input_file(f"{s3_mirror.bucket}/{key}").read())
    srv = start(s3_servers, proxy, "cache-concurrent", tmp_path / "cache")
    c = srv.client()
    try:
        info = c.get_flight_info(command({"paths": [s3_mirror.uri(key)]}), options=call_options())

        def read_all(_):
            cl = srv.client()
            try:
                return pa.concat_tables([read_stream(cl.do_get(ep.ticket, options=call_options()))[0]
                                         for ep in info.endpoints])
            finally:
                cl.close()

        with ThreadPoolExecutor(16) as ex:
            tables = list(ex.map(read_all, range(16)))
    finally:
        c.close()
    for t in tables:
        assert_tables_equal(want, t)
    fetched = srv.metric("scand_cache_fetched_bytes_total")
    assert fetched <= obj_size, f"16 concurrent scans fetched {fetched} bytes of a {obj_size}-byte object"
    s3_servers.stop(srv)
