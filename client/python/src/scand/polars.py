"""polars LazyFrames over scand scans, through polars' IO plugin interface.

    import polars as pl
    import scand, scand.polars

    conn = scand.connect()
    lf = scand.polars.scan(conn, "trips/*.parquet")
    lf.filter(pl.col("fare") > 20).select("city", "fare").head(100).collect()
    sales = scand.polars.scan(conn, table="warehouse/sales", version=12)   # a Delta or Iceberg table

Each ``collect()`` runs one scand scan. What polars pushes into the scan
reaches the server: the projection (the columns the query uses) becomes the
request's ``columns``, a slice's ``n_rows`` its ``limit``, and the batch size
its ``batch_rows``. ``filter=`` (SQL text or a pyarrow Expression, as in
``Connection.scan``) filters on the server, so the frame holds only those
rows. Predicates polars pushes (``lf.filter(...)``) are sent to the server
as far as they mean the same there (comparisons on integer, decimal,
string, boolean, date and timestamp columns, ``==`` / ``!=`` on
categoricals, ``is_in``, null tests, and/or/not, ``is_between``,
``str.starts_with``: see :mod:`scand._polars_filter`), and polars applies
the whole predicate to each batch it receives as well.

polars is an optional dependency (``pip install polars``, or the ``polars``
extra), imported when :func:`scan` is called.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional

from ._connection import ColumnsArg, Connection, PathsArg, normalize_columns
from ._filter import FilterArg, encode_filter, is_expression
from ._polars_filter import server_filter

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl
    import pyarrow as pa

__all__ = ["scan"]


def _polars():
    """polars and its register_io_source, or an ImportError that says what to install."""
    try:
        pl = importlib.import_module("polars")
    except ImportError as e:
        raise ImportError("scand.polars needs polars (>= 2.1): pip install polars") from e
    try:
        plugins = importlib.import_module("polars.io.plugins")
        return pl, plugins.register_io_source
    except (ImportError, AttributeError) as e:
        raise ImportError(f"polars {pl.__version__} has no polars.io.plugins.register_io_source, which "
                          f"scand.polars needs: pip install -U polars") from e


def scan(conn: Connection, paths: PathsArg = None, columns: ColumnsArg = None, batch_size: Optional[int] = None, *,
         filter: FilterArg = None, split_bytes: Optional[int] = None, progress: Optional[bool] = None,
         max_workers: int = 4, read_ahead: int = 4, table: Optional[str] = None, snapshot_id: Optional[int] = None,
         ref: Optional[str] = None, version: Optional[int] = None, as_of: Any = None) -> "pl.LazyFrame":
    """A ``polars.LazyFrame`` of a scan of ``paths`` (or of ``table``) on
    ``conn``'s server.

    Args:
        conn: a :class:`scand.Connection` (``scand.connect()``, ``scand.serve()``).
        paths, columns: as in :meth:`Connection.scan`; ``columns`` (a list or
            a comma-separated str) is what the frame holds, and polars'
            projection picks among them.
        batch_size: rows per record batch asked of the server; None: the
            batch size polars asks for.
        filter: rows filtered on the server (SQL text, or a
            ``pyarrow.compute.Expression``), as in :meth:`Connection.scan`,
            with scand's semantics (SQL's, or pyarrow's): the frame holds
            the rows it keeps. polars' own ``filter`` is pushed to the
            server where its meaning is the same there, and applied by polars.
        split_bytes, progress, max_workers, read_ahead: as in
            :meth:`Connection.scan`.
        table, snapshot_id, ref, version, as_of: instead of ``paths``, a
            Delta or Iceberg table and the snapshot to read, as in
            :meth:`Connection.scan`: the frame is that snapshot's rows,
            deletes applied, with the table's column names. Each
            ``collect()`` reads the same snapshot only when one is named
            (``version``, ``snapshot_id``, ``as_of``); without one it reads
            the table's latest.

    The frame's schema is asked of the server now (GetSchema), so unknown
    paths or columns raise here; the data is scanned at each ``collect()``,
    whose IO figures are then ``conn.last_stats``.
    """
    pl, register_io_source = _polars()
    wanted = normalize_columns(columns)
    tbl = {k: v for k, v in dict(table=table, snapshot_id=snapshot_id, ref=ref, version=version,
                                 as_of=as_of).items() if v is not None}
    arrow_schema = conn.schema(paths, wanted, **tbl)
    requested = _request_columns_by_field(wanted, arrow_schema)
    if filter is not None:  # a bad filter raises now, not at collect()
        encode_filter(filter, conn.schema(paths, **tbl) if is_expression(filter) else None)
    scan_options: Dict[str, Any] = dict(filter=filter, split_bytes=split_bytes, progress=progress,
                                        max_workers=max_workers, read_ahead=read_ahead, **tbl)

    def source(with_columns: Optional[List[str]], predicate: Optional["pl.Expr"], n_rows: Optional[int],
               batch_size_hint: Optional[int]) -> Iterator["pl.DataFrame"]:
        # polars slices before it filters: a pushed n_rows counts rows of the
        # source, so it is the server's limit even when a predicate comes too.
        req_columns = _project(with_columns, wanted, requested)
        options = dict(scan_options, filter=_request_filter(filter, predicate, n_rows, arrow_schema))
        # An empty projection asks for no columns: only row counts travel.
        # polars 2.1 sends none (for select(pl.len()) it projects the
        # schema's first column instead); the branch serves a polars that
        # does. A predicate applied here needs its columns, so it keeps them.
        no_columns = with_columns is not None and not with_columns and predicate is None
        reader = conn.scan(paths, columns=None if no_columns else req_columns, limit=n_rows,
                           batch_rows=batch_size if batch_size is not None else batch_size_hint,
                           no_columns=no_columns, **options)
        try:
            for batch in reader:
                if no_columns:
                    yield _height_only(pl, batch.num_rows)
                    continue
                df = pl.from_arrow(batch)
                if predicate is not None:
                    df = df.filter(predicate)
                yield df
        except GeneratorExit:
            # polars stops reading once it has n_rows. The server stops at
            # n_rows too, so the rest is at most a batch or so: read it, and
            # the streams end with their IO figures in conn.last_stats
            # instead of being cancelled without them.
            if n_rows is not None:
                _drain(reader)
            raise
        finally:
            reader.close()  # a query that stopped early (an error, a satisfied slice) ends the scan's streams

    return register_io_source(source, schema=pl.Schema(arrow_schema), explain_name="scand",
                              explain_detail=f"{conn.location} " + (f"table={table!r}" if table is not None
                                                                     else f"paths={paths!r}"))


def _height_only(pl, rows: int) -> "pl.DataFrame":
    """A frame of no columns and ``rows`` rows (what an empty projection
    asks of the source)."""
    return pl.DataFrame(height=rows)


def _drain(reader: "pa.RecordBatchReader") -> None:
    try:
        for _ in reader:
            pass
    except Exception:  # noqa: BLE001 - the query has its rows; the scan's Stats keep the error
        pass


def _request_columns_by_field(wanted: List[str], schema: "pa.Schema") -> Dict[str, List[str]]:
    """The request's column names behind each top-level field of the frame.

    With ``columns=None`` a field is its own column. A dotted name picks a
    struct's field (``"pickup.lat"`` gives the field ``pickup``), and several
    may share one field (``"pickup.lat", "pickup.lon"``).
    """
    if not wanted:
        return {name: [name] for name in schema.names}
    by_field: Dict[str, List[str]] = {}
    for name in wanted:
        field = name if name in schema.names else name.split(".", 1)[0]
        by_field.setdefault(field, []).append(name)
    return by_field


def _project(with_columns: Optional[List[str]], wanted: List[str],
             requested: Dict[str, List[str]]) -> Optional[List[str]]:
    """The request's columns for polars' projection (with_columns None: every
    column of the frame, which is ``wanted``, or all when that is empty)."""
    if with_columns is None:
        return wanted or None
    return [name for field in with_columns for name in requested[field]]


def _request_filter(user: FilterArg, predicate: Optional["pl.Expr"], n_rows: Optional[int],
                    schema: "pa.Schema") -> FilterArg:
    """The request's filter: the user's ``filter=`` and what of polars'
    predicate translates exactly, ANDed.

    Nothing of the predicate is sent with an ``n_rows``: polars slices the
    source's rows before it filters them, and the server's limit counts rows
    after its filter. Nor beside a ``filter=`` given as a pyarrow Expression,
    which travels as Substrait and does not combine with SQL text.
    """
    if predicate is None or n_rows is not None or (user is not None and not isinstance(user, str)):
        return user
    pushed = server_filter(predicate, schema)
    if pushed is None:
        return user
    return pushed if user is None else f"({user}) AND ({pushed})"
