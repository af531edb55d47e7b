"""Endpoints of several files (ScanTask.more): the ticket decoder and the
plan report name every file, as client/plan.go does. Unit tests, no server."""

from scand._plan import _splits_lines
from scand._ticket import decode_ticket, plan_files


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _len_field(num: int, b: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(b)) + b


def _int_field(num: int, v: int) -> bytes:
    return _varint(num << 3) + _varint(v)


def _task(path: str, rows: int, groups=(0,), limit: int = 0, more=()) -> bytes:
    b = _len_field(1, path.encode()) + _int_field(2, 100) + _int_field(4, 1)
    b += _len_field(5, b"".join(_varint(g) for g in groups)) + _int_field(10, rows)
    if limit:
        b += _int_field(7, limit)
    for m in more:
        b += _len_field(18, m)
    return b


def test_decode_packed_ticket():
    ep = decode_ticket(_task("a.parquet", 10, limit=25, more=[_task("b.parquet", 10), _task("c.parquet", 10, (0, 1))]))
    assert ep is not None and ep.path == "a.parquet" and [m.path for m in ep.more] == ["b.parquet", "c.parquet"]
    assert ep.more[1].row_groups == [0, 1] and ep.all_rows == 30 and ep.returns == 25
    assert [(f.path, n) for f, n in ep.files()] == [("a.parquet", 10), ("b.parquet", 10), ("c.parquet", 5)]
    files = plan_files([ep])
    assert [(f.path, f.endpoints, f.rows, f.format) for f in files] == [
        ("a.parquet", 1, 10, "parquet"), ("b.parquet", 1, 10, "parquet"), ("c.parquet", 1, 5, "parquet")]
    out = "\n".join(_splits_lines(files, [ep]))
    assert "  0  a.parquet" in out and "  +  c.parquet " in out and " 0-1 " in out
    assert "(endpoint 0: 3 files)" in out and "25 of 30 (limit)" in out


def test_single_file_ticket_unchanged():
    ep = decode_ticket(_task("a.parquet", 10, (2, 3), limit=4))
    assert ep is not None and ep.more == [] and ep.returns == 4 and ep.row_groups == [2, 3]


def test_malformed_further_file_fails_decoding():
    assert decode_ticket(_task("a.parquet", 10) + _len_field(18, b"\x0a\xff")) is None
