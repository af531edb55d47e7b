"""A scand process with TLS and --auth tokens, called by stock pyarrow.flight
and the Python package: each right call works, each wrong one is refused
with the right code and a message saying what to fix. Certificates come
from openssl, made per session."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

from scandlib import _die_with_parent, free_port, grpc_code

REPO = Path(__file__).resolve().parent.parent
ALICE, BOB = "alice-" + "a" * 40, "bob-" + "b" * 40  # alice reads a/, bob b/

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make certificates")


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_cert(d: Path, name: str) -> None:
    """A server certificate for 127.0.0.1 in d/name.pem, d/name.key, signed by d/ca."""
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", "-subj", "/CN=localhost", cwd=d)
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.pem", "-days", "1", "-extfile", "san.ext", cwd=d)


def make_client_cert(d: Path, name: str, subject: str) -> None:
    """A client certificate for subject in d/name.pem, d/name.key, signed by d/ca."""
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", "-subj", subject, cwd=d)
    (d / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.pem", "-days", "1", "-extfile", "client.ext", cwd=d)


def make_ca(d: Path) -> None:
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "1", "-subj", "/CN=scand e2e CA", cwd=d)


def write_data(root: Path) -> None:
    """a/t.parquet (4000 rows) and b/t.parquet (1000 rows), row groups of 1000."""
    for sub, n in (("a", 4000), ("b", 1000)):
        (root / sub).mkdir(parents=True)
        pq.write_table(pa.table({"x": list(range(n))}), root / sub / "t.parquet", row_group_size=1000)


def start_scand(d: Path, args: list[str], ready):
    """Starts scand serve on a free loopback port with args, TLS from
    d/server.*, and data from d/root; waits until ready(port) succeeds."""
    port = free_port()
    binary = os.environ.get("SCAND_BIN") or str(REPO / ".tools" / "bin" / "scand")
    cmd = [binary, "serve", "--listen", f"127.0.0.1:{port}", "--root", str(d / "root"), "--split-bytes", "1",
           "--tls-cert", str(d / "server.pem"), "--tls-key", str(d / "server.key"), *args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
    log = open(d / "scand.log", "ab")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent)
    deadline = time.monotonic() + 30
    while True:
        try:
            ready(port)
            return proc, port
        except Exception:  # noqa: BLE001
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("scand did not start:\n" + (d / "scand.log").read_text())
            time.sleep(0.1)


def stop(proc) -> None:
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    d = tmp_path_factory.mktemp("secure")
    make_ca(d)
    make_cert(d, "server")
    write_data(d / "root")
    ids = {"identities": [
        {"name": "alice", "token_sha256": [hashlib.sha256(ALICE.encode()).hexdigest()], "roots": ["a/"]},
        {"name": "bob", "token_sha256": [hashlib.sha256(BOB.encode()).hexdigest()], "roots": ["b/"]},
    ]}
    (d / "ids.json").write_text(json.dumps(ids))
    ca = (d / "ca.pem").read_bytes()

    def ready(port):
        c = flight.FlightClient(f"grpc+tls://127.0.0.1:{port}", tls_root_certs=ca)
        list(c.list_actions(options=opts(ALICE)))
        c.close()
    proc, port = start_scand(d, ["--auth", "tokens", "--identities", str(d / "ids.json")], ready)
    yield {"port": port, "ca": ca, "dir": d}
    stop(proc)


def opts(token: str | None = None) -> flight.FlightCallOptions:
    headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
    return flight.FlightCallOptions(headers=headers, timeout=30)


def client(secure) -> flight.FlightClient:
    return flight.FlightClient(f"grpc+tls://127.0.0.1:{secure['port']}", tls_root_certs=secure["ca"])


def cmd(*paths: str) -> flight.FlightDescriptor:
    return flight.FlightDescriptor.for_command(json.dumps({"paths": list(paths)}))


def refused(call, code: str, *words: str) -> None:
    with pytest.raises(Exception) as ei:
        call()
    assert grpc_code(ei.value) == code, repr(ei.value)
    for w in words:
        assert w in str(ei.value), repr(ei.value)


def test_stock_pyarrow_reads_every_endpoint(secure):
    c = client(secure)
    info = c.get_flight_info(cmd("a/*.parquet"), opts(ALICE))
    assert len(info.endpoints) >= 2
    tables = [c.do_get(ep.ticket, opts(ALICE)).read_all() for ep in info.endpoints]
    assert sum(t.num_rows for t in tables) == 4000
    assert all(ep.expiration_time is not None for ep in info.endpoints)


def test_python_package(secure):
    sys.path.insert(0, str(REPO / "client" / "python" / "src"))
    import scand  # noqa: PLC0415

    conn = scand.connect(f"grpc+tls://127.0.0.1:{secure['port']}", token=BOB, tls_root_certs=secure["ca"])
    assert conn.scan("b/*.parquet").read_all().num_rows == 1000


def test_rejections(secure):
    c = client(secure)
    refused(lambda: c.get_flight_info(cmd("a/t.parquet"), opts()), "UNAUTHENTICATED", "authorization")
    refused(lambda: c.get_flight_info(cmd("a/t.parquet"), opts("wrong-" + "x" * 40)), "UNAUTHENTICATED")
    refused(lambda: c.get_flight_info(cmd("b/t.parquet"), opts(ALICE)), "PERMISSION_DENIED", "b/t.parquet", "alice")
    refused(lambda: c.get_flight_info(cmd("b/*.parquet"), opts(ALICE)), "NOT_FOUND")
    # A glob over both folders gives alice only hers.
    info = c.get_flight_info(cmd("*/*.parquet"), opts(ALICE))
    assert info.total_records == 4000
    ticket = c.get_flight_info(cmd("b/t.parquet"), opts(BOB)).endpoints[0].ticket
    refused(lambda: c.do_get(ticket, opts(ALICE)).read_all(), "PERMISSION_DENIED", "bob")
    refused(lambda: c.do_get(ticket, opts()).read_all(), "UNAUTHENTICATED")
    forged = flight.Ticket(ticket.ticket[:-1] + bytes([ticket.ticket[-1] ^ 1]))
    refused(lambda: c.do_get(forged, opts(BOB)).read_all(), "UNAUTHENTICATED", "GetFlightInfo")
    plain = flight.FlightClient(f"grpc://127.0.0.1:{secure['port']}")
    refused(lambda: plain.get_flight_info(cmd("a/t.parquet"), opts(ALICE)), "UNAVAILABLE")


def test_delta_tables_in_scope(secure):
    """A Delta table is read under the caller's scope: a table outside it,
    and a data file its log names outside it (an absolute file: URI), are
    PERMISSION_DENIED."""
    deltalake = pytest.importorskip("deltalake")
    root = secure["dir"] / "root"
    for sub in ("a", "b"):
        deltalake.write_deltalake(root / sub / "dt", pa.table({"x": list(range(10))}), mode="overwrite")
    evil = root / "a" / "evil" / "_delta_log"
    evil.mkdir(parents=True, exist_ok=True)
    target = (root / "b" / "t.parquet").resolve()
    (evil / f"{0:020d}.json").write_text("\n".join(json.dumps(a) for a in [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {"metaData": {"id": "e", "format": {"provider": "parquet", "options": {}},
                      "schemaString": json.dumps({"type": "struct", "fields": [
                          {"name": "x", "type": "long", "nullable": True, "metadata": {}}]}),
                      "partitionColumns": [], "configuration": {}}},
        {"add": {"path": target.as_uri(), "size": target.stat().st_size, "modificationTime": 0,
                 "dataChange": True, "partitionValues": {}}},
    ]) + "\n")
    c = client(secure)

    def table(name: str) -> flight.FlightDescriptor:
        return flight.FlightDescriptor.for_command(json.dumps({"table": name}))
    assert c.get_flight_info(table("a/dt"), opts(ALICE)).total_records == 10
    refused(lambda: c.get_flight_info(table("b/dt"), opts(ALICE)), "PERMISSION_DENIED", "b/dt", "alice")
    refused(lambda: c.get_flight_info(table("a/evil"), opts(ALICE)), "PERMISSION_DENIED", "b/t.parquet", "alice")
    assert c.get_flight_info(table("b/dt"), opts(BOB)).total_records == 10


def served_cert(port: int, ca: bytes) -> bytes:
    ctx = ssl.create_default_context(cadata=ca.decode())
    ctx.set_alpn_protocols(["h2"])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s, ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
        return t.getpeercert(binary_form=True)


def test_certificate_reload(secure):
    d, port = secure["dir"], secure["port"]
    before = served_cert(port, secure["ca"])
    make_cert(d, "next")
    (d / "next.key").replace(d / "server.key")
    (d / "next.pem").replace(d / "server.pem")
    deadline = time.monotonic() + 15
    while served_cert(port, secure["ca"]) == before:
        assert time.monotonic() < deadline, "the server still serves the old certificate"
        time.sleep(0.5)
    c = client(secure)
    assert c.get_flight_info(cmd("a/t.parquet"), opts(ALICE)).total_records == 4000


def test_cli_reads_every_endpoint(secure):
    """The CLI binary with SCAND_TOKEN and --tls-ca scans a multi-endpoint
    glob; without a token it is refused saying so."""
    binary = os.environ.get("SCAND_BIN") or str(REPO / ".tools" / "bin" / "scand")
    ca_file = secure["dir"] / "ca.pem"
    loc = f"grpc+tls://127.0.0.1:{secure['port']}"
    info = client(secure).get_flight_info(cmd("a/*.parquet"), opts(ALICE))
    assert len(info.endpoints) >= 2
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
    args = [binary, "scan", "--server", loc, "--tls-ca", str(ca_file), "--format", "csv", "--progress", "off", "a/*.parquet"]
    out = subprocess.run(args, env={**env, "SCAND_TOKEN": ALICE}, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\n") == 4001  # a header and alice's rows, from every endpoint
    out = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "nauthenticated" in out.stderr.lower(), out.stderr


@pytest.fixture(scope="module")
def mtls(tmp_path_factory):
    """--auth mtls: etl (CN=etl,O=Example) reads a/; a certificate of
    another subject chains to the CA but names no identity."""
    d = tmp_path_factory.mktemp("mtls")
    make_ca(d)
    make_cert(d, "server")
    make_client_cert(d, "etl", "/O=Example/CN=etl")
    make_client_cert(d, "stranger", "/CN=stranger")
    write_data(d / "root")
    ids = {"identities": [{"name": "CN=etl,O=Example", "roots": ["a/"]}]}
    (d / "ids.json").write_text(json.dumps(ids))
    ca = (d / "ca.pem").read_bytes()

    def ready(port):
        c = mtls_client(port, ca, d, "etl")
        list(c.list_actions(options=opts()))
        c.close()
    proc, port = start_scand(d, ["--auth", "mtls", "--identities", str(d / "ids.json"),
                                 "--tls-client-ca", str(d / "ca.pem")], ready)
    yield {"port": port, "ca": ca, "dir": d}
    stop(proc)


def mtls_client(port: int, ca: bytes, d: Path, name: str | None) -> flight.FlightClient:
    loc = f"grpc+tls://127.0.0.1:{port}"
    if name is None:
        return flight.FlightClient(loc, tls_root_certs=ca)
    return flight.FlightClient(loc, tls_root_certs=ca, cert_chain=(d / f"{name}.pem").read_bytes(),
                               private_key=(d / f"{name}.key").read_bytes())


def test_mtls_from_stock_pyarrow(mtls):
    d, port, ca = mtls["dir"], mtls["port"], mtls["ca"]
    c = mtls_client(port, ca, d, "etl")
    info = c.get_flight_info(cmd("a/*.parquet"), opts())
    assert len(info.endpoints) >= 2
    assert sum(c.do_get(ep.ticket, opts()).read_all().num_rows for ep in info.endpoints) == 4000
    refused(lambda: c.get_flight_info(cmd("b/t.parquet"), opts()), "PERMISSION_DENIED", "CN=etl,O=Example")
    stranger = mtls_client(port, ca, d, "stranger")
    refused(lambda: stranger.get_flight_info(cmd("a/t.parquet"), opts()), "PERMISSION_DENIED", "CN=stranger")
    # Without a certificate the TLS handshake fails: no call reaches scand.
    refused(lambda: mtls_client(port, ca, d, None).get_flight_info(cmd("a/t.parquet"), opts()), "UNAVAILABLE")


def test_mtls_cli(mtls):
    d = mtls["dir"]
    binary = os.environ.get("SCAND_BIN") or str(REPO / ".tools" / "bin" / "scand")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
    out = subprocess.run([binary, "scan", "--server", f"grpc+tls://127.0.0.1:{mtls['port']}", "--tls-ca", str(d / "ca.pem"),
                          "--tls-cert", str(d / "etl.pem"), "--tls-key", str(d / "etl.key"), "--format", "csv",
                          "--progress", "off", "a/*.parquet"], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\n") == 4001


JWT_SECRET = b"e2e-shared-secret-0123456789abcdef0123456789"


def b64url(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def hs256_jwt(claims: dict) -> str:
    """A JWT signed with JWT_SECRET (RFC 7519, HS256), made by hand so the
    test needs no JOSE library."""
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b64url(json.dumps(claims).encode())
    return head + "." + b64url(hmac.new(JWT_SECRET, head.encode(), hashlib.sha256).digest())


def jwt_claims(**over) -> dict:
    now = int(time.time())
    return {"iss": "https://idp.example", "sub": "carol", "aud": "scand", "iat": now - 60, "exp": now + 600, **over}


@pytest.fixture(scope="module")
def jwt_server(tmp_path_factory):
    d = tmp_path_factory.mktemp("jwt")
    make_ca(d)
    make_cert(d, "server")
    write_data(d / "root")
    (d / "ids.json").write_text(json.dumps({"identities": [{"name": "carol", "roots": ["b/"]}]}))
    (d / "jwt.secret").write_bytes(JWT_SECRET)
    ca = (d / "ca.pem").read_bytes()

    def ready(port):
        c = flight.FlightClient(f"grpc+tls://127.0.0.1:{port}", tls_root_certs=ca)
        list(c.list_actions(options=opts(hs256_jwt(jwt_claims()))))
        c.close()
    proc, port = start_scand(d, ["--auth", "jwt", "--identities", str(d / "ids.json"), "--jwt-secret-file",
                                 str(d / "jwt.secret"), "--jwt-issuer", "https://idp.example", "--jwt-audience", "scand"],
                             ready)
    yield {"port": port, "ca": ca, "dir": d}
    stop(proc)


def test_jwt_from_stock_pyarrow(jwt_server):
    c = flight.FlightClient(f"grpc+tls://127.0.0.1:{jwt_server['port']}", tls_root_certs=jwt_server["ca"])
    good = opts(hs256_jwt(jwt_claims()))
    info = c.get_flight_info(cmd("b/*.parquet"), good)
    assert sum(c.do_get(ep.ticket, good).read_all().num_rows for ep in info.endpoints) == 1000
    now = int(time.time())
    expired = hs256_jwt(jwt_claims(iat=now - 7200, exp=now - 3600))
    refused(lambda: c.get_flight_info(cmd("b/t.parquet"), opts(expired)), "UNAUTHENTICATED", "expired")
    other_aud = hs256_jwt(jwt_claims(aud="someone-else"))
    refused(lambda: c.get_flight_info(cmd("b/t.parquet"), opts(other_aud)), "UNAUTHENTICATED", "aud")
    forged = hs256_jwt(jwt_claims())[:-2] + "AA"
    refused(lambda: c.get_flight_info(cmd("b/t.parquet"), opts(forged)), "UNAUTHENTICATED")
    # A ticket issued under a good JWT stays carol's: DoGet with an expired JWT is refused before the ticket.
    refused(lambda: c.do_get(info.endpoints[0].ticket, opts(expired)).read_all(), "UNAUTHENTICATED")
