"""scand: scan Parquet files on a scand server as pyarrow record batches.

    import scand
    conn = scand.connect("grpc://127.0.0.1:8815")
    reader = conn.scan("trips/*.parquet", columns=["city", "fare"])  # a pyarrow.RecordBatchReader
    conn.read_table("trips/", filter="fare > 10")                   # rows filtered on the server
    table = reader.read_all()
    print(conn.last_stats)                                            # the scan's IO figures

    with scand.serve("/data") as conn:   # a local server (the platform wheel bundles it)
        conn.read_table("events/*.parquet")

See README.md of this package for the whole API.
"""

from ._connection import (
    DEFAULT_LOCATION,
    DEFAULT_MAX_MESSAGE_BYTES,
    Connection,
    FileInfo,
    build_request,
    connect,
    normalize_columns,
)
from ._errors import (
    Cancelled,
    ConnectionFailed,
    CorruptFile,
    FileChanged,
    InvalidRequest,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    ScandError,
    ServerError,
    Timeout,
    Unauthenticated,
    Unsupported,
)
from ._plan import Plan, PlanStats
from ._progress import AUTO_PROGRESS_ROWS
from ._replicas import ResumeFailed
from ._serve import BUNDLED_BINARY, ServedConnection, ServeFailed, find_binary, serve
from ._stats import Stats, StreamStats

__version__ = "0.1.0"

__all__ = [
    "connect",
    "serve",
    "find_binary",
    "ServedConnection",
    "ServeFailed",
    "BUNDLED_BINARY",
    "Connection",
    "DEFAULT_LOCATION",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "FileInfo",
    "Plan",
    "PlanStats",
    "Stats",
    "StreamStats",
    "AUTO_PROGRESS_ROWS",
    "build_request",
    "normalize_columns",
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
    "ResumeFailed",
]


def __getattr__(name: str):
    # scand.polars needs polars, an optional dependency: imported when first used.
    if name == "polars":
        import importlib

        return importlib.import_module(".polars", __name__)
    raise AttributeError(f"module 'scand' has no attribute {name!r}")
