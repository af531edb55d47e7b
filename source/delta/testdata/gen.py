"""Writes the Delta tables source/delta's tests read, with deltalake (delta-rs), and
records what deltalake itself reads of each version in expected.json.

Run from the repository root:  .venv/bin/python source/delta/testdata/gen.py
(deltalake is pinned in e2e/requirements.txt). Only the tables' logs are kept (the
tests replay logs; e2e/test_delta.py writes tables with data of its own), so the
checked-in total stays well under 200 KB.

Two checkpoints are made from the real writer's: deltalake writes only classic
single-file checkpoints, so `multipart` splits one into two parts, and `v2` rewrites
one as a UUID-named v2 checkpoint (JSON) whose add actions live in a sidecar; both
keep deltalake's own rows byte for byte in Parquet.
"""
import datetime as dt
import decimal
import json
import os
import shutil
import uuid

import pyarrow as pa
import pyarrow.compute  # noqa: F401 (pa.compute)
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = os.path.join(HERE, "tables")


def rows(lo, hi, parts=("a", "b c", "x:y%z", None)):
    n = hi - lo
    return pa.table({
        "id": pa.array(range(lo, hi), pa.int64()),
        "p": pa.array([parts[i % len(parts)] for i in range(n)], pa.string()),
        "q": pa.array([i % 2 for i in range(lo, hi)], pa.int32()),
        "x": pa.array([None if i % 5 == 0 else i * 0.5 for i in range(lo, hi)], pa.float64()),
        "s": pa.array([f"s{i:04d}" for i in range(lo, hi)], pa.string()),
    })


def appends(path):
    """Several commits, a checkpoint, partitions (with escaped and null values),
    a delete (copy on write), an overwrite, then commits after the checkpoint."""
    write_deltalake(path, rows(0, 8), partition_by=["p", "q"])
    write_deltalake(path, rows(8, 16), partition_by=["p", "q"], mode="append")
    write_deltalake(path, rows(16, 20), partition_by=["p", "q"], mode="append")
    DeltaTable(path).create_checkpoint()  # at version 2
    DeltaTable(path).delete("id = 3")  # 3: rewrites one file
    q1 = rows(100, 108).filter(pa.compute.equal(pa.compute.field("q"), 1))
    write_deltalake(path, q1, partition_by=["p", "q"], mode="overwrite",
                    predicate="q = 1")  # 4: replaces the q=1 files
    write_deltalake(path, rows(200, 203), partition_by=["p", "q"], mode="append")  # 5


def colmap(path):
    """Column mapping in name mode: data files and the log use physical names."""
    cfg = {"delta.columnMapping.mode": "name"}
    t = pa.table({"Key": pa.array([1, 2, 3], pa.int64()), "part": ["u", "v", "u"],
                  "rec": pa.array([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, None],
                                  pa.struct([("a", pa.int32()), ("b", pa.string())]))})
    write_deltalake(path, t, partition_by=["part"], configuration=cfg)
    write_deltalake(path, t, partition_by=["part"], mode="append")
    DeltaTable(path).create_checkpoint()
    write_deltalake(path, t, partition_by=["part"], mode="append")


def types(path):
    """A column of every primitive type, partitioned by a date and a timestamp."""
    utc = dt.timezone.utc
    t = pa.table({
        "i8": pa.array([1, -2, None], pa.int8()),
        "i16": pa.array([300, None, -300], pa.int16()),
        "i32": pa.array([None, 70000, -70000], pa.int32()),
        "f32": pa.array([1.5, None, -2.25], pa.float32()),
        "b": pa.array([True, False, None]),
        "dec": pa.array([decimal.Decimal("12.34"), None, decimal.Decimal("-0.01")], pa.decimal128(9, 2)),
        "bin": pa.array([b"\x00\x01", None, b"zz"], pa.binary()),
        "ts": pa.array([dt.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=utc), None,
                        dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=utc)], pa.timestamp("us", "UTC")),
        "ntz": pa.array([dt.datetime(2026, 5, 6, 7, 8, 9, 1), None, dt.datetime(2000, 1, 1)], pa.timestamp("us")),
        "d": pa.array([dt.date(2026, 1, 1), dt.date(2026, 1, 1), dt.date(1970, 1, 2)], pa.date32()),
        "pts": pa.array([dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=utc)] * 2 + [None], pa.timestamp("us", "UTC")),
    })
    write_deltalake(path, t, partition_by=["d", "pts"])


def evolve(path):
    """schema_mode="merge": a column added by a later commit."""
    write_deltalake(path, pa.table({"a": pa.array([1, 2], pa.int64())}))
    write_deltalake(path, pa.table({"a": pa.array([3], pa.int64()), "b": ["new"]}),
                    mode="append", schema_mode="merge")


def log_of_appends(path):
    """The log of appends, without its data files (the tests read logs)."""
    shutil.copytree(os.path.join(TABLES, "appends", "_delta_log"), os.path.join(path, "_delta_log"))


def multipart(path):
    """A two-part checkpoint made from deltalake's single-file one."""
    log_of_appends(path)
    log = os.path.join(path, "_delta_log")
    cp = os.path.join(log, "%020d.checkpoint.parquet" % 2)
    t = pq.read_table(cp)
    half = t.num_rows // 2
    for i, part in enumerate([t.slice(0, half), t.slice(half)]):
        pq.write_table(part, os.path.join(log, "%020d.checkpoint.%010d.%010d.parquet" % (2, i + 1, 2)))
    os.remove(cp)
    with open(os.path.join(log, "_last_checkpoint"), "w") as f:
        json.dump({"version": 2, "size": t.num_rows, "parts": 2}, f)


def v2(path):
    """A UUID-named v2 checkpoint (JSON) with a sidecar, made from deltalake's."""
    log_of_appends(path)
    log = os.path.join(path, "_delta_log")
    cp = os.path.join(log, "%020d.checkpoint.parquet" % 2)
    t = pq.read_table(cp)
    files = t.filter(pa.compute.invert(pa.compute.is_null(t["add"]))).select(["add"])
    os.makedirs(os.path.join(log, "_sidecars"))
    side = "%s.parquet" % uuid.UUID(int=7)
    pq.write_table(files, os.path.join(log, "_sidecars", side))
    lines = [{"checkpointMetadata": {"version": 2, "tags": {}}}]
    for r in t.to_pylist():
        for k in ("protocol", "metaData"):
            if r[k] is not None:
                v = r[k]
                if k == "metaData":
                    v["configuration"] = dict(v["configuration"])
                    v["format"]["options"] = dict(v["format"]["options"])
                if k == "protocol":
                    v = {"minReaderVersion": 3, "minWriterVersion": 7,
                         "readerFeatures": ["v2Checkpoint"], "writerFeatures": ["v2Checkpoint"]}
                lines.append({k: v})
    size = os.path.getsize(os.path.join(log, "_sidecars", side))
    lines.append({"sidecar": {"path": side, "sizeInBytes": size, "modificationTime": 0, "tags": {}}})
    with open(os.path.join(log, "%020d.checkpoint.%s.json" % (2, uuid.UUID(int=8))), "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    os.remove(cp)
    os.remove(os.path.join(log, "_last_checkpoint"))


def render(v):
    if v is None:
        return None
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, (dt.datetime, dt.date)):
        return v.isoformat()
    return str(v)


def expect(path):
    out = {}
    latest = DeltaTable(path).version()
    for v in range(latest + 1):
        try:
            t = DeltaTable(path, version=v)
        except Exception:
            continue  # before the checkpoint of a rewritten log
        adds = t.get_add_actions(flatten=True).to_pydict() if hasattr(t.get_add_actions(flatten=True), "to_pydict") \
            else pa.table(t.get_add_actions(flatten=True)).to_pydict()
        files = []
        for i, p in enumerate(adds["path"]):
            part = {k[len("partition."):]: render(adds[k][i]) for k in adds if k.startswith("partition.")}
            files.append({"path": p, "size": adds["size_bytes"][i], "num_records": adds["num_records"][i],
                          "partition": part})
        files.sort(key=lambda f: f["path"])
        out[str(v)] = {"files": files, "rows": t.to_pyarrow_table().num_rows}
    return out


def main():
    shutil.rmtree(TABLES, ignore_errors=True)
    os.makedirs(TABLES)
    expected = {}
    for fn in (appends, colmap, types, evolve, multipart, v2):
        path = os.path.join(TABLES, fn.__name__)
        fn(path)
        if fn not in (multipart, v2):  # deltalake reads neither hand-made checkpoint
            expected[fn.__name__] = expect(path)
    # The hand-made checkpoints hold the same state as appends' own.
    expected["multipart"] = expected["v2"] = None
    # The tests read logs only: the data files are not kept.
    for root, dirs, files in os.walk(TABLES):
        if "_delta_log" not in root.split(os.sep):
            for name in files:
                os.remove(os.path.join(root, name))
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
