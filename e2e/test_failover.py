"""Failover across replicas: three real `scand serve` processes on
127.0.0.1 sharing one --ticket-key-file; one is killed (SIGKILL) in the middle
of a scan, and the Python package and the Go client (`scand scan`) still give
exactly the table a local pyarrow read gives. Stock pyarrow.flight keeps
working by ignoring locations.

The replicas start with placement (`--peers h:p,... --advertise grpc://h:p`):
each endpoint lists its owner and runner-up, and the clients fail over between
them.

Every wait is bounded: servers start within 30 s, the CLI runs within 120 s,
pytest-timeout bounds each test.
"""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from conftest import _scand_bin
from s3lib import wait_for
from scandlib import REPO, _die_with_parent, assert_tables_equal, call_options, command, free_port

sys.path.insert(0, str(REPO / "client" / "python" / "src"))
import scand  # noqa: E402

N_FILES = 6
ROWS_PER_FILE = 60_000
ROW_GROUP = 5_000
START_TIMEOUT_S = 30
CLI_TIMEOUT_S = 120


class Replica:
    """One `scand serve` of the deployment, on a port chosen up front so
    that every replica can name every other in --peers."""

    def __init__(self, root: Path, port: int, key_file: Path, peers: list[int], log: Path):
        self.root, self.port, self.log_path = root, port, log
        self.cmd = [_scand_bin(), "serve", "--listen", f"127.0.0.1:{port}", "--root", str(root),
                    "--ticket-key-file", str(key_file), "--split-bytes", "1"]
        self.cmd += ["--peers", ",".join(f"127.0.0.1:{p}" for p in peers), "--advertise", self.location]
        self.proc: subprocess.Popen | None = None

    @property
    def location(self) -> str:
        return f"grpc://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._log = open(self.log_path, "ab")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
        self.proc = subprocess.Popen(self.cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=env, preexec_fn=_die_with_parent)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"scand exited with {self.proc.returncode}:\n{self.log_path.read_text()[-4000:]}")
            try:
                c = flight.FlightClient(self.location)
                list(c.list_actions(options=call_options(2)))
                c.close()
                return
            except (flight.FlightError, pa.ArrowException, OSError) as e:
                last = repr(e)
                time.sleep(0.1)
        raise RuntimeError(f"scand at {self.location} not ready within {START_TIMEOUT_S} s: {last}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()


@pytest.fixture(scope="module")
def data_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("failover-root")
    (root / "t").mkdir()
    for f in range(N_FILES):
        first = f * ROWS_PER_FILE
        t = pa.table({"id": pa.array(range(first, first + ROWS_PER_FILE), pa.int64()),
                      "s": pa.array([f"row-{i:09d}" for i in range(first, first + ROWS_PER_FILE)])})
        pq.write_table(t, root / "t" / f"part-{f:02d}.parquet", row_group_size=ROW_GROUP)
    return root


def expected(root: Path) -> pa.Table:
    return pa.concat_tables([pq.read_table(p) for p in sorted((root / "t").glob("*.parquet"))])


@pytest.fixture(scope="module")
def key_file(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("failover-keys") / "ticket.keys"
    p.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    p.chmod(0o600)
    return p


@pytest.fixture
def replicas(tmp_path_factory, data_root, key_file):
    """Three fresh replicas per test (a test kills one)."""
    ports = [free_port() for _ in range(3)]
    logs = tmp_path_factory.mktemp("failover-logs")
    reps = [Replica(data_root, p, key_file, ports, logs / f"r{i}.log")
            for i, p in enumerate(ports)]
    for r in reps:
        r.start()
    for r in reps:
        r.wait_ready()
    # Each replica health-checks its peers on a loop of its own: wait
    # (bounded) until a plan names all three, or placement would put
    # every endpoint on the replicas that happened to see each other first.
    everyone = {r.location for r in reps}
    assert wait_for(lambda: all({loc for locs in locations_of(plan(r)) for loc in locs} >= everyone for r in reps),
                    20), \
        "the replicas never saw each other"
    yield reps
    for r in reps:
        r.stop()


def locations_of(info: flight.FlightInfo) -> list[list[str]]:
    return [[loc.uri.decode() if isinstance(loc.uri, bytes) else str(loc.uri) for loc in ep.locations]
            for ep in info.endpoints]


def plan(rep: Replica) -> flight.FlightInfo:
    c = flight.FlightClient(rep.location)
    try:
        return c.get_flight_info(command({"paths": ["t/"]}), call_options())
    finally:
        c.close()


def victim(reps: list[Replica], info: flight.FlightInfo, planner: Replica) -> Replica:
    """The replica to kill: the owner (first location) of most endpoints,
    other than the planner; the second replica without placement."""
    owners = [locs[0] for locs in locations_of(info) if locs]
    others = [r for r in reps if r is not planner]
    if not owners:
        return others[0]
    return max(others, key=lambda r: owners.count(r.location))


def test_placement_lists_owner_and_runner_up(replicas):
    info = plan(replicas[0])
    advertised = {r.location for r in replicas}
    for locs in locations_of(info):
        assert len(locs) == 2 and locs[0] != locs[1], locs
        assert set(locs) <= advertised, (locs, advertised)


def test_stock_pyarrow_ignores_locations(replicas, data_root):
    """Any replica serves any ticket: a stock client redeems every ticket on
    the replica it planned with, or on another one."""
    info = plan(replicas[0])
    c = flight.FlightClient(replicas[1].location)
    try:
        got = pa.concat_tables([c.do_get(ep.ticket, call_options()).read_all() for ep in info.endpoints])
    finally:
        c.close()
    assert_tables_equal(expected(data_root), got)


def test_python_package_survives_a_killed_replica(replicas, data_root):
    planner = replicas[0]
    with scand.connect(planner.location) as conn:
        doomed = victim(replicas, plan(planner), planner)
        reader = conn.scan("t/", batch_rows=1_000, max_workers=3, read_ahead=1)
        batches = []
        for batch in reader:
            batches.append(batch)
            if len(batches) == 5:
                doomed.kill()
        assert doomed.proc.poll() is not None
        assert_tables_equal(expected(data_root), pa.Table.from_batches(batches, schema=reader.schema))
        assert conn.last_stats.failovers >= 1, "no endpoint moved: the killed replica served nothing?"


def test_go_client_survives_a_killed_replica(replicas, data_root, tmp_path):
    planner = replicas[0]
    doomed = victim(replicas, plan(planner), planner)
    out = tmp_path / "out.arrow"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
    cli = subprocess.Popen([_scand_bin(), "scan", "--server", planner.location, "--batch-rows", "1000",
                            "--format", "arrow", "--output", str(out), "--progress", "off", "t/"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    # Kill once the CLI has written something, or after a second at most.
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and cli.poll() is None and (not out.exists() or out.stat().st_size < 64 << 10):
        time.sleep(0.01)
    doomed.kill()
    try:
        _, err = cli.communicate(timeout=CLI_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        cli.kill()
        cli.communicate()
        pytest.fail(f"scand scan did not end within {CLI_TIMEOUT_S} s")
    assert cli.returncode == 0, err.decode()
    with ipc.open_file(out) as f:
        got = f.read_all()
    assert_tables_equal(expected(data_root), got)
