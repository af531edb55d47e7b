"""The Flight SQL front door, through ADBC's Flight SQL driver from Python
(adbc-driver-flightsql, the Go driver ADBC ships) against a real scand:
statements over a hive dataset (pq.write_to_dataset) and corpus files give
pyarrow.dataset's rows for generated projections, filters and limits;
COUNT(*), MIN and MAX give pyarrow's answers; adbc_get_objects lists the
tables and their columns; pandas.read_sql works; a syntax error is
INVALID_ARGUMENT with its position, unsupported SQL NOT_IMPLEMENTED
(gRPC UNIMPLEMENTED) saying what scand answers; with --auth tokens a
client without credentials is refused, and both a bearer token and the
Basic Handshake (user and password, as the JDBC driver sends them) work.
The Arrow Flight SQL JDBC driver (Maven Central, fetched by
scripts/install-tools.sh) runs e2e/jdbc/JdbcSmoke.java over TLS with a
token and with user and password: DatabaseMetaData's tables and columns, a
prepared query, a COUNT(*), and a refusal without credentials; it skips
only without Maven or a JDK.

SCAND_FLIGHTSQL_CASES bounds the generated statements (default 16)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

adbc_dbapi = pytest.importorskip("adbc_driver_flightsql.dbapi")
adbc_manager = pytest.importorskip("adbc_driver_manager")

from conftest import _scand_bin  # noqa: E402
from scandlib import _die_with_parent, find_testdata, free_port, normalize, table_diff  # noqa: E402

F = pc.field
CASES = int(os.environ.get("SCAND_FLIGHTSQL_CASES", "16"))


def connect(location: str, **db_kwargs):
    return adbc_dbapi.connect(location, db_kwargs=db_kwargs or None, autocommit=True)


def query(conn, sql: str) -> pa.Table:
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetch_arrow_table()


@pytest.fixture(scope="module")
def data(gen_root) -> Path:
    """fsql_trips/: write_to_dataset by year (3 partitions, 2 files each
    after a second write), id, city (with NULLs), fare, day; fsql_corpus/:
    a few corpus files."""
    d = gen_root / "fsql_trips"
    if d.exists():
        shutil.rmtree(d)
    n = 6000
    rng = random.Random(7)
    t = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "city": pa.array([rng.choice(["Paris", "Rome", None, "Oslo", "Lima"]) for _ in range(n)]),
        "fare": pa.array([round(rng.uniform(0, 100), 2) for _ in range(n)]),
        "day": pa.array([20_000 + i % 400 for i in range(n)], pa.date32()),
        "year": pa.array([2023 + i % 3 for i in range(n)], pa.int32()),
    })
    pq.write_to_dataset(t.slice(0, n // 2), d, partition_cols=["year"], row_group_size=500,
                        basename_template="a-{i}.parquet")
    pq.write_to_dataset(t.slice(n // 2), d, partition_cols=["year"], row_group_size=500,
                        basename_template="b-{i}.parquet")
    corpus = gen_root / "fsql_corpus"
    corpus.mkdir(exist_ok=True)
    src = find_testdata() / "parquet-testing"
    for name in ("alltypes_plain.parquet", "alltypes_tiny_pages.parquet", "binary.parquet"):
        if (src / name).exists():
            shutil.copy(src / name, corpus / name)
    return gen_root


@pytest.fixture(scope="module")
def conn(gen_server, data):
    c = connect(gen_server.location)
    yield c
    c.close()


def reference(root: Path, rel: str, columns=None, flt=None) -> pa.Table:
    return ds.dataset(root / rel, format="parquet", partitioning="hive").to_table(columns=columns, filter=flt)


def same_rows(expected: pa.Table, got: pa.Table, key: str | None = "id") -> str | None:
    if key and key in expected.column_names:
        expected, got = expected.sort_by(key), got.sort_by(key)
    return table_diff(expected, got)


# Conditions as SQL text and as the pyarrow expression of the same meaning.
CONDITIONS = [
    ("fare > {x}", lambda x: F("fare") > x),
    ("fare <= {x} AND city = 'Rome'", lambda x: (F("fare") <= x) & (F("city") == "Rome")),
    ("city IS NULL", lambda x: F("city").is_null()),
    ("year = 2024", lambda x: F("year") == 2024),
    ("id BETWEEN {i} AND {j}", None),
    ("city IN ('Oslo', 'Lima') OR fare < {x}", lambda x: F("city").isin(["Oslo", "Lima"]) | (F("fare") < x)),
    ("day >= DATE '2025-01-01' AND year <> 2023", lambda x: (F("day") >= pa.scalar(20089, pa.date32())) & (F("year") != 2023)),
    ("NOT (fare >= {x})", lambda x: ~(F("fare") >= x)),
]
COLUMNS = ["id", "city", "fare", "day", "year"]


def generated_cases(n: int):
    rng = random.Random(34)
    for _ in range(n):
        cols = rng.sample(COLUMNS, rng.randint(1, len(COLUMNS))) if rng.random() < 0.8 else None
        text, expr = rng.choice(CONDITIONS) if rng.random() < 0.8 else (None, None)
        x = rng.randint(1, 99)
        i = rng.randint(0, 5000)
        j = i + rng.randint(0, 800)
        if text and "{i}" in text:
            flt = (F("id") >= i) & (F("id") <= j)
        else:
            flt = expr(x) if expr else None
        limit = rng.choice([None, None, 0, 1, 17, 1000])
        yield cols, (text.format(x=x, i=i, j=j) if text else None), flt, limit


def test_generated_statements(conn, data):
    for cols, where, flt, limit in generated_cases(CASES):
        select = ", ".join(cols) if cols else "*"
        sql = f"SELECT {select} FROM fsql_trips" + (f" WHERE {where}" if where else "") + \
            (f" LIMIT {limit}" if limit is not None else "")
        got = query(conn, sql)
        want = reference(data, "fsql_trips", cols, flt)
        if limit is None:
            key = "id" if "id" in want.column_names else None
            if key is None:  # no key to sort by: compare as multisets
                want, got = want.sort_by([(c, "ascending") for c in want.column_names]), \
                    got.sort_by([(c, "ascending") for c in got.column_names])
            diff = same_rows(want, got, key)
            assert diff is None, f"{sql}: {diff}"
        else:
            assert got.num_rows == min(limit, want.num_rows), f"{sql}: {got.num_rows} rows"
            assert normalize(got).schema == normalize(want).schema, f"{sql}: {got.schema} vs {want.schema}"
            if "id" in got.column_names:
                ids = set(want.column("id").to_pylist())
                assert set(got.column("id").to_pylist()) <= ids, f"{sql}: rows outside the filter"


def test_counts_and_extremes(conn, data):
    dset = ds.dataset(data / "fsql_trips", format="parquet", partitioning="hive")
    assert query(conn, "SELECT COUNT(*) FROM fsql_trips").column(0).to_pylist() == [dset.count_rows()]
    for text, expr in CONDITIONS:
        if "{i}" in text:
            continue
        sql_cond, flt = text.format(x=40), expr(40)
        got = query(conn, f"SELECT COUNT(*) AS n, MIN(fare), MAX(city) FROM fsql_trips WHERE {sql_cond}")
        t = dset.to_table(filter=flt)
        want_min = pc.min(t.column("fare")).as_py()
        want_max = pc.max(t.column("city")).as_py()
        assert got.column_names == ["n", "min(fare)", "max(city)"]
        assert got.to_pylist() == [{"n": t.num_rows, "min(fare)": want_min, "max(city)": want_max}], sql_cond
    got = query(conn, "SELECT MIN(day), MAX(year) FROM 'fsql_trips/'")
    t = dset.to_table()
    assert got.to_pylist() == [{"min(day)": pc.min(t.column("day")).as_py(), "max(year)": pc.max(t.column("year")).as_py()}]


def test_counts_from_statistics(conn, data):
    """COUNT(*) with a condition counts row groups the statistics decide
    from their row counts and reads only the others: the same answers as
    pyarrow, also where NaN and NULL hide from the statistics. pyarrow
    filters in memory (its dataset scan prunes row groups holding NaN
    wrongly, see test_filter_property.py)."""
    trips = ds.dataset(data / "fsql_trips", format="parquet", partitioning="hive").to_table()
    for text, expr in CONDITIONS:
        if "{i}" in text:
            continue
        got = query(conn, f"SELECT COUNT(*) FROM fsql_trips WHERE {text.format(x=40)}").column(0).to_pylist()
        assert got == [trips.filter(expr(40)).num_rows], text
    for lo, hi in [(0, 5999), (500, 999), (100, 2600), (5990, 7000)]:
        got = query(conn, f"SELECT COUNT(*) FROM fsql_trips WHERE id BETWEEN {lo} AND {hi}").column(0).to_pylist()
        assert got == [trips.filter((F("id") >= lo) & (F("id") <= hi)).num_rows], (lo, hi)
    d = data / "fsql_nan"
    d.mkdir(exist_ok=True)
    pq.write_table(pa.table({"v": pa.array([1.0, float("nan"), 3.0, 5.0, 6.0, 7.0, None, 8.0, 9.0, 10.0, 11.0, 12.0])}),
                   d / "v.parquet", row_group_size=3)
    nan = pq.read_table(d / "v.parquet")
    for text, expr in [("v > 0", F("v") > 0), ("v >= 5", F("v") >= 5), ("v IS NOT NULL", F("v").is_valid()),
                       ("v <> 2", F("v") != 2), ("NOT (v < 4)", ~(F("v") < 4))]:
        got = query(conn, f"SELECT COUNT(*) FROM fsql_nan WHERE {text}").column(0).to_pylist()
        assert got == [nan.filter(expr).num_rows], text


EXTREME_COLUMNS = ["id", "fare", "day", "year", "city", "z", "ts", "flag", "dec"]


def test_extremes_equal_pyarrow(conn, data):
    """MIN and MAX alone take exact statistics where they answer (fixed-width
    columns; zeros, strings and straddling row groups are read): the same
    answers as pyarrow.compute's min and max, with and without conditions.
    fsql_ext/ adds float zeros of both signs, NULL-only row groups,
    timestamps, booleans and decimals in row groups of 50."""
    d = data / "fsql_ext"
    d.mkdir(exist_ok=True)
    rng = random.Random(35)
    for part in range(2):
        n = 400
        pq.write_table(pa.table({
            "id": pa.array(range(part * n, (part + 1) * n), pa.int64()),
            "fare": pa.array([None if 100 <= i < 150 else rng.choice([0.0, -0.0, rng.uniform(-50, 50)])
                              for i in range(n)], pa.float64()),
            "day": pa.array([19_000 + rng.randint(0, 900) for _ in range(n)], pa.date32()),
            "year": pa.array([2020 + part] * n, pa.int32()),
            "city": pa.array([rng.choice(["Paris", "Rome", None, "Oslo"]) for _ in range(n)]),
            "z": pa.array([None] * n, pa.int64()),
            "ts": pa.array([1_700_000_000_000_000 + rng.randint(0, 10**12) for _ in range(n)], pa.timestamp("us")),
            "flag": pa.array([i % 7 == 0 for i in range(n)]),
            "dec": pa.array([rng.randint(-10**6, 10**6) / 100 for _ in range(n)]).cast(pa.decimal128(12, 2)),
        }), d / f"part-{part}.parquet", row_group_size=50)
    t = ds.dataset(d, format="parquet").to_table()
    conds = [(None, None), ("id >= 100", F("id") >= 100), ("id < 237", F("id") < 237),
             ("year = 2021", F("year") == 2021), ("fare > 0", F("fare") > 0), ("city = 'Rome'", F("city") == "Rome"),
             ("id BETWEEN 50 AND 649", (F("id") >= 50) & (F("id") <= 649))]
    rng = random.Random(36)
    for _ in range(max(CASES // 2, 4)):
        cond, expr = rng.choice(conds)
        cols = rng.sample(EXTREME_COLUMNS, rng.randint(1, 3))
        sel = ", ".join(f"{k}({c})" for c in cols for k in ("MIN", "MAX"))
        sql = f"SELECT {sel} FROM fsql_ext" + (f" WHERE {cond}" if cond else "")
        got = query(conn, sql).to_pylist()[0]
        rows = t.filter(expr) if expr is not None else t
        for c in cols:
            mm = pc.min_max(rows.column(c))
            assert got[f"min({c})"] == mm["min"].as_py(), sql
            assert got[f"max({c})"] == mm["max"].as_py(), sql


def test_delta_table(conn, data):
    """A Delta table named in FROM (as a table or a quoted location) is read
    by its log, as deltalake reads it, not as the Parquet files under it
    (an overwrite leaves the old files in place)."""
    deltalake = pytest.importorskip("deltalake")
    path = data / "fsql_delta"
    if path.exists():
        shutil.rmtree(path)
    t = pa.table({"id": pa.array(range(100), pa.int64()), "p": pa.array(["a", "b"] * 50)})
    deltalake.write_deltalake(path, t, partition_by=["p"])
    deltalake.write_deltalake(path, t.filter((F("id") < 30) & (F("p") == "a")), partition_by=["p"], mode="overwrite",
                              predicate="p = 'a'")
    want = deltalake.DeltaTable(path).to_pyarrow_table()
    for source in ("fsql_delta", "'fsql_delta/'", "'fsql_delta'"):
        got = query(conn, f"SELECT id, p FROM {source}")
        diff = same_rows(want.select(["id", "p"]), got)
        assert diff is None, f"{source}: {diff}"
        assert query(conn, f"SELECT COUNT(*) FROM {source} WHERE p = 'a'").column(0).to_pylist() == \
            [want.filter(F("p") == "a").num_rows], source
    assert query(conn, "SELECT MAX(id) FROM fsql_delta WHERE p = 'a'").column(0).to_pylist() == \
        [pc.max(want.filter(F("p") == "a").column("id")).as_py()]


def test_corpus_files(conn, data):
    for path in sorted((data / "fsql_corpus").glob("*.parquet")):
        rel = f"fsql_corpus/{path.name}"
        want = pq.read_table(path)
        got = query(conn, f"SELECT * FROM '{rel}'")
        diff = table_diff(want, got)
        assert diff is None, f"{rel}: {diff}"
        assert query(conn, f"SELECT COUNT(*) FROM '{rel}'").column(0).to_pylist() == [want.num_rows]
        first = want.column_names[0]
        got = query(conn, f'SELECT "{first}" FROM \'{rel}\' LIMIT 3')
        assert got.num_rows == min(3, want.num_rows)
        assert table_diff(want.select([first]).slice(0, 3), got) is None, rel


def test_get_objects_lists_tables(conn):
    objs = conn.adbc_get_objects(depth="all", catalog_filter="scand", table_name_filter="fsql_%").read_all().to_pylist()
    assert [c["catalog_name"] for c in objs] == ["scand"]
    schemas = objs[0]["catalog_db_schemas"]
    assert [s["db_schema_name"] for s in schemas] == ["root"]
    tables = {t["table_name"]: t for t in schemas[0]["db_schema_tables"]}
    assert {"fsql_trips", "fsql_corpus"} <= set(tables)
    cols = [c["column_name"] for c in tables["fsql_trips"]["table_columns"]]
    assert cols == ["id", "city", "fare", "day", "year"]
    assert conn.adbc_get_table_types() == ["TABLE"]
    schema = conn.adbc_get_table_schema("fsql_trips")
    assert schema.names == cols


def test_pandas_read_sql(conn, data):
    pd = pytest.importorskip("pandas")
    df = pd.read_sql("SELECT id, city FROM fsql_trips WHERE fare < 10 AND year = 2025", conn)
    want = reference(data, "fsql_trips", ["id", "city"], (F("fare") < 10) & (F("year") == 2025)).to_pandas()
    assert sorted(df["id"].tolist()) == sorted(want["id"].tolist())


def test_refusals(conn):
    AdbcStatusCode = adbc_manager.AdbcStatusCode
    for sql, code, words in [
        ("SELECT id FROM fsql_trips WHERE id >", AdbcStatusCode.INVALID_ARGUMENT, ["at position 36"]),
        ("SELEKT * FROM fsql_trips", AdbcStatusCode.INVALID_ARGUMENT, ["at position 0", "expected SELECT"]),
        ("SELECT city, COUNT(*) FROM fsql_trips GROUP BY city", AdbcStatusCode.NOT_IMPLEMENTED,
         ["GROUP BY", "joins, grouping, sorting and expressions belong in a query engine"]),
        ("SELECT * FROM fsql_trips a JOIN fsql_corpus b ON a.id = b.id", AdbcStatusCode.NOT_IMPLEMENTED, ["join"]),
        ("SELECT * FROM fsql_trips ORDER BY fare", AdbcStatusCode.NOT_IMPLEMENTED, ["ORDER BY"]),
        ("SELECT fare * 2 FROM fsql_trips", AdbcStatusCode.NOT_IMPLEMENTED, ["expression"]),
        ("SELECT nope FROM fsql_trips", AdbcStatusCode.INVALID_ARGUMENT, ["nope"]),
        ("SELECT * FROM fsql_missing", AdbcStatusCode.NOT_FOUND, ["fsql_missing"]),
    ]:
        with pytest.raises(adbc_manager.Error) as ei:
            query(conn, sql)
        assert ei.value.status_code == code, f"{sql}: {ei.value}"
        for w in words:
            assert w in str(ei.value), f"{sql}: {ei.value}"
    # Parameters: in the text, refused at prepare; bound to a statement
    # without any, refused at execute.
    for sql in ("SELECT id FROM fsql_trips WHERE id = ?", "SELECT id FROM fsql_trips WHERE id = 3"):
        with conn.cursor() as cur, pytest.raises(adbc_manager.Error) as ei:
            cur.execute(sql, parameters=(3,))
        assert ei.value.status_code == AdbcStatusCode.INVALID_ARGUMENT and "parameter" in str(ei.value), f"{sql}: {ei.value}"


# The Basic Handshake's password, bcrypt-hashed (cost 4) for the
# identities file.
PASSWORD = "flightsql-e2e-pw"
PASSWORD_BCRYPT = "$2a$04$0DUyLhelgzVdV7HseETxD.sienKsGFkQKBprdpY3Z7aceaE7Gu60W"
TOKEN = "fsql-token-" + "t" * 40


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory, data):
    """scand --auth tokens on loopback (plaintext is allowed there): alice
    has a token and a password and reads fsql_trips/ only."""
    d = tmp_path_factory.mktemp("fsqlauth")
    ids = {"identities": [{"name": "alice", "token_sha256": [hashlib.sha256(TOKEN.encode()).hexdigest()],
                           "password_bcrypt": PASSWORD_BCRYPT, "roots": ["fsql_trips/"]}]}
    (d / "ids.json").write_text(json.dumps(ids))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
    log = open(d / "scand.log", "ab")
    proc = subprocess.Popen([_scand_bin(), "serve", "--listen", f"127.0.0.1:{port}", "--root", str(data),
                             "--auth", "tokens", "--identities", str(d / "ids.json")],
                            stdout=log, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent)
    location = f"grpc://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            c = connect(location, **{"adbc.flight.sql.authorization_header": f"Bearer {TOKEN}"})
            query(c, "SELECT COUNT(*) FROM fsql_trips")
            c.close()
            break
        except Exception:  # noqa: BLE001
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("scand did not start:\n" + (d / "scand.log").read_text())
            time.sleep(0.2)
    yield location
    proc.terminate()
    proc.wait(10)
    log.close()


def test_authentication(auth_server, data):
    want = ds.dataset(data / "fsql_trips", format="parquet", partitioning="hive").count_rows()
    c = connect(auth_server)
    with pytest.raises(adbc_manager.Error) as ei:
        query(c, "SELECT COUNT(*) FROM fsql_trips")
    assert ei.value.status_code == adbc_manager.AdbcStatusCode.UNAUTHENTICATED, str(ei.value)
    c.close()
    c = connect(auth_server, **{"adbc.flight.sql.authorization_header": f"Bearer {TOKEN}"})
    assert query(c, "SELECT COUNT(*) FROM fsql_trips").column(0).to_pylist() == [want]
    # Outside alice's roots: refused, naming the path.
    with pytest.raises(adbc_manager.Error) as ei:
        query(c, "SELECT * FROM 'fsql_corpus/binary.parquet'")
    assert ei.value.status_code == adbc_manager.AdbcStatusCode.UNAUTHORIZED, str(ei.value)
    tables = c.adbc_get_objects(depth="tables").read_all().to_pylist()
    names = [t["table_name"] for s in tables[0]["catalog_db_schemas"] for t in s["db_schema_tables"]]
    assert names == ["fsql_trips"]
    c.close()
    # The Basic Handshake (user and password): the driver trades them for
    # a bearer token.
    c = connect(auth_server, username="alice", password=PASSWORD)
    assert query(c, "SELECT COUNT(*) FROM fsql_trips WHERE year = 2023").column(0).to_pylist() == [want // 3]
    c.close()
    with pytest.raises(adbc_manager.Error) as ei:  # the Handshake at connect refuses it
        connect(auth_server, username="alice", password="wrong")
    assert ei.value.status_code == adbc_manager.AdbcStatusCode.UNAUTHENTICATED, str(ei.value)


# --------------------------------------------------------------------------
# JDBC: the Arrow Flight SQL JDBC driver (Maven Central) in a small Java
# program (e2e/jdbc/JdbcSmoke.java), over TLS with a token and with user and
# password, and refused without credentials.
# --------------------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent
JDBC_VERSION = "18.3.0"  # as scripts/install-tools.sh pins it


def jdbc_jar() -> Path:
    """The driver jar: $SCAND_FLIGHT_SQL_JDBC, or .tools/jdbc (what
    scripts/install-tools.sh fetches; fetched here the same way if
    missing). Skips only without Maven or a JDK."""
    env = os.environ.get("SCAND_FLIGHT_SQL_JDBC")
    if env:
        return Path(env)
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("needs a JDK (java, javac) for the JDBC driver")
    jar = REPO / ".tools" / "jdbc" / "flight-sql-jdbc-driver.jar"
    if not jar.exists():
        if shutil.which("mvn") is None:
            pytest.skip("needs Maven to fetch the Flight SQL JDBC driver (scripts/install-tools.sh)")
        subprocess.run(["mvn", "-q", "-B", "dependency:copy",
                        f"-Dartifact=org.apache.arrow:flight-sql-jdbc-driver:{JDBC_VERSION}",
                        f"-DoutputDirectory={jar.parent}", "-Dmdep.stripVersion=true"],
                       check=True, capture_output=True, timeout=300)
    return jar


def jdbc_classes(jar: Path) -> Path:
    """JdbcSmoke compiled once per version of its source, kept in .tools."""
    src = REPO / "e2e" / "jdbc" / "JdbcSmoke.java"
    digest = hashlib.sha256(src.read_bytes()).hexdigest()[:12]
    out = REPO / ".tools" / "jdbc" / f"classes-{digest}"
    if not (out / "JdbcSmoke.class").exists():
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["javac", "-d", str(tmp), "-cp", str(jar), str(src)], check=True, capture_output=True, timeout=120)
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
    return out


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory, data):
    """scand with TLS and --auth tokens: alice has a token and a password
    and reads fsql_trips/ only; a PKCS12 trust store of the CA for Java."""
    if shutil.which("openssl") is None or shutil.which("keytool") is None:
        pytest.skip("needs openssl and keytool to make certificates")
    from test_security import make_ca, make_cert  # noqa: PLC0415

    d = tmp_path_factory.mktemp("fsqltls")
    make_ca(d)
    make_cert(d, "server")
    subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", str(d / "ca.pem"),
                    "-keystore", str(d / "trust.p12"), "-storetype", "PKCS12", "-storepass", "changeit"],
                   check=True, capture_output=True, timeout=60)
    ids = {"identities": [{"name": "alice", "token_sha256": [hashlib.sha256(TOKEN.encode()).hexdigest()],
                           "password_bcrypt": PASSWORD_BCRYPT, "roots": ["fsql_trips/"]}]}
    (d / "ids.json").write_text(json.dumps(ids))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
    log = open(d / "scand.log", "ab")
    proc = subprocess.Popen([_scand_bin(), "serve", "--listen", f"127.0.0.1:{port}", "--root", str(data),
                             "--tls-cert", str(d / "server.pem"), "--tls-key", str(d / "server.key"),
                             "--auth", "tokens", "--identities", str(d / "ids.json")],
                            stdout=log, stderr=subprocess.STDOUT, env=env, preexec_fn=_die_with_parent)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("scand did not start:\n" + (d / "scand.log").read_text())
            time.sleep(0.2)
    yield {"port": port, "trust": d / "trust.p12"}
    proc.terminate()
    proc.wait(10)
    log.close()


def test_jdbc(tls_server, data):
    jar = jdbc_jar()
    classes = jdbc_classes(jar)
    base = (f"jdbc:arrow-flight-sql://localhost:{tls_server['port']}/?useEncryption=true"
            f"&useSystemTrustStore=false&trustStore={tls_server['trust']}&trustStorePassword=changeit")
    urls = [f"{base}&token={TOKEN}", f"{base}&user=alice&password={PASSWORD}", base]
    sql = "SELECT id, city FROM fsql_trips WHERE id < 6"
    # --add-opens: Arrow's Java memory needs java.nio's internals on JDK 17+.
    res = subprocess.run(["java", "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", f"{classes}:{jar}", "JdbcSmoke",
                          sql, *urls], capture_output=True, text=True, timeout=120)
    sections = [s.strip().splitlines() for s in res.stdout.split("== ")[1:]]
    assert len(sections) == 3, res.stdout + res.stderr
    want = reference(data, "fsql_trips", ["id", "city"], F("id") < 6).to_pylist()
    want_rows = sorted(f"{r['id']}\t{r['city'] if r['city'] is not None else 'NULL'}" for r in want)
    count = ds.dataset(data / "fsql_trips", format="parquet", partitioning="hive").count_rows()
    for lines in sections[:2]:  # token, then user and password
        assert lines[1] == "tables: scand.root.fsql_trips", lines
        assert lines[2] == "columns: id:BIGINT,city:VARCHAR,fare:DOUBLE,day:DATE,year:INTEGER", lines
        assert lines[3] == "id\tcity", lines
        assert sorted(lines[4:-1]) == want_rows, lines
        assert lines[-1] == f"count: {count}", lines
    assert sections[2][1].startswith("error:") and "authorization" in sections[2][1].lower(), sections[2]
    assert res.returncode == 3, res.stdout + res.stderr
