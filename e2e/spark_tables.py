"""Writes Iceberg and Delta tables with Spark, and Spark's own reads of them,
for e2e/test_iceberg_spark.py and e2e/test_delta_spark.py (e2e/conftest.py
runs it once per pytest session). Runs in .venv-spark (pyspark 4.0 with
Iceberg's runtime jar and Delta's connector), not in the e2e venv:

  .venv-spark/bin/python e2e/spark_tables.py WAREHOUSE OUT JAR[,JAR...]

One Spark session (local mode; Iceberg's Hadoop catalog "local" on
WAREHOUSE, and Delta's catalog as spark_catalog for path tables) writes,
Iceberg:
  - db.v2: format version 2, identity-partitioned by cat; two appends, a
    DELETE and an UPDATE, both merge-on-read: position delete files;
  - db.v3: format version 3, the same steps: deletion vectors (Puffin);
  - db.orc: format version 2, ORC data and delete files, n renamed to
    amount between the appends (ORC files keep field ids as type
    attributes).
For every snapshot of each table, Spark's read of all columns goes to
OUT/<table>-<snapshot>/ as Parquet, and for the current snapshot a filtered
projection (FILTER below) to OUT/<table>-filtered/.

Delta, by path under WAREHOUSE/delta (the same columns and rows):
  - dv: deletion vectors enabled; two appends, a DELETE and an UPDATE;
  - cm: column mapping by name; an append, n renamed to amount, d
    dropped, an append;
  - v2: checkpoint policy v2 and a checkpoint every 2 commits; 3 appends.
Spark's read of each version goes to OUT/delta-<table>-<version>/, and a
filtered projection of the latest to OUT/delta-<table>-filtered/.
OUT/tables.json lists what was written: {"iceberg": ..., "delta": ...}."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

FILTER = "n >= 10 AND cat <> 'b'"
FILTER_COLUMNS = ["id", "d", "day"]


def main() -> None:
    begun = time.monotonic()
    warehouse, out, jars = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    spark = (SparkSession.builder.master("local[2]").appName("scand-spark-e2e")
             .config("spark.jars", jars)
             .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions,"
                     "io.delta.sql.DeltaSparkSessionExtension")
             .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
             # Delta rebuilds a snapshot's state in 50 partitions by default:
             # 2 tasks for tables of a few files saves most of its jobs' time.
             .config("spark.databricks.delta.snapshotPartitions", "2")
             .config("spark.databricks.delta.writeChecksumFile.enabled", "false")
             .config("spark.sql.catalog.local", "org.apache.iceberg.spark.SparkCatalog")
             .config("spark.sql.catalog.local.type", "hadoop")
             .config("spark.sql.catalog.local.warehouse", f"file://{warehouse}")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.default.parallelism", "2")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    tables = {}
    for name, version, fmt in (("v2", 2, "parquet"), ("v3", 3, "parquet"), ("orc", 2, "orc")):
        t = f"local.db.{name}"
        spark.sql(f"""CREATE TABLE {t} (id BIGINT, cat STRING, n INT, d DOUBLE, day DATE, ts TIMESTAMP)
                      USING iceberg PARTITIONED BY (cat)
                      TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read',
                                     'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read',
                                     'write.format.default'='{fmt}', 'write.delete.format.default'='{fmt}')""")
        n, filt, columns = "n", FILTER, FILTER_COLUMNS
        for start in (0, 1000):
            if fmt == "orc" and start:
                # The ORC files before it store the column as n: only its
                # field id (an ORC type attribute) finds it.
                spark.sql(f"ALTER TABLE {t} RENAME COLUMN n TO amount")
                n, filt, columns = "amount", FILTER.replace("n >=", "amount >="), ["id", "amount", "day"]
            spark.sql(f"INSERT INTO {t} {rows(start, 600)}")
        spark.sql(f"DELETE FROM {t} WHERE {n} % 3 = 0 OR id BETWEEN 1100 AND 1180")
        spark.sql(f"UPDATE {t} SET d = -d, {n} = {n} + 1 WHERE id % 10 = 1")
        snaps = [r.snapshot_id for r in spark.sql(f"SELECT snapshot_id FROM {t}.snapshots ORDER BY committed_at").collect()]
        deletes = spark.sql(f"SELECT content, file_format FROM {t}.all_delete_files").collect()
        for sid in snaps:
            spark.sql(f"SELECT * FROM {t} VERSION AS OF {sid}").coalesce(1).write.parquet(str(out / f"{name}-{sid}"))
        spark.sql(f"SELECT {', '.join(columns)} FROM {t} WHERE {filt}").coalesce(1).write.parquet(
            str(out / f"{name}-filtered"))
        tables[name] = {
            "location": str(warehouse / "db" / name),
            "snapshots": snaps,
            "delete_files": [[r.content, r.file_format] for r in deletes],
            "filter": filt,
            "filter_columns": columns,
        }
    started = time.monotonic()
    print(f"iceberg tables: {started - begun:.1f} s since start", flush=True)
    delta = write_delta(spark, warehouse / "delta", out)
    print(f"delta tables: {time.monotonic() - started:.1f} s", flush=True)
    spark.stop()
    (out / "tables.json").write_text(json.dumps({"iceberg": tables, "delta": delta}, indent=1))


def rows(start: int, count: int) -> str:
    return f"""SELECT id, CASE WHEN id % 4 = 3 THEN NULL ELSE element_at(array('a','b','c'), CAST(id % 4 + 1 AS INT)) END,
                   CASE WHEN id % 7 = 0 THEN NULL ELSE CAST(id % 50 AS INT) END,
                   id * 0.5, date_add(DATE'2024-01-01', CAST(id % 40 AS INT)),
                   TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id * 37)
            FROM range({start}, {start + count})"""


DELTA_COLUMNS = "(id BIGINT, cat STRING, n INT, d DOUBLE, day DATE, ts TIMESTAMP)"
DELTA_FILTERS = {
    "dv": (FILTER, FILTER_COLUMNS),
    "cm": ("amount >= 10 AND cat <> 'b'", ["id", "amount", "day"]),
}


def write_delta(spark, root: Path, out: Path) -> dict:
    tables = {}

    def create(name: str, props: str) -> str:
        t = f"delta.`{root / name}`"
        spark.sql(f"CREATE TABLE {t} {DELTA_COLUMNS} USING delta TBLPROPERTIES ({props})")
        return t

    t = create("dv", "'delta.enableDeletionVectors'='true'")
    for start in (0, 1000):
        spark.sql(f"INSERT INTO {t} {rows(start, 600)}")
    spark.sql(f"DELETE FROM {t} WHERE n % 3 = 0 OR id BETWEEN 1100 AND 1180")
    spark.sql(f"UPDATE {t} SET d = -d, n = n + 1 WHERE id % 10 = 1")
    tables["dv"] = [2, 3, 4]

    t = create("cm", "'delta.columnMapping.mode'='name'")
    spark.sql(f"INSERT INTO {t} {rows(0, 600)}")
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN n TO amount")
    spark.sql(f"ALTER TABLE {t} DROP COLUMN d")
    spark.sql(f"INSERT INTO {t} SELECT id, cat, n, day, ts FROM ({rows(1000, 600)}) AS r(id, cat, n, d, day, ts)")
    tables["cm"] = [1, 2, 3, 4]

    t = create("v2", "'delta.checkpointPolicy'='v2', 'delta.checkpointInterval'='2'")
    for start in (0, 1000, 2000):
        spark.sql(f"INSERT INTO {t} {rows(start, 300)}")
    tables["v2"] = [2, 3]

    result = {}
    for name, versions in tables.items():
        path = str(root / name)
        for v in versions:
            (spark.read.format("delta").option("versionAsOf", v).load(path)
             .coalesce(1).write.parquet(str(out / f"delta-{name}-{v}")))
        entry = {"location": path, "versions": versions}
        if name in DELTA_FILTERS:
            flt, cols = DELTA_FILTERS[name]
            spark.read.format("delta").load(path).where(flt).select(*cols).coalesce(1).write.parquet(
                str(out / f"delta-{name}-filtered"))
            entry.update(filter=flt, filter_columns=cols)
        result[name] = entry
    return result


if __name__ == "__main__":
    main()
