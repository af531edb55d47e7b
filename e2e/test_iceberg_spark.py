"""Iceberg tables whose deletes Spark wrote, read through scand and compared
with Spark's own read of them.

Spark 4.0 with Iceberg 1.10 (e2e/spark_tables.py, run once per
session in .venv-spark, local mode, a Hadoop catalog on a warehouse under
the server's root) writes a v2 table whose merge-on-read DELETE and UPDATE
leave position delete files, and a v3 table where they leave deletion
vectors. Every snapshot is read by snapshot_id with all columns, the current
one by location, and a filtered projection, each compared with Spark's read.

scripts/install-tools.sh installs the runtime jar (.tools/spark) and the
venv (.venv-spark); without Java or Maven the test skips."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import SPARK_WRITER_TIMEOUT_S
from scandlib import command, same_as_spark, scan

# Spark's start-up and some 60 small jobs (Iceberg and Delta tables, written
# once per session by e2e/conftest.py's spark_tables) take 45-70 s on the
# 2-core machine under moderate load; minutes on a heavily loaded one.
pytestmark = pytest.mark.timeout(SPARK_WRITER_TIMEOUT_S + 60)


@pytest.fixture(scope="module")
def iceberg_tables(spark_tables) -> dict:
    return spark_tables["iceberg"]


def spark_read(t: dict, what) -> pa.Table:
    name = Path(t["location"]).name
    return pq.read_table(t["reads"] / f"{name}-{what}")


@pytest.mark.parametrize("name,content", [("v2", "position deletes"), ("v3", "deletion vectors"),
                                          ("orc", "ORC position deletes")])
def test_deletes_written_by_spark(iceberg_tables, gen_server, name, content):
    t = iceberg_tables[name]
    # The table really has what the case is about: delete files of that kind.
    kinds = {tuple(k) for k in t["delete_files"]}
    want_format = {"v3": "PUFFIN", "orc": "ORC"}.get(name, "PARQUET")
    assert (1, want_format) in kinds, f"{name}: expected {content}, delete files {kinds}"
    client = gen_server.client()
    for sid in t["snapshots"]:
        got = scan(client, {"table": t["location"], "snapshot_id": sid}).table
        same_as_spark(spark_read(t, sid), got, f"{name} snapshot {sid}")
    latest = spark_read(t, t["snapshots"][-1])
    assert latest.num_rows < 1200, "the deletes removed no row"
    same_as_spark(latest, scan(client, {"table": t["location"]}).table, f"{name} current")
    got = scan(client, {"table": t["location"], "columns": t["filter_columns"], "filter": t["filter"]}).table
    same_as_spark(spark_read(t, "filtered"), got, f"{name} filter {t['filter']!r}")
    # The plan counts the table's manifests and attached delete files.
    info = client.get_flight_info(command({"table": t["location"], "filter": "cat = 'a'"}))
    stats = json.loads(info.app_metadata)
    assert stats.get("manifests_read", 0) > 0 and stats.get("manifests_skipped", 0) > 0, stats
    assert stats.get("table_files_pruned", 0) > 0 and stats.get("delete_files", 0) > 0, stats


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
