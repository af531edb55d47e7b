"""Writes Iceberg tables with Spark's merge-on-read deletes, and Spark's own
reads of them, for e2e/test_iceberg_spark.py. Runs in .venv-spark (pyspark
4.0 with Iceberg's runtime jar), not in the e2e venv:

  .venv-spark/bin/python e2e/spark_iceberg_tables.py WAREHOUSE OUT JAR

One Spark session (local mode, a Hadoop catalog on WAREHOUSE) writes:
  - db.v2: format version 2, identity-partitioned by cat; two appends, a
    DELETE and an UPDATE, both merge-on-read: position delete files;
  - db.v3: format version 3, the same steps: deletion vectors (Puffin).
For every snapshot of each table, Spark's read of all columns goes to
OUT/<table>-<snapshot>/ as Parquet, and for the current snapshot a filtered
projection (FILTER below) to OUT/<table>-filtered/. OUT/tables.json lists
what was written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pyspark.sql import SparkSession

FILTER = "n >= 10 AND cat <> 'b'"
FILTER_COLUMNS = ["id", "d", "day"]


def main() -> None:
    warehouse, out, jar = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    spark = (SparkSession.builder.master("local[2]").appName("scand-iceberg-e2e")
             .config("spark.jars", jar)
             .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
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
    for name, version in (("v2", 2), ("v3", 3)):
        t = f"local.db.{name}"
        spark.sql(f"""CREATE TABLE {t} (id BIGINT, cat STRING, n INT, d DOUBLE, day DATE, ts TIMESTAMP)
                      USING iceberg PARTITIONED BY (cat)
                      TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read',
                                     'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')""")
        for start in (0, 1000):
            spark.sql(f"""INSERT INTO {t}
                SELECT id, CASE WHEN id % 4 = 3 THEN NULL ELSE element_at(array('a','b','c'), CAST(id % 4 + 1 AS INT)) END,
                       CASE WHEN id % 7 = 0 THEN NULL ELSE CAST(id % 50 AS INT) END,
                       id * 0.5, date_add(DATE'2024-01-01', CAST(id % 40 AS INT)),
                       TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id * 37)
                FROM range({start}, {start + 600})""")
        spark.sql(f"DELETE FROM {t} WHERE n % 3 = 0 OR id BETWEEN 1100 AND 1180")
        spark.sql(f"UPDATE {t} SET d = -d, n = n + 1 WHERE id % 10 = 1")
        snaps = [r.snapshot_id for r in spark.sql(f"SELECT snapshot_id FROM {t}.snapshots ORDER BY committed_at").collect()]
        deletes = spark.sql(f"SELECT content, file_format FROM {t}.all_delete_files").collect()
        for sid in snaps:
            spark.sql(f"SELECT * FROM {t} VERSION AS OF {sid}").coalesce(1).write.parquet(str(out / f"{name}-{sid}"))
        spark.sql(f"SELECT {', '.join(FILTER_COLUMNS)} FROM {t} WHERE {FILTER}").coalesce(1).write.parquet(
            str(out / f"{name}-filtered"))
        tables[name] = {
            "location": str(warehouse / "db" / name),
            "snapshots": snaps,
            "delete_files": [[r.content, r.file_format] for r in deletes],
            "filter": FILTER,
            "filter_columns": FILTER_COLUMNS,
        }
    spark.stop()
    (out / "tables.json").write_text(json.dumps(tables, indent=1))


if __name__ == "__main__":
    main()
