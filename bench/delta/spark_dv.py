"""bench/delta's Spark step: deletes rows of a Delta table with deletion
vectors (deltalake 1.6 rewrites files instead). Runs in .venv-spark (pyspark
4.0 with Delta's connector, as e2e/spark_tables.py does):

  .venv-spark/bin/python bench/delta/spark_dv.py TABLE_DIR PREDICATE JAR[,JAR...]

Enables delta.enableDeletionVectors on the table (a protocol upgrade to
reader version 3 with the deletionVectors feature), then DELETE FROM it
WHERE PREDICATE: one commit removing every touched file and adding it back
with a deletion vector (in deletion vector files, storage type "u")."""

from __future__ import annotations

import sys
import time

from pyspark.sql import SparkSession


def main() -> None:
    table, predicate, jars = sys.argv[1], sys.argv[2], sys.argv[3]
    begun = time.monotonic()
    spark = (SparkSession.builder.master("local[2]").appName("scand-bench-delta")
             .config("spark.jars", jars)
             .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
             .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
             .config("spark.databricks.delta.snapshotPartitions", "2")
             .config("spark.databricks.delta.writeChecksumFile.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.default.parallelism", "2")
             .config("spark.driver.memory", "1g")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    t = f"delta.`{table}`"
    spark.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
    spark.sql(f"DELETE FROM {t} WHERE {predicate}")
    spark.stop()
    print(f"spark: deletion vectors written in {time.monotonic() - begun:.1f} s", flush=True)


if __name__ == "__main__":
    main()
