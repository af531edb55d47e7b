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
  test_replicas_hit_on_owners   3 replicas (--peers), each endpoint read at its
                                first location: repeated scans are served
                                >= 95 % from the owners' caches, no data GETs

Needs versitygw: scripts/install-tools.sh.
"""

from __future__ import annotations

import base64
import http.client
import os
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

from conftest import _scand_bin, _servers
from scandlib import _die_with_parent, assert_tables_equal, free_port, read_stream, call_options, command, scan
from s3lib import S3ScandServer, s3_server_args, s3_server_env, wait_for

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


# --------------------------------------------------------------------------
# Three replicas, each with its own --cache-dir
# --------------------------------------------------------------------------

class CacheReplica(S3ScandServer):
    """A replica on a port chosen before it starts (its peers must know it)."""

    def __init__(self, root: Path, log_path: Path, name: str, port: int, args: list[str]):
        super().__init__(_scand_bin(), root, log_path, name, args, s3_server_env())
        self.fixed_port = port

    def start(self, ready_timeout: float = 30.0) -> None:
        self.port, self.metrics_port = self.fixed_port, free_port()
        self._log = open(self.log_path, "ab")
        cmd = [self.binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--root", str(self.root),
               "--metrics-listen", f"127.0.0.1:{self.metrics_port}", *self.args]
        self._log.write(f"$ {' '.join(cmd)}\n".encode())
        self._log.flush()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SCAND_", "AWS_"))}
        env.update(self.extra_env)
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=env, preexec_fn=_die_with_parent)

        def up() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                c = flight.FlightClient(self.location)
                list(c.list_actions(options=call_options(5)))
                c.close()
                self.metrics_text()
                return True
            except (OSError, flight.FlightError, pa.ArrowException):
                return False

        if not wait_for(up, ready_timeout, 0.1):
            raise RuntimeError(f"{self.name} did not serve within {ready_timeout} s:\n{self.log_tail()}")


@pytest.fixture(scope="module")
def cache_cluster(s3_mirror, proxy, tmp_path_factory):
    logdir = tmp_path_factory.mktemp("cache-replicas")
    ports = [free_port() for _ in range(3)]
    members = [f"grpc://127.0.0.1:{p}" for p in ports]
    keys = logdir / "ticket-keys"  # one ticket key for the tier
    keys.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    keys.chmod(0o600)
    peers = ",".join(f"127.0.0.1:{p}" for p in ports)
    replicas = [CacheReplica(s3_mirror.root, logdir / f"replica{i}.log", f"cache-replica{i}", port,
                             [*s3_server_args(proxy.endpoint), "--cache-dir", str(logdir / f"cache{i}"),
                              "--peers", peers, "--advertise", members[i], "--ticket-key-file", str(keys)])
                for i, port in enumerate(ports)]
    try:
        for r in replicas:
            r.start()
            _servers.append(r)
        yield replicas, members
    finally:
        for r in replicas:
            r.stop()
            if r in _servers:
                _servers.remove(r)


def _locations(info: flight.FlightInfo) -> list[list[str]]:
    return [[loc.uri.decode() if isinstance(loc.uri, bytes) else str(loc.uri) for loc in ep.locations]
            for ep in info.endpoints]


def _first_locations(info: flight.FlightInfo) -> list[str]:
    return [locs[0] if locs else "" for locs in _locations(info)]


def test_replicas_hit_on_owners(cache_cluster, s3_mirror, proxy, tmp_path):
    """Repeated scans through 3 replicas, each endpoint read at its first
    location as a client honouring locations does: the owners serve the
    data from their caches (>= 95 % of the bytes they read), and no data
    GET reaches the store. After one cold round (each replica plans once,
    the owners read once), each scan is planned by another replica."""
    replicas, members = cache_cluster
    keys = [f"cache3/part-{i}.parquet" for i in range(4)]
    want = pa.concat_tables([put_table(s3_mirror, tmp_path, k, 60_000) for k in keys])  # ~2.4 MiB each
    # split_bytes 1: an endpoint per row group (4 a file), 16 splits to place.
    req = {"paths": [s3_mirror.uri("cache3/*.parquet")], "split_bytes": 1}

    def plan(r) -> flight.FlightInfo:
        c = r.client()
        try:
            return c.get_flight_info(command(req), options=call_options())
        finally:
            c.close()

    # Membership settles within a few seconds of the last replica's start:
    # then every replica is an owner or a runner-up of some split.
    assert wait_for(lambda: {m for locs in _locations(plan(replicas[0])) for m in locs} == set(members), 15, 0.2), \
        f"the plan does not name the 3 replicas: {_locations(plan(replicas[0]))}"
    owners = set(_first_locations(plan(replicas[0])))
    assert len(owners) >= 2, f"16 splits, one owner: {owners}"
    clients = {m: flight.FlightClient(m) for m in members}

    def scan_once(planner) -> tuple[pa.Table, list[dict]]:
        info = plan(planner)
        tables, metas = [], []
        for ep, loc in zip(info.endpoints, _first_locations(info)):
            t, meta, _, _ = read_stream(clients[loc].do_get(ep.ticket, options=call_options()))
            tables.append(t)
            metas.append(meta)
        return pa.concat_tables(tables), metas

    def data_gets() -> int:
        return sum(len(proxy.gets(k)) for k in keys)

    try:
        for r in replicas[1:]:  # every replica plans once (footers), cold
            plan(r)
        got, _ = scan_once(replicas[0])  # and the data is read once, cold
        assert_tables_equal(want, got, "cold scan")
        cold_gets = data_gets()
        assert cold_gets > 0
        # The owners' pages are in memory at once; wait for the disk tier too,
        # so that the repeated scans find them on either tier.
        assert wait_for(lambda: all(settled(r) or r.metric("scand_cache_fetched_bytes_total") == 0 for r in replicas), 10)
        hits0 = {r.name: r.metric("scand_cache_hit_bytes_total", tier="memory") + r.metric("scand_cache_hit_bytes_total", tier="disk")
                 for r in replicas}
        fetched0 = {r.name: r.metric("scand_cache_fetched_bytes_total") for r in replicas}
        from_cache = fetched = 0
        for i in range(3):
            got, metas = scan_once(replicas[i % 3])
            assert_tables_equal(want, got, f"repeated scan {i + 1}")
            from_cache += sum(m["bytes_from_cache"] for m in metas)
            fetched += sum(m["bytes_fetched"] for m in metas)
    finally:
        for c in clients.values():
            c.close()
    rate = from_cache / fetched
    assert rate >= 0.95, f"owners served {from_cache} of {fetched} bytes from their caches ({rate:.1%})"
    assert data_gets() == cold_gets, f"repeated scans sent {data_gets() - cold_gets} data GETs"
    # The replicas' own counters agree: the owners hit, and none fetched.
    for r in replicas:
        hits = r.metric("scand_cache_hit_bytes_total", tier="memory") + r.metric("scand_cache_hit_bytes_total", tier="disk")
        if r.location in owners:
            assert hits > hits0[r.name], f"{r.name} owns splits and served nothing from its cache"
        assert r.metric("scand_cache_fetched_bytes_total") == fetched0[r.name], f"{r.name} fetched pages again"
