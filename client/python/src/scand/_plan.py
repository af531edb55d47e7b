"""What a scan would do, from the server's plan (GetFlightInfo), without
reading any data."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Dict, List

import pyarrow as pa

from ._stats import _fmt_bytes, _fmt_seconds
from ._ticket import PlanEndpoint, PlanFile, plan_files

__all__ = ["Plan", "PlanEndpoint", "PlanFile"]


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
    note: str = ""
    columns: List[str] = field(default_factory=list)
    # The splits, decoded from the endpoints' tickets (scand._ticket), in
    # scan order; an undecodable ticket is a PlanEndpoint with no path.
    splits: List[PlanEndpoint] = field(default_factory=list)

    @property
    def files(self) -> List[PlanFile]:
        """The files the scan reads, in scan order, with their endpoints."""
        return plan_files(self.splits)

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
            "files": [vars(f) for f in self.files],
            "splits": [{"path": e.path, "row_groups": list(e.row_groups), "rows": e.rows, "limit": e.limit}
                       for e in self.splits],
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
        lines += _splits_lines(self.files, self.splits)
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        out = ["<div><b>scand scan plan</b><table>"]
        for k, v in self._rows():
            out.append(f"<tr><th style='text-align:left'>{esc(k)}</th><td style='text-align:left'>{esc(v)}</td></tr>")
        out.append("</table>")
        out.append(f"<details><summary>schema</summary><pre>{esc(str(self.schema))}</pre></details>")
        splits = "\n".join(_splits_lines(self.files, self.splits)).strip("\n")
        if splits:
            out.append(f"<details><summary>files and endpoints</summary><pre>{esc(splits)}</pre></details>")
        if self.note:
            out.append(f"<p><small>{esc(self.note)}</small></p>")
        out.append("</div>")
        return "".join(out)


# The per-endpoint part of the report prints the lines `scand explain`
# prints (client/plan.go Plan.String): same columns, numbers and units.

def _splits_lines(files: List[PlanFile], splits: List[PlanEndpoint]) -> List[str]:
    lines: List[str] = []
    if files:
        lines += ["", "files:"] + _aligned([["path", "format", "size", "endpoints", "rows"]] + [
            [f.path, f.format, _go_bytes(f.size), str(f.endpoints), f"{f.rows:,}"] for f in files])
    if splits:
        table = [["#", "path", "row groups", "rows"]]
        for i, e in enumerate(splits):
            rows = f"{e.rows:,}"
            if 0 < e.limit < e.rows:
                rows = f"{e.limit:,} of {e.rows:,} (limit)"
            table.append([str(i), e.path or "(ticket not decoded)", _groups(e.row_groups), rows])
        lines += ["", "endpoints:"] + _aligned(table)
    return lines


def _aligned(table: List[List[str]]) -> List[str]:
    """Rows indented by two, columns padded by two as Go's tabwriter pads
    them; the last column is not padded."""
    widths = [max(len(r[j]) for r in table) for j in range(len(table[0]) - 1)]
    return ["  " + "".join(c.ljust(w + 2) for c, w in zip(r, widths)) + r[-1] for r in table]


def _groups(gs: List[int]) -> str:
    """Row group indexes with runs collapsed: "0-3, 7"."""
    if not gs:
        return "-"
    parts, i = [], 0
    while i < len(gs):
        j = i
        while j + 1 < len(gs) and gs[j + 1] == gs[j] + 1:
            j += 1
        parts.append(str(gs[i]) if i == j else f"{gs[i]}-{gs[j]}")
        i = j + 1
    return ", ".join(parts)


def _go_bytes(n: int) -> str:
    """A byte count as client/plan.go fmtBytes prints it: 1.5 MiB."""
    if n < 1024:
        return f"{n} B"
    div, exp, m = 1024, 0, n // 1024
    while m >= 1024:
        div, exp, m = div * 1024, exp + 1, m // 1024
    return f"{n / div:.1f} {'KMGTPE'[exp]}iB"
