"""Scopes follow the file, not the name, and a filter's cost is bounded:
a scand process with TLS and --auth tokens, alice scoped to alice/, and
symlinks in her folder that lead to secret/ (relative, absolute, through a
linked directory). Called by stock pyarrow.flight, she reads her own rows
and never the secret's, however she names them; a filter of 50,000
repeated terms is refused at planning; names she sends come back cut, so
the status fits pyarrow's trailers."""
from __future__ import annotations

import hashlib
import json
import os
import shutil

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

from scandlib import grpc_code
from test_security import make_ca, make_cert, opts, refused, start_scand, stop

ALICE = "alice-" + "a" * 40

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make certificates")

OWN_ROWS, SECRET_ROWS = 200_000, 7


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    d = tmp_path_factory.mktemp("linked")
    make_ca(d)
    make_cert(d, "server")
    root = d / "root"
    (root / "alice").mkdir(parents=True)
    (root / "secret").mkdir()
    pq.write_table(pa.table({"i": pa.array(range(1, OWN_ROWS + 1), pa.int64())}), root / "alice" / "own.parquet",
                   row_group_size=50_000)
    pq.write_table(pa.table({"i": pa.array([-1] * SECRET_ROWS, pa.int64())}), root / "secret" / "s.parquet")
    os.symlink("../secret/s.parquet", root / "alice" / "link.parquet")
    os.symlink(root / "secret" / "s.parquet", root / "alice" / "abs.parquet")
    os.symlink("../secret", root / "alice" / "linkdir")
    ids = {"identities": [
        {"name": "alice", "token_sha256": [hashlib.sha256(ALICE.encode()).hexdigest()], "roots": ["alice/"]},
    ]}
    (d / "ids.json").write_text(json.dumps(ids))
    ca = (d / "ca.pem").read_bytes()

    def ready(port):
        c = flight.FlightClient(f"grpc+tls://127.0.0.1:{port}", tls_root_certs=ca)
        list(c.list_actions(options=opts(ALICE)))
        c.close()
    proc, port = start_scand(d, ["--auth", "tokens", "--identities", str(d / "ids.json")], ready)
    c = flight.FlightClient(f"grpc+tls://127.0.0.1:{port}", tls_root_certs=ca)
    yield c
    c.close()
    stop(proc)


def request(*paths: str, **extra) -> flight.FlightDescriptor:
    return flight.FlightDescriptor.for_command(json.dumps({"paths": list(paths), **extra}))


def read(c: flight.FlightClient, desc: flight.FlightDescriptor) -> pa.Table:
    info = c.get_flight_info(desc, opts(ALICE))
    return pa.concat_tables([c.do_get(ep.ticket, opts(ALICE)).read_all() for ep in info.endpoints])


@pytest.mark.parametrize("path", ["alice/link.parquet", "alice/abs.parquet", "alice/linkdir/s.parquet"])
def test_a_link_out_of_the_scope_is_refused(linked, path):
    refused(lambda: linked.get_flight_info(request(path), opts(ALICE)), "PERMISSION_DENIED",
            "symbolic link", "secret/s.parquet")


@pytest.mark.parametrize("path", ["alice/", "alice/**/*.parquet", "alice/*.parquet"])
def test_globs_and_scans_skip_links_out_of_the_scope(linked, path):
    t = read(linked, request(path))
    assert t.num_rows == OWN_ROWS
    assert pa.compute.min(t["i"]).as_py() == 1  # no secret row (-1)


def test_list_flights_skips_links_out_of_the_scope(linked):
    names = [p for info in linked.list_flights(b"alice/", opts(ALICE)) for p in info.descriptor.path]
    assert names == [b"alice/own.parquet"], names


def test_filter_of_50000_terms_is_refused(linked):
    many = " AND ".join(["i > 0"] * 50_000)  # 400 KB, under the 1 MiB text limit
    refused(lambda: linked.get_flight_info(request("alice/own.parquet", filter=many), opts(ALICE)),
            "RESOURCE_EXHAUSTED", "filter.MaxTerms")
    # Under the cap: evaluated, the same answer as one term.
    t = read(linked, request("alice/own.parquet", filter=" AND ".join(["i > 100"] * 500)))
    assert t.num_rows == OWN_ROWS - 100


def test_long_names_come_back_cut(linked):
    # An unknown action named with 12,000 characters: INVALID_ARGUMENT that fits pyarrow's 8 KiB trailers.
    with pytest.raises(Exception) as ei:
        list(linked.do_action(flight.Action("x" * 12_000, b""), opts(ALICE)))
    assert grpc_code(ei.value) == "INVALID_ARGUMENT", repr(ei.value)[:300]
    assert "this server has: version, resume" in str(ei.value)
    # A path segment longer than the file system allows is the request's fault.
    refused(lambda: linked.get_flight_info(request("alice/" + "a" * 300 + ".parquet"), opts(ALICE)),
            "INVALID_ARGUMENT", "longer than the file system allows")
