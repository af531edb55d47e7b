"""Connections to a scand server."""

from __future__ import annotations

import atexit
import dataclasses
import datetime as _dt
import json
import os
import threading
import time
import weakref
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import pyarrow as pa
import pyarrow.flight as flight

from . import _progress
from ._errors import InvalidRequest, ScandError, Unsupported, translate
from ._filter import FilterArg, encode_filter, is_expression
from ._plan import Plan, PlanStats
from ._replicas import Replicas
from ._ticket import PlanEndpoint, decode_ticket
from ._scan import ScanRun
from ._stats import Stats

__all__ = ["connect", "Connection", "FileInfo", "DEFAULT_LOCATION", "DEFAULT_MAX_MESSAGE_BYTES", "normalize_columns"]

DEFAULT_LOCATION = "grpc://127.0.0.1:8815"

# The largest Flight message a connection tells the server it accepts
# (ScanRequest.max_message_bytes): the server then aims batches at half of it
# (4 MiB instead of 2 MiB). bench/msgsize picked it: 8 MiB saved server CPU per
# GB and cost the client none; 32 MiB cost pyarrow more page faults than it
# saved. The server caps it at 64 MiB.
DEFAULT_MAX_MESSAGE_BYTES = 8 << 20
_SERVER_MAX_MESSAGE_BYTES = 64 << 20

# gRPC channel argument of the receive limit. pyarrow's Flight client lifts
# gRPC's 4 MiB default already (-1: none); the connection sets it anyway, so
# that the limit it promises the server holds whatever pyarrow's default is.
# A number would lower it, and fail batches of an explicit batch_rows that
# read today.
_RECEIVE_UNLIMITED = [("grpc.max_receive_message_length", -1)]

PathsArg = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]
ColumnsArg = Union[None, str, Iterable[str]]


class FileInfo(NamedTuple):
    """A file or table the server can scan (from ``Connection.list_files``).

    ``kind`` is ``"file"`` for a file under the server's root (``path`` is
    what :meth:`Connection.scan` takes as a path), or ``"table"`` for a
    table of a catalog the server was started with (``path`` is its
    ``catalog.namespace.table`` name, what ``scan(table=...)`` takes;
    ``size`` is -1, unknown until planned)."""

    path: str
    size: int
    kind: str = "file"


# Connections still open, so that running scans are cancelled at interpreter
# exit instead of leaving server streams open until the process is gone.
_live: "weakref.WeakSet[Connection]" = weakref.WeakSet()


@atexit.register
def _cancel_all_at_exit() -> None:  # pragma: no cover - runs at exit
    for conn in list(_live):
        try:
            conn.cancel()
        except Exception:  # noqa: BLE001
            pass


def _listed(fi: flight.FlightInfo) -> FileInfo:
    """A ListFlights entry: a file names its path; a catalog's table comes
    as a command, the JSON request ``{"table": "catalog.namespace.table"}``
    that scans it."""
    d = fi.descriptor
    if d.path:
        return FileInfo(d.path[0].decode(), int(fi.total_bytes))
    raw = (d.command or b"").decode(errors="replace")
    try:
        table = json.loads(raw).get("table")
    except (ValueError, AttributeError):
        table = None
    if isinstance(table, str) and table:
        return FileInfo(table, int(fi.total_bytes), "table")
    return FileInfo(raw, int(fi.total_bytes), "command")


@dataclasses.dataclass
class _OneEndpoint:
    """What ScanRun reads of a FlightInfo, for endpoints planned elsewhere:
    no schema (the batches are handed on as they come)."""
    endpoints: List[flight.FlightEndpoint]
    schema: Optional[pa.Schema] = None


def connect(location: str = DEFAULT_LOCATION, *, tls_root_certs: Union[None, str, bytes, "os.PathLike[str]"] = None,
            cert_chain: Union[None, str, bytes, "os.PathLike[str]"] = None,
            private_key: Union[None, str, bytes, "os.PathLike[str]"] = None,
            override_hostname: Optional[str] = None, disable_server_verification: bool = False,
            token: Optional[str] = None, headers: Optional[Dict[str, str]] = None,
            timeout: Optional[float] = 60.0, stream_timeout: Optional[float] = None,
            check: bool = True, max_message_bytes: Optional[int] = DEFAULT_MAX_MESSAGE_BYTES) -> "Connection":
    """Connects to a scand server.

    Args:
        location: ``grpc://host:port`` (plain text) or ``grpc+tls://host:port``
            (TLS); ``host:port`` alone means ``grpc://``.
        tls_root_certs: PEM certificates (str/bytes, or a path to a PEM file)
            of the authorities that sign the server's certificate; default:
            the system's.
        cert_chain, private_key: a client certificate and its key (PEM, or
            paths), for servers that require mutual TLS.
        override_hostname: the name to check the server's certificate
            against, when it differs from the host in ``location``.
        disable_server_verification: skip checking the server's certificate
            (testing only).
        token: sent as ``authorization: Bearer <token>`` on every call.
        headers: more gRPC headers to send on every call.
        timeout: deadline in seconds of each planning call (schema, plan,
            list, version); None for none.
        stream_timeout: deadline in seconds of each data stream of a scan;
            None (default) for none, since a big scan may take long.
        check: call the server once now (its "version" action), so that a
            wrong address or a stopped server fails here with
            :class:`ConnectionFailed` rather than at the first scan.
        max_message_bytes: the largest Flight message the connection
            accepts, sent with every scan so that the server sends fewer,
            larger batches (about half of it each; the server caps it at
            64 MiB). The connection lifts its gRPC receive limit to match.
            0 or None: neither; the server then keeps every message under
            gRPC's default 4 MiB, as for any stock client.

    The TLS and token options are handed to pyarrow.flight as they are; a
    scand server without TLS or authentication configured ignores the token
    and refuses TLS handshakes.
    """
    return Connection(location, tls_root_certs=tls_root_certs, cert_chain=cert_chain, private_key=private_key,
                      override_hostname=override_hostname,
                      disable_server_verification=disable_server_verification, token=token, headers=headers,
                      timeout=timeout, stream_timeout=stream_timeout, check=check,
                      max_message_bytes=max_message_bytes)


def _pem(value: Union[None, str, bytes, "os.PathLike[str]"], what: str) -> Optional[bytes]:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, os.PathLike) or (isinstance(value, str) and "-----BEGIN" not in value):
        path = os.fspath(value)
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as e:
            raise ValueError(f"{what}: cannot read PEM file {path!r}: {e}") from e
    return value.encode()


def _normalize_location(location: str, tls: bool) -> str:
    if not isinstance(location, str) or not location:
        raise ValueError(f"location must be a string like {DEFAULT_LOCATION!r}, got {location!r}")
    if "://" not in location:
        location = ("grpc+tls://" if tls else "grpc://") + location
    scheme = location.split("://", 1)[0]
    if scheme not in ("grpc", "grpc+tcp", "grpc+tls", "grpc+unix"):
        raise ValueError(f"unsupported scheme {scheme!r} in {location!r}: use grpc://host:port, or "
                         f"grpc+tls://host:port for TLS")
    if tls and scheme != "grpc+tls":
        raise ValueError(f"TLS options were given but {location!r} is not a TLS location: "
                         f"use grpc+tls://{location.split('://', 1)[1]}")
    return location


def _as_list(value, what: str) -> List[str]:
    if isinstance(value, (str, os.PathLike)):
        items = [value]
    else:
        try:
            items = list(value)
        except TypeError:
            raise TypeError(f"{what} must be a string or a list of strings, got {type(value).__name__}") from None
    out = []
    for v in items:
        if isinstance(v, os.PathLike):
            v = os.fspath(v)
            v = v.replace(os.sep, "/") if os.sep != "/" else v
        if not isinstance(v, str):
            raise TypeError(f"{what} must be strings, got {v!r} ({type(v).__name__})")
        out.append(v)
    return out


def normalize_columns(columns: ColumnsArg) -> List[str]:
    """The column names of a ``columns`` argument, as the request carries them.

    A str is a comma-separated list, as in the CLI's ``--columns id,v``:
    ``"id, v"`` is ``["id", "v"]`` (spaces around names are trimmed). A list
    is taken as it is, so a name that contains a comma goes in a list.
    None or an empty list: all columns (``[]``).
    """
    if columns is None:
        return []
    if not isinstance(columns, str):
        return _as_list(columns, "columns")
    names = [piece.strip() for piece in columns.split(",")]
    for i, name in enumerate(names):
        if not name:
            raise InvalidRequest(
                f"columns {columns!r}: name {i + 1} of {len(names)} is empty. A string names columns separated "
                f"by commas ('id,v'): remove the extra comma, pass None for all columns, or pass a list "
                f"(a name that contains a comma must go in a list)",
                code=None, hint="Remove the empty name.")
    return names


def _unknown_field(e: BaseException, name: str) -> bool:
    """Whether e is a server's refusal of a JSON request field it does not
    know (protojson: 'unknown field "name"')."""
    text = str(e)
    return "unknown field" in text and name in text


def _count(value, what: str) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int or None, got {value!r}")
    if value < 0:
        raise InvalidRequest(f"{what} must be >= 0 (0 or None: the server's default), got {value}",
                             code=None, hint="Pass a non-negative number.")
    return value


def _table_args(table: Optional[str], snapshot_id: Optional[int], ref: Optional[str],
                as_of: Any, version: Optional[int] = None) -> Optional[Dict[str, Any]]:
    """The table arguments of a call, for build_request; None without a
    table (build_request refuses snapshot choices without one)."""
    args = dict(table=table, snapshot_id=snapshot_id, ref=ref, as_of=as_of, version=version)
    return args if any(v is not None for v in args.values()) else None


def build_request(paths: PathsArg, columns: ColumnsArg = None, limit: Optional[int] = None,
                  batch_rows: Optional[int] = None, split_bytes: Optional[int] = None, *,
                  filter: FilterArg = None, schema: Optional[pa.Schema] = None,
                  table: Optional[str] = None, snapshot_id: Optional[int] = None, ref: Optional[str] = None,
                  as_of: Any = None, version: Optional[int] = None, no_columns: bool = False) -> Dict[str, Any]:
    """The JSON ScanRequest (proto/scand/v1/scan.proto) of a scan.

    ``no_columns`` asks for no columns at all: the batches carry only
    their row counts (``columns`` must then be empty; an empty ``columns``
    alone means every column).

    ``filter`` is SQL text (the request's ``filter``), a
    ``pyarrow.compute.Expression`` (``filter_substrait``: Substrait
    serialized against ``schema``, the scan's schema with every column,
    which an Expression requires), or Substrait bytes as they are.

    ``table`` (an Iceberg table's location or metadata file, or a Delta
    table's location) replaces ``paths``; ``snapshot_id``, ``ref`` (Iceberg),
    ``version`` (Delta) and ``as_of`` (a ``datetime`` or an RFC 3339 str)
    choose its snapshot, at most one of them (the server checks that)."""
    if table is not None:
        if paths:
            raise InvalidRequest("paths and table are exclusive: name files, or one table", hint="Pass one of them.")
        req: Dict[str, Any] = {"table": str(table)}
        if snapshot_id is not None:
            req["snapshot_id"] = int(snapshot_id)
        if ref is not None:
            req["ref"] = str(ref)
        if version is not None:
            if isinstance(version, bool) or not isinstance(version, int):
                raise TypeError(f"version must be an int or None, got {version!r}")
            req["version"] = version
        if as_of is not None:
            req["as_of"] = _rfc3339(as_of)
    else:
        if snapshot_id is not None or ref is not None or as_of is not None or version is not None:
            raise InvalidRequest("snapshot_id, ref, version and as_of choose a snapshot of a table: pass table too",
                                 hint="Pass table.")
        req = {"paths": _as_list(paths, "paths")}
        if not req["paths"]:
            raise InvalidRequest("paths is empty: name at least one file, glob or directory ('dir/') "
                                 "relative to the server's --root", hint="Pass paths.")
    if columns is not None:
        cols = normalize_columns(columns)
        if cols:
            if no_columns:
                raise InvalidRequest("no_columns reads no columns: leave columns empty", hint="Pass one of them.")
            req["columns"] = cols
    if no_columns:
        req["no_columns"] = True
    for name, value in (("limit", limit), ("batch_rows", batch_rows), ("split_bytes", split_bytes)):
        v = _count(value, name)
        if v:
            req[name] = v
    req.update(encode_filter(filter, schema))
    return req


def _rfc3339(t: Any) -> str:
    """A time as RFC 3339 text: a ``datetime`` (naive means UTC), or text
    as it is."""
    if isinstance(t, _dt.datetime):
        if t.tzinfo is None:
            t = t.replace(tzinfo=_dt.timezone.utc)
        return t.isoformat()
    return str(t)


class Connection:
    """A connection to one scand server; see :func:`connect`.

    Thread-safe: scans may run concurrently from several threads. Use it as a
    context manager, or call :meth:`close`, to cancel running scans and close
    the channel.
    """

    def __init__(self, location: str = DEFAULT_LOCATION, *, tls_root_certs=None, cert_chain=None, private_key=None,
                 override_hostname: Optional[str] = None, disable_server_verification: bool = False,
                 token: Optional[str] = None, headers: Optional[Dict[str, str]] = None,
                 timeout: Optional[float] = 60.0, stream_timeout: Optional[float] = None, check: bool = True,
                 max_message_bytes: Optional[int] = DEFAULT_MAX_MESSAGE_BYTES):
        self.max_message_bytes = min(_count(max_message_bytes, "max_message_bytes") or 0, _SERVER_MAX_MESSAGE_BYTES)
        tls = any(v for v in (tls_root_certs, cert_chain, private_key, override_hostname,
                              disable_server_verification))
        self.location = _normalize_location(location, tls)
        kwargs: Dict[str, Any] = {}
        if tls_root_certs is not None:
            kwargs["tls_root_certs"] = _pem(tls_root_certs, "tls_root_certs")
        if cert_chain is not None:
            kwargs["cert_chain"] = _pem(cert_chain, "cert_chain")
        if private_key is not None:
            kwargs["private_key"] = _pem(private_key, "private_key")
        if override_hostname:
            kwargs["override_hostname"] = override_hostname
        if disable_server_verification:
            kwargs["disable_server_verification"] = True
        hdrs: List[Tuple[bytes, bytes]] = []
        if token:
            hdrs.append((b"authorization", f"Bearer {token}".encode()))
        for k, v in (headers or {}).items():
            hdrs.append((k.lower().encode(), str(v).encode()))
        self._headers = hdrs
        self.timeout = timeout
        self.stream_timeout = stream_timeout
        self._lock = threading.Lock()
        self._runs: "weakref.WeakSet[ScanRun]" = weakref.WeakSet()
        self._last_stats: Optional[Stats] = None
        self._closed = False
        self.server_version: Optional[str] = None
        # Every client, the replicas' too, gets the receive limit the
        # requests promise.
        channel = {"generic_options": list(_RECEIVE_UNLIMITED)} if self.max_message_bytes else {}
        try:
            self._client = flight.FlightClient(self.location, **kwargs, **channel)
        except (flight.FlightError, pa.ArrowException) as e:
            raise translate(e, self.location, "connect") from e
        # The replicas endpoints name as locations, each with the same TLS
        # settings; the token rides on every call's options.
        self._replicas = Replicas(self.location, self._client, kwargs, channel)
        _live.add(self)
        if check:
            try:
                self.server_version = self.version()
            except Unsupported:
                pass  # a Flight server without the action; scans will tell
            except ScandError:
                self._client.close()
                self._closed = True
                raise

    # -- plumbing -------------------------------------------------------------

    def _options(self, timeout: Optional[float]) -> flight.FlightCallOptions:
        kw: Dict[str, Any] = {}
        if timeout is not None:
            kw["timeout"] = timeout
        if self._headers:
            kw["headers"] = self._headers
        return flight.FlightCallOptions(**kw)

    def _check_open(self) -> None:
        if self._closed:
            raise ScandError(f"the connection to {self.location} is closed; open a new one with scand.connect()")

    @staticmethod
    def _descriptor(req: Dict[str, Any]) -> flight.FlightDescriptor:
        return flight.FlightDescriptor.for_command(json.dumps(req).encode())

    def _plan(self, req: Dict[str, Any]) -> flight.FlightInfo:
        self._check_open()
        if self.max_message_bytes and "max_message_bytes" not in req:
            try:
                return self._get_flight_info(dict(req, max_message_bytes=self.max_message_bytes))
            except ScandError as e:  # INVALID_ARGUMENT from scand; other Flight servers vary
                if not _unknown_field(e, "max_message_bytes"):
                    raise
                # A server older than the field refuses the JSON request
                # (unknown field); it keeps messages under 4 MiB anyway, so
                # this connection stops sending it.
                self.max_message_bytes = 0
        return self._get_flight_info(req)

    def _get_flight_info(self, req: Dict[str, Any]) -> flight.FlightInfo:
        try:
            return self._client.get_flight_info(self._descriptor(req), options=self._options(self.timeout))
        except (flight.FlightError, pa.ArrowException) as e:
            raise translate(e, self.location, "plan") from e

    def _scan_ended(self, run: ScanRun) -> None:
        with self._lock:
            self._runs.discard(run)

    # -- API ------------------------------------------------------------------

    def _request(self, paths: PathsArg, columns: ColumnsArg, limit: Optional[int], batch_rows: Optional[int],
                 split_bytes: Optional[int], filter: FilterArg, table: Optional[Dict[str, Any]] = None,
                 no_columns: bool = False) -> Dict[str, Any]:
        """build_request, asking the server for the scan's schema first when
        the filter is a pyarrow Expression (Substrait names columns by their
        position in it)."""
        table = table or {}
        schema = self.schema(paths, **table) if is_expression(filter) else None
        return build_request(paths, columns, limit, batch_rows, split_bytes, filter=filter, schema=schema,
                             no_columns=no_columns, **table)

    def scan(self, paths: PathsArg = None, columns: ColumnsArg = None, limit: Optional[int] = None,
             batch_rows: Optional[int] = None, split_bytes: Optional[int] = None, *,
             filter: FilterArg = None, progress: Optional[bool] = None, max_workers: int = 4,
             read_ahead: int = 4, stats: Optional[Stats] = None, table: Optional[str] = None,
             snapshot_id: Optional[int] = None, ref: Optional[str] = None,
             as_of: Any = None, version: Optional[int] = None, no_columns: bool = False) -> pa.RecordBatchReader:
        """Scans files on the server; returns a ``pyarrow.RecordBatchReader``.

        The scan is planned now (so a bad request raises here); its endpoints
        are then read when the reader is consumed, ``max_workers`` streams at
        a time, each at most ``read_ahead`` batches ahead of the consumer, and
        their batches come out in endpoint order (file order).

        Args:
            paths: a path, glob (``*``, ``?``, ``[...]``, ``**``) or directory
                (ending in ``/``) relative to the server's root, or a list.
            columns: columns by name in the order wanted, a list or a
                comma-separated str (``"city, fare"``, as the CLI's
                ``--columns``); nested struct fields by dotted path
                (``"pickup.lat"``). None: all.
            limit: at most this many rows (None or 0: all).
            batch_rows: rows per record batch (None: the server's choice).
            split_bytes: target compressed bytes per endpoint (None: the
                server's default, 64 MiB).
            filter: the rows wanted. A str is a SQL WHERE expression
                (``"fare > 10 AND city IN ('Paris', 'Rome')"``), with SQL's
                three-valued logic; a ``pyarrow.compute.Expression``
                (``pc.field("fare") > 10``) keeps pyarrow's meaning and is
                sent as Substrait, serialized against the scan's schema,
                which costs one more call (GetSchema). Columns the filter
                reads need not be in ``columns``. None: every row.
            progress: None (default): a progress bar for large scans (at
                least 1,000,000 planned rows) in interactive sessions when
                tqdm is installed; True: always; False: never.
            max_workers: streams read in parallel.
            read_ahead: batches each stream may hold ahead of the consumer.
            stats: a :class:`Stats` to fill; default: a new one, available
                as ``conn.last_stats``.
            table: instead of ``paths``, an Iceberg table: its location
                (the directory holding ``metadata/``; its newest metadata
                file is read) or a metadata file, or a Delta table's
                location (the directory holding ``_delta_log/``), relative
                to the server's root or an ``s3://`` URI. ``columns`` and
                ``filter`` name the table's columns; deletes (deletion
                vectors) are applied.
            snapshot_id, ref, version, as_of: the table's snapshot to read:
                an Iceberg snapshot by id or by branch or tag name, a Delta
                table's version, or either as of a time (a ``datetime``,
                naive meaning UTC, or RFC 3339 text); at most one. None:
                the current snapshot or latest version.
            no_columns: read no columns (``columns`` must be None): the
                batches have no columns, only their row counts, as
                ``pyarrow.dataset``'s ``to_table(columns=[])``. Without a
                filter only footers are read; with one, only the row
                groups whose statistics do not decide it, one of its
                columns. :meth:`count` sums them.

        The stream's IO figures land in ``stats`` / ``conn.last_stats`` as
        each stream ends. Raises a :class:`ScandError` subclass when planning
        fails; reading raises one when a stream fails.
        """
        if max_workers < 1 or read_ahead < 1:
            raise ValueError("max_workers and read_ahead must be >= 1")
        started = time.perf_counter()
        tbl = _table_args(table, snapshot_id, ref, as_of, version)
        req = self._request(paths, columns, limit, batch_rows, split_bytes, filter, tbl, no_columns)
        st = stats if stats is not None else Stats()
        st.paths = list(req.get("paths", [req.get("table")]))
        st.columns = list(req.get("columns", []))
        st.filter = filter
        with self._lock:
            self._last_stats = st
        try:
            info = self._plan(req)
        except BaseException as e:
            st.error, st.done = e, True
            st.wall_seconds = time.perf_counter() - started
            raise
        st.endpoints = len(info.endpoints)
        st.plan = PlanStats.from_metadata(info.app_metadata)
        st.total_records = info.total_records
        st.total_bytes = info.total_bytes
        bar = _progress.make(progress, info.total_records)
        run = ScanRun(self, info, self._options(self.stream_timeout), st, bar, max_workers, read_ahead, started,
                      limit=req.get("limit") if filter is not None else None)
        with self._lock:
            self._runs.add(run)
        return pa.RecordBatchReader.from_batches(run.schema, run.batches())

    def count(self, paths: PathsArg = None, limit: Optional[int] = None, *, filter: FilterArg = None,
              stats: Optional[Stats] = None, table: Optional[str] = None, snapshot_id: Optional[int] = None,
              ref: Optional[str] = None, as_of: Any = None, version: Optional[int] = None,
              max_workers: int = 4) -> int:
        """The number of rows a scan would return, without moving them: a
        scan of no columns (``scan(..., no_columns=True)``), its batches'
        row counts summed. Without a filter the answer comes from the files'
        footers (a table's files with deletes are read, one column); with a
        filter, row groups its statistics decide are counted or skipped
        from the footers, and only the rest are read, one of the filter's
        columns. Arguments are as in :meth:`scan`."""
        reader = self.scan(paths, limit=limit, filter=filter, stats=stats, table=table, snapshot_id=snapshot_id,
                           ref=ref, as_of=as_of, version=version, progress=False, max_workers=max_workers,
                           no_columns=True)
        try:
            return sum(batch.num_rows for batch in reader)
        finally:
            reader.close()

    def read_endpoint(self, ticket: bytes, locations: Sequence[str] = ()) -> Iterator[pa.RecordBatch]:
        """The record batches of one endpoint of a plan made elsewhere: for
        engines that hand endpoints to workers (Spark's ``scand.spark``),
        with the ticket and location URIs of a ``FlightEndpoint``.

        It reads like :meth:`scan` reads each endpoint: its locations in
        order, then this connection's server; an UNAVAILABLE replica before
        the first batch moves on to the next one, and after batches have
        arrived the stream resumes on the next replica from the next row
        (the ``resume`` action), or raises :class:`ResumeFailed`. The IO
        figures land in ``last_stats``."""
        ep = flight.FlightEndpoint(ticket, list(locations))
        st = Stats()
        st.endpoints = 1
        with self._lock:
            self._last_stats = st
        run = ScanRun(self, _OneEndpoint([ep]), self._options(self.stream_timeout), st, _progress.make(False, 0),
                      1, 4, time.perf_counter())
        with self._lock:
            self._runs.add(run)
        return run.batches()

    def read_table(self, paths: PathsArg, columns: ColumnsArg = None, limit: Optional[int] = None,
                   batch_rows: Optional[int] = None, split_bytes: Optional[int] = None, *,
                   filter: FilterArg = None, **kwargs) -> pa.Table:
        """``scan(...).read_all()``: the whole result as a ``pyarrow.Table``."""
        return self.scan(paths, columns, limit, batch_rows, split_bytes, filter=filter, **kwargs).read_all()

    def schema(self, paths: PathsArg = None, columns: ColumnsArg = None, *, table: Optional[str] = None,
               snapshot_id: Optional[int] = None, ref: Optional[str] = None, as_of: Any = None,
               version: Optional[int] = None) -> pa.Schema:
        """The schema a scan of these paths (or this table) and columns
        returns (GetSchema)."""
        self._check_open()
        req = build_request(paths, columns, table=table, snapshot_id=snapshot_id, ref=ref, as_of=as_of,
                            version=version)
        try:
            return self._client.get_schema(self._descriptor(req), options=self._options(self.timeout)).schema
        except (flight.FlightError, pa.ArrowException) as e:
            raise translate(e, self.location, "schema") from e

    def explain(self, paths: PathsArg = None, columns: ColumnsArg = None, limit: Optional[int] = None,
                batch_rows: Optional[int] = None, split_bytes: Optional[int] = None, *,
                filter: FilterArg = None, table: Optional[str] = None, snapshot_id: Optional[int] = None,
                ref: Optional[str] = None, as_of: Any = None, version: Optional[int] = None) -> Plan:
        """Plans the scan without reading data: rows, compressed bytes,
        endpoints (splits), a lower bound of the reads, the schema, and
        what the filter pruned (``Plan.stats``: files matched, pruned by
        partition and by statistics; row groups kept of all; bytes with and
        without the filter; the rows' upper bound). ``table`` and the
        snapshot choices are as in :meth:`scan`."""
        started = time.perf_counter()
        req = self._request(paths, columns, limit, batch_rows, split_bytes, filter,
                            _table_args(table, snapshot_id, ref, as_of, version))
        info = self._plan(req)
        return Plan(request=req, schema=info.schema, total_records=info.total_records,
                    total_bytes=info.total_bytes, endpoints=len(info.endpoints),
                    planning_seconds=time.perf_counter() - started,
                    ordered=bool(getattr(info, "ordered", True)), columns=list(info.schema.names),
                    stats=PlanStats.from_metadata(info.app_metadata),
                    splits=[decode_ticket(ep.ticket.ticket) or PlanEndpoint() for ep in info.endpoints])

    def list_files(self, prefix: str = "") -> List[FileInfo]:
        """The files under the server's root whose path starts with
        ``prefix`` (ListFlights)."""
        self._check_open()
        try:
            out = []
            for fi in self._client.list_flights(prefix.encode(), options=self._options(self.timeout)):
                out.append(_listed(fi))
            return out
        except (flight.FlightError, pa.ArrowException) as e:
            raise translate(e, self.location, "list") from e

    def version(self) -> str:
        """The server's version (its "version" action)."""
        self._check_open()
        try:
            results = list(self._client.do_action(flight.Action("version", b""), options=self._options(self.timeout)))
        except (flight.FlightError, pa.ArrowException) as e:
            raise translate(e, self.location, "action") from e
        if not results:
            return ""
        body = results[0].body.to_pybytes()
        try:
            return str(json.loads(body).get("version", ""))
        except (ValueError, AttributeError):
            return body.decode(errors="replace")

    @property
    def last_stats(self) -> Optional[Stats]:
        """The :class:`Stats` of the scan started last on this connection
        (filled while it runs; ``done`` tells when it has ended)."""
        return self._last_stats

    def cancel(self) -> int:
        """Cancels every scan still running on this connection; returns how
        many. Their readers then raise :class:`Cancelled`."""
        with self._lock:
            runs = list(self._runs)
        for run in runs:
            run.cancel()
        return len(runs)

    def close(self) -> None:
        """Cancels running scans and closes the channel (idempotent)."""
        if self._closed:
            return
        self.cancel()
        self._closed = True
        _live.discard(self)
        self._replicas.close()
        try:
            self._client.close()
        except Exception:  # noqa: BLE001
            pass

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        ver = f" version {self.server_version}" if self.server_version else ""
        return f"<scand.Connection {self.location}{ver} ({state})>"
