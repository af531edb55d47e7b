"""A Spark data source over scand scans (pyspark.sql.datasource, Spark >= 4.1).

    from pyspark.sql import SparkSession
    from scand.spark import ScandDataSource

    spark = (SparkSession.builder
             .config("spark.sql.python.filterPushdown.enabled", "true")  # else Spark pushes no filter
             .getOrCreate())
    spark.dataSource.register(ScandDataSource)
    df = (spark.read.format("scand")
          .option("server", "grpc://127.0.0.1:8815")
          .option("paths", "lineitem/,extra/part-0.parquet")
          .load())
    df.where("l_quantity < 24").groupBy("l_returnflag").count().show()

    sales = (spark.read.format("scand")                   # a Delta or Iceberg table
             .option("server", "grpc://127.0.0.1:8815")
             .option("table", "warehouse/sales")
             .option("version", "12")                     # optional: time travel
             .load())

What reaches the server:

* **Schema**: GetSchema of ``paths`` or ``table`` (and ``columns`` when given).
* **Columns**: Spark's Python data source API does not push the columns a
  query uses (there is no ``pruneColumns``), so a scan reads every column of
  its schema. To read fewer, name them: ``.option("columns", "a,b")``, or
  give a schema, ``.schema("a int, b string")``, whose field names become the
  request's columns.
* **Filters**: :meth:`ScandReader.pushFilters` turns each filter Spark pushes
  into scand's SQL filter language (docs/filters.md) when scand applies it
  with exactly Spark's meaning, and hands back the rest for Spark to apply.
  :func:`translate_filter` says which, and why.
* **Tables**: with ``table``, the server reads the Delta or Iceberg table
  (deletes applied, columns and filters by the table's names); each query
  plans anew, so without ``version``, ``snapshot_id``, ``ref`` or ``as_of``
  a query reads the table's latest snapshot when it is planned (its schema
  is the one seen at ``load()``). Name a snapshot to read the same rows
  every time.
* **Partitions**: one per endpoint of the plan (GetFlightInfo), carrying its
  ticket, its locations and the connection options; :meth:`ScandReader.read`
  streams that one endpoint's batches as ``pyarrow.RecordBatch`` objects,
  through ``Connection.read_endpoint``: the next replica when one is down,
  and resumed from the next row when a stream breaks mid-way.

Options (all strings, as Spark passes them):

=============================  ===================================================
``server``                     ``grpc://host:port`` or ``grpc+tls://host:port`` (required)
``paths``                      comma-separated paths, globs or ``dir/`` (this or ``table``)
``table``                      a Delta or Iceberg table's location (or an Iceberg metadata file)
``version``                    a Delta table's version to read (an integer)
``snapshot_id``, ``ref``       an Iceberg table's snapshot to read, by id or by branch or tag
``as_of``                      the table as of an RFC 3339 time (``2026-11-30T12:00:00Z``)
``columns``                    comma-separated columns to read (default: all)
``filter``                     a scand SQL filter applied on the server, ANDed with the pushed ones
``token``                      bearer token (``Authorization: Bearer ...``)
``tls_root_certs``             PEM text or path of the CA that signs the server's certificate
``cert_chain``, ``private_key``  PEM text or paths of a client certificate (mutual TLS)
``override_hostname``          the name the server's certificate is checked against
``disable_server_verification``  ``true`` to skip checking it (testing only)
``timeout``                    seconds of each planning call (default 60)
``stream_timeout``             seconds of each endpoint's stream (default: none)
``batch_rows``, ``split_bytes``  as in ``Connection.scan``
=============================  ===================================================

pyspark is an optional dependency (the ``spark`` extra); this module imports
it when loaded.
"""

from __future__ import annotations

import datetime
import decimal
import math
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.flight as flight

try:
    from pyspark.sql import datasource as _ds
    from pyspark.sql import types as _st
    from pyspark.sql.pandas.types import from_arrow_schema
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("scand.spark needs pyspark (>= 4.1): pip install 'scand[spark]'") from e

from ._connection import Connection, build_request, connect, normalize_columns
from ._errors import InvalidRequest

__all__ = ["ScandDataSource", "ScandReader", "ScandPartition", "translate_filter", "connection_options",
           "table_options"]

# Options handed to scand.connect(), with how to read each from its string.
_CONNECT_OPTIONS = {
    "token": str,
    "tls_root_certs": str,
    "cert_chain": str,
    "private_key": str,
    "override_hostname": str,
    "disable_server_verification": lambda v: v.strip().lower() in ("1", "true", "yes"),
    "timeout": float,
    "stream_timeout": float,
}


def _required(options: Dict[str, str], name: str) -> str:
    value = options.get(name)
    if not value or not str(value).strip():
        raise InvalidRequest(f"the scand data source needs the option {name!r}: "
                             f'spark.read.format("scand").option("{name}", ...)', hint=f"Set option {name!r}.")
    return str(value)


def connection_options(options: Dict[str, str]) -> Dict[str, Any]:
    """The server location and keyword arguments of ``scand.connect`` that
    the data source options hold: a plain, picklable dict."""
    out: Dict[str, Any] = {"location": _required(options, "server")}
    for name, parse in _CONNECT_OPTIONS.items():
        raw = options.get(name)
        if raw is None or str(raw) == "":
            continue
        try:
            out[name] = parse(str(raw))
        except ValueError:
            raise InvalidRequest(f"option {name!r} of the scand data source: cannot read {raw!r}",
                                 hint=f"Fix option {name!r}.") from None
    return out


def _connect(conn_opts: Dict[str, Any], check: bool = True) -> Connection:
    kwargs = dict(conn_opts)
    location = kwargs.pop("location")
    return connect(location, check=check, **kwargs)


def _paths(options: Dict[str, str]) -> Optional[List[str]]:
    """The ``paths`` option as a list; None when the source reads a table."""
    if _option(options, "table") is not None:
        if _option(options, "paths") is not None:
            raise InvalidRequest("options 'paths' and 'table' of the scand data source are exclusive: "
                                 "name files, or one table", hint="Set one of them.")
        return None
    if _option(options, "paths") is None:
        raise InvalidRequest("the scand data source needs the option 'paths' (files) or 'table' (a Delta or "
                             'Iceberg table): spark.read.format("scand").option("table", ...)',
                             hint="Set option 'paths' or 'table'.")
    paths = [p.strip() for p in str(options.get("paths")).split(",") if p.strip()]
    if not paths:
        raise InvalidRequest("option 'paths' of the scand data source names no path", hint="Set option 'paths'.")
    return paths


def _option(options: Dict[str, str], name: str) -> Optional[str]:
    raw = options.get(name)
    if raw is None or str(raw).strip() == "":
        return None
    return str(raw).strip()


def table_options(options: Dict[str, str]) -> Dict[str, Any]:
    """The table and snapshot keyword arguments of ``Connection.scan`` /
    ``build_request`` that the options hold (empty without ``table``)."""
    table = _option(options, "table")
    choices = {name: _option(options, name) for name in ("version", "snapshot_id", "ref", "as_of")}
    if table is None:
        given = [name for name, v in choices.items() if v is not None]
        if given:
            raise InvalidRequest(f"option {given[0]!r} of the scand data source chooses a snapshot of a table: "
                                 "set option 'table' too", hint="Set option 'table'.")
        return {}
    out: Dict[str, Any] = {"table": table}
    for name in ("version", "snapshot_id"):
        value = _count_option(options, name)
        if value is not None:
            out[name] = value
    for name in ("ref", "as_of"):
        if choices[name] is not None:
            out[name] = choices[name]
    return out


def _count_option(options: Dict[str, str], name: str) -> Optional[int]:
    raw = options.get(name)
    if raw is None or str(raw).strip() == "":
        return None
    try:
        return int(str(raw))
    except ValueError:
        raise InvalidRequest(f"option {name!r} of the scand data source must be an integer, got {raw!r}",
                             hint=f"Fix option {name!r}.") from None


class ScandDataSource(_ds.DataSource):
    """``spark.read.format("scand")``: see the module doc for its options."""

    @classmethod
    def name(cls) -> str:
        return "scand"

    def schema(self) -> _st.StructType:
        # Only called without a user-given schema.
        columns = normalize_columns(self.options.get("columns")) or None
        with _connect(connection_options(self.options)) as conn:
            arrow_schema = conn.schema(_paths(self.options), columns, **table_options(self.options))
        return from_arrow_schema(arrow_schema, prefer_timestamp_ntz=True)

    def reader(self, schema: _st.StructType) -> "ScandReader":
        return ScandReader(self.options, schema)


@dataclass
class ScandPartition(_ds.InputPartition):
    """One endpoint of the plan: its ticket (bytes), the locations to read it
    from (empty: the planning server) and how to connect."""

    ticket: Optional[bytes]
    locations: List[str] = field(default_factory=list)
    conn_opts: Dict[str, Any] = field(default_factory=dict)
    index: int = 0


class ScandReader(_ds.DataSourceReader):
    """Plans one scand scan per Spark query: pushed filters, then one
    partition per endpoint. Picklable: it travels from the planner to the
    Python workers."""

    def __init__(self, options: Dict[str, str], schema: _st.StructType):
        self.conn_opts = connection_options(options)
        self.paths = _paths(options)
        self.table = table_options(options)
        # The schema's top-level names: the columns the query can see. Spark
        # gives the data source no narrower projection (see the module doc).
        self.columns = list(schema.fieldNames())
        self.schema = schema
        self.batch_rows = _count_option(options, "batch_rows")
        self.split_bytes = _count_option(options, "split_bytes")
        user_filter = options.get("filter")
        self.filters: List[str] = [str(user_filter)] if user_filter and str(user_filter).strip() else []
        self.pushed: List[str] = []

    def pushFilters(self, filters: List["_ds.Filter"]) -> Iterator["_ds.Filter"]:
        """Keeps the filters scand applies exactly (as SQL text) and yields the
        others, which Spark then applies to the rows it gets."""
        for f in filters:
            sql = translate_filter(f, self.schema)
            if sql is None:
                yield f
            else:
                self.pushed.append(sql)

    def request_filter(self) -> Optional[str]:
        """The request's filter: the user's ``filter`` option and the pushed
        filters, ANDed."""
        parts = self.filters + self.pushed
        if not parts:
            return None
        return " AND ".join(f"({p})" for p in parts) if len(parts) > 1 else parts[0]

    def partitions(self) -> Sequence[ScandPartition]:
        req = build_request(self.paths, self.columns, batch_rows=self.batch_rows, split_bytes=self.split_bytes,
                            filter=self.request_filter(), **self.table)
        with _connect(self.conn_opts) as conn:
            info = conn._plan(req)
        parts = [ScandPartition(ep.ticket.ticket, _locations(ep), self.conn_opts, i)
                 for i, ep in enumerate(info.endpoints)]
        # Spark wants at least one partition; a scan pruned to nothing reads none.
        return parts or [ScandPartition(None, [], self.conn_opts, 0)]

    def read(self, partition: ScandPartition) -> Iterator[pa.RecordBatch]:
        if partition.ticket is None:
            return
        yield from read_endpoint(partition)


def _locations(ep: flight.FlightEndpoint) -> List[str]:
    out = []
    for loc in ep.locations:
        uri = loc.uri.decode() if isinstance(loc.uri, bytes) else str(loc.uri)
        if uri and not uri.startswith("arrow-flight-reuse-connection:"):
            out.append(uri)
    return out


def read_endpoint(partition: ScandPartition) -> Iterator[pa.RecordBatch]:
    """The record batches of one endpoint, read by the package's own endpoint
    reader (``Connection.read_endpoint``): its locations in order, then the
    planning server; an unreachable replica moves on to the next, and a
    stream that breaks after batches have arrived resumes on the next replica
    from the next row, so a task never repeats or loses rows."""
    conn = _connect(partition.conn_opts, check=False)
    try:
        yield from conn.read_endpoint(partition.ticket, partition.locations)
    finally:
        conn.close()


# -- filters ------------------------------------------------------------------
#
# Spark applies a pushed filter in a WHERE clause: a row stays when the filter
# is true, and goes when it is false or NULL. scand's SQL filters have SQL's
# three-valued logic too (docs/filters.md), so comparisons, IN, IS [NOT] NULL,
# NOT and LIKE keep their meaning on NULLs, NOT included. Where the two differ:
#
# * NaN: Spark says NaN = NaN and orders NaN above every number; scand
#   compares floats as IEEE 754, where every comparison with NaN is false but
#   <>. So on float and double columns `x < v`, `x <= v`, `x = v` and
#   `x IN (...)` (v not NaN) mean the same in both, and `x > v` is sent as
#   `NOT (x <= v)`, which is true for NaN as in Spark; a NaN or infinite
#   literal is not pushed.
# * Timestamps: Spark hands the literal as a Python datetime whose zone
#   depends on the session; not pushed.
# * Decimal literals with more places than the column's scale: scand compares
#   them exactly (docs/filters.md, exact comparisons), as Spark does.
# * Binary, arrays, maps, structs as literals: scand's SQL has no literal for
#   them; not pushed.
# * An IN list that holds NULL: not pushed (rare; Spark's optimizer usually
#   removes them).


def translate_filter(f: "_ds.Filter", schema: _st.StructType) -> Optional[str]:
    """scand SQL with exactly the meaning of Spark filter ``f`` on a relation
    of ``schema``, or None when there is none (then Spark must apply it)."""
    if isinstance(f, _ds.Not):
        inner = translate_filter(f.child, schema)
        return None if inner is None else f"NOT ({inner})"
    dtype = _column_type(schema, f.attribute)
    if dtype is None:
        return None
    col = _column(f.attribute)
    if isinstance(f, _ds.IsNull):
        return f"{col} IS NULL"
    if isinstance(f, _ds.IsNotNull):
        return f"{col} IS NOT NULL"
    if isinstance(f, (_ds.StringStartsWith, _ds.StringEndsWith, _ds.StringContains)):
        return _like(col, dtype, f)
    if isinstance(f, _ds.In):
        values = [_literal(v, dtype) for v in f.value]
        if not values or any(v is None for v in values):
            return None
        return f"{col} IN ({', '.join(values)})"
    lit = _literal(f.value, dtype)
    if lit is None:
        return None
    if isinstance(f, _ds.EqualTo):
        return f"{col} = {lit}"
    if isinstance(f, _ds.EqualNullSafe):
        # A non-NULL literal (None is not pushed): never NULL, false for a NULL column.
        return f"({col} IS NOT NULL AND {col} = {lit})"
    is_float = isinstance(dtype, (_st.FloatType, _st.DoubleType))
    if isinstance(f, _ds.LessThan):
        return f"{col} < {lit}"
    if isinstance(f, _ds.LessThanOrEqual):
        return f"{col} <= {lit}"
    if isinstance(f, _ds.GreaterThan):
        return f"NOT ({col} <= {lit})" if is_float else f"{col} > {lit}"
    if isinstance(f, _ds.GreaterThanOrEqual):
        return f"NOT ({col} < {lit})" if is_float else f"{col} >= {lit}"
    return None


def _column_type(schema: _st.StructType, path: Tuple[str, ...]) -> Optional[_st.DataType]:
    t: _st.DataType = schema
    for name in path:
        if not isinstance(t, _st.StructType) or name not in t.fieldNames():
            return None
        t = t[name].dataType
    return t


def _column(path: Tuple[str, ...]) -> str:
    return ".".join('"' + p.replace('"', '""') + '"' for p in path)


def _string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _like(col: str, dtype: _st.DataType, f: "_ds.Filter") -> Optional[str]:
    if not isinstance(dtype, _st.StringType) or not isinstance(f.value, str):
        return None
    if getattr(dtype, "collation", "UTF8_BINARY") not in ("UTF8_BINARY", None):
        return None  # a collated string column compares other than by bytes
    escaped = f.value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    if isinstance(f, _ds.StringStartsWith):
        pattern = escaped + "%"
    elif isinstance(f, _ds.StringEndsWith):
        pattern = "%" + escaped
    else:
        pattern = "%" + escaped + "%"
    return f"{col} LIKE {_string(pattern)}"


_INTEGER_TYPES = (_st.ByteType, _st.ShortType, _st.IntegerType, _st.LongType)


def _literal(v: Any, dtype: _st.DataType) -> Optional[str]:
    """The scand SQL literal of Spark literal ``v`` compared with a column of
    ``dtype``, or None when it is not pushed (see the notes above)."""
    if v is None:
        return None
    if isinstance(dtype, _st.BooleanType):
        return ("TRUE" if v else "FALSE") if isinstance(v, bool) else None
    if isinstance(v, bool):
        return None
    if isinstance(dtype, _INTEGER_TYPES):
        return str(v) if isinstance(v, int) else None
    if isinstance(dtype, (_st.FloatType, _st.DoubleType)):
        if isinstance(v, int):
            v = float(v)
        if not isinstance(v, float) or math.isnan(v) or math.isinf(v):
            return None
        return repr(v)  # the shortest text that reads back as the same double
    if isinstance(dtype, _st.DecimalType):
        if isinstance(v, int):
            v = decimal.Decimal(v)
        if not isinstance(v, decimal.Decimal) or not v.is_finite():
            return None
        return format(v, "f")  # more places than the scale: scand compares exactly, as Spark does
    if isinstance(dtype, _st.StringType):
        if not isinstance(v, str) or getattr(dtype, "collation", "UTF8_BINARY") not in ("UTF8_BINARY", None):
            return None
        return _string(v)
    if isinstance(dtype, _st.DateType):
        if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
            return f"DATE '{v.isoformat()}'"
        return None
    return None
