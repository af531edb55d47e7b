"""Iceberg tables written by PyIceberg (SQL catalog on sqlite, warehouse on
local disk under the server's root), read through scand with
{"table": ...}, and compared with PyIceberg's own scan(...).to_arrow() at
every snapshot, for generated projections and filters.

The table goes through what PyIceberg 0.12 writes:
  - appends over several snapshots, identity-partitioned by cat;
  - schema evolution: a column added, one renamed, an int promoted to long,
    a column dropped and another of the same name added again;
  - partition evolution (day(ts), then bucket(16, id) added);
  - an overwrite and a delete, which PyIceberg writes copy-on-write (its
    merge-on-read is not implemented: position deletes and deletion
    vectors are covered by scand's Go tests with iceberg-go's writer).

Every snapshot is read by snapshot_id, and the current one by location and
by metadata file. A second table, written by PyIceberg straight to S3
(versitygw), is read through a server reading S3 the same way. Time travel reads the snapshot's schema, as PyIceberg
does. SCAND_ICEBERG_CASES bounds the generated cases per snapshot (default
6)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from scandlib import expect_error, normalize, scan, table_diff

pyiceberg = pytest.importorskip("pyiceberg")

from pyiceberg.catalog.sql import SqlCatalog  # noqa: E402
from pyiceberg.partitioning import PartitionField, PartitionSpec  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform  # noqa: E402
from pyiceberg.types import (DoubleType, FloatType, IntegerType, LongType, NestedField,  # noqa: E402
                             StringType, TimestampType)

CASES = int(os.environ.get("SCAND_ICEBERG_CASES", "6"))
CATS = ["a", "b", "c", None]


def rows(rng: random.Random, start: int, n: int, schema: pa.Schema) -> pa.Table:
    """n rows with ids from start, for the columns of schema."""
    cols = {}
    for f in schema:
        if f.name == "id":
            cols["id"] = pa.array(range(start, start + n), f.type)
        elif pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
            cols[f.name] = pa.array([rng.choice(CATS) for _ in range(n)], f.type)
        elif pa.types.is_integer(f.type):
            cols[f.name] = pa.array([rng.choice([None, rng.randint(-50, 50)]) for _ in range(n)], f.type)
        elif pa.types.is_floating(f.type):
            cols[f.name] = pa.array([rng.choice([None, rng.uniform(-10, 10)]) for _ in range(n)], f.type)
        elif pa.types.is_timestamp(f.type):
            cols[f.name] = pa.array([1_700_000_000_000_000 + rng.randint(0, 10**12) for _ in range(n)], f.type)
        else:
            raise AssertionError(f"no generator for {f}")
    return pa.table(cols, schema=schema)


class Table:
    """The PyIceberg table and what the test did to it."""

    def __init__(self, catalog, ident: str, location: str):
        self.catalog, self.ident, self.location = catalog, ident, location
        self.snapshots: list[int] = []

    def load(self):
        return self.catalog.load_table(self.ident)

    def record(self):
        snap = self.load().current_snapshot()
        if snap is not None and (not self.snapshots or self.snapshots[-1] != snap.snapshot_id):
            self.snapshots.append(snap.snapshot_id)


@pytest.fixture(scope="module")
def evolved(gen_server, gen_root) -> Table:
    rng = random.Random(28)
    wh = gen_root / "iceberg" / "wh"
    wh.mkdir(parents=True)
    catalog = SqlCatalog("scand", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "cat", StringType(), required=False),
        NestedField(3, "n", IntegerType(), required=False),
        NestedField(4, "f", FloatType(), required=False),
        NestedField(5, "ts", TimestampType(), required=False),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"))
    tbl = catalog.create_table("db.t", schema=schema, partition_spec=spec)
    t = Table(catalog, "db.t", str(Path(tbl.location().removeprefix("file://")).relative_to(gen_root)))

    def append(n: int):
        cur = t.load()
        arrow_schema = cur.schema().as_arrow()
        start = 1 + len(t.snapshots) * 1000
        cur.append(rows(rng, start, n, arrow_schema))
        t.record()

    append(300)
    append(200)
    with t.load().update_schema() as u:  # add, promote, rename
        u.add_column("extra", DoubleType())
        u.update_column("n", LongType())
    with t.load().update_schema() as u:
        u.rename_column("n", "num")
    append(250)
    with t.load().update_schema() as u:  # drop f, add f again (a new column)
        u.delete_column("f")
    with t.load().update_schema() as u:
        u.add_column("f", StringType())
    append(150)
    with t.load().update_spec() as s:  # partition evolution
        s.add_field("ts", DayTransform(), "ts_day")
    append(200)
    with t.load().update_spec() as s:
        s.add_field("id", BucketTransform(16), "id_bucket")
    append(120)
    t.load().delete("id < 1100")  # copy-on-write in PyIceberg 0.12
    t.record()
    cur = t.load()
    cur.overwrite(rows(rng, 9000, 100, cur.schema().as_arrow()), overwrite_filter="cat = 'a'")
    t.record()
    return t


def reference(full: pa.Table, columns: list[str] | None, row_filter) -> pa.Table:
    """PyIceberg's rows of a snapshot, filtered and projected here:
    PyIceberg 0.12 binds a scan's row_filter to the table's current schema
    even for an older snapshot, whose columns may have other names."""
    t = full.filter(row_filter) if row_filter is not None else full
    return t.select(columns) if columns else t


def sort(tbl: pa.Table) -> pa.Table:
    keys = [(n, "ascending") for n in tbl.column_names if not pa.types.is_floating(tbl.schema.field(n).type)]
    return tbl.sort_by(keys) if keys else tbl


def compare(expected: pa.Table, got: pa.Table, what: str) -> None:
    e, g = normalize(expected), normalize(got)
    # PyIceberg and scand agree on names, types and values; nullability of
    # required columns is the writer's to state, not compared.
    e = e.cast(pa.schema([f.with_nullable(True) for f in e.schema]))
    g = g.cast(pa.schema([pa.field(f.name, e.schema.field(f.name).type if f.name in e.schema.names else f.type)
                          for f in g.schema]))
    diff = table_diff(sort(e), sort(g))
    assert diff is None, f"{what}: {diff}"


def filters_for(schema: pa.Schema, rng: random.Random) -> list[tuple[str, pc.Expression]]:
    """Filters on the snapshot's columns: scand's SQL text, and the same
    as a pyarrow expression (Kleene AND and OR, null comparisons unknown,
    unknown rows dropped: SQL's logic)."""
    out = []
    for f in schema:
        col = pc.field(f.name)
        if f.name == "id":
            v = rng.randint(0, 5000)
            out.append((f"id > {v}", col > v))
        elif pa.types.is_integer(f.type):
            v = rng.randint(-40, 40)
            out += [(f"{f.name} >= {v}", col >= v), (f"{f.name} IS NULL", col.is_null())]
        elif pa.types.is_floating(f.type):
            v = round(rng.uniform(-5, 5), 1)
            out.append((f"{f.name} < {v}", col < v))
        elif pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
            v = rng.choice(["a", "b"])
            out += [(f"{f.name} = '{v}'", col == v), (f"{f.name} IS NOT NULL", col.is_valid())]
    combined = [(f"{a} AND {b}", ea & eb) for (a, ea), (b, eb) in zip(out, out[1:])]
    combined += [(f"{a} OR {b}", ea | eb) for (a, ea), (b, eb) in zip(out, out[2:])]
    return out + combined


def test_every_snapshot(evolved, gen_server):
    client = gen_server.client()
    rng = random.Random(7)
    assert len(evolved.snapshots) >= 6, evolved.snapshots
    for sid in evolved.snapshots:
        full = evolved.load().scan(snapshot_id=sid).to_arrow()
        names = full.schema.names
        filters = filters_for(full.schema, rng)
        cases = [(None, None)] + [(rng.sample(names, rng.randint(1, len(names))), rng.choice(filters + [None]))
                                  for _ in range(CASES)]
        for columns, row_filter in cases:
            req = {"table": evolved.location, "snapshot_id": sid}
            if columns:
                req["columns"] = columns
            if row_filter:
                req["filter"] = row_filter[0]
            got = scan(client, req).table
            want = reference(full, columns, row_filter[1] if row_filter else None)
            compare(want, got, f"snapshot {sid} columns {columns} filter {row_filter and row_filter[0]!r}")


def test_current_by_location_and_metadata_file(evolved, gen_server, gen_root):
    client = gen_server.client()
    cur = evolved.load()
    want = cur.scan().to_arrow()
    compare(want, scan(client, {"table": evolved.location}).table, "location")
    compare(want, scan(client, {"table": evolved.location + "/"}).table, "location/")
    meta = str(Path(cur.metadata_location.removeprefix("file://")).relative_to(gen_root))
    compare(want, scan(client, {"table": meta}).table, "metadata file")


def test_limit(evolved, gen_server):
    res = scan(gen_server.client(), {"table": evolved.location, "limit": 17})
    assert res.table.num_rows == 17


def test_unknown_table_and_snapshot(evolved, gen_server):
    client = gen_server.client()
    expect_error(client, {"table": "iceberg/wh/db.db/none"}, "NOT_FOUND")
    expect_error(client, {"table": evolved.location, "snapshot_id": 12345}, "NOT_FOUND", "12345")
    expect_error(client, {"table": evolved.location, "ref": "nope"}, "NOT_FOUND", "nope")
    expect_error(client, {"table": evolved.location, "as_of": "2001-01-01T00:00:00Z"}, "NOT_FOUND")
    expect_error(client, {"table": evolved.location, "paths": ["x.parquet"]}, "INVALID_ARGUMENT")
    expect_error(client, {"table": "/etc"}, {"PERMISSION_DENIED", "NOT_FOUND", "INVALID_ARGUMENT"})


def test_corrupt_metadata_and_missing_file(evolved, gen_server, gen_root):
    client = gen_server.client()
    bad = gen_root / "iceberg" / "bad"
    (bad / "metadata").mkdir(parents=True)
    (bad / "metadata" / "00000-x.metadata.json").write_text('{"format-version": 2, "table-uuid": 3}')
    expect_error(client, {"table": "iceberg/bad"}, "DATA_LOSS")
    (bad / "metadata" / "00001-x.metadata.json").write_text('{"format-version": 9}')
    expect_error(client, {"table": "iceberg/bad"}, "UNIMPLEMENTED", "format version 9")

    # A copy of the table whose metadata names a data file that is gone:
    # the scan must fail, never return fewer rows.
    other = gen_root / "iceberg" / "gone"
    catalog = SqlCatalog("gone", uri=f"sqlite:///{gen_root}/iceberg/gone.db", warehouse=f"file://{other}")
    catalog.create_namespace("db")
    tbl = catalog.create_table("db.g", schema=Schema(NestedField(1, "id", LongType(), required=False)))
    tbl.append(pa.table({"id": pa.array(range(10), pa.int64())}))
    tbl.append(pa.table({"id": pa.array(range(10, 20), pa.int64())}))
    loc = str(Path(tbl.location().removeprefix("file://")).relative_to(gen_root))
    data = sorted((gen_root / loc / "data").rglob("*.parquet"))
    data[0].unlink()
    err = expect_error(client, {"table": loc},
                       {"NOT_FOUND", "DATA_LOSS", "FAILED_PRECONDITION"})
    assert data[0].name in err.message


def test_python_client(evolved, gen_server):
    """The scand package reads a table and its snapshots (conn.scan with
    table=, snapshot_id=, as_of=)."""
    import datetime
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "client" / "python" / "src"))
    import scand

    with scand.connect(gen_server.location) as conn:
        cur = evolved.load()
        compare(cur.scan().to_arrow(), conn.scan(table=evolved.location).read_all(), "conn.scan(table=)")
        first = evolved.snapshots[0]
        compare(cur.scan(snapshot_id=first).to_arrow(),
                conn.scan(table=evolved.location, snapshot_id=first).read_all(), "conn.scan(snapshot_id=)")
        snap = cur.snapshot_by_id(evolved.snapshots[1])
        at = datetime.datetime.fromtimestamp(snap.timestamp_ms / 1000, tz=datetime.timezone.utc)
        compare(cur.scan(snapshot_id=snap.snapshot_id).to_arrow(),
                conn.scan(table=evolved.location, as_of=at).read_all(), "conn.scan(as_of=)")
        got = conn.scan(table=evolved.location, columns="id", filter="id > 4000", limit=5).read_all()
        assert got.num_rows == 5 and all(v > 4000 for v in got.column("id").to_pylist())


def test_s3_warehouse(s3_servers, s3_mirror, versitygw, tmp_path):
    """A table PyIceberg writes straight to S3 (versitygw): its metadata
    names every file by s3:// URI. Read at every snapshot through a server
    reading S3, for generated projections and filters, it equals
    PyIceberg's own read."""
    from s3lib import ACCESS_KEY, REGION, SECRET_KEY

    rng = random.Random(30)
    wh = f"s3://{s3_mirror.bucket}/iceberg-wh"
    catalog = SqlCatalog("s3", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=wh, **{
        "s3.endpoint": versitygw.endpoint, "s3.access-key-id": ACCESS_KEY, "s3.secret-access-key": SECRET_KEY,
        "s3.region": REGION})
    catalog.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "cat", StringType()),
                    NestedField(3, "n", IntegerType()))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"))
    tbl = catalog.create_table("db.t", schema=schema, partition_spec=spec)
    t = Table(catalog, "db.t", tbl.location())

    def append(n: int):
        cur = t.load()
        cur.append(rows(rng, 1 + len(t.snapshots) * 1000, n, cur.schema().as_arrow()))
        t.record()

    append(200)
    with t.load().update_schema() as u:
        u.rename_column("n", "num")
        u.add_column("x", DoubleType())
    append(150)
    t.load().delete("id < 60")
    t.record()
    assert t.location.startswith("s3://"), t.location

    client = s3_servers.start("s3-iceberg", versitygw.endpoint).client()
    for sid in t.snapshots:
        full = t.load().scan(snapshot_id=sid).to_arrow()
        names = full.schema.names
        filters = filters_for(full.schema, rng)
        cases = [(None, None)] + [(rng.sample(names, rng.randint(1, len(names))), rng.choice(filters + [None]))
                                  for _ in range(max(2, CASES // 2))]
        for columns, row_filter in cases:
            req = {"table": t.location, "snapshot_id": sid}
            if columns:
                req["columns"] = columns
            if row_filter:
                req["filter"] = row_filter[0]
            want = reference(full, columns, row_filter[1] if row_filter else None)
            compare(want, scan(client, req).table, f"s3 snapshot {sid} columns {columns} filter {row_filter and row_filter[0]!r}")
    expect_error(client, {"table": f"s3://{s3_mirror.bucket}/iceberg-wh/db.db/none"}, "NOT_FOUND")
