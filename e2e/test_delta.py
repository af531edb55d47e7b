"""Delta Lake tables: a request's "table" names a directory holding
_delta_log/, and "version" or "as_of" picks the version read. Tables are
written by deltalake (delta-rs, pinned in requirements.txt): appends over
several commits, a checkpoint, partitions with escaped and null values, a
delete and a predicate overwrite (both rewrite files: remove actions), and a
schema evolution (schema_mode="merge"). Every scan is compared with
deltalake's own DeltaTable(...).to_pyarrow_table() of the same version, for
several projections and filters; rows carry a row id to compare them
whatever the order of the files.

Deletion vectors (deltalake writes none): commits added by hand give a
file the protocol's inline example vector, or a vector in a deletion
vector file framed as the protocol says; the deleted rows are never
returned. Column mapping ("name" mode, deltalake's configuration), with a
rename committed as Spark commits one (a metaData action with the new
logical name, the physical name kept). Statistics: a filter on the row id
skips files by their add's stats before their footers are read
(PlanStats.files_pruned_by_stats).

Refusals: a version past the latest and a location without a log are
NOT_FOUND, a corrupt commit or a truncated checkpoint DATA_LOSS naming it,
an unknown reader feature UNIMPLEMENTED naming it.

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
    """The latest version; the columns and their types are deltalake's, in
    the table schema's order."""
    path, _ = table
    exp, got = reference(path, None), scan(gen_server.client(), {"table": path.name}).table
    assert [(f.name, f.type) for f in got.schema] == [(f.name, f.type) for f in exp.schema]
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


def _add_of(t: Path, rows_at_least: int) -> dict:
    """An add action of the table's latest version whose file holds at
    least rows_at_least rows, as deltalake flattens it."""
    adds = pa.table(DeltaTable(t).get_add_actions(flatten=True)).to_pylist()
    return next(a for a in adds if a["num_records"] >= rows_at_least)


def _replace_with_dv(t: Path, add: dict, dv: dict) -> None:
    v = DeltaTable(t).version() + 1
    actions = [
        {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                      "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}},
        {"remove": {"path": add["path"], "dataChange": True}},
        {"add": {"path": add["path"], "size": add["size_bytes"], "modificationTime": 0, "dataChange": True,
                 "partitionValues": {k[len("partition."):]: v for k, v in add.items() if k.startswith("partition.")},
                 "deletionVector": dv}},
    ]
    (t / "_delta_log" / f"{v:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))


def _portable_bitmap(rows: list[int]) -> bytes:
    """The magic number and the portable 64-bit roaring serialization of
    rows (all below 2^16 here: one 32-bit bitmap, one array container)."""
    import struct
    rows = sorted(rows)
    b32 = struct.pack("<II", 12346, 1) + struct.pack("<HH", 0, len(rows) - 1) + struct.pack("<I", 4 + 4 + 4 + 4)
    b32 += b"".join(struct.pack("<H", r) for r in rows)
    return struct.pack("<I", 1681511377) + struct.pack("<Q", 1) + struct.pack("<I", 0) + b32


_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"


def _z85(b: bytes) -> str:
    out = []
    for i in range(0, len(b), 4):
        v = int.from_bytes(b[i:i + 4], "big")
        out.append("".join(_Z85[(v // 85 ** k) % 85] for k in range(4, -1, -1)))
    return "".join(out)


def test_deletion_vectors(gen_server, gen_root):
    """A file's deletion vector, inline (the protocol's example: rows 3, 4,
    7, 11, 18 and 29) or in a deletion vector file: the rows at those
    positions of the file are never returned, every other row is; with a
    filter and a projection too."""
    import uuid
    import zlib
    import pyarrow.parquet as pq
    client = gen_server.client()
    for kind in ("inline", "file"):
        t = gen_root / f"delta_dv_{kind}"
        shutil.rmtree(t, ignore_errors=True)
        write_deltalake(t, batch(0, 100))
        write_deltalake(t, batch(100, 150), mode="append")
        before = reference(t, None)
        add = _add_of(t, 40)
        if kind == "inline":
            deleted = [3, 4, 7, 11, 18, 29]
            dv = {"storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
                  "sizeInBytes": 40, "cardinality": 6}
        else:
            deleted = [0, 1, 2, 9, 17, add["num_records"] - 1]
            body = _portable_bitmap(deleted)
            u = uuid.uuid4()
            (t / "dv").mkdir(exist_ok=True)
            blob = b"\x01" + len(body).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
            (t / "dv" / f"deletion_vector_{u}.bin").write_bytes(blob)
            dv = {"storageType": "u", "pathOrInlineDv": "dv" + _z85(u.bytes), "offset": 1,
                  "sizeInBytes": len(body), "cardinality": len(deleted)}
        _replace_with_dv(t, add, dv)
        from urllib.parse import unquote
        rids = pq.read_table(t / unquote(add["path"]), columns=["rid"]).column("rid").to_pylist()
        gone = pa.array([rids[i] for i in deleted], pa.int64())
        exp = before.filter(~pc.is_in(F("rid"), gone))
        assert exp.num_rows == before.num_rows - len(deleted)
        compare(exp, scan(client, {"table": t.name}).table, f"{kind} deletion vector")
        e = exp.filter(F("x") > 10).select(["rid", "s"])
        compare(e, scan(client, {"table": t.name, "columns": ["rid", "s"], "filter": "x > 10"}).table,
                f"{kind} deletion vector, filtered")


def kernel_reference(path: Path) -> pa.Table:
    """deltalake's DataFusion read (QueryBuilder) of the latest version:
    its to_pyarrow_table() reads a column-mapped table's columns as nulls."""
    from deltalake import QueryBuilder
    t = pa.table(QueryBuilder().register("t", DeltaTable(path)).execute("select * from t").read_all())
    return t.cast(pa.schema([pa.field(f.name, pa.string() if f.type == pa.string_view() else f.type) for f in t.schema]))


def test_column_mapping(gen_server, gen_root):
    """Column mapping by name: the files store physical names
    (col-<uuid>); a rename changes only the logical name in the schema.
    Every read equals deltalake's (its DataFusion reader's)."""
    path = gen_root / "delta_colmap"
    shutil.rmtree(path, ignore_errors=True)
    n = 120
    t = pa.table({"rid": pa.array(range(n), pa.int64()), "a": pa.array([i * 2 for i in range(n)], pa.int64()),
                  "s": pa.array([f"v{i % 9}" for i in range(n)])})
    write_deltalake(path, t, configuration={"delta.columnMapping.mode": "name"})
    write_deltalake(path, t.set_column(0, "rid", pa.array(range(n, 2 * n), pa.int64())), mode="append")
    client = gen_server.client()
    compare(kernel_reference(path), scan(client, {"table": path.name}).table, "column mapping")
    # A rename, committed as a metaData action with the new logical name.
    log = path / "_delta_log"
    meta = next(json.loads(line)["metaData"] for line in (log / f"{0:020d}.json").read_text().splitlines()
                if "metaData" in line)
    schema = json.loads(meta["schemaString"])
    for f in schema["fields"]:
        if f["name"] == "a":
            f["name"] = "renamed"
    meta["schemaString"] = json.dumps(schema)
    v = DeltaTable(path).version() + 1
    (log / f"{v:020d}.json").write_text(json.dumps({"metaData": meta}) + "\n")
    exp = kernel_reference(path)
    assert "renamed" in exp.column_names and "a" not in exp.column_names
    compare(exp, scan(client, {"table": path.name}).table, "after a rename")
    for sql, expr in [("renamed > 100", F("renamed") > 100), ("s = 'v3' AND rid >= 130", (F("s") == "v3") & (F("rid") >= 130))]:
        e = exp.filter(expr).select(["rid", "renamed"])
        compare(e, scan(client, {"table": path.name, "columns": ["rid", "renamed"], "filter": sql}).table,
                f"after a rename, {sql}")
    expect_error(client, {"table": path.name, "columns": ["a"]}, "INVALID_ARGUMENT", "a")
    # Partitioned with column mapping, deltalake writes files under random
    # prefixes, not key=value directories: the partition values are the
    # log's, keyed by physical name.
    part = gen_root / "delta_colmap_part"
    shutil.rmtree(part, ignore_errors=True)
    write_deltalake(part, t, partition_by=["s"], configuration={"delta.columnMapping.mode": "name"})
    pexp = kernel_reference(part)
    compare(pexp, scan(client, {"table": part.name}).table, "partitioned, column mapping")
    for sql, expr in [("s = 'v3'", F("s") == "v3"), ("s > 'v6' OR a < 10", (F("s") > "v6") | (F("a") < 10))]:
        res = scan(client, {"table": part.name, "filter": sql, "columns": ["rid", "s"]})
        compare(pexp.filter(expr).select(["rid", "s"]), res.table, f"partitioned, column mapping, {sql}")
        if sql == "s = 'v3'":
            ps = json.loads(res.info.app_metadata)
            assert ps["files_pruned_by_partition"] == ps["files"] - 1, ps


def test_statistics_skip_files(gen_server, table):
    """A filter on the row id rules out most files by the min and max their
    adds record: they are pruned before their footers are read
    (files_pruned_by_stats), and the answer is deltalake's."""
    path, _ = table
    client = gen_server.client()
    res = scan(client, {"table": path.name, "filter": "rid < 30"})
    compare(reference(path, None).filter(F("rid") < 30), res.table, "rid < 30")
    ps = json.loads(res.info.app_metadata)
    assert ps["files_pruned_by_stats"] > 0, ps


def test_nested_paths_under_column_mapping(gen_server, gen_root):
    """A struct column under column mapping: its fields have physical names
    too (col-<uuid>.col-<uuid>). The whole column, and dotted paths that
    keep only the fields named, equal deltalake's read, before and after
    the struct column is renamed."""
    path = gen_root / "delta_colmap_nested"
    shutil.rmtree(path, ignore_errors=True)
    n = 60
    addr = pa.array([None if i % 7 == 0 else {"city": f"c{i % 5}", "zip": 1000 + i, "geo": {"lat": i / 2, "lon": -i}}
                     for i in range(n)],
                    pa.struct([("city", pa.string()), ("zip", pa.int32()),
                               ("geo", pa.struct([("lat", pa.float64()), ("lon", pa.float64())]))]))
    t = pa.table({"rid": pa.array(range(n), pa.int64()), "addr": addr})
    write_deltalake(path, t, configuration={"delta.columnMapping.mode": "name"})
    client = gen_server.client()
    # deltalake's DataFusion read gives nested strings as string_view:
    # compare Python values, rows in rid order.
    exp = sorted(kernel_reference(path).select(["rid", "addr"]).to_pylist(), key=lambda r: r["rid"])

    def pruned(v, keep):
        """v (a struct's value) with only the fields keep names; a dict
        value prunes a nested struct the same way."""
        if v is None or keep is None:
            return v
        return {k: pruned(v[k], sub) for k, sub in keep.items()}

    for columns, keep in [(["rid", "addr"], None), (["addr.city", "rid"], {"city": None}),
                          (["rid", "addr.geo.lon", "addr.zip"], {"zip": None, "geo": {"lon": None}})]:
        got = sorted(scan(client, {"table": path.name, "columns": columns}).table.to_pylist(), key=lambda r: r["rid"])
        want = [{"rid": r["rid"], "addr": pruned(r["addr"], keep)} for r in exp]
        assert [{"rid": r["rid"], "addr": r["addr"]} for r in got] == want, columns
    # Renamed in the log, the struct and one of its fields: only logical
    # names change; the files keep their physical ones.
    log = path / "_delta_log"
    meta = next(json.loads(line)["metaData"] for line in (log / f"{0:020d}.json").read_text().splitlines()
                if "metaData" in line)
    schema = json.loads(meta["schemaString"])
    for f in schema["fields"]:
        if f["name"] == "addr":
            f["name"] = "address"
            for sub in f["type"]["fields"]:
                if sub["name"] == "city":
                    sub["name"] = "town"
    meta["schemaString"] = json.dumps(schema)
    v = DeltaTable(path).version() + 1
    (log / f"{v:020d}.json").write_text(json.dumps({"metaData": meta}) + "\n")
    exp = sorted(kernel_reference(path).select(["rid", "address"]).to_pylist(), key=lambda r: r["rid"])
    assert exp[1]["address"] is not None and "town" in exp[1]["address"], exp[1]
    for columns, keep in [(["rid", "address"], None), (["address.town", "rid"], {"town": None}),
                          (["rid", "address.geo.lat"], {"geo": {"lat": None}})]:
        got = sorted(scan(client, {"table": path.name, "columns": columns}).table.to_pylist(), key=lambda r: r["rid"])
        want = [{"rid": r["rid"], "address": pruned(r["address"], keep)} for r in exp]
        assert [{"rid": r["rid"], "address": r["address"]} for r in got] == want, columns
    expect_error(client, {"table": path.name, "columns": ["address.city"]}, "INVALID_ARGUMENT", "address.city")


def test_cli_table_version(gen_server, table, tmp_path):
    """`scand scan --table T --table-version V` writes version V's rows, as
    deltalake reads them."""
    import subprocess
    path, versions = table
    v = versions[len(versions) // 2]
    out_file = tmp_path / "v.parquet"
    res = subprocess.run([os.environ["SCAND_BIN"], "scan", "--server", gen_server.location, "--progress", "off",
                          "--table", path.name, "--table-version", str(v), "--format", "parquet", "--output", str(out_file)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    import pyarrow.parquet as pq
    compare(reference(path, v), pq.read_table(out_file), f"CLI --table-version {v}")
