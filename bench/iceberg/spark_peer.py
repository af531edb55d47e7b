"""bench/iceberg's Spark helper, run in .venv-spark (pyspark 4.0 with Iceberg's
runtime jar, as e2e/spark_tables.py): one local[2] session with Iceberg's
Hadoop catalog "local" on WAREHOUSE (gen.prepare_spark_copies wrote db.t and
db.t_del there over the PyIceberg table's files).

    spark_peer.py WAREHOUSE JAR delete PREDICATE
        merge-on-read DELETE FROM db.t_del WHERE PREDICATE (position delete
        files, format version 2); prints the delete files written
    spark_peer.py WAREHOUSE JAR serve
        one JSON request a line on stdin, {"table": "t", "filter": "..."}
        (filter optional); reads every column of the matching rows into
        Spark's noop sink and prints {"seconds": s, "rows": n}
"""

from __future__ import annotations

import json
import sys
import time

from pyspark.sql import SparkSession


def session(warehouse: str, jar: str) -> SparkSession:
    spark = (SparkSession.builder.master("local[2]").appName("scand-bench-iceberg")
             .config("spark.jars", jar)
             .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
             .config("spark.sql.catalog.local", "org.apache.iceberg.spark.SparkCatalog")
             .config("spark.sql.catalog.local.type", "hadoop")
             .config("spark.sql.catalog.local.warehouse", f"file://{warehouse}")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.default.parallelism", "2")
             .config("spark.driver.memory", "2g")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> None:
    warehouse, jar, cmd = sys.argv[1], sys.argv[2], sys.argv[3]
    spark = session(warehouse, jar)
    if cmd == "delete":
        t = "local.db.t_del"
        spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
        spark.sql(f"DELETE FROM {t} WHERE {sys.argv[4]}")
        files = spark.sql(f"SELECT content, file_format, record_count FROM {t}.delete_files").collect()
        print(json.dumps({"delete_files": len(files), "deleted_rows": sum(r.record_count for r in files),
                          "content": sorted({r.content for r in files})}), flush=True)
    else:
        print("ready", flush=True)
        for line in sys.stdin:
            req = json.loads(line)
            t0 = time.perf_counter()
            df = spark.table(f"local.db.{req['table']}")
            if req.get("filter"):
                df = df.where(req["filter"])
            df.write.format("noop").mode("overwrite").save()
            secs = time.perf_counter() - t0
            rows = df.count() if req.get("count") else -1
            print(json.dumps({"seconds": secs, "rows": rows}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
