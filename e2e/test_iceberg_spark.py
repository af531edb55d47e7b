"""Iceberg tables whose deletes Spark wrote, read through scand and compared
with Spark's own read of them.

Spark 4.0 with Iceberg 1.10 (e2e/spark_iceberg_tables.py, run once per
module in .venv-spark, local mode, a Hadoop catalog on a warehouse under
the server's root) writes a v2 table whose merge-on-read DELETE and UPDATE
leave position delete files, and a v3 table where they leave deletion
vectors. Every snapshot is read by snapshot_id with all columns, the current
one by location, and a filtered projection, each compared with Spark's read.

scripts/install-tools.sh installs the runtime jar (.tools/spark) and the
venv (.venv-spark); without Java or Maven the test skips."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from scandlib import command, normalize, scan, table_diff

REPO = Path(__file__).resolve().parent.parent
SPARK_PYTHON = Path(os.environ.get("SCAND_SPARK_PYTHON") or REPO / ".venv-spark" / "bin" / "python")
RUNTIME_JAR = Path(os.environ.get("SCAND_ICEBERG_SPARK_JAR") or REPO / ".tools" / "spark" / "iceberg-spark-runtime.jar")
WRITER_TIMEOUT_S = 400
# Spark's start-up and some 40 small jobs take about 40 s of CPU (the JVM's,
# measured on the 2-core machine): well under a minute of wall time on a
# quiet machine, minutes on a loaded one (the default timeout is 120 s).
pytestmark = pytest.mark.timeout(WRITER_TIMEOUT_S + 60)


@pytest.fixture(scope="module")
def spark_tables(gen_root, tmp_path_factory) -> dict:
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("Java or Maven not found: Spark cannot write the tables")
    missing = [str(p) for p in (SPARK_PYTHON, RUNTIME_JAR) if not p.exists()]
    assert not missing, f"{missing} not found: run scripts/install-tools.sh"
    warehouse = gen_root / "spark" / "wh"
    warehouse.mkdir(parents=True)
    out = tmp_path_factory.mktemp("spark-reads")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_"))}
    proc = subprocess.run([str(SPARK_PYTHON), str(REPO / "e2e" / "spark_iceberg_tables.py"), str(warehouse),
                           str(out), str(RUNTIME_JAR)], env=env, capture_output=True, text=True,
                          timeout=WRITER_TIMEOUT_S)
    assert proc.returncode == 0, f"Spark writer failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    tables = json.loads((out / "tables.json").read_text())
    for t in tables.values():
        t["location"] = str(Path(t["location"]).relative_to(gen_root))
        t["reads"] = out
    return tables


def spark_read(t: dict, what) -> pa.Table:
    name = Path(t["location"]).name
    return pq.read_table(t["reads"] / f"{name}-{what}")


def compare(expected: pa.Table, got: pa.Table, what: str) -> None:
    e, g = normalize(expected), normalize(got)
    assert g.schema.names == e.schema.names, f"{what}: columns {g.schema.names}, Spark's {e.schema.names}"
    e = e.cast(pa.schema([f.with_nullable(True) for f in e.schema]))
    g = g.cast(e.schema)
    keys = [("id", "ascending")]
    diff = table_diff(e.sort_by(keys), g.sort_by(keys))
    assert diff is None, f"{what}: {diff}"


@pytest.mark.parametrize("name,content", [("v2", "position deletes"), ("v3", "deletion vectors")])
def test_deletes_written_by_spark(spark_tables, gen_server, name, content):
    t = spark_tables[name]
    # The table really has what the case is about: delete files of that kind.
    kinds = {tuple(k) for k in t["delete_files"]}
    want_format = "PUFFIN" if name == "v3" else "PARQUET"
    assert (1, want_format) in kinds, f"{name}: expected {content}, delete files {kinds}"
    client = gen_server.client()
    for sid in t["snapshots"]:
        got = scan(client, {"table": t["location"], "snapshot_id": sid}).table
        compare(spark_read(t, sid), got, f"{name} snapshot {sid}")
    latest = spark_read(t, t["snapshots"][-1])
    assert latest.num_rows < 1200, "the deletes removed no row"
    compare(latest, scan(client, {"table": t["location"]}).table, f"{name} current")
    got = scan(client, {"table": t["location"], "columns": t["filter_columns"], "filter": t["filter"]}).table
    compare(spark_read(t, "filtered"), got, f"{name} filter {t['filter']!r}")
    # The plan counts the table's manifests and attached delete files.
    info = client.get_flight_info(command({"table": t["location"], "filter": "cat = 'a'"}))
    stats = json.loads(info.app_metadata)
    assert stats.get("manifests_read", 0) > 0 and stats.get("manifests_skipped", 0) > 0, stats
    assert stats.get("table_files_pruned", 0) > 0 and stats.get("delete_files", 0) > 0, stats


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
