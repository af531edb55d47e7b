"""Fixtures of the scand Python client's tests: a real scand server.

Environment:
  SCAND_BIN  the scand binary (default: <repo>/.tools/bin/scand; build it with
             `go build -o .tools/bin/scand ./cmd/scand`). Tests that need a
             server are skipped, with that message, when it is missing.

Fixtures:
  server      session-wide `scand serve --listen 127.0.0.1:PORT --root DIR`,
              DIR = `root` (Parquet files written once with pyarrow.parquet)
  conn        a scand.Connection to it (closed after each test)
  own_server  a factory for servers a test may stop (function-scoped)
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import scand
from scand_testlib import N_ROWS, ROW_GROUP, ScandProcess, make_table, require_bin, scan_threads

# -- the dataset: see scand_testlib.make_table ------------------------------

@pytest.fixture(scope="session")
def root(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("root")
    (d / "data").mkdir()
    pq.write_table(make_table(N_ROWS), d / "data" / "a.parquet", row_group_size=ROW_GROUP)
    (d / "multi").mkdir()
    for i in range(4):
        pq.write_table(make_table(5_000, seed=i * 5_000), d / "multi" / f"part-{i}.parquet", row_group_size=1_000)
    (d / "empty").mkdir()
    pq.write_table(make_table(0), d / "empty" / "none.parquet")
    (d / "big").mkdir()
    big = pa.table({"k": pa.array(range(400_000), pa.int64()),
                    "s": pa.array([f"row-{i:08d}" for i in range(400_000)])})
    pq.write_table(big, d / "big" / "big.parquet", row_group_size=20_000)
    (d / "bad").mkdir()
    (d / "bad" / "text.parquet").write_bytes(b"not a parquet file at all\n" * 20)
    return d


# -- the server --------------------------------------------------------------

@pytest.fixture(scope="session")
def server(tmp_path_factory, root):
    logdir = tmp_path_factory.mktemp("logs")
    p = ScandProcess(require_bin(), root, logdir / "server.log")
    p.start()
    yield p
    p.stop()


@pytest.fixture
def conn(server):
    c = scand.connect(server.location)
    yield c
    c.close()


@pytest.fixture
def own_server(tmp_path_factory, root):
    """A factory: own_server(root=None) starts a server the test may stop."""
    started = []

    def start(rootdir: Path | None = None) -> ScandProcess:
        logdir = tmp_path_factory.mktemp("ownlogs")
        p = ScandProcess(require_bin(), rootdir or root, logdir / "server.log")
        p.start()
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()


@pytest.fixture(autouse=True)
def no_leaked_scan_threads():
    """Every test must leave no scan worker thread behind."""
    yield
    deadline = time.monotonic() + 5
    while scan_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    left = scan_threads()
    assert not left, f"scan worker threads still running after the test: {[t.name for t in left]}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the session server's log to failing tests."""
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and "server" in getattr(item, "fixturenames", ()):
        srv = item.funcargs.get("server") if hasattr(item, "funcargs") else None
        if srv is not None:
            rep.sections.append(("scand log (tail)", srv.log_tail()))
