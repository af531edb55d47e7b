"""Limits that hold under attack, against real servers with a small memory
budget (--io-memory 256MiB) and otherwise default settings:

  - a footer nested past pyarrow's limit (100 schema levels), or a column
    nested past the 64 levels Arrow IPC carries, is UNIMPLEMENTED naming
    the limit, fast; one within both reads as pyarrow reads it;
  - planning floods (many concurrent GetFlightInfo over a folder of many
    files, or over a footer declaring 100,000 columns or 200,000 row
    groups) keep the server's
    peak RSS (VmHWM) within --io-memory + 128 MiB; plans wait, or are
    refused (RESOURCE_EXHAUSTED), or run out of --plan-timeout, and a small
    scan from another client still answers meanwhile;
  - connections that send the HTTP/2 preface and SETTINGS (or half a
    HEADERS frame) and then nothing are closed within
    --conn-first-call-timeout, while a legitimate scan works; past
    --max-conns-per-peer a connection is refused with a GOAWAY naming it.

Each memory case runs on a fresh server, since VmHWM is the process's peak.
Sizes (environment):
  SCAND_E2E_PLAN_FILES  files in the planning flood's folder (1000)
  SCAND_E2E_PLAN_COLS   their columns (40): 1,000 files of 40 columns cost
                        a plan as much as 10,000 of 2-4, in a tenth of the time
  SCAND_E2E_PLANS       concurrent plans of that folder (40)
  SCAND_E2E_WIDE_COLS   columns of the wide footer (100000)
  SCAND_E2E_ROW_GROUPS  row groups of the many-row-group footer (200000)
  SCAND_E2E_IDLE_CONNS  idle raw connections (200)
The figures are appended to <repo>/.tools/limits-report.txt.
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

import craftlib
from conftest import _scand_bin, _servers
from s3lib import S3ScandServer, wait_for
from scandlib import command, grpc_code, grpc_message, scan

BUDGET_MIB = 256
SLACK_MIB = 128
PLAN_FILES = int(os.environ.get("SCAND_E2E_PLAN_FILES", "1000"))
PLAN_COLS = int(os.environ.get("SCAND_E2E_PLAN_COLS", "40"))
PLANS = int(os.environ.get("SCAND_E2E_PLANS", "40"))
WIDE_COLS = int(os.environ.get("SCAND_E2E_WIDE_COLS", "100000"))
IDLE_CONNS = int(os.environ.get("SCAND_E2E_IDLE_CONNS", "200"))
ROW_GROUPS = int(os.environ.get("SCAND_E2E_ROW_GROUPS", "200000"))
FIRST_CALL_TIMEOUT_S = 10  # --conn-first-call-timeout's default
MAX_CONNS_PER_PEER = 256   # --max-conns-per-peer's default

REPORT = Path(__file__).resolve().parents[1] / ".tools" / "limits-report.txt"

pytestmark = pytest.mark.timeout(300)


def report(line: str) -> None:
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    with open(REPORT, "a") as f:
        f.write(line + "\n")


@pytest.fixture(scope="module")
def limits_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("limitsroot")
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64())}), root / "small.parquet")
    craftlib.write(root / "deep-6000.parquet", craftlib.deep_parquet(6000))
    craftlib.write(root / "deep-98.parquet", craftlib.deep_parquet(98))
    # Written by pyarrow, one row: 63 structs around a leaf (the 64 levels
    # Arrow IPC carries) and one more, in Parquet and ORC.
    for n in (63, 64):
        t = pa.int64()
        for i in range(n):
            t = pa.struct([pa.field(f"g{i}", t)])
        table = pa.table({"v": pa.array([None], type=t), "id": pa.array([1], pa.int64())})
        pq.write_table(table, root / f"structs-{n}.parquet")
        orc.write_table(table, str(root / f"structs-{n}.orc"))
    craftlib.write(root / "wide.parquet", craftlib.wide_parquet(WIDE_COLS))
    craftlib.write(root / "row-groups.parquet", craftlib.many_row_groups(ROW_GROUPS))
    one = root / "one.parquet"
    pq.write_table(pa.table({f"c{i:03d}": pa.array(range(10), pa.int64()) for i in range(PLAN_COLS)}), one)
    data = one.read_bytes()
    many = root / "many"
    many.mkdir()
    for i in range(PLAN_FILES):
        (many / f"f{i:05d}.parquet").write_bytes(data)
    return root


class Server:
    """A fresh scand (--io-memory 256MiB) and what it used."""

    def __init__(self, root: Path, logdir: Path, name: str, args: list[str] = ()):
        self.srv = S3ScandServer(_scand_bin(), root, logdir / f"{name}.log", name, ["--io-memory", f"{BUDGET_MIB}MiB", *args], {})

    def __enter__(self):
        self.srv.start()
        _servers.append(self.srv)
        return self

    def __exit__(self, *exc):
        self.srv.stop()
        _servers.remove(self.srv)

    def rss_peak_mib(self) -> float:
        with open(f"/proc/{self.srv.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def open_fds(self) -> int:
        return len(os.listdir(f"/proc/{self.srv.proc.pid}/fd"))

    def small_scan_s(self) -> float:
        c = self.srv.client()
        try:
            start = time.monotonic()
            res = scan(c, {"paths": ["small.parquet"], "limit": 10}, timeout=60)
            assert res.table.num_rows == 10
            return time.monotonic() - start
        finally:
            c.close()


def plan_concurrently(srv: S3ScandServer, path: str, n: int, timeout: float = 200) -> list[tuple[str, str, float]]:
    """n GetFlightInfo of path at once, each from its own client: (code,
    message, seconds) each."""
    out: list[tuple[str, str, float]] = []
    lock = threading.Lock()

    def one():
        c = srv.client()
        start = time.monotonic()
        try:
            c.get_flight_info(command({"paths": [path]}), flight.FlightCallOptions(timeout=timeout))
            r = ("OK", "", time.monotonic() - start)
        except Exception as e:  # noqa: BLE001 - the status is the result
            r = (grpc_code(e) or repr(e), grpc_message(e), time.monotonic() - start)
        finally:
            c.close()
        with lock:
            out.append(r)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_schema_nested_past_the_limit(limits_root, tmp_path):
    with Server(limits_root, tmp_path, "deep") as s:
        c = s.srv.client()
        start = time.monotonic()
        with pytest.raises((flight.FlightError, pa.ArrowException)) as exc:
            c.get_flight_info(command({"paths": ["deep-6000.parquet"]}), flight.FlightCallOptions(timeout=60))
        took = time.monotonic() - start
        assert grpc_code(exc.value) == "UNIMPLEMENTED", grpc_message(exc.value)
        assert "100 levels" in grpc_message(exc.value)
        assert took < 5, f"refusing the deep footer took {took:.1f} s"
        # Past the 64 levels Arrow IPC (Flight) carries: refused at planning
        # (pyarrow reads them, but no Flight stream could carry them; they
        # failed every DoGet as INTERNAL).
        for name in ("deep-98.parquet", "structs-64.parquet", "structs-64.orc"):
            with pytest.raises((flight.FlightError, pa.ArrowException)) as exc:
                c.get_flight_info(command({"paths": [name]}), flight.FlightCallOptions(timeout=60))
            assert grpc_code(exc.value) == "UNIMPLEMENTED", f"{name}: {grpc_message(exc.value)}"
            assert "64 levels" in grpc_message(exc.value), grpc_message(exc.value)
        # Within both limits: what pyarrow reads.
        for name, read in (("structs-63.parquet", pq.read_table), ("structs-63.orc", orc.read_table)):
            got = scan(c, {"paths": [name]}, timeout=60)
            want = read(str(limits_root / name))
            assert got.table.num_rows == want.num_rows == 1, name
            assert got.table.column("id").to_pylist() == [1], name
        c.close()
        peak = s.rss_peak_mib()
        report(f"deep nesting (6,000 groups): UNIMPLEMENTED in {took * 1000:.0f} ms, peak RSS {peak:.0f} MiB (budget {BUDGET_MIB} MiB)")
        assert peak <= BUDGET_MIB + SLACK_MIB


def test_planning_flood_of_many_files(limits_root, tmp_path):
    with Server(limits_root, tmp_path, "planflood") as s:
        latency: list[float] = []
        failed: list[str] = []
        done = threading.Event()

        def small_scans():
            while not done.is_set():
                try:
                    latency.append(s.small_scan_s())
                except Exception as e:  # noqa: BLE001 - recorded, asserted below
                    failed.append(f"{grpc_code(e)}: {grpc_message(e)}")
                time.sleep(0.5)

        t = threading.Thread(target=small_scans)
        start = time.monotonic()
        t.start()
        try:
            results = plan_concurrently(s.srv, "many/", PLANS)
        finally:
            done.set()
            t.join()
        wall = time.monotonic() - start
        codes = Counter(r[0] for r in results)
        peak = s.rss_peak_mib()
        report(f"planning flood: {PLANS} x GetFlightInfo of {PLAN_FILES} files of {PLAN_COLS} columns in {wall:.0f} s: {dict(codes)}, "
               f"slowest {max(r[2] for r in results):.0f} s; small scans meanwhile: {len(latency)} ok, {len(failed)} failed, slowest "
               f"{max(latency) if latency else 0:.2f} s; peak RSS {peak:.0f} MiB (budget {BUDGET_MIB} + {SLACK_MIB} MiB)")
        assert set(codes) <= {"OK", "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED"}, results
        assert codes["OK"] >= 1, results
        for code, msg, _ in results:
            if code == "RESOURCE_EXHAUSTED":
                assert "--io-plan-memory" in msg, msg
        assert latency, f"no small scan finished during the flood: {failed[:3]}"
        assert not failed, f"small scans failed beside the flood: {failed[:3]}"
        assert peak <= BUDGET_MIB + SLACK_MIB, f"peak RSS {peak:.0f} MiB > {BUDGET_MIB} + {SLACK_MIB} MiB"


@pytest.mark.parametrize("name,n,what", [("wide.parquet", 8, f"{WIDE_COLS:,} columns"),
                                         ("row-groups.parquet", 4, f"{ROW_GROUPS:,} row groups")])
def test_planning_flood_of_a_wide_footer(limits_root, tmp_path, name, n, what):
    with Server(limits_root, tmp_path, "wideflood") as s:
        results = plan_concurrently(s.srv, name, n)
        codes = Counter(r[0] for r in results)
        peak = s.rss_peak_mib()
        report(f"{name}: {n} x GetFlightInfo of {what} "
               f"({(limits_root / name).stat().st_size / 1e6:.1f} MB): {dict(codes)}, "
               f"slowest {max(r[2] for r in results):.1f} s; peak RSS {peak:.0f} MiB (budget {BUDGET_MIB} + {SLACK_MIB} MiB)")
        assert set(codes) <= {"OK", "RESOURCE_EXHAUSTED"}, results
        for code, msg, _ in results:
            if code == "RESOURCE_EXHAUSTED":
                assert "--io-plan-memory" in msg, msg
        assert peak <= BUDGET_MIB + SLACK_MIB, f"peak RSS {peak:.0f} MiB > {BUDGET_MIB} + {SLACK_MIB} MiB"
        assert s.small_scan_s() < 5


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = struct.pack(">I", 0)[1:] + bytes([4, 0]) + struct.pack(">I", 0)  # empty SETTINGS
HALF_HEADERS = bytes([0, 0, 100, 1, 4, 0, 0, 0, 1]) + b"\0" * 10  # announces 100 bytes, sends 10


def raw_conn(port: int, half: bool) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(PREFACE + SETTINGS + (HALF_HEADERS if half else b""))
    return s


def closed(s: socket.socket) -> bool:
    """Whether the server closed s (reading what it sent)."""
    s.setblocking(False)
    try:
        while True:
            if not s.recv(65536):
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_idle_connections_are_closed(limits_root, tmp_path):
    with Server(limits_root, tmp_path, "idle") as s:
        port = s.srv.port
        fds = s.open_fds()
        start = time.monotonic()
        conns = [raw_conn(port, half=i % 2 == 1) for i in range(IDLE_CONNS)]
        try:
            # A legitimate scan works while they are open.
            took = s.small_scan_s()
            assert took < 5, f"a small scan took {took:.1f} s beside {IDLE_CONNS} idle connections"
            all_closed = wait_for(lambda: all(closed(c) for c in conns), FIRST_CALL_TIMEOUT_S + 15, 0.5)
            waited = time.monotonic() - start
            open_left = sum(not closed(c) for c in conns)
        finally:
            for c in conns:
                c.close()
        report(f"idle connections: {IDLE_CONNS} (half of them half a HEADERS frame) closed by the server within "
               f"{waited:.1f} s (--conn-first-call-timeout {FIRST_CALL_TIMEOUT_S} s), {open_left} left; small scan "
               f"meanwhile {took * 1000:.0f} ms")
        assert all_closed, f"{open_left} of {IDLE_CONNS} idle connections still open after {waited:.0f} s"
        assert wait_for(lambda: s.open_fds() <= fds + 4, 10), f"descriptors {s.open_fds()} (before: {fds})"
        assert s.srv.metric("scand_connections_no_call_total") >= IDLE_CONNS


def test_connections_per_address_are_capped(limits_root, tmp_path):
    with Server(limits_root, tmp_path, "conncap") as s:
        port = s.srv.port
        conns = [raw_conn(port, half=False) for _ in range(MAX_CONNS_PER_PEER)]
        try:
            over = socket.create_connection(("127.0.0.1", port), timeout=5)
            data = b""
            over.settimeout(5)
            try:
                while chunk := over.recv(65536):
                    data += chunk
            except OSError:
                pass
            over.close()
            assert b"--max-conns-per-peer" in data, f"the refused connection got {data!r}, want a GOAWAY naming the limit"
        finally:
            for c in conns:
                c.close()
        # Once they are gone, a client connects again.
        assert wait_for(lambda: s.srv.metric("scand_connections_open") <= 1, 10)
        assert s.small_scan_s() < 5
        assert s.srv.metric("scand_connections_refused_total") >= 1
        report(f"connections per address: {MAX_CONNS_PER_PEER} held, the next refused with a GOAWAY naming --max-conns-per-peer")
