"""A scand process with TLS and --auth tokens, called by stock pyarrow.flight
and the Python package: each right call works, each wrong one is refused
with the right code and a message saying what to fix. Certificates come
from openssl, made per session."""
from __future__ import annotations

import hashlib
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


@pytest.fixture(scope="module")
def secure(tmp_path_factory):
    d = tmp_path_factory.mktemp("secure")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "1", "-subj", "/CN=scand e2e CA", cwd=d)
    make_cert(d, "server")
    root = d / "root"
    for sub, n in (("a", 4000), ("b", 1000)):
        (root / sub).mkdir(parents=True)
        pq.write_table(pa.table({"x": list(range(n))}), root / sub / "t.parquet", row_group_size=1000)
    ids = {"identities": [
        {"name": "alice", "token_sha256": [hashlib.sha256(ALICE.encode()).hexdigest()], "roots": ["a/"]},
        {"name": "bob", "token_sha256": [hashlib.sha256(BOB.encode()).hexdigest()], "roots": ["b/"]},
    ]}
    (d / "ids.json").write_text(json.dumps(ids))
    port = free_port()
    binary = os.environ.get("SCAND_BIN") or str(REPO / ".tools" / "bin" / "scand")
    cmd = [binary, "serve", "--listen", f"127.0.0.1:{port}", "--root", str(root), "--split-bytes", "1",
           "--tls-cert", str(d / "server.pem"), "--tls-key", str(d / "server.key"),
           "--auth", "tokens", "--identities", str(d / "ids.json")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
    log = open(d / "scand.log", "ab")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent)
    ca = (d / "ca.pem").read_bytes()
    deadline = time.monotonic() + 30
    while True:
        try:
            c = flight.FlightClient(f"grpc+tls://127.0.0.1:{port}", tls_root_certs=ca)
            list(c.list_actions(options=opts(ALICE)))
            c.close()
            break
        except Exception:  # noqa: BLE001
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("scand did not start:\n" + (d / "scand.log").read_text())
            time.sleep(0.1)
    yield {"port": port, "ca": ca, "dir": d}
    proc.terminate()
    proc.wait(10)


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
