"""The clients read tables: the scand Python package (Connection.scan with
table= and version=), scand.polars.scan(conn, table=...) and the PySpark data
source (scand.spark, option "table"), each compared with the table writer's
own read.

- Delta, written by deltalake (delta-rs): partitioned appends over several
  versions, a delete (a rewrite) and a schema evolution; every version read
  through polars equals DeltaTable(path, version=v).to_pyarrow_table(), and
  a filter and projection polars pushes give deltalake's rows.
- Iceberg, written by PyIceberg: two appends and a delete; each snapshot
  through polars equals PyIceberg's scan of it.
- Spark: pyspark 4.3 (the e2e venv) reads, through the data source, the Delta
  tables Spark 4.0 wrote (deletion vectors; column mapping with a rename and
  a drop) and the Iceberg v3 table (deletion vectors), each at its latest and
  an earlier version, with a pushed filter; compared with Spark's own reads
  (e2e/spark_tables.py, shared with test_delta_spark.py). Needs Java and the
  Spark writer's venv; skipped without them.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from conftest import SPARK_WRITER_TIMEOUT_S
from scandlib import same_as_spark, start_spark

CLIENT_SRC = Path(__file__).resolve().parent.parent / "client" / "python" / "src"
sys.path.insert(0, str(CLIENT_SRC))

import scand  # noqa: E402

pl = pytest.importorskip("polars")
deltalake = pytest.importorskip("deltalake")
import scand.polars  # noqa: E402

pytestmark = pytest.mark.timeout(SPARK_WRITER_TIMEOUT_S + 120)


def batch(lo: int, hi: int) -> pa.Table:
    return pa.table({
        "rid": pa.array(range(lo, hi), pa.int64()),
        "p": pa.array([["a", "b", None][i % 3] for i in range(lo, hi)], pa.string()),
        "x": pa.array([None if i % 7 == 0 else i * 0.5 for i in range(lo, hi)], pa.float64()),
        "day": pa.array([dt.date(2026, 1, 1) + dt.timedelta(days=i % 30) for i in range(lo, hi)], pa.date32()),
    })


@pytest.fixture(scope="module")
def delta_table(gen_root) -> tuple[str, list[int]]:
    """A deltalake table under the gen server's root; its location and
    versions."""
    from deltalake import DeltaTable, write_deltalake

    path = gen_root / "clients_delta"
    write_deltalake(path, batch(0, 300), partition_by=["p"])
    write_deltalake(path, batch(300, 600), partition_by=["p"], mode="append")
    DeltaTable(path).delete("rid % 4 = 0")
    write_deltalake(path, batch(600, 700).append_column("extra", pa.array(range(100), pa.int32())),
                    partition_by=["p"], mode="append", schema_mode="merge")
    return path.name, list(range(DeltaTable(path).version() + 1))


def delta_reference(gen_root: Path, location: str, version: int | None) -> pa.Table:
    from deltalake import DeltaTable

    t = DeltaTable(gen_root / location, version=version) if version is not None else DeltaTable(gen_root / location)
    return t.to_pyarrow_table()


def frames_equal(want: pa.Table, got: "pl.DataFrame", what: str, key: str) -> None:
    w = pl.from_arrow(want).sort(key)
    g = got.sort(key)
    assert g.columns == w.columns, f"{what}: columns {g.columns}, want {w.columns}"
    g = g.cast(dict(w.schema))
    assert g.equals(w), f"{what}:\ngot\n{g}\nwant\n{w}"


def test_polars_delta_versions(gen_server, gen_root, delta_table):
    location, versions = delta_table
    with scand.connect(gen_server.location) as conn:
        for v in versions:
            got = scand.polars.scan(conn, table=location, version=v).collect()
            frames_equal(delta_reference(gen_root, location, v), got, f"version {v}", "rid")
        latest = delta_reference(gen_root, location, None)
        frames_equal(latest, scand.polars.scan(conn, table=location).collect(), "latest", "rid")
        # A predicate and a projection polars pushes reach the server.
        lf = scand.polars.scan(conn, table=location, version=versions[-1])
        got = lf.filter((pl.col("rid") >= 250) & (pl.col("p") == "a")).select("rid", "day").collect()
        want = latest.filter((pc.field("rid") >= 250) & (pc.field("p") == "a")).select(["rid", "day"])
        frames_equal(want, got, "filtered projection", "rid")
        # polars keeps the predicate's columns to apply it again.
        assert sorted(conn.last_stats.columns) == ["day", "p", "rid"] and conn.last_stats.rows == want.num_rows
        # filter= on the server, and a version before the delete.
        got = scand.polars.scan(conn, table=location, version=1, filter="x > 100").collect()
        want = delta_reference(gen_root, location, 1).filter(pc.field("x") > 100)
        frames_equal(want, got, "filter= at version 1", "rid")


def test_python_client_delta_version(gen_server, gen_root, delta_table):
    location, versions = delta_table
    with scand.connect(gen_server.location) as conn:
        for v in (0, versions[-1]):
            got = conn.scan(table=location, version=v).read_all()
            want = delta_reference(gen_root, location, v)
            frames_equal(want, pl.from_arrow(got), f"conn.scan version {v}", "rid")
            assert conn.count(table=location, version=v) == want.num_rows
        assert conn.schema(table=location, version=0).names == delta_reference(gen_root, location, 0).column_names
        with pytest.raises(scand.NotFound):
            conn.scan(table=location, version=versions[-1] + 5)


def test_polars_iceberg_snapshots(gen_server, gen_root):
    pyiceberg = pytest.importorskip("pyiceberg")  # noqa: F841
    from pyiceberg.catalog.sql import SqlCatalog

    wh = gen_root / "clients_iceberg"
    wh.mkdir()
    catalog = SqlCatalog("clients", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    catalog.create_namespace("db")
    data = batch(0, 400).drop_columns(["day"])
    tbl = catalog.create_table("db.t", schema=data.schema)
    tbl.append(data.slice(0, 200))
    tbl.append(data.slice(200))
    tbl = catalog.load_table("db.t")
    tbl.delete("rid < 50")
    tbl = catalog.load_table("db.t")
    location = str(Path(tbl.location().removeprefix("file://")).relative_to(gen_root))
    snapshots = [s.snapshot_id for s in tbl.snapshots()]
    assert len(snapshots) >= 3
    with scand.connect(gen_server.location) as conn:
        for sid in snapshots:
            got = scand.polars.scan(conn, table=location, snapshot_id=sid).collect()
            frames_equal(tbl.scan(snapshot_id=sid).to_arrow(), got, f"snapshot {sid}", "rid")
        got = scand.polars.scan(conn, table=location).filter(pl.col("x") > 150).select("rid").collect()
        want = tbl.scan(row_filter="x > 150", selected_fields=("rid",)).to_arrow()
        frames_equal(want, got, "current, filtered", "rid")


# -- the PySpark data source --------------------------------------------------

@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    session = start_spark("scand-e2e-tables", **{"spark.sql.session.timeZone": "UTC"})
    yield session
    session.stop()


def spark_compare(want: pa.Table, df, what: str) -> None:
    same_as_spark(want, df.toArrow(), what)


def test_spark_source_reads_tables(spark, spark_tables, gen_server):
    def load(location: str, **choice):
        r = spark.read.format("scand").option("server", gen_server.location).option("table", location)
        for k, v in choice.items():
            r = r.option(k, str(v))
        return r.load()

    for name in ("dv", "cm"):
        t = spark_tables["delta"][name]
        reads = Path(t["reads"])
        versions = t["versions"]
        latest = pq.read_table(reads / f"delta-{name}-{versions[-1]}")
        spark_compare(latest, load(t["location"]), f"delta {name} latest")
        first = pq.read_table(reads / f"delta-{name}-{versions[0]}")
        spark_compare(first, load(t["location"], version=versions[0]), f"delta {name} version {versions[0]}")
        # The filter goes through Spark's pushdown (the source's pushFilters) as it would from a user's query.
        df = load(t["location"]).where(t["filter"]).select(*t["filter_columns"])
        spark_compare(pq.read_table(reads / f"delta-{name}-filtered"), df, f"delta {name} filtered")

    t = spark_tables["iceberg"]["v3"]
    reads = Path(t["reads"])
    for sid in (t["snapshots"][0], t["snapshots"][-1]):
        spark_compare(pq.read_table(reads / f"v3-{sid}"), load(t["location"], snapshot_id=sid),
                      f"iceberg v3 snapshot {sid}")
    df = load(t["location"]).where(t["filter"]).select(*t["filter_columns"])
    spark_compare(pq.read_table(reads / "v3-filtered"), df, "iceberg v3 filtered")


def test_spark_source_table_options_refused():
    pytest.importorskip("pyspark")
    from scand.spark import table_options, _paths

    assert table_options({"table": "wh/t", "version": "3"}) == {"table": "wh/t", "version": 3}
    assert table_options({"table": "wh/t", "as_of": "2026-01-02T00:00:00Z"}) == {
        "table": "wh/t", "as_of": "2026-01-02T00:00:00Z"}
    assert table_options({"paths": "a/"}) == {}
    assert _paths({"table": "wh/t"}) is None
    with pytest.raises(scand.InvalidRequest, match="set option 'table'"):
        table_options({"paths": "a/", "version": "3"})
    with pytest.raises(scand.InvalidRequest, match="exclusive"):
        _paths({"paths": "a/", "table": "wh/t"})
    with pytest.raises(scand.InvalidRequest, match="'paths' .* or 'table'"):
        _paths({})
    with pytest.raises(scand.InvalidRequest, match="integer"):
        table_options({"table": "wh/t", "version": "latest"})
