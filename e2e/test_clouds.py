"""scand on Google Cloud Storage and Azure Blob Storage: the real binary
against real emulators (fake-gcs-server, Azurite), through toxiproxy.

One scand serves local files, gs:// and az:// at once. Every object is also
written below the server's --root, so each test compares a scan of the cloud
URI with a scan of the local twin through the same server.

  test_same_as_local     corpus Parquet and ORC files and a 4-row-group file,
                         whole and projected, through each store
  test_abfss_names       abfss:// and wasbs:// URIs name the same blobs
  test_hive_filter       a hive dataset with a partition and a column filter
  test_object_replaced   overwritten between GetFlightInfo and DoGet:
                         FAILED_PRECONDITION naming the object
  test_faults            toxiproxy latency, cut connections (exact rows or
                         UNAVAILABLE) and resets (UNAVAILABLE naming the store)
  test_scoped_identity   an identity scoped to one bucket is refused another
                         bucket and the other store
  test_bad_credentials   PERMISSION_DENIED naming the store and object
  test_missing_bucket    NOT_FOUND naming the bucket, without the --root hint

Needs fake-gcs-server, Azurite and toxiproxy: scripts/install-tools.sh.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import subprocess
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

from cloudlib import AZ_ACCOUNT, AZ_KEY, Azurite, FakeGCS, find_azurite
from s3lib import INSTALL_HINT, S3ScandServer, Toxiproxy, find_tool
from scandlib import (assert_tables_equal, call_options, command, expect_error, find_testdata, grpc_code,
                      grpc_message, read_stream, scan)

BUCKET = "scand-e2e"  # the bucket (GCS) and container (Azure) the tests fill
STORES = ["gs", "az"]
CORPUS = [
    "parquet-testing/alltypes_plain.snappy.parquet",
    "parquet-testing/datapage_v2.snappy.parquet",
    "parquet-testing/nested_structs.rust.parquet",
    "parquet-testing/delta_byte_array.parquet",
    "orc-examples/TestOrcFile.test1.orc",
]
TOKEN_GS, TOKEN_AZ = "token-gs-only", "token-az-only"


def uri(store: str, key: str, bucket: str = BUCKET) -> str:
    return f"{store}://{bucket}/{key}"


def mixed(rows: int) -> pa.Table:
    return pa.table({"id": pa.array(range(rows), pa.int64()),
                     "name": pa.array([f"n{i % 97}" for i in range(rows)]),
                     "x": pa.array([float(i % 1000) / 7 for i in range(rows)])})


class Clouds:
    """The emulators, the local twin and the servers of this module."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.root = workdir / "root"
        self.root.mkdir()
        self.gcs: FakeGCS | None = None
        self.azurite: Azurite | None = None
        self.toxi: Toxiproxy | None = None
        self.proxies: dict = {}
        self.servers: list[S3ScandServer] = []

    def put(self, key: str, data: bytes, local: bool = True) -> None:
        """Writes key to both stores and, when local, below --root."""
        if local:
            p = self.root / key
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        self.gcs.put(BUCKET, key, data)
        self.azurite.put(BUCKET, key, data)

    def server(self, name: str, *args: str, gcs_endpoint: str | None = None, azure_endpoint: str | None = None,
               azure_key: str = AZ_KEY, gcs_args: tuple = ("--gcs-anonymous",)) -> S3ScandServer:
        a = ["--gcs-endpoint", gcs_endpoint or self.gcs.endpoint, *gcs_args,
             "--azure-account", AZ_ACCOUNT, "--azure-endpoint", azure_endpoint or self.azurite.endpoint,
             "--gcs-max-attempts", "3", "--azure-max-attempts", "3", *args]
        env = {"AZURE_STORAGE_KEY": azure_key, "STORAGE_EMULATOR_HOST": "", "GOOGLE_APPLICATION_CREDENTIALS": ""}
        srv = S3ScandServer(_scand_bin(), self.root, self.workdir / f"{name}.log", name, a, env)
        if "--auth" in args:
            # The stock readiness check lists actions without a token, which
            # --auth tokens refuses: the Handshake-less health check of the
            # server is not reachable either, so wait for the serving line.
            srv.start = _start_when_logged(srv)
        srv.start()
        self.servers.append(srv)
        return srv


def _start_when_logged(srv: S3ScandServer):
    import os
    import subprocess as sp
    import time

    from scandlib import _die_with_parent, free_port

    def start() -> None:
        srv.port, srv.metrics_port = free_port(), free_port()
        srv._log = open(srv.log_path, "ab")
        cmd = [srv.binary, "serve", "--listen", f"127.0.0.1:{srv.port}", "--root", str(srv.root),
               "--metrics-listen", f"127.0.0.1:{srv.metrics_port}", *srv.args]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SCAND_", "AWS_"))}
        env.update(srv.extra_env)
        srv.proc = sp.Popen(cmd, stdout=srv._log, stderr=sp.STDOUT, stdin=sp.DEVNULL, env=env,
                            preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if "scand serving" in srv.log_tail():
                return
            if srv.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"scand did not start:\n{srv.log_tail()}")
    return start


def _scand_bin() -> str:
    import os
    return os.environ["SCAND_BIN"]


@pytest.fixture(scope="module")
def clouds(tmp_path_factory):
    gcs_bin = find_tool("fake-gcs-server", "SCAND_FAKE_GCS")
    azurite_bin = find_azurite()
    toxi_bin = find_tool("server", "SCAND_TOXIPROXY")
    if not gcs_bin or not azurite_bin or not toxi_bin:
        pytest.skip(f"fake-gcs-server, Azurite or toxiproxy not found: {INSTALL_HINT}")
    c = Clouds(tmp_path_factory.mktemp("clouds"))
    c.gcs, c.azurite, c.toxi = FakeGCS(gcs_bin, c.workdir), Azurite(azurite_bin, c.workdir), Toxiproxy(toxi_bin, c.workdir)
    try:
        for p in (c.gcs, c.azurite, c.toxi):
            p.start()
        c.gcs.create_bucket(BUCKET)
        c.azurite.create_container(BUCKET)
        testdata = find_testdata()
        for key in CORPUS:
            if (testdata / key).exists():
                c.put(key, (testdata / key).read_bytes())
        gen = c.workdir / "four-rg.parquet"
        pq.write_table(mixed(8000), gen, row_group_size=2000)
        c.put("gen/four-rg.parquet", gen.read_bytes())
        for year in (2025, 2026):
            for region in ("eu", "us"):
                t = mixed(500).append_column("v", pa.array([year * 10 + len(region)] * 500, pa.int64()))
                p = c.workdir / f"h-{year}-{region}.parquet"
                pq.write_table(t, p)
                c.put(f"hive/year={year}/region={region}/part-0.parquet", p.read_bytes())
        c.proxies = {"gs": c.toxi.proxy(c.gcs.addr), "az": c.toxi.proxy(c.azurite.addr)}
        yield c
    finally:
        for s in c.servers:
            s.stop()
        for p in (c.toxi, c.azurite, c.gcs):
            if p:
                p.stop()


@pytest.fixture(scope="module")
def server(clouds):
    """scand reading both stores through toxiproxy (no toxics unless a test
    adds them)."""
    return clouds.server("clouds", gcs_endpoint=f"http://{clouds.proxies['gs'].listen}/storage/v1/",
                         azure_endpoint=f"http://{clouds.proxies['az'].listen}/{AZ_ACCOUNT}")


@pytest.fixture(scope="module")
def client(server):
    c = server.client()
    yield c
    c.close()


@pytest.mark.parametrize("store", STORES)
@pytest.mark.parametrize("key", CORPUS + ["gen/four-rg.parquet"])
def test_same_as_local(clouds, client, store, key):
    if not (clouds.root / key).exists():
        pytest.skip(f"{key} not in the test corpus")
    want = scan(client, {"paths": [key]}).table
    got = scan(client, {"paths": [uri(store, key)]}).table
    assert_tables_equal(want, got, f"{uri(store, key)} vs local")
    if key.endswith("four-rg.parquet"):
        cols = ["id", "x"]
        res = scan(client, {"paths": [uri(store, key)], "columns": cols, "split_bytes": 1})
        assert len(res.info.endpoints) > 1
        assert_tables_equal(scan(client, {"paths": [key], "columns": cols}).table, res.table, "projected, split")


def test_abfss_names(client):
    want = scan(client, {"paths": ["gen/four-rg.parquet"]}).table
    for name in [f"abfss://{BUCKET}@{AZ_ACCOUNT}.dfs.core.windows.net/gen/four-rg.parquet",
                 f"wasbs://{BUCKET}@{AZ_ACCOUNT}.blob.core.windows.net/gen/*.parquet"]:
        assert_tables_equal(want, scan(client, {"paths": [name]}).table, name)
    expect_error(client, {"paths": [f"abfss://{BUCKET}@otheracct.dfs.core.windows.net/gen/four-rg.parquet"]},
                 "PERMISSION_DENIED", "otheracct")


@pytest.mark.parametrize("store", STORES)
def test_hive_filter(client, store):
    flt = "year = 2026 AND x > 50"
    want = scan(client, {"paths": ["hive/"], "filter": flt}).table
    got = scan(client, {"paths": [uri(store, "hive/")], "filter": flt}).table
    assert want.num_rows > 0 and "year" in got.column_names
    assert_tables_equal(want.sort_by("id"), got.sort_by("id"), f"{store} hive filter")


@pytest.mark.parametrize("store", STORES)
def test_object_replaced(clouds, client, store, tmp_path):
    key = f"replace/{store}.parquet"
    pq.write_table(mixed(1000), tmp_path / "v1.parquet")
    pq.write_table(mixed(999), tmp_path / "v2.parquet")
    put = clouds.gcs.put if store == "gs" else clouds.azurite.put
    put(BUCKET, key, (tmp_path / "v1.parquet").read_bytes())
    info = client.get_flight_info(command({"paths": [uri(store, key)]}), options=call_options())
    assert info.total_records == 1000
    put(BUCKET, key, (tmp_path / "v2.parquet").read_bytes())
    with pytest.raises((flight.FlightError, pa.ArrowException)) as exc:
        read_stream(client.do_get(info.endpoints[0].ticket, options=call_options()))
    assert grpc_code(exc.value) == "FAILED_PRECONDITION", str(exc.value)
    assert uri(store, key) in grpc_message(exc.value), str(exc.value)
    assert scan(client, {"paths": [uri(store, key)]}).table.num_rows == 999


@pytest.mark.parametrize("store", STORES)
def test_faults(clouds, client, store):
    """Latency gives exact rows; connections cut every 64 KiB give exact rows
    or UNAVAILABLE; every connection reset gives UNAVAILABLE naming the store,
    within the retries."""
    key = "gen/four-rg.parquet"
    want = scan(client, {"paths": [key]}).table
    proxy, added = clouds.proxies[store], []

    def toxic(typ: str, **attrs) -> None:
        name = f"{typ}-{store}"
        clouds.toxi.call("POST", f"/proxies/{proxy.name}/toxics",
                         {"name": name, "type": typ, "stream": "downstream", "toxicity": 1.0, "attributes": attrs})
        added.append(name)

    def clear() -> None:
        while added:
            clouds.toxi.call("DELETE", f"/proxies/{proxy.name}/toxics/{added.pop()}")

    try:
        toxic("latency", latency=30, jitter=5)
        assert_tables_equal(want, scan(client, {"paths": [uri(store, key)]}).table, "with latency")
        clear()
        toxic("limit_data", bytes=64 << 10)
        try:
            got = scan(client, {"paths": [uri(store, key)], "columns": ["id", "name"]}).table
            assert_tables_equal(scan(client, {"paths": [key], "columns": ["id", "name"]}).table, got, "cut")
        except Exception as e:  # ScanError
            assert getattr(e, "code", None) == "UNAVAILABLE", repr(e)
        clear()
        toxic("reset_peer", timeout=0)
        name = {"gs": "gcs", "az": "azure"}[store]
        expect_error(client, {"paths": [uri(store, "gen/four-rg.parquet")]}, "UNAVAILABLE", name, uri(store, key))
    finally:
        clear()
    assert_tables_equal(want, scan(client, {"paths": [uri(store, key)]}).table, "after the faults")


@pytest.fixture(scope="module")
def scoped(clouds):
    ids = {"identities": [
        {"name": "gs-only", "token_sha256": [hashlib.sha256(TOKEN_GS.encode()).hexdigest()], "roots": [f"gs://{BUCKET}/"]},
        {"name": "az-only", "token_sha256": [hashlib.sha256(TOKEN_AZ.encode()).hexdigest()], "roots": [f"az://{BUCKET}/gen/"]},
    ]}
    p = clouds.workdir / "ids.json"
    p.write_text(json.dumps(ids))
    return clouds.server("scoped", "--auth", "tokens", "--identities", str(p))


def _scan_as(srv, token: str, path: str):
    c = srv.client()
    opts = flight.FlightCallOptions(headers=[(b"authorization", f"Bearer {token}".encode())], timeout=30)
    try:
        info = c.get_flight_info(command({"paths": [path]}), options=opts)
        return sum(read_stream(c.do_get(ep.ticket, options=opts))[0].num_rows for ep in info.endpoints)
    finally:
        c.close()


def test_scoped_identity(clouds, scoped):
    assert _scan_as(scoped, TOKEN_GS, uri("gs", "gen/four-rg.parquet")) == 8000
    assert _scan_as(scoped, TOKEN_AZ, uri("az", "gen/four-rg.parquet")) == 8000
    assert _scan_as(scoped, TOKEN_AZ, f"abfss://{BUCKET}@{AZ_ACCOUNT}.dfs.core.windows.net/gen/four-rg.parquet") == 8000
    for token, path in [(TOKEN_GS, uri("az", "gen/four-rg.parquet")), (TOKEN_GS, uri("gs", "x.parquet", "other-bucket")),
                        (TOKEN_AZ, uri("az", "hive/year=2025/region=eu/part-0.parquet")),
                        (TOKEN_AZ, uri("gs", "gen/four-rg.parquet"))]:
        with pytest.raises(flight.FlightError) as exc:
            _scan_as(scoped, token, path)
        assert grpc_code(exc.value) == "PERMISSION_DENIED", f"{token} {path}: {exc.value}"
        assert path in grpc_message(exc.value)


class _RefusingTokens(http.server.BaseHTTPRequestHandler):
    """A token endpoint that refuses every service account assertion."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b'{"error":"invalid_grant","error_description":"Invalid JWT Signature."}'
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_bad_credentials(clouds):
    tokens = http.server.HTTPServer(("127.0.0.1", 0), _RefusingTokens)
    threading.Thread(target=tokens.serve_forever, daemon=True).start()
    # A fresh RSA key (openssl, as test_security makes its certificates).
    pem = subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
                         check=True, capture_output=True, text=True).stdout
    key = clouds.workdir / "sa.json"
    key.write_text(json.dumps({"type": "service_account", "project_id": "p", "private_key_id": "k", "private_key": pem,
                               "client_email": "r@p.iam.gserviceaccount.com", "client_id": "1",
                               "token_uri": f"http://127.0.0.1:{tokens.server_port}/token"}))
    wrong_key = "d3Jvbmcta2V5LWZvci10ZXN0aW5nLW9ubHktMDEyMzQ1Njc4OQ=="
    srv = clouds.server("badcreds", azure_key=wrong_key, gcs_args=("--gcs-credentials-file", str(key)))
    c = srv.client()
    try:
        for store, name in [("gs", "gcs"), ("az", "azure")]:
            err = expect_error(c, {"paths": [uri(store, "gen/four-rg.parquet")]},
                               {"PERMISSION_DENIED", "UNAUTHENTICATED"}, name, uri(store, "gen/four-rg.parquet"))
            assert wrong_key not in err.message and "PRIVATE KEY" not in err.message
    finally:
        c.close()
        tokens.shutdown()


@pytest.mark.parametrize("store,what", [("gs", "bucket"), ("az", "container")])
def test_missing_bucket(client, store, what):
    err = expect_error(client, {"paths": [uri(store, "x.parquet", "no-such-bucket")]}, "NOT_FOUND",
                       f'{what} "no-such-bucket" does not exist')
    assert "--root" not in err.message, err.message
    expect_error(client, {"paths": [uri(store, "gen/missing.parquet")]}, "NOT_FOUND", uri(store, "gen/missing.parquet"))
