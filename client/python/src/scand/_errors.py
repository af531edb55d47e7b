"""Errors raised by the scand client.

Every failure of a call to the server is raised as a subclass of
:class:`ScandError`, chosen by the gRPC status the server answered with. The
message says what happened (the server's own words: it names the file or the
column) and, when there is something specific to say, what to do about it; the
pyarrow exception it came from is kept as ``__cause__``.

The message format is the one every scand client uses (client/errors.go, the
``scand`` command): ``<CODE_NAME>: <server message>``, then ``hint: ...`` on a
second line when there is a hint.
"""

from __future__ import annotations

import re
from typing import Optional

import pyarrow as pa
import pyarrow.flight as flight

__all__ = [
    "ScandError",
    "ConnectionFailed",
    "InvalidRequest",
    "NotFound",
    "PermissionDenied",
    "Unauthenticated",
    "CorruptFile",
    "Unsupported",
    "FileChanged",
    "LimitExceeded",
    "Timeout",
    "Cancelled",
    "ServerError",
]


class ScandError(Exception):
    """Base class of every error the scand client raises for a failed call.

    Attributes:
        code: the gRPC status code name (``"NOT_FOUND"``, ...), or None when
            the failure did not come from a gRPC status.
        server_message: the server's message, without pyarrow's decorations.
        hint: what to do about it.
        location: the server's address.
    """

    code: Optional[str]
    server_message: str
    hint: str
    location: str

    def __init__(self, message: str, *, code: Optional[str] = None, server_message: str = "",
                 hint: str = "", location: str = ""):
        super().__init__(message)
        self.code = code
        self.server_message = server_message
        self.hint = hint
        self.location = location

    def __str__(self) -> str:  # OSError (ConnectionFailed's base) formats its own way
        return str(self.args[0]) if self.args else ""


class ConnectionFailed(ScandError, ConnectionError):
    """The server could not be reached (wrong address, server not running,
    connection lost during a scan). gRPC status UNAVAILABLE."""


class InvalidRequest(ScandError, ValueError):
    """The server rejected the request: malformed, unknown column,
    incompatible schemas, a file that is neither Parquet nor ORC.
    gRPC status INVALID_ARGUMENT."""


class NotFound(ScandError, LookupError):
    """A file is missing, or a glob matched nothing. gRPC status NOT_FOUND."""


class PermissionDenied(ScandError):
    """A path leaves the server's root, or the caller may not read it.
    gRPC status PERMISSION_DENIED."""


class Unauthenticated(PermissionDenied):
    """The server wants credentials (a token, a client certificate) that the
    connection did not present or that it refused. gRPC status
    UNAUTHENTICATED."""


class CorruptFile(ScandError):
    """A file is corrupt or truncated. gRPC status DATA_LOSS."""


class Unsupported(ScandError):
    """A valid file uses something scand cannot decode (a codec, encryption,
    a logical type), or the server lacks the call. gRPC status
    UNIMPLEMENTED."""


class FileChanged(ScandError):
    """A file changed between planning the scan and reading it. Run the scan
    again. gRPC status FAILED_PRECONDITION."""


class LimitExceeded(ScandError):
    """The request is over one of the server's limits (paths, files,
    columns, a read larger than its memory budget). gRPC status
    RESOURCE_EXHAUSTED."""


class Timeout(ScandError):
    """A call took longer than its deadline. gRPC status DEADLINE_EXCEEDED."""


class Cancelled(ScandError):
    """The call was cancelled. gRPC status CANCELLED."""


class ServerError(ScandError):
    """The server failed in a way it did not classify (INTERNAL, UNKNOWN,
    ABORTED, ...). Its log has the details."""


# pyarrow (Arrow C++ Flight) turns a gRPC status into an exception class and a
# message prefix. The class alone is ambiguous (ArrowInvalid covers
# INVALID_ARGUMENT, RESOURCE_EXHAUSTED, FAILED_PRECONDITION and OUT_OF_RANGE;
# FlightInternalError covers INTERNAL, ABORTED and DATA_LOSS) but the prefix
# is unique (pyarrow 14 to 26).
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

# Fallback on the exception class when no prefix matched.
_CLASS_TO_CODE = [
    (flight.FlightUnavailableError, "UNAVAILABLE"),
    (flight.FlightUnauthenticatedError, "UNAUTHENTICATED"),
    (flight.FlightUnauthorizedError, "PERMISSION_DENIED"),
    (flight.FlightTimedOutError, "DEADLINE_EXCEEDED"),
    (flight.FlightCancelledError, "CANCELLED"),
    (flight.FlightInternalError, "INTERNAL"),
    (pa.ArrowNotImplementedError, "UNIMPLEMENTED"),
    (pa.ArrowKeyError, "NOT_FOUND"),
    (pa.ArrowInvalid, "INVALID_ARGUMENT"),
]


def grpc_code(exc: BaseException) -> Optional[str]:
    """The gRPC status code name behind a pyarrow Flight exception, or None."""
    text = str(exc)
    for prefix, code in _PREFIX_TO_CODE:
        if prefix in text:
            return code
    if isinstance(exc, flight.FlightError) or "Flight" in text or "gRPC" in text:
        for cls, code in _CLASS_TO_CODE:
            if isinstance(exc, cls):
                return code
    return None


_DEBUG_CONTEXT = re.compile(r"\.?\s*(gRPC client debug context|Client context):.*$", re.S)


def server_message(exc: BaseException) -> str:
    """The server's own message: the part after 'with message: ', without the
    debug context pyarrow appends."""
    text = str(exc)
    marker = "with message: "
    i = text.find(marker)
    if i >= 0:
        text = text[i + len(marker):]
    text = _DEBUG_CONTEXT.sub("", text)
    # protojson puts a non-breaking space after "proto:"
    return text.replace("\u00a0", " ").strip()


_CODE_TO_CLASS = {
    "UNAVAILABLE": ConnectionFailed,
    "INVALID_ARGUMENT": InvalidRequest,
    "OUT_OF_RANGE": InvalidRequest,
    "NOT_FOUND": NotFound,
    "PERMISSION_DENIED": PermissionDenied,
    "UNAUTHENTICATED": Unauthenticated,
    "DATA_LOSS": CorruptFile,
    "UNIMPLEMENTED": Unsupported,
    "FAILED_PRECONDITION": FileChanged,
    "RESOURCE_EXHAUSTED": LimitExceeded,
    "DEADLINE_EXCEEDED": Timeout,
    "CANCELLED": Cancelled,
}


def _connection_detail(msg: str) -> str:
    low = msg.lower()
    if "connection refused" in low:
        return "connection refused: nothing is listening there"
    if "domain name not found" in low or "lookup" in low and "fail" in low or "dns" in low:
        return "the host name does not resolve"
    if "handshake" in low or "ssl" in low or "tls" in low or "certificate" in low:
        return "the TLS handshake failed"
    if "socket closed" in low or "connection reset" in low or "goaway" in low or "eof" in low:
        return "the connection was closed by the server"
    if "timeout" in low or "deadline" in low:
        return "it did not answer in time"
    return msg


def _hint(code: Optional[str], location: str, stage: str, msg: str) -> str:
    if code == "UNAVAILABLE":
        port = location.rsplit(":", 1)[-1] if ":" in location else "8815"
        low = msg.lower()
        if "handshake" in low or "ssl" in low or "tls" in low or "certificate" in low:
            return ("Check that the scheme matches the server (grpc:// for plain text, grpc+tls:// for TLS) "
                    "and that tls_root_certs holds the certificate authority that signed the server's certificate.")
        if stage == "stream":
            return ("The server went away while the scan was running (stopped, restarted or crashed): "
                    "check that it is running, then run the scan again.")
        return (f"Is scand running at {location}? Start it with `scand serve --root DIR --listen 127.0.0.1:{port}` "
                f"(or `scand demo` for sample data), or check the address and port.")
    if code == "INVALID_ARGUMENT" or code == "OUT_OF_RANGE":
        low = msg.lower()
        if msg.startswith("unknown column") and "; available columns: " in msg:
            return column_hint(msg)
        if low.startswith("filter") or "filter:" in low:
            return ("Fix the filter: SQL text takes comparisons, AND/OR/NOT, [NOT] IN, [NOT] BETWEEN, "
                    "IS [NOT] NULL, [NOT] LIKE and starts_with(col, 'x') on the scan's columns "
                    "(conn.schema(paths) lists them); a pyarrow Expression goes as filter=pc.field(...).")
        if "magic" in low or "not a parquet" in low:
            return "Leave that file out of the scan (narrow the glob, or name the files to read)."
        if "incompatible" in low or "schemas" in low or "types differ" in low:
            return "The files do not agree on the type of a column: scan them separately, or pick other columns."
        return ""
    if code == "NOT_FOUND":
        if "://" in msg:
            # An object store's name (s3://, gs://, az://): --root has nothing to do with it.
            return "Check the bucket (or container) and the object name; the message says which is missing."
        return ("Paths are relative to the server's --root; check the name or the glob "
                "(conn.list_files(prefix) lists the files the server sees).")
    if code == "PERMISSION_DENIED":
        return "Paths must stay inside the server's --root (no '..', no absolute paths elsewhere, no symlinks out)."
    if code == "UNAUTHENTICATED":
        return "Pass the credentials the server expects: scand.connect(..., token=...) or a client certificate."
    if code == "DATA_LOSS":
        return "The file is corrupt or truncated: rewrite it, or leave it out of the scan."
    if code == "UNIMPLEMENTED":
        low = msg.lower()
        if "backend" in low or "not configured" in low:
            return ("The server has no storage backend for that kind of path: configure it on the server "
                    "(see `scand serve --help`), or scan paths under its --root.")
        if "codec" in low or "compression" in low:
            return "The file uses a compression codec scand cannot decode: rewrite it with another codec."
        return ""
    if code == "FAILED_PRECONDITION":
        return "A file changed while it was being scanned: run the scan again once writers are done."
    if code == "RESOURCE_EXHAUSTED":
        if "filter" in msg.lower():
            return ("The filter is over the server's limits (1 MiB of text, 100 levels of nesting, 100,000 IN "
                    "values): split it into several scans, or filter part of it locally.")
        return "The request is over the server's limits: scan fewer paths, files or columns at a time."
    if code == "DEADLINE_EXCEEDED":
        return "The call took longer than its deadline: raise timeout= in scand.connect(), or scan less at once."
    if code in ("INTERNAL", "UNKNOWN"):
        return "The server's log has the details."
    return ""  # nothing to add to the code and the server's message


def column_hint(msg: str) -> str:
    """Advice on an unknown column from the server's list of the file's own
    columns ('unknown column "x"; available columns: a, b'): the closest
    name, or else how nested fields are named when the file has some. The
    same rule as the Go client's columnHint (client/errors.go)."""
    head, _, rest = msg.partition("; available columns: ")
    avail = rest.split(" and ", 1)[0].split(", ")
    parts = head.split('"')
    if len(parts) >= 3:
        best = _closest(parts[1], avail)
        if best:
            return f'did you mean "{best}"?'
    for a in avail:
        if "." in a:
            return f'nested fields are named by their path, as "{a}"'
    return ""


def _closest(s: str, names: list) -> str:
    """The name nearest to s by edit distance, if within max(2, len/3)."""
    best, best_d = "", max(2, len(s) // 3) + 1
    for n in names:
        d = _edit_distance(s.lower(), n.lower())
        if d < best_d:
            best, best_d = n, d
    return best


def _edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[len(b)]


def _trim_code_suffix(msg: str, code: str) -> str:
    """msg without a trailing ': <code in words>' (a server message for a
    wrapped fs.ErrInvalid ends in ': invalid argument'), which would only
    repeat the code printed before it."""
    suffix = ": " + code.replace("_", " ").lower()
    if msg.endswith(suffix) and len(msg) > len(suffix):
        return msg[: -len(suffix)]
    return msg


def format_message(head: str, hint: str) -> str:
    """The message format every scand client uses: '<CODE_NAME>: <server
    message>', then 'hint: ...' on a second line when there is a hint."""
    return f"{head}\nhint: {hint}" if hint else head


_WHAT = {
    "plan": "planning the scan",
    "schema": "getting the schema",
    "stream": "reading the scan",
    "connect": "connecting",
    "list": "listing files",
    "action": "calling the server",
}


def translate(exc: BaseException, location: str, stage: str) -> ScandError:
    """A ScandError for a pyarrow exception raised by a Flight call. The
    caller raises it ``from exc``."""
    if isinstance(exc, ScandError):
        return exc
    code = grpc_code(exc)
    msg = server_message(exc) if code else str(exc)
    cls = _CODE_TO_CLASS.get(code or "", ServerError)
    what = _WHAT.get(stage, stage)
    hint = _hint(code, location, stage, msg)
    if code:
        msg = _trim_code_suffix(msg, code)
    if cls is ConnectionFailed:
        if stage == "stream":
            head = f"{code}: lost the connection to scand at {location} while {what}: {_connection_detail(msg)}"
        else:
            head = f"{code}: scand at {location} is not reachable: {_connection_detail(msg)}"
    elif code is None:
        head = f"scand at {location}: {what} failed: {msg}"
    else:
        head = f"{code}: {msg}"
    return cls(format_message(head, hint), code=code, server_message=msg, hint=hint, location=location)
