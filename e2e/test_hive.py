"""Hive partitions: files below key=value directories get a column per key,
typed as pyarrow.dataset(dir, partitioning="hive") infers it (int32 when
every value is an integer that fits, else string; URL-decoded;
__HIVE_DEFAULT_PARTITION__ is NULL). Partition columns can be projected and
filtered, and a filter on them prunes whole files before their footers are
read: PlanStats.files_pruned_by_partition counts them, no endpoint reads
them, and the server's storage metrics show no request for them.

Datasets come from pq.write_to_dataset(partition_cols=["year", "month"]) and
from directories made by hand. Every result is compared with
pyarrow.dataset's for the same directory and predicate; rows carry a row id
to compare them whatever the order of the files."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from conftest import _scand_bin, _servers
from filterlib import expr_scan, plan_stats, sql_scan
from s3lib import S3ScandServer
from scandlib import CLEAN_DATA_ERROR_CODES, ScanError, call_options, command, normalize_schema, scan, table_diff

F = pc.field


def hive(local: Path, filter=None, columns=None) -> pa.Table:
    """pyarrow.dataset's result for the directory, sorted by row id
    (filtered in memory: see filterlib.reference)."""
    t = ds.dataset(local, format="parquet", partitioning="hive").to_table()
    if filter is not None:
        t = t.filter(filter)
    if columns is not None:
        t = t.select(columns)
    return t.sort_by("rid") if "rid" in t.column_names else t


def by_rid(t: pa.Table) -> pa.Table:
    return t.sort_by("rid") if "rid" in t.column_names else t


def assert_same(expected: pa.Table, got: pa.Table, what: str) -> None:
    diff = table_diff(expected, by_rid(got))
    assert diff is None, f"{what}: {diff}"


@pytest.fixture
def trips(gdir) -> Path:
    """write_to_dataset with year/month partitions: 3 years x 4 months, 12
    files, 50 rows each; the files hold id, rid, fare, city."""
    n = 600
    t = pa.table({
        "rid": pa.array(range(n), pa.int64()),
        "fare": pa.array([float(i % 37) for i in range(n)]),
        "city": pa.array([["Paris", "Rome", None][i % 3] for i in range(n)]),
        "year": pa.array([2024 + (i // 200) for i in range(n)], pa.int64()),
        "month": pa.array([1 + (i // 50) % 4 for i in range(n)], pa.int64()),
    })
    root = gdir / "trips"
    pq.write_to_dataset(t, root, partition_cols=["year", "month"], basename_template="part-{i}.parquet")
    return root


def rel(gdir, p: Path) -> str:
    return str(p.relative_to(gdir.parent)) + "/"


def test_schema_is_pyarrows(gen_client, gdir, trips):
    got = gen_client.get_schema(command({"paths": [rel(gdir, trips)]}), options=call_options()).schema
    want = ds.dataset(trips, format="parquet", partitioning="hive").schema
    assert normalize_schema(got) == normalize_schema(want), f"\nscand:   {got}\npyarrow: {want}"
    assert got.names[-2:] == ["year", "month"]  # file columns, then partition columns
    assert got.field("year").type == pa.int32()


def test_whole_scan_equals_pyarrow(gen_client, gdir, trips):
    assert_same(hive(trips), scan(gen_client, {"paths": [rel(gdir, trips)]}).table, "all columns")


@pytest.mark.parametrize("columns", [["month"], ["year", "rid"], ["rid", "month", "fare", "year"]])
def test_partition_columns_project(gen_client, gdir, trips, columns):
    res = scan(gen_client, {"paths": [rel(gdir, trips)], "columns": columns})
    assert res.table.column_names == columns
    if "rid" in columns:
        assert_same(hive(trips, columns=columns), res.table, f"columns {columns}")
    else:  # no row id to line the rows up: compare the multisets of values
        want = hive(trips, columns=columns).to_pylist()
        assert sorted(map(str, res.table.to_pylist())) == sorted(map(str, want))


PARTITION_FILTERS = [
    ("year = 2025", F("year") == 2025, 4),
    ("month IN (1, 3)", F("month").isin(pa.array([1, 3], pa.int32())), 6),
    ("year > 2024 AND month <= 2", (F("year") > 2024) & (F("month") <= 2), 4),
    ("year = 2026 OR month = 4", (F("year") == 2026) | (F("month") == 4), 6),
    ("NOT (year = 2024)", ~(F("year") == 2024), 8),
    ("year = 2030", F("year") == 2030, 0),
    ("year IS NULL", F("year").is_null(), 0),
]
PARTITION_FILTER_IDS = ["eq", "in", "and", "or", "not", "none", "null"]


def check_pruned(res, expr, kept: int, what: str) -> None:
    ps = plan_stats(res)
    assert ps["files"] == 12 and ps["files_pruned_by_partition"] == 12 - kept, f"{what}: {ps}"
    read = {m["path"] for m in res.metadata}
    assert len(read) == kept and all(kept_path(p, expr) for p in read), f"{what}: streams read {read}"


@pytest.mark.parametrize("sql,expr,kept", PARTITION_FILTERS, ids=PARTITION_FILTER_IDS)
def test_partition_filters_equal_pyarrow_and_prune_files(gen_client, gdir, trips, sql, expr, kept):
    # split_bytes 1: an endpoint per file, so that the streams' figures
    # name every file read (small files otherwise share an endpoint).
    res = sql_scan(gen_client, [rel(gdir, trips)], sql, split_bytes=1)
    assert_same(hive(trips, filter=expr), res.table, sql)
    check_pruned(res, expr, kept, sql)
    packed = sql_scan(gen_client, [rel(gdir, trips)], sql)
    assert_same(hive(trips, filter=expr), packed.table, f"{sql}, files packed")


@pytest.mark.parametrize("sql,expr,kept", PARTITION_FILTERS, ids=PARTITION_FILTER_IDS)
def test_partition_filters_substrait(gen_client, gdir, trips, sql, expr, kept):
    res = expr_scan(gen_client, [rel(gdir, trips)], expr, split_bytes=1)  # see above
    assert_same(hive(trips, filter=expr), res.table, str(expr))
    check_pruned(res, expr, kept, str(expr))


def kept_path(path: str, expr: pc.Expression) -> bool:
    """Whether a file's partition values satisfy expr (pyarrow decides)."""
    values = {k: int(v) for k, v in (part.split("=", 1) for part in path.split("/") if "=" in part)}
    t = pa.table({k: pa.array([v], pa.int32()) for k, v in values.items()})
    return t.filter(expr).num_rows == 1


MIXED_FILTERS = [("year = 2025 AND fare > 30", (F("year") == 2025) & (F("fare") > 30)),
                 ("month = 2 OR city = 'Rome'", (F("month") == 2) | (F("city") == "Rome")),
                 ("city IS NULL AND year != 2026", F("city").is_null() & (F("year") != 2026))]


@pytest.mark.parametrize("sql,expr", MIXED_FILTERS, ids=["and", "or", "null"])
def test_partition_and_file_column_filters(gen_client, gdir, trips, sql, expr):
    paths = [rel(gdir, trips)]
    assert_same(hive(trips, filter=expr), sql_scan(gen_client, paths, sql).table, sql)
    res = sql_scan(gen_client, paths, sql, columns=["rid"])
    assert res.table.column_names == ["rid"]


@pytest.mark.parametrize("sql,expr", MIXED_FILTERS, ids=["and", "or", "null"])
def test_partition_and_file_column_filters_substrait(gen_client, gdir, trips, sql, expr):
    assert_same(hive(trips, filter=expr), expr_scan(gen_client, [rel(gdir, trips)], expr).table, str(expr))


def test_pruned_files_are_never_opened(gen_client, gdir, trips):
    """A file that is not Parquet at all, in a partition the filter prunes:
    the scan succeeds, so its footer was never read (without the filter the
    scan fails on it)."""
    bad = trips / "year=1999" / "month=1"
    bad.mkdir(parents=True)
    (bad / "part-0.parquet").write_bytes(b"not a parquet file\n" * 100)
    paths = [rel(gdir, trips)]
    res = sql_scan(gen_client, paths, "year = 2025")
    assert plan_stats(res)["files_pruned_by_partition"] == 9, plan_stats(res)
    with pytest.raises(ScanError) as ei:
        scan(gen_client, {"paths": paths})
    assert ei.value.code in CLEAN_DATA_ERROR_CODES, ei.value


@pytest.fixture
def metered(gen_root, tmp_path):
    """Fresh servers on the gen root with --metrics-listen (cold caches)."""
    started = []

    def start(name: str) -> S3ScandServer:
        srv = S3ScandServer(_scand_bin(), gen_root, tmp_path / f"{name}.log", name, [], {})
        srv.start()
        _servers.append(srv)
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()
        _servers.remove(srv)


def storage_requests(srv) -> dict[str, int]:
    return {op: int(srv.metric("scand_storage_requests_total", backend="local", op=op)) for op in ("open", "read")}


def counted(srv, req: dict) -> tuple[dict, pa.Table]:
    before = storage_requests(srv)
    c = srv.client()
    try:
        t = scan(c, req).table
    finally:
        c.close()
    after = storage_requests(srv)
    return {op: after[op] - before[op] for op in after}, t


def test_pruned_files_cost_no_storage_request(metered, gdir, trips):
    """A scan filtered on year = 2025 sends storage exactly the requests of
    an unfiltered scan of the 4 kept files named one by one (both on cold
    servers): the 8 pruned files cost none."""
    kept = sorted(str(p.relative_to(gdir.parent)) for p in trips.glob("year=2025/*/*.parquet"))
    assert len(kept) == 4
    filtered, t1 = counted(metered("pruning"), {"paths": [rel(gdir, trips)], "filter": "year = 2025",
                                                "columns": ["rid", "fare"]})
    direct, t2 = counted(metered("direct"), {"paths": kept, "columns": ["rid", "fare"]})
    assert filtered == direct, f"filtered scan {filtered}, the kept files alone {direct}"
    assert filtered["open"] >= 4, filtered  # each kept file at least once
    assert_same(by_rid(t2), t1, "the same rows")


# ----------------------------------------------------------------------------
# Directories made by hand: URL-encoding, spaces, NULL partitions, values
# that look like integers (or nearly).
# ----------------------------------------------------------------------------

def hand_made(root: Path, dirs: list[str]) -> Path:
    """One file of two rows in each directory (rids 2i, 2i+1)."""
    for i, d in enumerate(dirs):
        p = root / d
        p.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"rid": pa.array([2 * i, 2 * i + 1], pa.int64()), "v": [f"{d}-a", f"{d}-b"]}),
                       p / "data.parquet")
    return root


HAND_MADE = {
    "strings": ["city=New%20York", "city=a b", "city=__HIVE_DEFAULT_PARTITION__", "city=%41", "city=a%2Fb",
                "city=Z%C3%BCrich"],
    "ints": ["code=007", "code=12", "code=__HIVE_DEFAULT_PARTITION__", "code=2147483647"],
    "too_big_for_int32": ["code=12345678901", "code=1"],
    "signed": ["code=-5", "code=+5"],  # pyarrow infers string here
    "decimal_looking": ["code=1.5", "code=2"],
    "two_keys": ["a=1/b=x", "a=1/b=y", "a=2/b=x", "a=__HIVE_DEFAULT_PARTITION__/b=z"],
    "empty_value": ["k=/", "k=x"],
    # A key repeated in one path reads its outermost value; every value counts for the type.
    "repeated_key": ["p=1/p=2", "p=3"],
    "repeated_key_typed": ["p=1/p=abc", "p=2"],
    # An empty key is a column named "".
    "empty_key": ["=novalue", "=x"],
}


@pytest.mark.parametrize("name", list(HAND_MADE))
def test_hand_made_partitions_equal_pyarrow(gen_client, gdir, name):
    root = hand_made(gdir / name, HAND_MADE[name])
    paths = [rel(gdir, root)]
    got_schema = gen_client.get_schema(command({"paths": paths}), options=call_options()).schema
    want_schema = ds.dataset(root, format="parquet", partitioning="hive").schema
    assert normalize_schema(got_schema) == normalize_schema(want_schema), f"\nscand:   {got_schema}\npyarrow: {want_schema}"
    assert_same(hive(root), scan(gen_client, {"paths": paths}).table, name)


@pytest.mark.parametrize("sql,expr", [  # (ids without "=": the test's folder must not look like a partition)
    ("city = 'New York'", F("city") == "New York"),
    ("city = 'a b' OR city = 'A'", (F("city") == "a b") | (F("city") == "A")),
    ("city IS NULL", F("city").is_null()),
    ("city IS NOT NULL AND v LIKE '%-a'", F("city").is_valid() & pc.match_like(F("v"), "%-a")),
    ("city = 'a/b'", F("city") == "a/b"),
    ("city = 'Zürich'", F("city") == "Zürich"),
    ("city > 'M'", F("city") > "M"),
    ("city NOT IN ('A', 'a b')", ~F("city").isin(["A", "a b"]) & F("city").is_valid()),
], ids=["space", "or", "null", "not-null-like", "slash", "utf8", "gt", "not-in"])
def test_filters_on_string_partitions(gen_client, gdir, sql, expr):
    root = hand_made(gdir / "strings", HAND_MADE["strings"])
    res = sql_scan(gen_client, [rel(gdir, root)], sql, split_bytes=1)  # an endpoint per file: figures name each
    assert_same(hive(root, filter=expr), res.table, sql)
    ps, read = plan_stats(res), {m["path"] for m in res.metadata}
    assert ps["files"] == 6, ps
    if "v " not in sql:  # on partition columns alone: every file is pruned or read
        assert ps["files_pruned_by_partition"] == 6 - len(read), (ps, read)


def test_null_partition_with_ints(gen_client, gdir):
    root = hand_made(gdir / "ints", HAND_MADE["ints"])
    paths = [rel(gdir, root)]
    for sql, expr in [("code = 7", F("code") == 7), ("code IS NULL", F("code").is_null()),
                      ("code > 10", F("code") > 10), ("code NOT IN (7)", ~F("code").isin([7]) & F("code").is_valid()),
                      ("code = 2147483647", F("code") == 2147483647)]:
        res = sql_scan(gen_client, paths, sql)
        assert_same(hive(root, filter=expr), res.table, sql)


def test_null_partition_not_in_substrait(gen_client, gdir):
    """pyarrow's NOT IN keeps the NULL partition (SQL's drops it, above)."""
    root = hand_made(gdir / "ints", HAND_MADE["ints"])
    res = expr_scan(gen_client, [rel(gdir, root)], ~F("code").isin(pa.array([7], pa.int32())))
    assert_same(hive(root, filter=~F("code").isin(pa.array([7], pa.int32()))), res.table, "Substrait NOT IN")
    assert None in res.table.column("code").to_pylist()
