"""bench/iceberg's tables: one Iceberg table written by PyIceberg (SQL catalog
on sqlite) in APPENDS fast appends, so its current snapshot has one manifest
per append, and (prepare_spark_copies) the metadata Spark's Hadoop catalog
needs to read it and to delete from a copy of it.

Columns: id (long, sorted: append k holds ids [k*n, (k+1)*n), so the
selective filter on id matches a run of one or two row groups), ts
(timestamp), cat (8 strings), qty (int), amount (double), note (a 16-char
string that compresses little). Row groups hold a quarter of an append.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa

NAMESPACE = "bench"
TABLE = "t"
CATS = np.array(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"])


def batch(k: int, n: int) -> pa.Table:
    rng = np.random.default_rng(k)
    ids = np.arange(k * n, (k + 1) * n, dtype=np.int64)
    notes = rng.integers(0, 2**63, size=n, dtype=np.int64)
    return pa.table({
        "id": pa.array(ids),
        "ts": pa.array(1_700_000_000_000_000 + ids * 1_000, pa.timestamp("us")),
        "cat": pa.array(CATS[rng.integers(0, len(CATS), size=n)]),
        "qty": pa.array(rng.integers(0, 1000, size=n, dtype=np.int32)),
        "amount": pa.array(np.round(rng.random(n) * 1000, 2)),
        "note": pa.array([f"{x:016x}" for x in notes.tolist()]),
    })


def catalog(name: str, uri: str, warehouse: str, props: dict | None = None):
    from pyiceberg.catalog.sql import SqlCatalog
    return SqlCatalog(name, uri=uri, warehouse=warehouse, **(props or {}))


def write(cat, appends: int, rows: int, log=print) -> str:
    """Writes the table (replacing one there) and returns its metadata file."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, IntegerType, LongType, NestedField, StringType, TimestampType

    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "ts", TimestampType(), required=False),
        NestedField(3, "cat", StringType(), required=False),
        NestedField(4, "qty", IntegerType(), required=False),
        NestedField(5, "amount", DoubleType(), required=False),
        NestedField(6, "note", StringType(), required=False),
    )
    try:
        cat.create_namespace(NAMESPACE)
    except Exception:  # noqa: BLE001 - exists
        pass
    ident = f"{NAMESPACE}.{TABLE}"
    if cat.table_exists(ident):
        cat.purge_table(ident)
    per = rows // appends
    t = cat.create_table(ident, schema=schema, properties={
        "format-version": "2",
        "write.parquet.row-group-limit": str(max(per // 4, 1)),
        "commit.manifest-merge.enabled": "false",
    })
    for k in range(appends):
        t.append(batch(k, per))
        if (k + 1) % 50 == 0:
            log(f"  {k + 1}/{appends} appends")
    t = cat.load_table(ident)
    return t.metadata_location


def prepare_spark_copies(metadata_file: Path, spark_wh: Path) -> dict[str, Path]:
    """Spark's Hadoop catalog wants <warehouse>/<db>/<table>/metadata/vN.metadata.json
    and version-hint.text; PyIceberg numbers its files 00042-<uuid>.metadata.json.
    Two tables over the same data files: db.t (to read) and db.t_del (Spark
    deletes from it; its new files go under its own location)."""
    meta = json.loads(metadata_file.read_text())
    out = {}
    for name in ("t", "t_del"):
        loc = spark_wh / "db" / name
        if loc.exists():
            shutil.rmtree(loc)
        (loc / "metadata").mkdir(parents=True)
        m = dict(meta, location=f"file://{loc}")
        (loc / "metadata" / "v1.metadata.json").write_text(json.dumps(m))
        (loc / "metadata" / "version-hint.text").write_text("1")
        out[name] = loc
    return out
