"""Spark reads through scand: scand.spark.ScandDataSource on a real local
Spark (local[2], started once for this module) against a real scand server.

A hive-partitioned dataset (region=.../year=.../part-N.parquet, several row
groups per file) is read two ways in one session: through the data source
(view `s`) and with Spark's own Parquet reader on the same files (view `p`).
Each query runs on both and the sorted rows must be the same. The reference
runs with spark.sql.parquet.filterPushdown off, so that Spark evaluates every
predicate itself: with it on, Spark's Parquet row-group filter drops NaN rows
from `price = 'NaN'` (Parquet statistics leave NaN out), which would make the
reference wrong, not the source.

Each test loads its DataFrames anew (see `views`). Each query also says which of its filters the source must take: a pushed
filter leaves no Filter node above the BatchScan in the executed plan, one
handed back keeps it.

Needs pyspark (e2e/requirements.txt) and Java 17; skipped without them.
"""

from __future__ import annotations

import datetime
import decimal
import math
import random
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import _scand_bin
from s3lib import S3ScandServer, parse_metrics
from scandlib import start_spark

pyspark = pytest.importorskip("pyspark")

CLIENT_SRC = Path(__file__).resolve().parent.parent / "client" / "python" / "src"
sys.path.insert(0, str(CLIENT_SRC))

from pyspark.sql import datasource as sds  # noqa: E402
from pyspark.sql import types as st  # noqa: E402

from scand.spark import translate_filter  # noqa: E402

# Generous for a loaded 2-core machine: the first test also starts Spark.
pytestmark = pytest.mark.timeout(300)

ROWS = 4000
REGIONS = ["east", "north", "west"]
YEARS = [2024, 2025]


# -- the dataset and the servers ---------------------------------------------

def _table(n: int) -> pa.Table:
    def price(i):
        if i % 97 == 0:
            return float("nan")
        return None if i % 13 == 0 else round((i % 500) * 0.25, 2)

    return pa.table({
        "rid": pa.array(range(n), pa.int64()),
        "qty": pa.array([None if i % 17 == 0 else i % 50 for i in range(n)], pa.int32()),
        "price": pa.array([price(i) for i in range(n)], pa.float64()),
        "name": pa.array([None if i % 11 == 0 else f"item_{i % 40}%x" for i in range(n)]),
        "day": pa.array([datetime.date(2025, 1, 1) + datetime.timedelta(days=i % 90) for i in range(n)]),
        "flag": pa.array([i % 3 == 0 for i in range(n)]),
        "amount": pa.array([decimal.Decimal(i % 1000) / 100 for i in range(n)], pa.decimal128(10, 2)),
        # wide and incompressible: a projection without it reads far fewer bytes
        "note": pa.array([random.Random(i).randbytes(48).hex() for i in range(n)]),
        "region": pa.array([REGIONS[i % 3] for i in range(n)]),
        "year": pa.array([YEARS[(i // 7) % 2] for i in range(n)], pa.int32()),
    })


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """root/ds/region=R/year=Y/part-K.parquet: 6 partitions x 2 files, rows
    sorted by rid so that row-group statistics of rid are tight."""
    root = tmp_path_factory.mktemp("sparkroot")
    t = _table(ROWS)
    for region in REGIONS:
        for year in YEARS:
            d = root / "ds" / f"region={region}" / f"year={year}"
            d.mkdir(parents=True)
            part = t.filter(pa.compute.and_(pa.compute.equal(t["region"], region),
                                            pa.compute.equal(t["year"], year)))
            part = part.drop_columns(["region", "year"])
            half = part.num_rows // 2
            for k, piece in enumerate((part.slice(0, half), part.slice(half))):
                pq.write_table(piece, d / f"part-{k}.parquet", row_group_size=100)
    (root / "other").mkdir()
    pq.write_table(pa.table({"region": REGIONS, "manager": ["Ann", "Bo", "Cy"]}), root / "other" / "managers.parquet")
    return root


def _server(tmp_path_factory, root: Path, name: str) -> S3ScandServer:
    logs = tmp_path_factory.mktemp("sparklogs")
    # --io-hole 1: no merging of ranges across the gaps between column chunks, which on local disk the server
    # learns to read through; the storage byte counts then show what a projection leaves out.
    srv = S3ScandServer(_scand_bin(), root, logs / f"{name}.log", name, args=["--io-hole", "1"], env={})
    srv.start()
    return srv


@pytest.fixture(scope="module")
def server(tmp_path_factory, dataset):
    srv = _server(tmp_path_factory, dataset, "spark")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def spark():
    # Spark's own Parquet pushdown is off so that its reads of the same files are the reference as written.
    session = start_spark("scand-e2e", **{"spark.sql.parquet.filterPushdown": "false"})
    yield session
    session.stop()


@pytest.fixture
def views(spark, server, dataset):
    """Views s, sm (the source) and p, pm (Spark's Parquet reader), loaded
    anew for each test: Spark 4.3.0 keeps the read plan of a Python data
    source's last filter pushdown on the relation, and a later query on the
    same DataFrame that pushes no filter reads with it (docs/spark.md)."""
    spark.read.format("scand").option("server", server.location).option("paths", "ds/").load() \
        .createOrReplaceTempView("s")
    spark.read.parquet(str(dataset / "ds")).createOrReplaceTempView("p")
    spark.read.format("scand").option("server", server.location).option("paths", "other/managers.parquet").load() \
        .createOrReplaceTempView("sm")
    spark.read.parquet(str(dataset / "other" / "managers.parquet")).createOrReplaceTempView("pm")
    return spark


def _key(v):
    if v is None:
        return (0, "")
    if isinstance(v, float) and math.isnan(v):
        return (1, "")
    return (2, v)


def _rows(df) -> list:
    return sorted((tuple(_key(v) for v in r) for r in df.collect()))


def _has_filter(df) -> bool:
    plan = df._jdf.queryExecution().executedPlan().toString()
    return "Filter " in plan or "Filter(" in plan


# -- Spark's pushed filters, translated --------------------------------------

SCHEMA = st.StructType([
    st.StructField("i", st.IntegerType()), st.StructField("d", st.DoubleType()),
    st.StructField("s", st.StringType()), st.StructField("b", st.BooleanType()),
    st.StructField("day", st.DateType()), st.StructField("ts", st.TimestampType()),
    st.StructField("m", st.DecimalType(10, 2)), st.StructField("bin", st.BinaryType()),
    st.StructField("st", st.StructType([st.StructField("x", st.LongType())])),
])

TRANSLATIONS = [
    (sds.EqualTo(("i",), 5), '"i" = 5'),
    (sds.EqualTo(("s",), "it's"), "\"s\" = 'it''s'"),
    (sds.EqualTo(("b",), True), '"b" = TRUE'),
    (sds.EqualTo(("day",), datetime.date(2025, 2, 3)), "\"day\" = DATE '2025-02-03'"),
    (sds.EqualTo(("m",), decimal.Decimal("1.50")), '"m" = 1.50'),
    (sds.EqualTo(("m",), decimal.Decimal("1.505")), '"m" = 1.505'),  # compared exactly: no row
    (sds.EqualTo(("st", "x"), 3), '"st"."x" = 3'),
    (sds.EqualNullSafe(("i",), 5), '("i" IS NOT NULL AND "i" = 5)'),
    (sds.GreaterThan(("i",), 5), '"i" > 5'),
    (sds.GreaterThanOrEqual(("i",), 5), '"i" >= 5'),
    (sds.LessThan(("d",), 2.5), '"d" < 2.5'),
    (sds.LessThanOrEqual(("d",), 2.5), '"d" <= 2.5'),
    # Spark orders NaN above every number: x > v holds for NaN, as NOT (x <= v) does in IEEE 754.
    (sds.GreaterThan(("d",), 2.5), 'NOT ("d" <= 2.5)'),
    (sds.GreaterThanOrEqual(("d",), 2.5), 'NOT ("d" < 2.5)'),
    (sds.In(("i",), (1, 2, 3)), '"i" IN (1, 2, 3)'),
    (sds.IsNull(("s",)), '"s" IS NULL'),
    (sds.IsNotNull(("s",)), '"s" IS NOT NULL'),
    (sds.Not(sds.EqualTo(("i",), 5)), 'NOT ("i" = 5)'),
    (sds.StringStartsWith(("s",), "a_b"), "\"s\" LIKE 'a\\_b%'"),
    (sds.StringEndsWith(("s",), "50%"), "\"s\" LIKE '%50\\%'"),
    (sds.StringContains(("s",), "x\\y"), "\"s\" LIKE '%x\\\\y%'"),
    # handed back to Spark
    (sds.EqualTo(("d",), float("nan")), None),
    (sds.GreaterThan(("d",), float("inf")), None),
    (sds.EqualTo(("ts",), datetime.datetime(2025, 1, 1)), None),
    (sds.EqualTo(("bin",), b"x"), None),
    (sds.EqualNullSafe(("i",), None), None),
    (sds.In(("i",), (1, None)), None),
    (sds.EqualTo(("nope",), 1), None),
    (sds.EqualTo(("i",), "5"), None),
    (sds.Not(sds.EqualTo(("ts",), datetime.datetime(2025, 1, 1))), None),
]


@pytest.mark.parametrize("f,want", TRANSLATIONS, ids=[repr(f) for f, _ in TRANSLATIONS])
def test_translate_filter(f, want):
    assert translate_filter(f, SCHEMA) == want


# -- queries: the source and Spark's Parquet reader agree --------------------

# (query with {t} for the table and {m} for the managers, whether the source
# must take every filter of it)
QUERIES = [
    ("SELECT * FROM {t}", True),
    ("SELECT rid, name FROM {t} WHERE qty = 7", True),
    ("SELECT * FROM {t} WHERE qty <=> 7", True),
    ("SELECT * FROM {t} WHERE price > 100", True),
    ("SELECT * FROM {t} WHERE price >= 100 AND price < 110", True),
    ("SELECT * FROM {t} WHERE price <= 1", True),
    ("SELECT * FROM {t} WHERE qty IN (1, 2, 3) AND region IN ('east', 'west')", True),
    ("SELECT * FROM {t} WHERE name IS NULL OR price IS NULL", False),
    ("SELECT rid FROM {t} WHERE name IS NOT NULL AND NOT (qty > 10)", True),
    # startswith/endswith/contains reach the source as StringStartsWith/EndsWith/Contains (LIKE with an
    # escaped wildcard does not); their arguments hold LIKE's wildcards, which scand must escape.
    ("SELECT * FROM {t} WHERE startswith(name, 'item_1') AND endswith(name, '%x') AND contains(name, 'm_3')", True),
    ("SELECT * FROM {t} WHERE year = 2025 AND day >= DATE '2025-03-01' AND flag", True),
    ("SELECT * FROM {t} WHERE amount > 9.5 AND rid < 1000", True),
    ("SELECT * FROM {t} WHERE amount > 9.505 AND amount <= 9.999", True),  # compared exactly, as Spark does
    ("SELECT * FROM {t} WHERE price = 'NaN'", False),
    ("SELECT * FROM {t} WHERE qty % 7 = 1", False),
    ("SELECT region, year, count(*), sum(qty), round(avg(price), 6), max(amount) FROM {t} "
     "WHERE price IS NOT NULL GROUP BY region, year", True),
    ("SELECT x.rid, x.region, {m}.manager FROM {t} x JOIN {m} ON x.region = {m}.region WHERE x.qty = 3", True),
]


@pytest.mark.parametrize("query,pushed", QUERIES, ids=[q for q, _ in QUERIES])
def test_query_matches_spark_parquet(views, query, pushed):
    got = views.sql(query.format(t="s", m="sm"))
    want = views.sql(query.format(t="p", m="pm"))
    assert _rows(got) == _rows(want)
    if " WHERE " in query and " JOIN " not in query:
        assert _has_filter(got) != pushed, got._jdf.queryExecution().executedPlan().toString()


# -- what was pushed shows in scand's figures --------------------------------

def _metrics(server) -> dict:
    m = parse_metrics(server.metrics_text())

    def get(name, **labels):
        return m.get((name, frozenset(labels.items())), 0.0)

    return {"read_bytes": get("scand_storage_read_bytes_total", backend="local"),
            "partition_files": get("scand_pruned_total", level="partition_files"),
            "row_groups": get("scand_pruned_total", level="row_groups"),
            "rows_sent": get("scand_rows_sent_total"),
            "sent_bytes": get("scand_sent_bytes_total")}


def _delta(server, run) -> dict:
    before = _metrics(server)
    run()
    after = _metrics(server)
    return {k: after[k] - before[k] for k in before}


def test_pushed_filters_prune_in_scand(views, server):
    df = views.table("s")
    df.count()  # footers now in the server's metadata cache: both runs below read data only
    full = _delta(server, lambda: df.count())
    part = _delta(server, lambda: df.where("region = 'east' AND year = 2025").count())
    rows = _delta(server, lambda: df.where("region = 'east' AND rid < 300").count())
    assert full["partition_files"] == 0 and full["row_groups"] == 0
    assert part["partition_files"] == 10, part  # 2 of 12 files kept by their partition values
    assert part["read_bytes"] < full["read_bytes"] / 4, (part, full)
    assert rows["row_groups"] > 0, rows  # rid < 300: row groups of later rows dropped by statistics
    assert rows["rows_sent"] == 100, rows  # rid < 300 and region 'east': every third row
    assert rows["read_bytes"] < part["read_bytes"], (rows, part)


def test_columns_option_reads_fewer_bytes(views, server):
    loc = server.location
    narrow = views.read.format("scand").option("server", loc).option("paths", "ds/").option("columns", "rid,qty").load()
    assert narrow.columns == ["rid", "qty"]
    typed = views.read.format("scand").option("server", loc).option("paths", "ds/").schema("rid long, name string").load()
    wide = views.table("s")
    wide.count()
    w = _delta(server, lambda: wide.collect())
    n = _delta(server, lambda: narrow.collect())
    # The files are small enough (under the 64 KiB tail) that each is read
    # whole in one request whatever its columns, so the columns show in
    # what the server decoded and sent, not in what it read.
    assert n["sent_bytes"] < w["sent_bytes"] / 2, (n, w)
    assert _rows(typed) == _rows(views.table("p").select("rid", "name"))


# -- bad input ----------------------------------------------------------------

@pytest.mark.parametrize("option,value,named", [
    ("paths", "no/such/dir/", "no/such/dir"),
    ("columns", "rid,no_such_column", "no_such_column"),
])
def test_unknown_path_or_column_is_named(views, server, option, value, named):
    reader = views.read.format("scand").option("server", server.location).option("paths", "ds/")
    with pytest.raises(Exception) as e:
        reader.option(option, value).load().collect()
    assert named in str(e.value)


def test_unknown_column_in_a_pushed_filter_stays_with_spark(views):
    with pytest.raises(Exception) as e:
        views.sql("SELECT * FROM s WHERE no_such_column = 1").collect()
    assert "no_such_column" in str(e.value)


def test_stopped_server_fails_cleanly(views, tmp_path_factory, dataset):
    srv = _server(tmp_path_factory, dataset, "spark-stopped")
    try:
        df = views.read.format("scand").option("server", srv.location).option("paths", "ds/") \
            .option("timeout", "10").load()
    finally:
        srv.stop()
    started = time.monotonic()
    with pytest.raises(Exception) as e:
        df.count()
    assert time.monotonic() - started < 60
    assert "not reachable" in str(e.value) or "UNAVAILABLE" in str(e.value), str(e.value)[:2000]
