"""Helpers shared by the scand end-to-end tests.

Everything here talks to a real scand process over Arrow Flight (pyarrow's
client) and compares what it returns with pyarrow.parquet reading the same
file locally.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.flight as flight

REPO = Path(__file__).resolve().parents[1]

# Corpus files that are never copied nor read, with the reason.
NEVER_READ = {
    "large_string_map.brotli.parquet": "decompresses to more than 2 GiB; never read",
}


def find_testdata() -> Path:
    """$SCAND_TESTDATA, or <repo>/../shared/testdata."""
    return Path(os.environ.get("SCAND_TESTDATA") or (REPO.parent / "shared" / "testdata")).resolve()


# Every client call gets a deadline, so a hung server fails a test instead of
# blocking the suite.
CALL_TIMEOUT_S = 60.0

# Filled by test_corpus.py, printed and saved by conftest at the end of the
# session: root-relative path -> (section, pyarrow locally, scand, verdict).
CORPUS_RESULTS: dict[str, tuple[str, str, str, str]] = {}


def call_options(timeout: float = CALL_TIMEOUT_S) -> flight.FlightCallOptions:
    return flight.FlightCallOptions(timeout=timeout)


# --------------------------------------------------------------------------
# gRPC status codes as pyarrow reports them.
#
# pyarrow (Arrow C++ Flight) turns a gRPC status into an exception class and a
# message prefix. The class alone is ambiguous (ArrowInvalid covers
# INVALID_ARGUMENT, RESOURCE_EXHAUSTED, FAILED_PRECONDITION and OUT_OF_RANGE;
# FlightInternalError covers INTERNAL, ABORTED and DATA_LOSS), but the prefix
# is unique. Observed with pyarrow 26.0.1 against an arrow-go server returning
# each code in turn.
# --------------------------------------------------------------------------
_PREFIX_TO_CODE = [
    ("Flight cancelled call", "CANCELLED"),
    ("Flight RPC failed", "UNKNOWN"),
    ("Flight returned invalid argument error", "INVALID_ARGUMENT"),
    ("Flight returned timeout error", "DEADLINE_EXCEEDED"),
    ("Flight returned not found error", "NOT_FOUND"),
    ("Flight returned already exists error", "ALREADY_EXISTS"),
    ("Flight returned unauthorized error", "PERMISSION_DENIED"),
    ("gRPC returned resource exhausted error", "RESOURCE_EXHAUSTED"),
    ("gRPC returned precondition failed error", "FAILED_PRECONDITION"),
    ("gRPC returned aborted error", "ABORTED"),
    ("gRPC returned out-of-range error", "OUT_OF_RANGE"),
    ("Flight returned unimplemented error", "UNIMPLEMENTED"),
    ("Flight returned internal error", "INTERNAL"),
    ("Flight returned unavailable error", "UNAVAILABLE"),
    ("gRPC returned data loss error", "DATA_LOSS"),
    ("Flight returned unauthenticated error", "UNAUTHENTICATED"),
]

# Codes a server may answer for a file whose bytes it cannot decode: corrupt
# (DATA_LOSS), not a valid file of the format (INVALID_ARGUMENT), or a valid
# file using a feature the reader lacks (UNIMPLEMENTED: codec, encryption).
CLEAN_DATA_ERROR_CODES = frozenset({"DATA_LOSS", "INVALID_ARGUMENT", "UNIMPLEMENTED"})


def grpc_code(exc: BaseException) -> str | None:
    """The gRPC status code name behind a pyarrow Flight exception, or None
    when the exception does not come from a gRPC status."""
    if isinstance(exc, ScanError):
        return exc.code
    text = str(exc)
    for prefix, code in _PREFIX_TO_CODE:
        if prefix in text:
            return code
    return None


def grpc_message(exc: BaseException) -> str:
    """The server's own message: the part after 'with message: ', without
    the 'gRPC client debug context' pyarrow appends."""
    text = str(exc)
    marker = "with message: "
    i = text.find(marker)
    if i >= 0:
        text = text[i + len(marker):]
    j = text.find(". gRPC client debug context:")
    if j >= 0:
        text = text[:j]
    return text


@dataclass
class ScanError(Exception):
    stage: str  # "get_flight_info", "do_get", ...
    code: str | None
    message: str
    exc: BaseException

    def __str__(self) -> str:
        return f"{self.stage}: {self.code}: {self.message}"


# --------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------

def command(req: dict[str, Any] | str | bytes) -> flight.FlightDescriptor:
    """A Flight descriptor whose command is a ScanRequest as JSON (dict), or
    the given raw bytes/str."""
    if isinstance(req, dict):
        req = json.dumps(req)
    return flight.FlightDescriptor.for_command(req)


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def scan_request_proto(paths: Iterable[str] = (), columns: Iterable[str] = (), limit: int = 0,
                       batch_rows: int = 0, split_bytes: int = 0) -> bytes:
    """Hand-encoded binary protobuf ScanRequest (proto/scand/v1/scan.proto),
    so the tests need no protobuf package."""
    out = bytearray()
    for tag, values in ((1, paths), (2, columns)):
        for v in values:
            b = v.encode()
            out += _varint(tag << 3 | 2) + _varint(len(b)) + b
    for tag, v in ((3, limit), (4, batch_rows), (6, split_bytes)):
        if v:
            out += _varint(tag << 3 | 0) + _varint(v)
    return bytes(out)


@dataclass
class ScanResult:
    table: pa.Table
    info: flight.FlightInfo
    # One dict per endpoint: the JSON app_metadata of the stream's last
    # message that carried any (None when the stream had none).
    metadata: list[dict | None] = field(default_factory=list)
    # Rows of every record batch received, per endpoint.
    batch_rows: list[list[int]] = field(default_factory=list)


def read_stream(reader: flight.FlightStreamReader) -> tuple[pa.Table, dict | None, list[int], list[bytes]]:
    batches = []
    all_meta: list[bytes] = []
    while True:
        try:
            chunk = reader.read_chunk()
        except StopIteration:
            break
        if chunk.data is not None:
            batches.append(chunk.data)
        if chunk.app_metadata is not None:
            all_meta.append(chunk.app_metadata.to_pybytes())
    last = json.loads(all_meta[-1]) if all_meta else None
    table = pa.Table.from_batches(batches, schema=reader.schema)
    return table, last, [b.num_rows for b in batches], all_meta


def scan(client: flight.FlightClient, desc: flight.FlightDescriptor | dict | str | bytes,
         timeout: float = CALL_TIMEOUT_S) -> ScanResult:
    """Plans a scan with GetFlightInfo, reads every endpoint in order with
    DoGet, and concatenates the streams. Raises ScanError (with the gRPC code)
    from whichever call fails."""
    if not isinstance(desc, flight.FlightDescriptor):
        desc = command(desc)
    try:
        info = client.get_flight_info(desc, options=call_options(timeout))
    except (flight.FlightError, pa.ArrowException) as e:
        raise ScanError("get_flight_info", grpc_code(e), grpc_message(e), e) from e
    tables, metas, rows = [], [], []
    for i, ep in enumerate(info.endpoints):
        try:
            reader = client.do_get(ep.ticket, options=call_options(timeout))
            t, meta, br, _ = read_stream(reader)
        except (flight.FlightError, pa.ArrowException) as e:
            raise ScanError(f"do_get(endpoint {i})", grpc_code(e), grpc_message(e), e) from e
        tables.append(t)
        metas.append(meta)
        rows.append(br)
    if tables:
        table = pa.concat_tables(tables)
    else:
        table = info.schema.empty_table()
    return ScanResult(table=table, info=info, metadata=metas, batch_rows=rows)


def scan_error(client: flight.FlightClient, desc) -> ScanError:
    """Runs a scan that must fail; returns the error. Fails if it succeeds."""
    try:
        res = scan(client, desc)
    except ScanError as e:
        return e
    raise AssertionError(f"scan unexpectedly succeeded: {res.table.num_rows} rows, schema {res.table.schema}")


def expect_error(client, desc, codes: str | Iterable[str], *must_contain: str) -> ScanError:
    """Scan must fail with one of the given gRPC codes and a message that
    contains each of must_contain (case-sensitive)."""
    if isinstance(codes, str):
        codes = {codes}
    codes = set(codes)
    err = scan_error(client, desc)
    assert err.code in codes, f"expected gRPC {sorted(codes)}, got {err.code} at {err.stage}: {err.exc!r}"
    for s in must_contain:
        assert s in err.message, f"error message does not mention {s!r}: {err.message!r}"
    return err


# --------------------------------------------------------------------------
# Comparing tables
# --------------------------------------------------------------------------

def _strip_type(t: pa.DataType) -> pa.DataType:
    if isinstance(t, pa.ExtensionType):
        return _strip_type(t.storage_type)
    if pa.types.is_struct(t):
        return pa.struct([_strip_field(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_strip_field(t.key_field), _strip_field(t.item_field), keys_sorted=t.keys_sorted)
    if pa.types.is_large_list(t):
        return pa.large_list(_strip_field(t.value_field))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_strip_field(t.value_field), t.list_size)
    if pa.types.is_list(t):
        return pa.list_(_strip_field(t.value_field))
    if pa.types.is_dictionary(t):
        return pa.dictionary(t.index_type, _strip_type(t.value_type), t.ordered)
    return t


def _strip_field(f: pa.Field) -> pa.Field:
    return pa.field(f.name, _strip_type(f.type), f.nullable)


def normalize_schema(s: pa.Schema) -> pa.Schema:
    return pa.schema([_strip_field(f) for f in s])


def normalize(t: pa.Table) -> pa.Table:
    """Drops schema and field metadata (recursively) and unwraps extension
    types, which carry writer-specific annotations, not values."""
    schema = normalize_schema(t.schema)
    cols = []
    for col, f in zip(t.columns, schema):
        chunks = [c.storage if isinstance(c, pa.ExtensionArray) else c for c in col.chunks]
        cols.append(pa.chunked_array([c.view(f.type) if c.type != f.type else c for c in chunks], type=f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def table_diff(expected: pa.Table, got: pa.Table) -> str | None:
    """None when the tables are equal after normalize(); otherwise a short
    description of the first difference."""
    e, g = normalize(expected), normalize(got)
    if e.schema != g.schema:
        if e.schema.names != g.schema.names:
            return f"column names differ: expected {e.schema.names}, got {g.schema.names}"
        for fe, fg in zip(e.schema, g.schema):
            if fe != fg:
                return f"column {fe.name!r}: expected field {fe}, got {fg}"
        return f"schemas differ:\nexpected {e.schema}\ngot {g.schema}"
    if e.num_rows != g.num_rows:
        return f"row count: expected {e.num_rows}, got {g.num_rows}"
    if e.equals(g):
        return None
    for name in e.column_names:
        ce, cg = e.column(name).combine_chunks(), g.column(name).combine_chunks()
        if ce.equals(cg):
            continue
        # Arrow's equality never holds for NaN; compare value by value, with
        # NaN equal to NaN, in slices to stay cheap on big columns.
        step = 1024
        for start in range(0, len(ce), step):
            se, sg = ce.slice(start, step), cg.slice(start, step)
            if se.equals(sg):
                continue
            for i, (ve, vg) in enumerate(zip(se.to_pylist(), sg.to_pylist())):
                if not same_value(ve, vg):
                    return f"column {name!r} row {start + i}: expected {ve!r}, got {vg!r}"
    return None


def same_value(a, b) -> bool:
    """Deep equality of to_pylist() values where NaN equals NaN."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return False
    try:
        if a != a and b != b:  # NaN of another type (numpy float16)
            return True
    except Exception:  # noqa: BLE001
        pass
    return a == b


def project(t: pa.Table, columns: list[str]) -> pa.Table:
    """What scand returns for a projection to `columns`: top-level columns in
    the order first named; a dotted path "s.x" keeps struct s with only the
    named fields, which keep the file's order (as do nested structs); a path
    through a list of structs ("ls.p") keeps the list, its element pruned
    so (docs/schemas.md, "Projection")."""
    order: list[str] = []
    wanted: dict[str, list] = {}
    for c in columns:
        top, _, rest = c.partition(".")
        if top not in wanted:
            order.append(top)
            wanted[top] = []
        wanted[top].append(rest)
    arrays, fields = [], []
    for top in order:
        f = t.schema.field(top)
        arr = t.column(top).combine_chunks()
        if "" not in wanted[top]:
            arr, f = _project_struct(arr, f, wanted[top])
        arrays.append(arr)
        fields.append(f)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _project_struct(arr: pa.Array, f: pa.Field, paths: list[str]):
    if pa.types.is_list(f.type) or pa.types.is_large_list(f.type):
        ef = f.type.value_field
        values, ef = _project_struct(arr.values, ef, paths)
        make = pa.large_list if pa.types.is_large_list(f.type) else pa.list_
        out = type(arr).from_arrays(arr.offsets, values, type=make(ef), mask=arr.is_null())
        return out, pa.field(f.name, out.type, f.nullable)
    wanted: dict[str, list] = {}
    for p in paths:
        head, _, rest = p.partition(".")
        wanted.setdefault(head, []).append(rest)
    children, child_fields = [], []
    for i in range(f.type.num_fields):
        cf = f.type.field(i)
        if cf.name not in wanted:
            continue
        ca = arr.field(cf.name)
        if "" not in wanted[cf.name]:
            ca, cf = _project_struct(ca, cf, wanted[cf.name])
        children.append(ca)
        child_fields.append(cf)
    out = pa.StructArray.from_arrays(children, fields=child_fields, mask=arr.is_null())
    return out, pa.field(f.name, out.type, f.nullable)


def cast_like(got: pa.Table, schema: pa.Schema) -> pa.Table:
    """got's columns cast to schema's types (same names required)."""
    schema = normalize_schema(schema)
    got = normalize(got)
    cols = [got.column(f.name).cast(f.type) for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def assert_tables_equal(expected: pa.Table, got: pa.Table, what: str = "") -> None:
    diff = table_diff(expected, got)
    assert diff is None, f"{what + ': ' if what else ''}{diff}"


# --------------------------------------------------------------------------
# The server process
# --------------------------------------------------------------------------

def _die_with_parent() -> None:
    """preexec_fn: ask Linux to SIGKILL scand when the test process dies, so
    no server outlives an aborted run."""
    try:
        import ctypes
        import signal
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ScandServer:
    """A real scand process serving one root directory."""

    def __init__(self, binary: str, root: Path, log_path: Path, name: str,
                 args: Iterable[str] = (), env: dict[str, str] | None = None):
        """args are added to `scand serve`'s; env to its environment (which
        otherwise has no SCAND_ variable)."""
        self.args = list(args)
        self.env = dict(env or {})
        self.binary = binary
        self.root = Path(root)
        self.log_path = Path(log_path)
        self.name = name
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self._client: flight.FlightClient | None = None

    @property
    def location(self) -> str:
        return f"grpc://127.0.0.1:{self.port}"

    def start(self, ready_timeout: float = 30.0) -> None:
        last_error = ""
        for _attempt in range(3):  # a port picked by binding 0 can be taken again
            self.port = free_port()
            self._log = open(self.log_path, "ab")
            cmd = [self.binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--root", str(self.root), *self.args]
            self._log.write(f"$ {' '.join(cmd)}\n".encode())
            self._log.flush()
            # scand reads SCAND_<FLAG> variables; keep the test's own
            # (SCAND_BIN, SCAND_TESTDATA) and any stray ones away from it.
            env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")} | self.env
            self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                         preexec_fn=_die_with_parent)
            deadline = time.monotonic() + ready_timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    last_error = f"scand exited with status {self.proc.returncode} while starting"
                    break
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                        pass
                    c = flight.FlightClient(self.location)
                    try:
                        list(c.list_actions(options=call_options(5)))
                    except flight.FlightUnauthenticatedError:
                        pass  # a server with --auth answers: it is up
                    c.close()
                    return
                except (OSError, flight.FlightError, pa.ArrowException) as e:
                    last_error = repr(e)
                    time.sleep(0.1)
            else:
                last_error = f"scand did not accept Flight calls within {ready_timeout} s ({last_error})"
            self.stop()
        raise RuntimeError(f"could not start scand ({self.name}): {last_error}\n--- scand output ---\n{self.log_tail()}")

    def client(self) -> flight.FlightClient:
        """A fresh client (each test gets its own; see conftest)."""
        return flight.FlightClient(self.location)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def assert_alive(self) -> None:
        assert self.alive(), (f"scand ({self.name}) is not running (exit status {self.proc.returncode if self.proc else None})\n"
                              f"--- scand output ---\n{self.log_tail()}")

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_tail(self, since: int = 0, max_bytes: int = 20000) -> str:
        try:
            with open(self.log_path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                start = max(since, size - max_bytes)
                f.seek(start)
                data = f.read()
        except OSError:
            return ""
        prefix = "[...]\n" if start > since else ""
        return prefix + data.decode("utf-8", "replace")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if getattr(self, "_log", None) is not None:
            self._log.close()
            self._log = None


def same_as_spark(expected: pa.Table, got: pa.Table, what: str, key: str = "id") -> None:
    """Asserts got has the columns and rows of expected (Spark's read, or a
    table writer's), in any order: both normalized, nullability ignored
    (Spark reports every column nullable), sorted by key."""
    e, g = normalize(expected), normalize(got)
    assert g.schema.names == e.schema.names, f"{what}: columns {g.schema.names}, Spark's {e.schema.names}"
    e = e.cast(pa.schema([f.with_nullable(True) for f in e.schema]))
    g = g.cast(e.schema)
    keys = [(key, "ascending")]
    diff = table_diff(e.sort_by(keys), g.sort_by(keys))
    assert diff is None, f"{what}: {diff}"


CLIENT_SRC = REPO / "client" / "python" / "src"


def start_spark(app: str, **conf: str):
    """A local Spark session (2 cores, loopback only, quiet) with the scand
    data source registered, its Python workers importing scand from the
    source tree; conf adds or overrides Spark settings (dots as given in
    a dict: start_spark("x", **{"spark.sql.session.timeZone": "UTC"})).
    The caller stops it."""
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CLIENT_SRC), os.environ.get("PYTHONPATH")]))
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    if str(CLIENT_SRC) not in sys.path:
        sys.path.insert(0, str(CLIENT_SRC))
    from pyspark.sql import SparkSession

    from scand.spark import ScandDataSource

    settings = {
        "spark.driver.memory": "512m",
        "spark.driver.host": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.python.filterPushdown.enabled": "true",
        **conf,
    }
    builder = SparkSession.builder.master("local[2]").appName(app)
    for k, v in settings.items():
        builder = builder.config(k, v)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    session.dataSource.register(ScandDataSource)
    return session
