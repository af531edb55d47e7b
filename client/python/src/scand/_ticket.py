"""The per-endpoint figures of a plan, decoded from the endpoints' tickets.

A ticket is a scand.v1.ScanTask protobuf (proto/scand/v1/scan.proto), inside
a scand.v1.SignedEnvelope when the server signs tickets (ticket.proto). The
Go client decodes it the same way (client/plan.go): read without verifying,
since the client only describes it and the server verifies it when it comes
back. The format is internal to scand; a ticket that does not decode leaves
its endpoint's path empty and its rows at zero rather than failing the plan.

pyarrow does not bring protobuf, so this reads the few fields needed with a
minimal wire-format reader instead of generated code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Tuple

__all__ = ["PlanEndpoint", "PlanFile", "decode_ticket", "plan_files"]

# Field numbers; they are stable (the proto files reserve retired ones).
_ENVELOPE_CLAIMS, _ENVELOPE_MAC = 3, 4
_CLAIMS_PAYLOAD = 5
_TASK_PATH, _TASK_SIZE, _TASK_FORMAT, _TASK_ROW_GROUPS, _TASK_LIMIT, _TASK_ROWS = 1, 2, 4, 5, 7, 10
_TASK_MORE = 18  # further files of an endpoint of several (ScanTask.more)
_FORMATS = {1: "parquet", 2: "orc"}


@dataclass(frozen=True)
class PlanEndpoint:
    """One split: consecutive row groups (ORC stripes) of one file, or
    several whole small files read one after another in one stream
    (``more``: the further files, each with its own path, row groups, rows,
    size and format). ``rows`` is the rows in ``path``'s row groups;
    ``limit`` caps what the endpoint returns across all its files (0: all
    of ``all_rows``)."""

    path: str = ""
    row_groups: List[int] = field(default_factory=list)
    rows: int = 0
    limit: int = 0
    size: int = 0
    format: str = "unknown"
    more: List["PlanEndpoint"] = field(default_factory=list)

    @property
    def all_rows(self) -> int:
        return self.rows + sum(m.rows for m in self.more)

    @property
    def returns(self) -> int:
        rows = self.all_rows
        return self.limit if 0 < self.limit < rows else rows

    def files(self) -> List[Tuple["PlanEndpoint", int]]:
        """The endpoint's files in order (itself without ``more`` first),
        each with the rows it returns once the limit is applied in that
        order, as client/plan.go PlanEndpoint.files."""
        head = PlanEndpoint(self.path, self.row_groups, self.rows, 0, self.size, self.format)
        out, left = [], self.returns
        for f in [head] + list(self.more):
            n = min(f.rows, left)
            out.append((f, n))
            left -= n
        return out


@dataclass
class PlanFile:
    """One file of a plan, with its endpoints and the rows they return."""

    path: str
    size: int
    format: str
    endpoints: int = 0
    rows: int = 0


class _Malformed(ValueError):
    pass


def _varint(b: bytes, i: int) -> Tuple[int, int]:
    n = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise _Malformed("truncated varint")
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        if c < 0x80:
            return n, i
        shift += 7


def _fields(b: bytes) -> Iterator[Tuple[int, int, object]]:
    """(field number, wire type, value) of each field of message b: an int
    for varints and fixed widths, bytes for length-delimited fields."""
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(b, i)
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if i + width > len(b):
                raise _Malformed("truncated fixed field")
            v, i = int.from_bytes(b[i:i + width], "little"), i + width
        elif wire == 2:
            n, i = _varint(b, i)
            if i + n > len(b):
                raise _Malformed("truncated bytes field")
            v, i = b[i:i + n], i + n
        else:
            raise _Malformed(f"wire type {wire}")
        if num == 0:
            raise _Malformed("field number 0")
        yield num, wire, v


def _int64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _payload(ticket: bytes) -> bytes:
    """The ScanTask inside a signed ticket, or the ticket itself when it is
    not an envelope (an unsigned server), as client/plan.go ticketPayload."""
    claims = mac = b""
    try:
        for num, wire, v in _fields(ticket):
            if num in (_ENVELOPE_CLAIMS, _ENVELOPE_MAC) and wire != 2:
                return ticket  # not an envelope: a ScanTask's field 4 is a varint
            if num == _ENVELOPE_CLAIMS:
                claims = v
            elif num == _ENVELOPE_MAC:
                mac = v
        if not mac:
            return ticket
        for num, wire, v in _fields(claims):
            if num == _CLAIMS_PAYLOAD and wire == 2:
                return v
        return b""
    except _Malformed:
        return ticket


def decode_ticket(ticket: bytes) -> Optional[PlanEndpoint]:
    """The endpoint a ticket describes, or None when it does not decode."""
    return _decode_task(_payload(ticket), nested=False)


def _decode_task(task: bytes, nested: bool) -> Optional[PlanEndpoint]:
    """A ScanTask's figures; its further files too unless nested (the
    server writes them one level deep only)."""
    path, groups, more, vals = "", [], [], {_TASK_SIZE: 0, _TASK_FORMAT: 0, _TASK_LIMIT: 0, _TASK_ROWS: 0}
    try:
        for num, wire, v in _fields(task):
            if num == _TASK_PATH and wire == 2:
                path = v.decode("utf-8")
            elif num == _TASK_ROW_GROUPS and wire == 2:  # packed
                j = 0
                while j < len(v):
                    g, j = _varint(v, j)
                    groups.append(_int64(g))
            elif num == _TASK_ROW_GROUPS and wire == 0:
                groups.append(_int64(v))
            elif num in vals and wire == 0:
                vals[num] = _int64(v)
            elif num == _TASK_MORE and wire == 2 and not nested:
                m = _decode_task(v, nested=True)
                if m is None:
                    return None
                more.append(m)
    except (_Malformed, UnicodeDecodeError):
        return None
    return PlanEndpoint(path=path, row_groups=groups, rows=vals[_TASK_ROWS], limit=vals[_TASK_LIMIT],
                        size=vals[_TASK_SIZE], format=_FORMATS.get(vals[_TASK_FORMAT], "unknown"), more=more)


def plan_files(endpoints: List[PlanEndpoint]) -> List[PlanFile]:
    """The files of endpoints in scan order, as client/plan.go groups them."""
    files: Dict[str, PlanFile] = {}
    for ep in endpoints:
        if not ep.path:
            continue  # Go skips undecoded tickets too (they fail to unmarshal)
        for one, returns in ep.files():
            f = files.setdefault(one.path, PlanFile(one.path, one.size, one.format))
            f.endpoints += 1
            f.rows += returns
    return list(files.values())
