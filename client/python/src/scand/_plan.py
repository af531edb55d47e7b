"""What a scan would do, from the server's plan (GetFlightInfo), without
reading any data."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional

import pyarrow as pa

from ._stats import _fmt_bytes, _fmt_seconds, _int_value, _json_name, _lookup
from ._ticket import PlanEndpoint, PlanFile, plan_files

__all__ = ["Plan", "PlanEndpoint", "PlanFile", "PlanStats"]


@dataclass(frozen=True)
class PlanStats:
    """What the server's pruning kept of a scan, level by level (a
    ``scand.v1.PlanStats``, the JSON ``app_metadata`` of its FlightInfo):

    * ``files`` the paths matched, of which ``files_pruned_by_partition``
      were dropped by a filter on hive partition columns (their footers
      never read) and ``files_pruned_by_stats`` by file-level statistics;
    * ``row_groups`` (ORC stripes) in the files whose footers were read, of
      which ``row_groups_pruned`` were dropped by their statistics and
      ``row_groups_pruned_by_bloom`` by their bloom filters after;
    * ``bytes_without_filter`` / ``bytes_with_filter``: compressed bytes of
      the projected and filter columns the scan would fetch without the
      filter, and fetches with it;
    * ``rows_with_filter``: rows of the row groups kept, an upper bound of
      the rows the filter returns, of ``rows_without_filter``;
    * ``filter``: the filter as the server understood it, in SQL;
    * for a table (Iceberg), its own planning before those levels:
      ``manifests_read`` and ``manifests_skipped`` (by their partition
      summaries), ``table_files_pruned`` (data files dropped by partition
      values and column statistics; -1 when the table does not say how
      many it has) and ``delete_files`` attached to the files kept.

    ``extra`` keeps keys this client does not know (newer servers)."""

    files: int = 0
    files_pruned_by_partition: int = 0
    files_pruned_by_stats: int = 0
    row_groups: int = 0
    row_groups_pruned: int = 0
    row_groups_pruned_by_bloom: int = 0
    bytes_without_filter: int = 0
    bytes_with_filter: int = 0
    rows_with_filter: int = 0
    rows_without_filter: int = 0
    filter: str = ""
    manifests_read: int = 0
    manifests_skipped: int = 0
    table_files_pruned: int = 0
    delete_files: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_metadata(cls, meta: Any) -> Optional["PlanStats"]:
        """From a FlightInfo's app_metadata (bytes of JSON, or a dict);
        None when there is none or it is not a JSON object."""
        if isinstance(meta, (bytes, bytearray, memoryview, pa.Buffer)):
            raw = meta.to_pybytes() if isinstance(meta, pa.Buffer) else bytes(meta)
            if not raw:
                return None
            try:
                meta = json.loads(raw)
            except ValueError:
                return None
        if not isinstance(meta, dict):
            return None
        known: Dict[str, Any] = {}
        for f in fields(cls):
            if f.name in ("filter", "extra"):
                continue
            known[f.name] = _int_value(_lookup(meta, f.name))
        known["filter"] = str(meta.get("filter") or "")
        names = set(known) | {_json_name(k) for k in known}
        extra = {k: v for k, v in meta.items() if k not in names}
        return cls(extra=extra, **known)

    @property
    def files_kept(self) -> int:
        return self.files - self.files_pruned_by_partition - self.files_pruned_by_stats

    @property
    def row_groups_kept(self) -> int:
        return self.row_groups - self.row_groups_pruned - self.row_groups_pruned_by_bloom

    def as_dict(self) -> Dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        d.update(files_kept=self.files_kept, row_groups_kept=self.row_groups_kept)
        d.update(self.extra)
        return d

    def rows(self) -> List[tuple]:
        """(label, text) pairs, the levels cheapest first."""
        def pct(part: int, whole: int) -> str:
            return f" ({100 * part / whole:.0f}%)" if whole else ""

        out = []
        if self.manifests_read or self.manifests_skipped:
            pruned = "an unknown number" if self.table_files_pruned < 0 else f"{self.table_files_pruned:,}"
            out += [
                ("manifests", f"{self.manifests_read:,} read, {self.manifests_skipped:,} skipped by partition summaries"),
                ("table data files", f"{pruned} pruned by partition values and column statistics; "
                                     f"{self.delete_files:,} delete files attached"),
            ]
        if self.filter:
            out.append(("filter (as the server read it)", self.filter))
        out += [
            ("files", f"{self.files_kept:,} of {self.files:,} kept: {self.files_pruned_by_partition:,} pruned by "
                      f"partition, {self.files_pruned_by_stats:,} by statistics"),
            ("row groups", f"{self.row_groups_kept:,} of {self.row_groups:,} kept{pct(self.row_groups_kept, self.row_groups)}, "
                           f"{self.row_groups_pruned:,} pruned by statistics, {self.row_groups_pruned_by_bloom:,} by bloom "
                           f"filters (in files whose footers were read)"),
            ("bytes with filter", f"{_fmt_bytes(self.bytes_with_filter)} ({self.bytes_with_filter:,}) of "
                                  f"{_fmt_bytes(self.bytes_without_filter)} without"
                                  f"{pct(self.bytes_with_filter, self.bytes_without_filter)}"),
            ("rows with filter", f"at most {self.rows_with_filter:,} of {self.rows_without_filter:,} "
                                 f"(the rows of the row groups kept)"),
        ]
        return out


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
    #: what pruning kept (files, row groups, bytes, rows), from the server;
    #: None when it sends none (servers before filters)
    stats: Optional[PlanStats] = None
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
            "stats": self.stats.as_dict() if self.stats is not None else None,
            "files": [vars(f) for f in self.files],
            "splits": [{"path": e.path, "row_groups": list(e.row_groups), "rows": e.rows, "limit": e.limit,
                        "more": [{"path": m.path, "row_groups": list(m.row_groups), "rows": m.rows} for m in e.more]}
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
        if req.get("filter"):
            rows.append(("filter", req["filter"]))
        elif req.get("filter_substrait"):
            rows.append(("filter", "a pyarrow Expression, as Substrait"))
        if self.stats is not None:
            rows += self.stats.rows()
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
            table += _endpoint_rows(i, e)
        lines += ["", "endpoints:"] + _aligned(table)
    return lines


def _endpoint_rows(i: int, e: PlanEndpoint) -> List[List[str]]:
    """Endpoint i's rows of the endpoints table, as client/plan.go
    writeEndpoint: one per file, further files marked "+", then a line
    with the endpoint's total (and limit) for an endpoint of several."""
    if not e.more:
        rows = f"{e.rows:,}"
        if 0 < e.limit < e.rows:
            rows = f"{e.limit:,} of {e.rows:,} (limit)"
        return [[str(i), e.path or "(ticket not decoded)", _groups(e.row_groups), rows]]
    files = e.files()
    out = [[str(i) if j == 0 else "+", f.path, _groups(f.row_groups), f"{f.rows:,}"] for j, (f, _) in enumerate(files)]
    total = f"{e.all_rows:,}"
    if 0 < e.limit < e.all_rows:
        total = f"{e.limit:,} of {e.all_rows:,} (limit)"
    out.append(["", f"(endpoint {i}: {len(files)} files)", "", total])
    return out


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
