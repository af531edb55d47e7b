"""Crafted Parquet files that no writer makes: footers whose schema nests
deeper than readers allow, or declares more columns than a plan can afford.

Written here with a small Thrift compact-protocol writer (as
scanner/parquet/bombs_test.go does in Go), so that the tests need no binary
files: the files are a few KB to a few MB and take well under a second to
build."""

from __future__ import annotations

import struct
from pathlib import Path

# Thrift compact types.
_I32, _I64, _BINARY, _LIST, _STRUCT = 5, 6, 8, 9, 12


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _zigzag(n: int) -> bytes:
    return _uvarint((n << 1) ^ (n >> 63))


class _Writer:
    def __init__(self):
        self.b = bytearray()
        self.last = [0]

    def field(self, fid: int, typ: int) -> None:
        d = fid - self.last[-1]
        if 0 < d <= 15:
            self.b.append(d << 4 | typ)
        else:
            self.b.append(typ)
            self.b += _zigzag(fid)
        self.last[-1] = fid

    def i32(self, fid: int, v: int) -> None:
        self.field(fid, _I32)
        self.b += _zigzag(v)

    def i64(self, fid: int, v: int) -> None:
        self.field(fid, _I64)
        self.b += _zigzag(v)

    def string(self, fid: int, s: str) -> None:
        self.field(fid, _BINARY)
        raw = s.encode()
        self.b += _uvarint(len(raw)) + raw

    def list_header(self, fid: int, elem: int, n: int) -> None:
        self.field(fid, _LIST)
        if n < 15:
            self.b.append(n << 4 | elem)
        else:
            self.b.append(0xF0 | elem)
            self.b += _uvarint(n)

    def begin(self) -> None:
        self.last.append(0)

    def end(self) -> None:
        self.b.append(0)
        self.last.pop()


def _page() -> bytes:
    """A PLAIN data page of one INT64 value (0), uncompressed."""
    w = _Writer()
    w.begin()
    w.i32(1, 0)   # DATA_PAGE
    w.i32(2, 8)   # uncompressed size
    w.i32(3, 8)   # compressed size
    w.field(5, _STRUCT)
    w.begin()
    w.i32(1, 1)   # values
    w.i32(2, 0)   # PLAIN
    w.i32(3, 3)   # RLE definition levels
    w.i32(4, 3)
    w.end()
    w.end()
    return bytes(w.b) + b"\0" * 8


def _element(el: dict) -> bytes:
    """One SchemaElement, as a struct in a list."""
    w = _Writer()
    w.begin()
    if "type" in el:
        w.i32(1, el["type"])
    if "repetition" in el:
        w.i32(3, el["repetition"])
    w.string(4, el["name"])
    if "children" in el:
        w.i32(5, el["children"])
    w.end()
    return bytes(w.b)


def _chunk(name: str, off: int, rows: int, size: int) -> bytes:
    """One ColumnChunk with its ColumnMetaData, as a struct in a list."""
    w = _Writer()
    w.begin()
    w.i64(2, off)
    w.field(3, _STRUCT)
    w.begin()
    w.i32(1, 2)                      # INT64
    w.list_header(2, _I32, 1)
    w.b += _zigzag(0)                # PLAIN
    raw = name.encode()
    w.list_header(3, _BINARY, 1)
    w.b += _uvarint(len(raw)) + raw
    w.i32(4, 0)                      # UNCOMPRESSED
    w.i64(5, rows)
    w.i64(6, size)
    w.i64(7, size)
    w.i64(9, off)
    w.end()
    w.end()
    return bytes(w.b)


def _file(schema: list[bytes], leaves: int, rows: int, page: bytes | None, row_groups: int = 1) -> bytes:
    """A file of row_groups row groups whose leaves all point at one page
    (or at nothing when the file has no rows). schema holds the encoded
    SchemaElements."""
    out = bytearray(b"PAR1")
    off = len(out)
    if page:
        out += page
    size = len(page) if page else 0
    # Every chunk is the same but for its name: encode one, splice the rest.
    pre, _, post = _chunk("\x00", off, rows, size).partition(b"\x01\x00")
    w = _Writer()
    w.begin()
    w.i32(1, 1)
    w.list_header(2, _STRUCT, len(schema))
    w.b += b"".join(schema)
    w.i64(3, rows * row_groups)
    w.list_header(4, _STRUCT, row_groups)
    # Every row group is the same: encode one, repeat it.
    g = _Writer()
    g.begin()
    g.list_header(1, _STRUCT, leaves)
    parts = []
    for i in range(leaves):
        raw = f"c{i}".encode()
        parts.append(pre + _uvarint(len(raw)) + raw + post)
    g.b += b"".join(parts)
    g.last[-1] = 1
    g.i64(2, size * leaves)
    g.i64(3, rows)
    g.end()
    w.b += bytes(g.b) * row_groups
    w.end()
    out += w.b
    out += struct.pack("<I", len(w.b)) + b"PAR1"
    return bytes(out)


def deep_parquet(groups: int) -> bytes:
    """One optional INT64 column under `groups` nested optional groups, no
    rows: groups + 2 schema levels with the root. pyarrow reads 98 groups
    and refuses 99 ("schema too deeply nested")."""
    schema = [_element({"name": "schema", "children": 1})]
    schema += [_element({"name": f"g{i}", "repetition": 1, "children": 1}) for i in range(groups)]
    schema.append(_element({"name": "v", "type": 2, "repetition": 1}))
    return _file(schema, 1, 0, None)


def wide_parquet(columns: int) -> bytes:
    """`columns` required INT64 columns of one row each, every chunk the same
    page: 100,000 columns make a 2.2 MB footer."""
    schema = [_element({"name": "schema", "children": columns})]
    schema += [_element({"name": f"c{i}", "type": 2, "repetition": 0}) for i in range(columns)]
    return _file(schema, columns, 1, _page())


def many_row_groups(groups: int) -> bytes:
    """One required INT64 column in `groups` row groups of one row each,
    every chunk the same page: 200,000 row groups make a 5 MB footer."""
    schema = [_element({"name": "schema", "children": 1}), _element({"name": "c0", "type": 2, "repetition": 0})]
    return _file(schema, 1, 1, _page(), groups)


def write(path: Path, data: bytes) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path.name
