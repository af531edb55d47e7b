"""Iceberg tables named through catalogs on the server (`scand serve --catalog
name=URI`), as "catalog.namespace.table", compared with PyIceberg's own read:

  - a SQL catalog on sqlite that PyIceberg's SqlCatalog writes
    (--catalog lake=sql+sqlite:///.../catalog.db?catalog=pyice);
  - a real REST catalog: the Iceberg project's REST catalog server
    (RESTCatalogServer, from Maven Central; scripts/install-tools.sh puts it in
    .tools/iceberg-rest) on 127.0.0.1 with a warehouse under scand's root, a
    table created and appended to through PyIceberg's RestCatalog
    (--catalog rest=rest+http://127.0.0.1:PORT). Without java or the jars that
    test skips.

Bad input: an unknown table or namespace is NOT_FOUND, a catalog nobody
answers at UNAVAILABLE, a table whose metadata lies outside --root
PERMISSION_DENIED naming the file, and a table outside the caller's scope
PERMISSION_DENIED. ListFlights lists the catalogs' tables the caller may read.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight
import pytest

from scandlib import REPO, ScandServer, _die_with_parent, call_options, expect_error, free_port, grpc_code, normalize, scan, table_diff

pytest.importorskip("pyiceberg")

from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402

REST_JARS = Path(os.environ.get("SCAND_ICEBERG_REST") or REPO / ".tools" / "iceberg-rest")
READER, STRANGER = "reader-token", "stranger-token"


def sorted_rows(t: pa.Table) -> pa.Table:
    return normalize(t).sort_by([("id", "ascending")])


def same(expected: pa.Table, got: pa.Table, what: str) -> None:
    diff = table_diff(sorted_rows(expected), sorted_rows(got))
    assert diff is None, f"{what}: {diff}"


def start_rest_catalog(warehouse: Path, log: Path):
    """The Iceberg REST catalog server on a free port; (process, uri), or
    (None, reason) when it cannot run here."""
    if shutil.which("java") is None:
        return None, "java not found"
    if not any(REST_JARS.glob("iceberg-open-api-*-test-fixtures.jar")):
        return None, f"the REST catalog server's jars are not in {REST_JARS}: run scripts/install-tools.sh"
    port = free_port()
    env = {**os.environ, "CATALOG_WAREHOUSE": f"file://{warehouse}", "CATALOG_REST_PORT": str(port)}
    out = open(log, "ab")
    # The fixture's own main listens on every address: LoopbackRESTCatalogServer
    # runs the same catalog and servlet on 127.0.0.1 only.
    launcher = REPO / "e2e" / "restcatalog" / "LoopbackRESTCatalogServer.java"
    proc = subprocess.Popen(["java", "-cp", f"{REST_JARS}/*", str(launcher)],
                            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                            preexec_fn=_die_with_parent)
    uri = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the REST catalog server exited ({proc.returncode}): {log.read_text()[-4000:]}")
        try:
            urllib.request.urlopen(uri + "/v1/config", timeout=1).read()
            return proc, uri
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"the REST catalog server did not answer within 60 s: {log.read_text()[-4000:]}")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    base = tmp_path_factory.mktemp("catalogs")
    root, outside = base / "root", base / "outside"
    (root / "wh").mkdir(parents=True)
    outside.mkdir()
    (root / "plain.parquet").write_bytes(b"")  # a file beside the tables, listed only as a file

    # The SQL catalog, written by PyIceberg; its database lies outside the root.
    sqlcat = SqlCatalog("pyice", uri=f"sqlite:///{base}/catalog.db", warehouse=f"file://{root}/wh")
    sqlcat.create_namespace("db")
    t = sqlcat.create_table("db.t", schema=pa.schema([("id", pa.int64()), ("name", pa.string())]))
    t.append(pa.table({"id": pa.array(range(100), pa.int64()), "name": [f"n{i % 7}" for i in range(100)]}))
    first = sqlcat.load_table("db.t").current_snapshot().snapshot_id
    sqlcat.load_table("db.t").append(pa.table({"id": pa.array(range(100, 150), pa.int64()),
                                               "name": pa.array([None] * 50, pa.string())}))
    away = sqlcat.create_table("db.away", schema=pa.schema([("id", pa.int64())]), location=f"file://{outside}/away")
    away.append(pa.table({"id": pa.array([1], pa.int64())}))

    # The REST catalog, its warehouse under the root.
    rest_proc, rest = start_rest_catalog(root / "restwh", base / "rest.log")
    rest_reason = None
    if rest_proc is None:
        rest_reason, rest = rest, None
    else:
        from pyiceberg.catalog.rest import RestCatalog
        restcat = RestCatalog("rest", uri=rest)
        restcat.create_namespace("sales")
        rt = restcat.create_table("sales.orders", schema=pa.schema([("id", pa.int64()), ("amount", pa.float64())]))
        rt.append(pa.table({"id": pa.array(range(40), pa.int64()), "amount": [i * 1.5 for i in range(40)]}))
        restcat.load_table("sales.orders").append(pa.table({"id": pa.array([40, 41], pa.int64()), "amount": pa.array([0.0, None], pa.float64())}))

    down = free_port()  # nothing listens there
    catalogs = ["--catalog", f"lake=sql+sqlite://{base}/catalog.db?catalog=pyice",
                "--catalog", f"down=rest+http://127.0.0.1:{down}"]
    if rest:
        catalogs += ["--catalog", f"rest=rest+{rest}"]
    logs = tmp_path_factory.mktemp("catalog-logs")
    srv = ScandServer(os.environ.get("SCAND_BIN") or str(REPO / ".tools" / "bin" / "scand"), root,
                      logs / "scand.log", "catalogs", args=catalogs)
    ids = {"identities": [
        {"name": "reader", "token_sha256": [hashlib.sha256(READER.encode()).hexdigest()], "roots": ["wh/"]},
        {"name": "stranger", "token_sha256": [hashlib.sha256(STRANGER.encode()).hexdigest()], "roots": ["other/"]},
    ]}
    (base / "ids.json").write_text(json.dumps(ids))
    secured = ScandServer(srv.binary, root, logs / "secured.log", "catalogs-secured",
                          args=[*catalogs, "--auth", "tokens", "--identities", str(base / "ids.json")])
    srv.start()
    secured.start()
    yield {"srv": srv, "secured": secured, "sql": sqlcat, "first": first, "rest": rest, "rest_reason": rest_reason,
           "restcat": restcat if rest else None}
    srv.stop()
    secured.stop()
    if rest_proc is not None:
        rest_proc.terminate()
        rest_proc.wait(10)


def test_sql_catalog_table(setup):
    c = setup["srv"].client()
    tbl = setup["sql"].load_table("db.t")
    same(tbl.scan().to_arrow(), scan(c, {"table": "lake.db.t"}).table, "current snapshot")
    same(tbl.scan(snapshot_id=setup["first"]).to_arrow(),
         scan(c, {"table": "lake.db.t", "snapshot_id": setup["first"]}).table, "first snapshot")
    got = scan(c, {"table": "lake.db.t", "columns": ["name"], "filter": "id >= 140"}).table
    want = tbl.scan(row_filter="id >= 140", selected_fields=("name",)).to_arrow()
    assert sorted(got.column("name").to_pylist(), key=str) == sorted(want.column("name").to_pylist(), key=str)


def test_rest_catalog_table(setup):
    if setup["rest"] is None:
        pytest.skip(setup["rest_reason"])
    c = setup["srv"].client()
    tbl = setup["restcat"].load_table("sales.orders")
    same(tbl.scan().to_arrow(), scan(c, {"table": "rest.sales.orders"}).table, "REST catalog table")
    expect_error(c, {"table": "rest.sales.nope"}, "NOT_FOUND", "rest.sales.nope")


def test_bad_names(setup):
    c = setup["srv"].client()
    expect_error(c, {"table": "lake.db.nope"}, "NOT_FOUND", "lake.db.nope")
    expect_error(c, {"table": "lake.nope.t"}, "NOT_FOUND", "lake.nope.t")
    expect_error(c, {"table": "lake.t"}, "INVALID_ARGUMENT", "catalog.namespace.table")
    expect_error(c, {"table": "down.db.t"}, "UNAVAILABLE", "down.db.t")
    # Metadata outside the root: refused, naming the file.
    expect_error(c, {"table": "lake.db.away"}, "PERMISSION_DENIED", "away/metadata/")


def auth(token: str):
    return flight.FlightCallOptions(headers=[(b"authorization", b"Bearer " + token.encode())], timeout=30)


def test_scope(setup):
    c = setup["secured"].client()
    desc = flight.FlightDescriptor.for_command(json.dumps({"table": "lake.db.t"}))
    info = c.get_flight_info(desc, auth(READER))
    assert sum(c.do_get(ep.ticket, auth(READER)).read_all().num_rows for ep in info.endpoints) == 150
    with pytest.raises(flight.FlightError) as e:
        c.get_flight_info(desc, auth(STRANGER))
    assert grpc_code(e.value) == "PERMISSION_DENIED", e.value
    assert "stranger" in str(e.value)
    # ListFlights lists only what the caller may read.
    assert "lake.db.t" in [json.loads(f.descriptor.command)["table"]
                           for f in c.list_flights(b"lake.", auth(READER))]
    assert list(c.list_flights(b"lake.", auth(STRANGER))) == []


def info_rows(c: flight.FlightClient, table: str) -> int:
    """The rows GetFlightInfo plans for a table named by a catalog."""
    return c.get_flight_info(flight.FlightDescriptor.for_command(json.dumps({"table": table})), call_options()).total_records


def test_list_flights(setup):
    c = setup["srv"].client()
    tables = [json.loads(f.descriptor.command)["table"] for f in c.list_flights(b"lake.", call_options())]
    assert tables == ["lake.db.t"], tables  # db.away is outside the root: absent
    everything = list(c.list_flights(b"", call_options()))
    paths = [f.descriptor.path[0].decode() for f in everything if f.descriptor.descriptor_type == flight.DescriptorType.PATH]
    assert "plain.parquet" in paths
    # Across catalogs, one nobody answers at is left out (a listing of it fails, below).
    assert "lake.db.t" in [json.loads(f.descriptor.command)["table"] for f in everything
                           if f.descriptor.descriptor_type == flight.DescriptorType.CMD]
    # The Python package lists the table by name, as a table, and scans it by that name.
    sys.path.insert(0, str(REPO / "client" / "python" / "src"))
    import scand
    with scand.connect(setup["srv"].location) as conn:
        listed = conn.list_files("lake.")
        assert [(f.path, f.kind) for f in listed] == [("lake.db.t", "table")], listed
        assert conn.scan(table=listed[0].path).read_all().num_rows == info_rows(c, "lake.db.t")
        assert ("plain.parquet", "file") in [(f.path, f.kind) for f in conn.list_files("")]
    # An unreachable catalog fails the listing that includes it.
    with pytest.raises(flight.FlightError) as e:
        list(c.list_flights(b"down.", call_options()))
    assert grpc_code(e.value) == "UNAVAILABLE", e.value
    if setup["rest"]:
        rest = [json.loads(f.descriptor.command)["table"] for f in c.list_flights(b"rest.", call_options())]
        assert rest == ["rest.sales.orders"], rest
        # The descriptor plans as it is.
        info = c.get_flight_info(flight.FlightDescriptor.for_command(json.dumps({"table": rest[0]})), call_options())
        assert info.total_records == 42
