"""Delta Lake tables: a request's "table" names a directory holding
_delta_log/, and "version" or "as_of" picks the version read. Tables are
written by deltalake (delta-rs, pinned in requirements.txt): appends over
several commits, a checkpoint, partitions with escaped and null values, a
delete and a predicate overwrite (both rewrite files: remove actions), and a
schema evolution (schema_mode="merge"). Every scan is compared with
deltalake's own DeltaTable(...).to_pyarrow_table() of the same version, for
several projections and filters; rows carry a row id to compare them
whatever the order of the files.

Refusals: a version past the latest and a location without a log are
NOT_FOUND, a corrupt commit or a truncated checkpoint DATA_LOSS naming it,
an unknown reader feature and deletion vectors UNIMPLEMENTED naming them.

DELTA_E2E_COMMITS (default 6) bounds the appends of the main table."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from scandlib import scan, expect_error, table_diff

deltalake = pytest.importorskip("deltalake")
from deltalake import DeltaTable, write_deltalake  # noqa: E402

COMMITS = int(os.environ.get("DELTA_E2E_COMMITS", "6"))
F = pc.field


def batch(lo: int, hi: int) -> pa.Table:
    n = hi - lo
    return pa.table({
        "rid": pa.array(range(lo, hi), pa.int64()),
        "p": pa.array([["a", "b c", "x:y%z", None][i % 4] for i in range(lo, hi)], pa.string()),
        "x": pa.array([None if i % 7 == 0 else i * 0.5 for i in range(lo, hi)], pa.float64()),
        "s": pa.array([f"s{i:05d}" for i in range(lo, hi)], pa.string()),
        "ts": pa.array([dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(minutes=i) for i in range(lo, hi)],
                       pa.timestamp("us", "UTC")),
    })


@pytest.fixture(scope="module")
def table(gen_root) -> tuple[Path, list[int]]:
    """The main table; returns its path and the versions to compare."""
    path = gen_root / "delta_main"
    shutil.rmtree(path, ignore_errors=True)
    per = 40
    write_deltalake(path, batch(0, per), partition_by=["p"])
    for c in range(1, COMMITS):
        write_deltalake(path, batch(c * per, (c + 1) * per), partition_by=["p"], mode="append")
        if c == COMMITS // 2:
            DeltaTable(path).create_checkpoint()
    DeltaTable(path).delete("rid % 5 = 0")
    over = batch(10_000, 10_020).filter(pc.equal(F("p"), "a"))
    write_deltalake(path, over, partition_by=["p"], mode="overwrite", predicate="p = 'a'")
    write_deltalake(path, batch(20_000, 20_010).append_column("extra", pa.array(range(10), pa.int32())),
                    partition_by=["p"], mode="append", schema_mode="merge")
    latest = DeltaTable(path).version()
    return path, sorted({0, COMMITS // 2, COMMITS - 1, latest - 1, latest})


def reference(path: Path, version: int | None) -> pa.Table:
    t = DeltaTable(path, version=version) if version is not None else DeltaTable(path)
    return t.to_pyarrow_table()


def compare(expected: pa.Table, got: pa.Table, what: str) -> None:
    got = got.select(expected.column_names).cast(expected.schema)
    diff = table_diff(expected.sort_by("rid"), got.sort_by("rid"))
    assert diff is None, f"{what}: {diff}"


# (SQL for scand, the same predicate for pyarrow)
FILTERS = [
    (None, None),
    ("x > 40", F("x") > 40),
    ("p = 'a'", F("p") == "a"),
    ("p IS NULL OR s >= 's00100'", F("p").is_null() | (F("s") >= "s00100")),
    ("ts < TIMESTAMP '2026-01-01 02:00:00+00:00' AND x IS NOT NULL",
     (F("ts") < pa.scalar(dt.datetime(2026, 1, 1, 2, tzinfo=dt.timezone.utc), pa.timestamp("us", "UTC"))) & F("x").is_valid()),
]
PROJECTIONS = [None, ["rid", "x"], ["p", "s", "rid"]]


def test_versions_projections_filters(gen_server, table):
    path, versions = table
    client = gen_server.client()
    for v in versions:
        full = reference(path, v)
        for sql, expr in FILTERS:
            exp = full.filter(expr) if expr is not None else full
            for cols in PROJECTIONS:
                req = {"table": path.name, "version": v}
                if sql:
                    req["filter"] = sql
                if cols:
                    req["columns"] = cols
                got = scan(client, req).table
                e = exp.select(cols) if cols else exp
                compare(e, got, f"version {v}, filter {sql!r}, columns {cols}")


def test_latest_without_version(gen_server, table):
    """The latest version; the columns' types are deltalake's (their order
    is the files', then the partition columns: docs/delta.md)."""
    path, _ = table
    exp, got = reference(path, None), scan(gen_server.client(), {"table": path.name}).table
    assert {f.name: f.type for f in got.schema} == {f.name: f.type for f in exp.schema}
    compare(exp, got, "latest")


def test_as_of(gen_server, gen_root):
    """as_of picks the newest version committed at or before it, by the
    commits' modification times as deltalake does."""
    path = gen_root / "delta_asof"
    shutil.rmtree(path, ignore_errors=True)
    for c in range(4):
        write_deltalake(path, batch(c * 10, c * 10 + 10), mode="append")
    base = 1_800_000_000
    for v in range(4):
        os.utime(path / "_delta_log" / f"{v:020d}.json", (base + 100 * v, base + 100 * v))
    client = gen_server.client()
    for offset in [0, 50, 100, 250, 300, 10_000]:
        when = dt.datetime.fromtimestamp(base + offset, dt.timezone.utc)
        ref = DeltaTable(path)
        ref.load_as_version(when)
        got = scan(client, {"table": path.name, "as_of": when.isoformat()}).table
        compare(ref.to_pyarrow_table(), got, f"as_of {when.isoformat()} (deltalake: version {ref.version()})")
    expect_error(client, {"table": path.name, "as_of": dt.datetime.fromtimestamp(base - 10, dt.timezone.utc).isoformat()},
                 "NOT_FOUND", "before")


def test_refusals(gen_server, gen_root, table):
    path, _ = table
    client = gen_server.client()
    latest = DeltaTable(path).version()
    expect_error(client, {"table": path.name, "version": latest + 5}, "NOT_FOUND", f"latest is {latest}")
    (gen_root / "delta_none").mkdir(exist_ok=True)
    expect_error(client, {"table": "delta_none"}, "NOT_FOUND", "_delta_log")

    def copy(name: str) -> Path:
        dst = gen_root / name
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(path, dst)
        return dst

    def commit(t: Path, *actions: dict) -> str:
        v = DeltaTable(t).version() + 1
        name = f"{v:020d}.json"
        (t / "_delta_log" / name).write_text("".join(json.dumps(a) + "\n" for a in actions))
        return name

    # A reader feature scand does not read.
    t = copy("delta_feature")
    commit(t, {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                            "readerFeatures": ["typeWidening"], "writerFeatures": ["typeWidening"]}})
    expect_error(client, {"table": t.name}, "UNIMPLEMENTED", "typeWidening")

    # A corrupt commit: DATA_LOSS naming it; the version before still reads.
    t = copy("delta_corrupt")
    name = commit(t, {"commitInfo": {}})
    with open(t / "_delta_log" / name, "a") as f:
        f.write('{"add":{"path":"x.parquet","size":')
    expect_error(client, {"table": t.name}, "DATA_LOSS", name)
    compare(reference(t, latest), scan(client, {"table": t.name, "version": latest}).table, "before the corrupt commit")

    # A truncated checkpoint: DATA_LOSS naming it.
    t = copy("delta_truncated")
    cp = sorted((t / "_delta_log").glob("*.checkpoint.parquet"))[-1]
    cp.write_bytes(cp.read_bytes()[: cp.stat().st_size // 2])
    expect_error(client, {"table": t.name}, "DATA_LOSS", cp.name)

    # Deletion vectors are not applied yet: never read the deleted rows.
    t = copy("delta_dv")
    dt_ = DeltaTable(t)
    add = dt_.get_add_actions(flatten=True).to_pylist()[0] if hasattr(dt_.get_add_actions(flatten=True), "to_pylist") \
        else pa.table(dt_.get_add_actions(flatten=True)).to_pylist()[0]
    commit(t,
           {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                         "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}},
           {"remove": {"path": add["path"], "dataChange": True}},
           {"add": {"path": add["path"], "size": add["size_bytes"], "modificationTime": 0, "dataChange": True,
                    "partitionValues": {k[len("partition."):]: v for k, v in add.items() if k.startswith("partition.")},
                    "deletionVector": {"storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
                                       "sizeInBytes": 40, "cardinality": 6}}})
    expect_error(client, {"table": t.name}, "UNIMPLEMENTED", "deletion vectors")


def test_s3(s3_servers, s3_mirror, versitygw, table):
    """The same table on S3 (versitygw): s3://bucket/delta/main, at every
    version compared, equals deltalake's read of the local copy."""
    path, versions = table
    for f in sorted(path.rglob("*")):
        if f.is_file():
            s3_mirror.put(f"delta/main/{f.relative_to(path).as_posix()}", f, local=False)
    srv = s3_servers.start("s3-delta", versitygw.endpoint)
    client = srv.client()
    uri = s3_mirror.uri("delta/main")
    for v in versions:
        compare(reference(path, v), scan(client, {"table": uri, "version": v}).table, f"s3 version {v}")
    for sql, expr in FILTERS[1:3]:
        exp = reference(path, None).filter(expr).select(["rid", "p", "x"])
        compare(exp, scan(client, {"table": uri, "columns": ["rid", "p", "x"], "filter": sql}).table, f"s3 filter {sql}")
    expect_error(client, {"table": s3_mirror.uri("delta/nothing")}, "NOT_FOUND", "_delta_log")


def test_compact_and_vacuum(gen_server, gen_root, table):
    """optimize.compact() rewrites the files (adds and removes without a
    data change); vacuum deletes the files no longer in the latest
    version. The latest version still equals deltalake's; a version whose
    files vacuum deleted fails NOT_FOUND naming a file, never answers
    with the files that are left."""
    path, _ = table
    t = gen_root / "delta_vacuum"
    shutil.rmtree(t, ignore_errors=True)
    shutil.copytree(path, t)
    before = DeltaTable(t).version()
    DeltaTable(t).optimize.compact()
    DeltaTable(t).vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    client = gen_server.client()
    compare(reference(t, None), scan(client, {"table": t.name}).table, "after compact and vacuum")
    expect_error(client, {"table": t.name, "version": before}, "NOT_FOUND", ".parquet")


def test_typed_partitions(gen_server, gen_root):
    """Partition columns of other types than string (date, long, boolean,
    decimal) take the table's types; a filter on them prunes as on any
    partition."""
    path = gen_root / "delta_typed"
    shutil.rmtree(path, ignore_errors=True)
    n = 60
    t = pa.table({
        "rid": pa.array(range(n), pa.int64()),
        "d": pa.array([dt.date(2026, 1, 1 + i % 3) for i in range(n)], pa.date32()),
        "k": pa.array([None if i % 5 == 0 else i % 4 for i in range(n)], pa.int64()),
        "b": pa.array([i % 2 == 0 for i in range(n)]),
        "v": pa.array([i * 1.5 for i in range(n)]),
    })
    write_deltalake(path, t, partition_by=["d", "k", "b"])
    client = gen_server.client()
    full = reference(path, None)
    for sql, expr in [(None, None), ("k = 2", F("k") == 2), ("d > DATE '2026-01-01' AND b", (F("d") > dt.date(2026, 1, 1)) & F("b")),
                      ("k IS NULL", F("k").is_null())]:
        req = {"table": path.name}
        if sql:
            req["filter"] = sql
        res = scan(client, req)
        exp = full.filter(expr) if expr is not None else full
        compare(exp, res.table, f"filter {sql!r}")
        assert res.table.schema.field("k").type == pa.int64() and res.table.schema.field("d").type == pa.date32()
