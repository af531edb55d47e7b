"""What a scan would do, from the server's plan (GetFlightInfo), without
reading any data."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Dict, List

import pyarrow as pa

from ._stats import _fmt_bytes, _fmt_seconds

__all__ = ["Plan"]

RANGES_NOTE = ("Per-split files, row groups and byte ranges are not reported by the server yet "
               "(endpoint tickets are opaque); they come with a later protocol version.")


@dataclass(frozen=True)
class Plan:
    """The plan of a scan, as :meth:`Connection.explain` returns it.

    ``min_reads`` is a lower bound of the storage requests: every split costs
    at least one (coalesced) read; footers come from the server's metadata
    cache after the first scan of a file. ``stats.reads`` of a real scan
    gives the exact figure.
    """

    request: Dict[str, Any]
    schema: pa.Schema
    total_records: int
    total_bytes: int
    endpoints: int
    planning_seconds: float
    ordered: bool = True
    note: str = RANGES_NOTE
    columns: List[str] = field(default_factory=list)

    @property
    def paths(self) -> List[str]:
        return list(self.request.get("paths", []))

    @property
    def min_reads(self) -> int:
        return self.endpoints

    @property
    def bytes_per_endpoint(self) -> float:
        return self.total_bytes / self.endpoints if self.endpoints else 0.0

    def as_dict(self) -> Dict[str, Any]:
        return {
            "request": dict(self.request),
            "columns": list(self.columns),
            "total_records": self.total_records,
            "total_bytes": self.total_bytes,
            "endpoints": self.endpoints,
            "min_reads": self.min_reads,
            "bytes_per_endpoint": self.bytes_per_endpoint,
            "ordered": self.ordered,
            "planning_seconds": self.planning_seconds,
            "note": self.note,
        }

    def _rows(self) -> List[tuple]:
        req = self.request
        rows = [("paths", ", ".join(self.paths))]
        if req.get("columns"):
            rows.append(("columns requested", ", ".join(req["columns"])))
        rows.append(("columns", f"{len(self.columns)}: {', '.join(self.columns)}"))
        for k in ("limit", "batch_rows", "split_bytes"):
            if req.get(k):
                rows.append((k, f"{req[k]:,}"))
        rows += [
            ("rows", f"{self.total_records:,}"),
            ("bytes to read", f"{_fmt_bytes(self.total_bytes)} ({self.total_bytes:,}, compressed, projected columns)"),
            ("endpoints", f"{self.endpoints} split(s), {_fmt_bytes(self.bytes_per_endpoint)} each on average"),
            ("reads", f"at least {self.min_reads} (one or more coalesced reads per split)"),
            ("planning time", _fmt_seconds(self.planning_seconds)),
        ]
        return rows

    def __repr__(self) -> str:
        return (f"<scand.Plan {self.total_records:,} rows, {_fmt_bytes(self.total_bytes)} in "
                f"{self.endpoints} endpoint(s), {len(self.columns)} column(s), paths={self.paths!r}>")

    def __str__(self) -> str:
        rows = self._rows()
        w = max(len(k) for k, _ in rows)
        lines = [f"{k:<{w}}  {v}" for k, v in rows]
        lines.append(self.note)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        out = ["<div><b>scand scan plan</b><table>"]
        for k, v in self._rows():
            out.append(f"<tr><th style='text-align:left'>{esc(k)}</th><td style='text-align:left'>{esc(v)}</td></tr>")
        out.append("</table>")
        out.append(f"<details><summary>schema</summary><pre>{esc(str(self.schema))}</pre></details>")
        out.append(f"<p><small>{esc(self.note)}</small></p></div>")
        return "".join(out)
