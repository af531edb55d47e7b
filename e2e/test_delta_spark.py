"""Delta tables Spark wrote, read through scand and compared with Spark's own
read of them.

Spark 4.0 with Delta 4.0 (delta-spark_2.13, in the same session as the
Iceberg tables: e2e/spark_tables.py, run once per session by conftest's
spark_tables) writes three tables by path under the server's root:
  - dv: deletion vectors enabled, two appends, a DELETE and an UPDATE
    (both leave deletion vectors, in files: storage type "u");
  - cm: column mapping by name, a column renamed and one dropped between
    two appends;
  - v2: checkpoint policy v2, a checkpoint every 2 commits (Spark writes a
    JSON top-level checkpoint whose adds are in Parquet sidecars); version
    2 reads from the checkpoint alone, the latest (3) from the checkpoint
    and the commit after it.
Each test first checks the table has what it is about (deletion vectors in
its add actions, physical names in its schema, a v2 checkpoint file), then
reads the latest version by location, earlier ones by "version", and a
filtered projection, each compared with Spark's read.

scripts/install-tools.sh installs the jars (.tools/spark) and the venv
(.venv-spark); without Java or Maven the test skips."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import SPARK_WRITER_TIMEOUT_S
from scandlib import same_as_spark, scan

pytestmark = pytest.mark.timeout(SPARK_WRITER_TIMEOUT_S + 60)


@pytest.fixture(scope="module")
def delta_tables(spark_tables) -> dict:
    return spark_tables["delta"]


def log_actions(log: Path) -> list[dict]:
    actions = []
    for commit in sorted(log.glob("*.json")):
        actions += [json.loads(line) for line in commit.read_text().splitlines() if line.strip()]
    return actions


def spark_read(t: dict, what) -> pa.Table:
    return pq.read_table(t["reads"] / f"delta-{Path(t['location']).name}-{what}")


def check_reads(client, t: dict, name: str) -> None:
    versions = t["versions"]
    for v in versions:
        same_as_spark(spark_read(t, v), scan(client, {"table": t["location"], "version": v}).table, f"{name} version {v}")
    same_as_spark(spark_read(t, versions[-1]), scan(client, {"table": t["location"]}).table, f"{name} latest")
    if "filter" in t:
        got = scan(client, {"table": t["location"], "columns": t["filter_columns"], "filter": t["filter"]}).table
        want = spark_read(t, "filtered")
        assert want.num_rows > 0
        same_as_spark(want, got, f"{name} filter {t['filter']!r}")


def test_deletion_vectors(delta_tables, gen_root, gen_server):
    t = delta_tables["dv"]
    actions = log_actions(gen_root / t["location"] / "_delta_log")
    dvs = [a["add"]["deletionVector"] for a in actions if a.get("add", {}).get("deletionVector")]
    assert dvs, "Spark wrote no deletion vector"
    latest = spark_read(t, t["versions"][-1])
    assert 0 < latest.num_rows < 1200, "the DELETE removed no row"
    check_reads(gen_server.client(), t, "dv")
    # The plan attaches the vectors to the files they delete from.
    stats = json.loads(scan(gen_server.client(), {"table": t["location"]}).info.app_metadata)
    assert stats.get("delete_files", 0) > 0, stats


def test_column_mapping_rename_drop(delta_tables, gen_root, gen_server):
    t = delta_tables["cm"]
    actions = log_actions(gen_root / t["location"] / "_delta_log")
    meta = [a["metaData"] for a in actions if "metaData" in a][-1]
    assert meta["configuration"].get("delta.columnMapping.mode") == "name"
    fields = {f["name"]: f["metadata"]["delta.columnMapping.physicalName"]
              for f in json.loads(meta["schemaString"])["fields"]}
    assert "amount" in fields and "n" not in fields and "d" not in fields, fields
    assert fields["amount"] != "amount", "the renamed column's physical name is its logical name"
    got = scan(gen_server.client(), {"table": t["location"]}).table
    assert "amount" in got.schema.names and "d" not in got.schema.names
    check_reads(gen_server.client(), t, "cm")


def test_column_mapping_id_with_a_struct(delta_tables, gen_root, gen_server):
    """Column mapping in id mode: files matched by field id, a struct's
    fields too; a renamed struct field reads under its new name, whole or
    by dotted path."""
    t = delta_tables["cmid"]
    actions = log_actions(gen_root / t["location"] / "_delta_log")
    meta = [a["metaData"] for a in actions if "metaData" in a][-1]
    assert meta["configuration"].get("delta.columnMapping.mode") == "id"
    client = gen_server.client()
    check_reads(client, t, "cmid")
    latest = spark_read(t, t["versions"][-1])
    s = latest.column("s").combine_chunks()
    assert "alpha" in [s.type.field(i).name for i in range(s.type.num_fields)]
    want = pa.table({"id": latest.column("id"),
                     "s": pa.StructArray.from_arrays([s.field("alpha")], names=["alpha"], mask=s.is_null())})
    same_as_spark(want, scan(client, {"table": t["location"], "columns": ["id", "s.alpha"]}).table, "cmid s.alpha")


def test_v2_checkpoint(delta_tables, gen_root, gen_server):
    t = delta_tables["v2"]
    log = gen_root / t["location"] / "_delta_log"
    # A v2 checkpoint is named <version>.checkpoint.<uuid>.(json|parquet).
    v2 = [p.name for p in log.glob("*.checkpoint.*.*") if len(p.name.split(".")) == 4]
    assert v2, f"no v2 checkpoint in {sorted(p.name for p in log.iterdir())}"
    # Spark writes the checkpoint's adds to sidecar files.
    assert list((log / "_sidecars").glob("*.parquet")), "the v2 checkpoint has no sidecar"
    protocol = [a["protocol"] for a in log_actions(log) if "protocol" in a][-1]
    assert "v2Checkpoint" in protocol.get("readerFeatures", []), protocol
    check_reads(gen_server.client(), t, "v2")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
