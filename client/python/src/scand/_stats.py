"""IO figures of a scan, as the server reports them at the end of each stream."""

from __future__ import annotations

import html
import threading
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional, Tuple

import pyarrow as pa

__all__ = ["Stats", "StreamStats"]

# The keys of scand.v1.StreamStats (proto/scand/v1), the wire contract of a
# stream's figures. scand writes them under the proto field names with int64
# fields as JSON numbers; protojson writes int64 fields as strings (doubles
# that are not finite as "NaN", "Infinity") and, by default, lowerCamelCase
# names. Both encodings are read, proto names first.
_INT_KEYS = ("rows", "batches", "reads", "bytes_fetched", "bytes_used", "bytes_planned", "bytes_wasted",
             "bytes_unused", "cache_hits", "hole", "rows_read", "rows_filtered", "files")
_FLOAT_KEYS = ("io_seconds", "elapsed_seconds")


def _json_name(proto_name: str) -> str:
    """protojson's default key for a field: lowerCamelCase."""
    head, *rest = proto_name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def _lookup(meta: Dict[str, Any], key: str) -> Any:
    return meta[key] if key in meta else meta.get(_json_name(key))


def _int_value(v: Any) -> int:
    """An int64 field as a JSON number or a decimal string; 0 otherwise."""
    if isinstance(v, bool):
        return 0
    if isinstance(v, (int, float)):
        return int(v)
    if isinstance(v, str):
        try:
            return int(v.strip())
        except ValueError:
            return 0
    return 0


def _float_value(v: Any) -> float:
    """A double field as a JSON number or a string ("0.5", "NaN", "Infinity"); 0.0 otherwise."""
    if isinstance(v, bool):
        return 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip())
        except ValueError:
            return 0.0
    return 0.0


@dataclass(frozen=True)
class StreamStats:
    """The IO figures of one stream (one endpoint, one split of one file),
    from the JSON ``app_metadata`` of the stream's last message: a
    ``scand.v1.StreamStats`` under its proto field names with integers as
    JSON numbers (what scand sends), or as protojson writes it (integers as
    strings, lowerCamelCase names).

    ``extra`` keeps keys this client does not know (newer servers)."""

    endpoint: int
    #: the first file the stream read
    path: str = ""
    rows: int = 0
    batches: int = 0
    reads: int = 0
    #: bytes read from storage, each one used, wasted or unused:
    #: bytes_fetched == bytes_used + bytes_wasted + bytes_unused
    bytes_fetched: int = 0
    #: fetched bytes handed to the decoder, each once however often read
    bytes_used: int = 0
    bytes_planned: int = 0
    #: gap bytes read only to merge neighbouring ranges
    bytes_wasted: int = 0
    #: bytes read ahead that the decoder never asked for (0 from older servers)
    bytes_unused: int = 0
    cache_hits: int = 0
    hole: int = 0
    io_seconds: float = 0.0
    elapsed_seconds: float = 0.0
    #: rows decoded from the file, and those the filter rejected (0 from
    #: servers before filters); rows_read - rows_filtered were sent, before the limit
    rows_read: int = 0
    rows_filtered: int = 0
    #: the files the stream read, in order: one, or several for an endpoint
    #: that packs small files (older servers name only the first, in path)
    files: int = 0
    paths: Tuple[str, ...] = ()
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_metadata(cls, endpoint: int, meta: Dict[str, Any]) -> "StreamStats":
        known: Dict[str, Any] = {"path": str(meta.get("path", ""))}
        for k in _INT_KEYS:
            known[k] = _int_value(_lookup(meta, k))
        for k in _FLOAT_KEYS:
            known[k] = _float_value(_lookup(meta, k))
        paths = meta.get("paths")
        known["paths"] = tuple(str(p) for p in paths) if isinstance(paths, list) else ()
        if not known["paths"] and known["path"]:
            known["paths"] = (known["path"],)  # a server older than paths
        known["files"] = known["files"] or len(known["paths"])
        names = set(known) | {_json_name(k) for k in known}
        extra = {k: v for k, v in meta.items() if k not in names}
        return cls(endpoint=endpoint, extra=extra, **known)

    def as_dict(self) -> Dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        d["paths"] = list(self.paths)
        d.update(self.extra)
        return d


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # unreachable


def _fmt_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


class Stats:
    """The IO figures of one scan: one :class:`StreamStats` per stream that
    has ended (in endpoint order, in ``streams``), their sums as attributes
    (``rows``, ``reads``, ``bytes_fetched``, ...), and the plan's totals.

    A scan fills its Stats while it runs (from the reader's worker threads);
    ``done`` turns True when the scan has ended, and ``complete`` tells
    whether every stream was read to its end. Get it from
    ``conn.last_stats`` after a scan, or pass your own to
    ``conn.scan(..., stats=scand.Stats())``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: Dict[int, StreamStats] = {}
        self.paths: List[str] = []
        self.columns: List[str] = []
        #: endpoints (streams) the server planned
        self.endpoints: int = 0
        #: rows the server planned to send (FlightInfo.total_records)
        self.total_records: int = -1
        #: compressed bytes of the projected columns (FlightInfo.total_bytes)
        self.total_bytes: int = -1
        #: rows the client received (all streams, whether or not they ended)
        self.rows_received: int = 0
        #: seconds from the start of planning to the end of the scan (client clock)
        self.wall_seconds: float = 0.0
        #: True once the scan has ended (read to the end, failed or cancelled)
        self.done: bool = False
        #: True when every stream was read to its end
        self.complete: bool = False
        #: the error that ended the scan, if any
        self.error: Optional[BaseException] = None
        #: the request's filter (SQL text, or a pyarrow Expression), None without one
        self.filter: Any = None
        #: what the server's pruning kept (scand.PlanStats), None when it sent none
        self.plan: Any = None
        #: times an endpoint moved to another replica (before its first
        #: batch, or resumed after some); a moved endpoint's IO figures are
        #: its last stream's only
        self.failovers: int = 0

    # -- filled by the scan -------------------------------------------------

    def _add_stream(self, s: StreamStats) -> None:
        with self._lock:
            self._streams[s.endpoint] = s

    def _add_rows(self, n: int) -> None:
        with self._lock:
            self.rows_received += n

    def _add_failover(self) -> None:
        with self._lock:
            self.failovers += 1

    # -- reading ------------------------------------------------------------

    @property
    def streams(self) -> List[StreamStats]:
        """The streams that have ended, in endpoint order."""
        with self._lock:
            return [self._streams[k] for k in sorted(self._streams)]

    def _sum(self, name: str):
        return sum(getattr(s, name) for s in self.streams)

    @property
    def file_paths(self) -> List[str]:
        """The distinct files the ended streams read, in endpoint order (an
        endpoint that packs small files reads several)."""
        seen: Dict[str, None] = {}
        for s in self.streams:
            for p in s.paths or (s.path,):
                seen.setdefault(p, None)
        return list(seen)

    @property
    def files(self) -> int:
        """Distinct files the ended streams read."""
        return len(self.file_paths)

    rows = property(lambda self: self._sum("rows"), doc="rows sent, summed over ended streams")
    batches = property(lambda self: self._sum("batches"), doc="record batches sent")
    reads = property(lambda self: self._sum("reads"), doc="requests sent to storage")
    bytes_fetched = property(lambda self: self._sum("bytes_fetched"),
                             doc="bytes read from storage: bytes_used + bytes_wasted + bytes_unused")
    bytes_used = property(lambda self: self._sum("bytes_used"), doc="fetched bytes handed to the decoder")
    bytes_planned = property(lambda self: self._sum("bytes_planned"), doc="bytes of the column chunks planned")
    bytes_wasted = property(lambda self: self._sum("bytes_wasted"), doc="gap bytes read to merge ranges")
    bytes_unused = property(lambda self: self._sum("bytes_unused"), doc="bytes read ahead, never needed")
    cache_hits = property(lambda self: self._sum("cache_hits"), doc="metadata served from the server's cache")
    io_seconds = property(lambda self: self._sum("io_seconds"), doc="server time waiting on storage, summed")
    elapsed_seconds = property(lambda self: self._sum("elapsed_seconds"), doc="server time of the streams, summed")
    rows_read = property(lambda self: self._sum("rows_read"), doc="rows decoded from the files")
    rows_filtered = property(lambda self: self._sum("rows_filtered"), doc="rows decoded that the filter rejected")

    def as_dict(self) -> Dict[str, Any]:
        """The summed figures as a dict (no per-stream list)."""
        return {
            "endpoints": self.endpoints, "streams": len(self.streams), "files": self.files,
            "total_records": self.total_records, "total_bytes": self.total_bytes,
            "rows": self.rows, "rows_received": self.rows_received, "batches": self.batches,
            "rows_read": self.rows_read, "rows_filtered": self.rows_filtered,
            "reads": self.reads, "bytes_fetched": self.bytes_fetched, "bytes_used": self.bytes_used,
            "bytes_planned": self.bytes_planned, "bytes_wasted": self.bytes_wasted,
            "bytes_unused": self.bytes_unused, "cache_hits": self.cache_hits, "io_seconds": self.io_seconds,
            "elapsed_seconds": self.elapsed_seconds, "wall_seconds": self.wall_seconds,
            "done": self.done, "complete": self.complete, "failovers": self.failovers,
        }

    def to_table(self) -> pa.Table:
        """One row per ended stream (endpoint, path, rows, reads, bytes_*...)."""
        rows = [s.as_dict() for s in self.streams]
        names = [f.name for f in fields(StreamStats) if f.name != "extra"]
        if not rows:
            types = {"endpoint": pa.int64(), "path": pa.string(), "io_seconds": pa.float64(),
                     "elapsed_seconds": pa.float64(), "paths": pa.list_(pa.string())}
            return pa.table({n: pa.array([], types.get(n, pa.int64())) for n in names})
        return pa.Table.from_pylist(rows)

    def to_pandas(self):
        """``to_table().to_pandas()``: one row per stream, handy for plots."""
        return self.to_table().to_pandas()

    def _state(self) -> str:
        if not self.done:
            return "running"
        if self.complete:
            return "complete"
        if self.error is not None:
            return f"failed: {type(self.error).__name__}"
        return "stopped early"

    def _summary_rows(self) -> List[tuple]:
        fetched = self.bytes_fetched

        def part(n: int, what: str) -> str:
            pct = f", {100 * n / fetched:.0f}%" if fetched else ""
            return f"{_fmt_bytes(n)} ({n:,}{pct}, {what})"

        files = self.file_paths
        named = ", ".join(files[:3]) + (f", ... {len(files) - 3} more" if len(files) > 3 else "")
        out = [
            ("state", self._state()),
            ("streams", f"{len(self.streams)} of {self.endpoints} ended, {len(files)} file(s)"
                        + (f": {named}" if files else "")),
            ("rows", f"{self.rows:,}" + (f" (planned {self.total_records:,})" if self.total_records >= 0 else "")),
            ("batches", f"{self.batches:,}"),
        ]
        if self.filter is not None or self.rows_read:
            out.append(("rows read", f"{self.rows_read:,} decoded, {self.rows_filtered:,} rejected by the filter"))
        if self.plan is not None and self.plan.files:
            out.append(("pruned", f"files {self.plan.files_kept:,} of {self.plan.files:,} kept, row groups "
                                  f"{self.plan.row_groups_kept:,} of {self.plan.row_groups:,} kept"))
        out += [
            ("reads", f"{self.reads:,}"),
            ("bytes fetched", f"{_fmt_bytes(fetched)} ({fetched:,}) = used + wasted + unused"),
            ("  used", part(self.bytes_used, "handed to the decoders")),
            ("  wasted", part(self.bytes_wasted, "gaps read to merge requests")),
            ("  unused", part(self.bytes_unused, "read ahead, never needed")),
            ("cache hits", f"{self.cache_hits:,}"),
            ("io time", f"{_fmt_seconds(self.io_seconds)} (server, summed over streams)"),
            ("wall time", _fmt_seconds(self.wall_seconds)),
        ]
        if self.failovers:
            out.append(("failovers", f"{self.failovers:,} (endpoints moved to another replica)"))
        return out

    def __repr__(self) -> str:
        return (f"<scand.Stats {self._state()}: {self.rows:,} rows, {len(self.streams)}/{self.endpoints} streams, "
                f"{self.reads:,} reads, {_fmt_bytes(self.bytes_fetched)} fetched, "
                f"{_fmt_bytes(self.bytes_used)} used, wall {_fmt_seconds(self.wall_seconds)}>")

    def __str__(self) -> str:
        rows = self._summary_rows()
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)

    def _repr_html_(self) -> str:
        esc = html.escape
        out = ["<div><b>scand scan stats</b>", "<table>"]
        for k, v in self._summary_rows():
            out.append(f"<tr><th style='text-align:left'>{esc(k)}</th><td style='text-align:left'>{esc(v)}</td></tr>")
        out.append("</table>")
        streams = self.streams
        if streams:
            cols = ["endpoint", "path", "files", "rows", "batches", "reads", "bytes_fetched", "bytes_used",
                    "bytes_wasted", "bytes_unused", "io_seconds", "elapsed_seconds"]
            out.append("<details><summary>per stream</summary><table><tr>")
            out.extend(f"<th>{esc(c)}</th>" for c in cols)
            out.append("</tr>")
            for s in streams[:200]:
                cells = []
                for c in cols:
                    v = getattr(s, c)
                    cells.append(f"<td>{esc(f'{v:.4f}' if isinstance(v, float) else str(v))}</td>")
                out.append("<tr>" + "".join(cells) + "</tr>")
            if len(streams) > 200:
                out.append(f"<tr><td colspan={len(cols)}>... {len(streams) - 200} more</td></tr>")
            out.append("</table></details>")
        out.append("</div>")
        return "".join(out)
