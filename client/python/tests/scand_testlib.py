"""Helpers of the client tests: the scand process, table comparison."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import List

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import scand

REPO = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """preexec_fn: SIGKILL scand when the test process dies."""
    try:
        import ctypes
        import signal
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001
        pass


class ScandProcess:
    """`scand serve --listen 127.0.0.1:PORT --root DIR`."""

    def __init__(self, binary: str, root: Path, log_path: Path, args: tuple = ()):
        self.binary = binary
        self.args = list(args)  # more `scand serve` flags
        self.root = Path(root)
        self.log_path = Path(log_path)
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self._log = None

    @property
    def location(self) -> str:
        return f"grpc://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        last = ""
        for _ in range(3):  # a port picked by binding 0 may be taken again
            self.port = free_port()
            self._log = open(self.log_path, "ab")
            cmd = [self.binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--root", str(self.root), *self.args]
            env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}
            self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env, preexec_fn=_die_with_parent)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    last = f"exited with status {self.proc.returncode}"
                    break
                try:
                    scand.connect(self.location, timeout=2).close()
                    return
                except scand.ConnectionFailed as e:
                    last = str(e)
                    time.sleep(0.05)
            self.stop()
        raise RuntimeError(f"could not start scand: {last}\n--- log ---\n{self.log_tail()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, n: int = 20000) -> str:
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return ""
        return data[-n:].decode("utf-8", "replace")


def scan_threads() -> List[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("scand-scan-") and t.is_alive()]


def _strip_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([_strip_field(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_large_list(t):
        return pa.large_list(_strip_field(t.value_field))
    if pa.types.is_list(t):
        return pa.list_(_strip_field(t.value_field))
    return t


def _strip_field(f: pa.Field) -> pa.Field:
    return pa.field(f.name, _strip_type(f.type), f.nullable)


def normalize(t: pa.Table) -> pa.Table:
    """Drops schema and field metadata (recursively): scand does not carry
    them over."""
    schema = pa.schema([_strip_field(f) for f in t.schema])
    cols = [pa.chunked_array([c.view(f.type) for c in col.chunks], type=f.type) for col, f in zip(t.columns, schema)]
    return pa.Table.from_arrays(cols, schema=schema)


def assert_tables_equal(expected: pa.Table, got: pa.Table) -> None:
    e, g = normalize(expected), normalize(got)
    assert e.schema.names == g.schema.names, f"columns: expected {e.schema.names}, got {g.schema.names}"
    for fe, fg in zip(e.schema, g.schema):
        assert fe.type == fg.type, f"column {fe.name}: expected {fe.type}, got {fg.type}"
    assert e.num_rows == g.num_rows, f"rows: expected {e.num_rows}, got {g.num_rows}"
    for name in e.column_names:
        ce, cg = e.column(name).combine_chunks(), g.column(name).combine_chunks()
        if not ce.equals(cg):
            for i, (a, b) in enumerate(zip(ce.to_pylist(), cg.to_pylist())):
                assert a == b, f"column {name!r} row {i}: expected {a!r}, got {b!r}"


# -- the dataset -----------------------------------------------------------

N_ROWS = 30_000
ROW_GROUP = 3_000


def make_table(n: int, seed: int = 0) -> pa.Table:
    ids = pa.array(range(seed, seed + n), pa.int64())
    names = pa.array([f"n{(i * 7 + seed) % 13}" for i in range(n)], pa.string())
    values = pa.array([None if i % 11 == 0 else (i * 0.5 + seed) for i in range(n)], pa.float64())
    ts = pa.array([1_767_225_600_000_000 + i * 1_000_000 for i in range(n)], pa.timestamp("us", tz="UTC"))
    nested = pa.StructArray.from_arrays(
        [pa.array([i % 100 for i in range(n)], pa.int32()), pa.array([f"y{i % 5}" for i in range(n)])],
        names=["x", "y"])
    tags = pa.array([None if i % 9 == 0 else [f"t{i % 3}"] * (i % 4) for i in range(n)], pa.list_(pa.string()))
    flag = pa.array([i % 2 == 0 for i in range(n)], pa.bool_())
    return pa.table({"id": ids, "name": names, "value": values, "ts": ts, "nested": nested, "tags": tags,
                     "flag": flag})


def local(root: Path, *rel: str) -> pa.Table:
    """What pyarrow reads locally from root-relative files, concatenated."""
    return pa.concat_tables([pq.read_table(root / r) for r in rel])


def scand_bin() -> str:
    return os.environ.get("SCAND_BIN") or str(REPO / ".tools" / "bin" / "scand")


def require_bin() -> str:
    b = scand_bin()
    if not os.access(b, os.X_OK):
        pytest.skip(f"scand binary not found or not executable at {b}: build it with "
                    f"`go build -o .tools/bin/scand ./cmd/scand` (from the repository root) or set SCAND_BIN")
    return b


class BreakingProxy:
    """A TCP proxy to 127.0.0.1:target_port that cuts every connection, and
    refuses new ones, once it has passed `budget` bytes from the server: a
    replica that dies in the middle of its streams, at a point the test
    controls (flow-control windows would otherwise let a small stream
    arrive whole before a kill)."""

    def __init__(self, target_port: int, budget: int):
        self.target_port = target_port
        self.budget = budget
        self.broken = threading.Event()
        self._lis = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._lis.bind(("127.0.0.1", 0))
        self._lis.listen(16)
        self.port = self._lis.getsockname()[1]
        self._socks: List[socket.socket] = []
        self._lock = threading.Lock()
        self._sent = 0
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    @property
    def location(self) -> str:
        return f"grpc://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                cli, _ = self._lis.accept()
            except OSError:
                return
            if self.broken.is_set():
                cli.close()
                continue
            try:
                srv = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                cli.close()
                continue
            with self._lock:
                self._socks += [cli, srv]
            threading.Thread(target=self._pipe, args=(cli, srv, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(srv, cli, True), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, counted: bool) -> None:
        try:
            while not self.broken.is_set():
                data = src.recv(65536)
                if not data:
                    break
                if counted:
                    with self._lock:
                        self._sent += len(data)
                        over = self._sent >= self.budget
                    if over:
                        self.broken.set()
                        break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            if self.broken.is_set():
                self._cut()

    def _cut(self) -> None:
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.broken.set()
        self._lis.close()
        self._cut()
