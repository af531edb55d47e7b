"""Fixtures for the scand end-to-end tests.

Environment:
  SCAND_BIN       the scand binary (default: <repo>/.tools/bin/scand)
  SCAND_TESTDATA  the shared test corpus (default: <repo>/../shared/testdata)

Two session-scoped servers run the real binary
(`scand serve --listen 127.0.0.1:PORT --root DIR`):

  gen_server     rooted at an empty tmp dir; tests write the Parquet files they
                 need there with pyarrow (fixture `gen_root`), each test in a
                 folder of its own.
  corpus_server  rooted at a tmp copy of the corpus, laid out as
                   <root>/parquet-testing/   copy of $SCAND_TESTDATA/parquet-testing
                                             (without large_string_map.brotli.parquet,
                                             which decompresses to > 2 GiB and is never read)
                   <root>/arrow-testing/     the real Parquet files of
                                             $SCAND_TESTDATA/arrow-testing/parquet
                   <root>/fuzzing/           copy of $SCAND_TESTDATA/arrow-testing/parquet/fuzzing
                 Copies, not symlinks: the server refuses paths leaving its root.

  spark_tables   Iceberg and Delta tables Spark wrote under gen_root/spark,
                 with Spark's reads of them (e2e/spark_tables.py, run once per
                 session in .venv-spark: Spark starts once for both formats).

When a test fails, the scand output written while it ran is attached to the
report. At the end of the session the corpus results are printed as a table
and saved to <repo>/.tools/corpus-report.txt.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scandlib import CORPUS_RESULTS, NEVER_READ, REPO, ScandServer, find_testdata

REPORT_PATH = REPO / ".tools" / "corpus-report.txt"

_servers: list[ScandServer] = []


def _scand_bin() -> str:
    b = os.environ.get("SCAND_BIN") or str(REPO / ".tools" / "bin" / "scand")
    if not os.access(b, os.X_OK):
        pytest.exit(f"scand binary not found or not executable: {b} (build it with "
                    f"`go build -o .tools/bin/scand ./cmd/scand` or set SCAND_BIN)", returncode=2)
    return b


@pytest.fixture(scope="session")
def testdata() -> Path:
    d = find_testdata()
    if not (d / "parquet-testing").is_dir():
        pytest.exit(f"test corpus not found at {d} (set SCAND_TESTDATA)", returncode=2)
    return d


def _start(tmp_path_factory, root: Path, name: str) -> ScandServer:
    logdir = tmp_path_factory.mktemp("logs")
    srv = ScandServer(_scand_bin(), root, logdir / f"{name}.log", name)
    srv.start()
    _servers.append(srv)
    return srv


@pytest.fixture(scope="session")
def gen_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("genroot")


@pytest.fixture(scope="session")
def gen_server(tmp_path_factory, gen_root):
    srv = _start(tmp_path_factory, gen_root, "gen")
    yield srv
    srv.stop()
    _servers.remove(srv)


SPARK_PYTHON = Path(os.environ.get("SCAND_SPARK_PYTHON") or REPO / ".venv-spark" / "bin" / "python")
SPARK_JARS = REPO / ".tools" / "spark"
ICEBERG_SPARK_JAR = Path(os.environ.get("SCAND_ICEBERG_SPARK_JAR") or SPARK_JARS / "iceberg-spark-runtime.jar")
SPARK_WRITER_TIMEOUT_S = int(os.environ.get("SCAND_SPARK_TIMEOUT_S", "400"))


@pytest.fixture(scope="session")
def spark_tables(gen_root, tmp_path_factory) -> dict:
    """{"iceberg": {name: ...}, "delta": {name: ...}}: each table's location
    relative to gen_root, and "reads", the folder of Spark's reads."""
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("Java or Maven not found: Spark cannot write the tables")
    jars = [ICEBERG_SPARK_JAR, SPARK_JARS / "delta-spark.jar", SPARK_JARS / "delta-storage.jar"]
    missing = [str(p) for p in (SPARK_PYTHON, *jars) if not p.exists()]
    assert not missing, f"{missing} not found: run scripts/install-tools.sh"
    warehouse = gen_root / "spark" / "wh"
    warehouse.mkdir(parents=True)
    out = tmp_path_factory.mktemp("spark-reads")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_"))}
    proc = subprocess.run([str(SPARK_PYTHON), str(REPO / "e2e" / "spark_tables.py"), str(warehouse), str(out),
                           ",".join(str(j) for j in jars)], env=env, capture_output=True, text=True,
                          timeout=SPARK_WRITER_TIMEOUT_S)
    assert proc.returncode == 0, f"Spark writer failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    tables = json.loads((out / "tables.json").read_text())
    for fmt in tables.values():
        for t in fmt.values():
            t["location"] = str(Path(t["location"]).relative_to(gen_root))
            t["reads"] = out
    return tables


@pytest.fixture(scope="session")
def corpus_root(tmp_path_factory, testdata) -> Path:
    root = tmp_path_factory.mktemp("corpusroot")
    shutil.copytree(testdata / "parquet-testing", root / "parquet-testing", symlinks=False,
                    ignore=shutil.ignore_patterns(*NEVER_READ))
    at = testdata / "arrow-testing" / "parquet"
    shutil.copytree(at, root / "arrow-testing", symlinks=False, ignore=shutil.ignore_patterns("fuzzing"))
    shutil.copytree(at / "fuzzing", root / "fuzzing", symlinks=False)
    # The shared corpus may be read-only (it is in CI); keep the copy
    # writable so that pytest can clean old tmp dirs up.
    for dirpath, _, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)
    return root


@pytest.fixture(scope="session")
def corpus_server(tmp_path_factory, corpus_root):
    srv = _start(tmp_path_factory, corpus_root, "corpus")
    yield srv
    srv.stop()
    _servers.remove(srv)


@pytest.fixture
def gen_client(gen_server):
    c = gen_server.client()
    yield c
    c.close()


@pytest.fixture
def corpus_client(corpus_server):
    c = corpus_server.client()
    yield c
    c.close()


@pytest.fixture
def gdir(gen_root, request) -> Path:
    """A fresh folder under the gen server's root, named after the test;
    returns its absolute path. Its root-relative name is gdir.name."""
    name = request.node.name.replace("[", "_").replace("]", "").replace("/", "_")
    d = gen_root / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


# --------------------------------------------------------------------------
# Attach the server output to failing tests.
# --------------------------------------------------------------------------

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    item._scand_log_offsets = {id(s): s.log_size() for s in _servers}
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        offsets = getattr(item, "_scand_log_offsets", {})
        for s in _servers:
            text = s.log_tail(since=offsets.get(id(s), 0))
            status = "running" if s.alive() else f"EXITED with status {s.proc.returncode if s.proc else None}"
            rep.sections.append((f"scand ({s.name}, {status}) output during this test", text or "(nothing)"))


# --------------------------------------------------------------------------
# Corpus report
# --------------------------------------------------------------------------

def corpus_report() -> str:
    if not CORPUS_RESULTS:
        return ""
    rows = sorted(CORPUS_RESULTS.items(), key=lambda kv: (kv[1][0], kv[0]))
    w = max(len(k) for k in CORPUS_RESULTS)
    out = ["scand corpus report (file | pyarrow locally | scand | verdict)", ""]
    section = None
    for path, (sec, local, remote, verdict) in rows:
        if sec != section:
            section = sec
            out.append(f"## {sec}")
        out.append(f"{path:<{w}} | {local} | {remote} | {verdict}")
    counts: dict[str, int] = {}
    for _, (_, _, _, verdict) in rows:
        key = verdict.split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    out.append("")
    out.append("totals: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return "\n".join(out) + "\n"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    text = corpus_report()
    if not text:
        return
    try:
        REPORT_PATH.parent.mkdir(parents=True, exist_ok=True)
        REPORT_PATH.write_text(text)
        where = f"(saved to {REPORT_PATH})"
    except OSError as e:
        where = f"(could not save to {REPORT_PATH}: {e})"
    terminalreporter.section("scand corpus report")
    terminalreporter.write(text)
    terminalreporter.write_line(where)


# --------------------------------------------------------------------------
# S3 (test_s3.py): versitygw, toxiproxy, a bucket mirrored on local disk,
# and scand servers with --s3-* flags. Skipped when the tools are missing
# (scripts/install-tools.sh installs them; see s3lib.py).
# --------------------------------------------------------------------------

from s3lib import (INSTALL_HINT, S3_BUCKET, S3ScandServer, Toxiproxy, VersityGW, find_tool, s3_filesystem,  # noqa: E402
                   s3_server_args, s3_server_env, upload)


@pytest.fixture(scope="session")
def versitygw(tmp_path_factory):
    binary = find_tool("versitygw", "SCAND_VERSITYGW")
    if binary is None:
        pytest.skip(f"versitygw not found: {INSTALL_HINT}, or set SCAND_VERSITYGW or SCAND_TOOLS")
    gw = VersityGW(binary, tmp_path_factory.mktemp("versitygw"))
    gw.start()
    yield gw
    gw.stop()


@pytest.fixture(scope="session")
def toxiproxy(tmp_path_factory, versitygw):
    binary = find_tool("server", "SCAND_TOXIPROXY")
    if binary is None:
        pytest.skip(f"toxiproxy (its `server` binary) not found: {INSTALL_HINT}, or set SCAND_TOXIPROXY or SCAND_TOOLS")
    t = Toxiproxy(binary, tmp_path_factory.mktemp("toxiproxy"))
    t.start()
    yield t
    t.stop()


class S3Mirror:
    """A bucket on versitygw mirrored in a local directory: put() writes the
    same bytes to <root>/<key> and s3://<bucket>/<key>, so a scand serving
    both can compare a local path with its s3:// twin."""

    def __init__(self, fs, bucket: str, root: Path):
        self.fs = fs
        self.bucket = bucket
        self.root = root

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def put(self, key: str, src: Path | bytes, local: bool = True) -> None:
        data = src if isinstance(src, bytes) else Path(src).read_bytes()
        if local:
            dst = self.root / key
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
        upload(self.fs, data, f"{self.bucket}/{key}")


@pytest.fixture(scope="session")
def s3_mirror(tmp_path_factory, versitygw) -> S3Mirror:
    fs = s3_filesystem(versitygw.endpoint)
    fs.create_dir(S3_BUCKET)
    return S3Mirror(fs, S3_BUCKET, tmp_path_factory.mktemp("s3mirror"))


@pytest.fixture(scope="session")
def s3_servers(tmp_path_factory, s3_mirror):
    """Starts scand servers rooted at the mirror and reading S3 at an
    endpoint: start(name, endpoint, *flags, secret=...). All stop at the end
    of the session, or earlier with stop()."""
    started: list[S3ScandServer] = []
    logdir = tmp_path_factory.mktemp("s3logs")

    class Factory:
        @staticmethod
        def start(name: str, endpoint: str, *flags: str, secret: str | None = None) -> S3ScandServer:
            env = s3_server_env() if secret is None else s3_server_env(secret)
            srv = S3ScandServer(_scand_bin(), s3_mirror.root, logdir / f"{name}.log", name,
                                [*s3_server_args(endpoint), *flags], env)
            srv.start()
            started.append(srv)
            _servers.append(srv)
            return srv

        @staticmethod
        def stop(srv: S3ScandServer) -> None:
            srv.stop()
            if srv in _servers:
                _servers.remove(srv)

    yield Factory
    for srv in started:
        Factory.stop(srv)


@pytest.fixture(scope="session")
def s3_server(s3_servers, versitygw) -> S3ScandServer:
    """scand with default IO settings, straight to versitygw."""
    return s3_servers.start("s3", versitygw.endpoint)


@pytest.fixture
def s3_client(s3_server):
    c = s3_server.client()
    yield c
    c.close()
