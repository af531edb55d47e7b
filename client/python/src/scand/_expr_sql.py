"""A pyarrow Expression as scand SQL text, for the expressions pyarrow
cannot write as Substrait.

pyarrow binds an expression to the schema before it serializes it, and the
casts binding inserts are "safe" casts, which its Substrait writer refuses
("Substrait is only capable of representing unsafe casts"): a decimal
column against a float or an integer (``pc.field("fare") > 100.5``), an
int8 column against a Python int that needs int64, a float32 column against
a Python float, a dictionary column against a string
(``pc.field("payment_type").isin(["cash"])``), a timestamp[us] column
against a timestamp[ns] literal; and ``match_like`` has no Substrait name.
For those the client sends the same predicate as SQL text, written so that
the server's SQL gives pyarrow's answer:

* comparisons with a literal: the server compares integer and decimal
  columns exactly, and reads a float literal as the number it prints as
  (``repr``), which for columns of at most 15 digits is pyarrow's answer
  (it casts the column to float64). Against a float32 column, a float that
  is no float32 is replaced by its float32 neighbour (pyarrow compares in
  float64, where the float32 values are exact). A comparison that can only
  be false (``= nan``, ``= 0.1`` on float32) is written
  ``(x IS NULL AND x = x)`` and one that is true for every value
  ``(x IS NOT NULL OR x = x)``: NULL rows stay unknown, as in pyarrow;
* ``&``, ``|``, ``~`` (Kleene, as SQL's AND, OR, NOT);
* ``is_null`` (not with ``nan_is_null=True`` on a float column),
  ``is_valid``;
* ``isin`` with each of pyarrow's null behaviours (MATCH, SKIP, EMIT_NULL,
  INCONCLUSIVE) written out with IS NULL / IS NOT NULL around SQL's IN,
  whose own NULL rule is INCONCLUSIVE;
* ``starts_with``, ``ends_with``, ``match_substring``, ``match_like``
  (case-sensitive only) as ``starts_with`` and LIKE.

The expression's tree is read from its serialized form, which is how
pyarrow pickles an Expression: an Arrow IPC file whose schema metadata
lists the nodes in order (``call``, ``field_ref``, ``literal``,
``options``, ``end``, with repeated keys, read through the Arrow C data
interface because ``Schema.metadata`` is a dict) and whose columns hold
the literals and the functions' options. Anything else raises
Untranslatable, and the caller reports pyarrow's own refusal.
"""

from __future__ import annotations

import ctypes
import datetime
import decimal
import math
import struct
from typing import Any, List, Optional, Sequence, Tuple

import pyarrow as pa

__all__ = ["Untranslatable", "expression_sql"]


class Untranslatable(Exception):
    """An expression node the SQL form cannot say with pyarrow's meaning."""


_COMPARISONS = {"equal": "=", "not_equal": "<>", "less": "<", "less_equal": "<=", "greater": ">",
                "greater_equal": ">="}
_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
# SetLookupOptions.null_matching_behavior, in Arrow's enum order.
_MATCH, _SKIP, _EMIT_NULL, _INCONCLUSIVE = 0, 1, 2, 3


def expression_sql(expr: Any, schema: pa.Schema) -> str:
    """scand SQL for expr with pyarrow's meaning on schema's columns, or
    Untranslatable."""
    return _Translator(schema).boolean(_parse(expr))


# ---- reading the tree ---------------------------------------------------

class _Node:
    __slots__ = ("kind", "name", "args", "options", "path", "value")

    def __init__(self, kind: str, **kw: Any) -> None:
        self.kind = kind  # "call", "field", "literal"
        self.name = kw.get("name")
        self.args: List[_Node] = kw.get("args", [])
        self.options = kw.get("options")
        self.path: Tuple[str, ...] = kw.get("path", ())
        self.value: Optional[pa.Scalar] = kw.get("value")


def _parse(expr: Any) -> _Node:
    try:
        buf = expr.__reduce__()[1][0]
        reader = pa.ipc.open_file(buf)
        pairs = _metadata_pairs(reader.schema)
        columns = reader.get_batch(0).columns if reader.num_record_batches else []
    except Exception as e:  # noqa: BLE001 - any pyarrow without this form
        raise Untranslatable(f"cannot read the expression ({e})") from e
    pos = 0

    def take() -> Tuple[str, str]:
        nonlocal pos
        if pos >= len(pairs):
            raise Untranslatable("truncated expression")
        pos += 1
        return pairs[pos - 1]

    def ref(key: str, value: str) -> Tuple[str, ...]:
        if key == "field_ref":
            return (value,)
        if key == "nested_field_ref":
            return tuple(p for _ in range(int(value)) for p in ref(*take()))
        raise Untranslatable(f"expected a field reference, got {key}")

    def node() -> _Node:
        nonlocal pos
        key, value = take()
        if key == "literal":
            return _Node("literal", value=columns[int(value)][0])
        if key in ("field_ref", "nested_field_ref"):
            return _Node("field", path=ref(key, value))
        if key != "call":
            raise Untranslatable(f"unexpected {key}")
        call = _Node("call", name=value)
        while True:
            if pos >= len(pairs):
                raise Untranslatable("truncated expression")
            key, v = pairs[pos]
            if key == "end":
                pos += 1
                return call
            if key == "options":
                pos += 1
                call.options = _options(columns[int(v)][0])
                continue
            call.args.append(node())

    root = node()
    if pos != len(pairs):
        raise Untranslatable("trailing expression nodes")
    return root


def _options(sc: pa.StructScalar) -> dict:
    """A function's options: plain Python values, but the value set of
    is_in, kept as a ListScalar so that its values keep their Arrow type."""
    return {k: (v if k == "value_set" else v.as_py()) for k, v in sc.items()}


def _metadata_pairs(schema: pa.Schema) -> List[Tuple[str, str]]:
    """schema's metadata as (key, value) pairs in order, repeated keys
    kept: read from the Arrow C data interface's ArrowSchema.metadata
    (int32 count, then int32-length-prefixed keys and values)."""
    capsule = schema.__arrow_c_schema__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    ptr = get(capsule, b"arrow_schema")
    # struct ArrowSchema { const char* format; const char* name; const char* metadata; ... }
    meta = ctypes.c_void_p.from_address(ptr + 2 * ctypes.sizeof(ctypes.c_void_p)).value
    if not meta:
        return []
    count = ctypes.c_int32.from_address(meta).value
    off = meta + 4
    out = []
    for _ in range(count):
        parts = []
        for _ in range(2):
            n = ctypes.c_int32.from_address(off).value
            off += 4
            parts.append(ctypes.string_at(off, n).decode("utf-8"))
            off += n
        out.append((parts[0], parts[1]))
    del capsule  # releases the ArrowSchema
    return out


# ---- writing SQL --------------------------------------------------------

def _value_type(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


class _Translator:
    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema

    def column_type(self, path: Sequence[str]) -> pa.DataType:
        if path[0] not in self.schema.names:
            raise Untranslatable(f"unknown column {path[0]!r}")
        t = self.schema.field(path[0]).type
        for name in path[1:]:
            t = _value_type(t)
            if not pa.types.is_struct(t) or t.get_field_index(name) < 0:
                raise Untranslatable(f"unknown field {'.'.join(path)!r}")
            t = t.field(name).type
        return _value_type(t)

    def boolean(self, n: _Node) -> str:
        if n.kind == "field":
            if not pa.types.is_boolean(self.column_type(n.path)):
                raise Untranslatable(f"column {'.'.join(n.path)} is not boolean")
            return _identifier(n.path)
        if n.kind == "literal":
            v = n.value
            if pa.types.is_boolean(v.type) or pa.types.is_null(v.type):
                return "NULL" if not v.is_valid else ("TRUE" if v.as_py() else "FALSE")
            raise Untranslatable(f"literal {v} is not a condition")
        name, args = n.name, n.args
        if name in ("and_kleene", "or_kleene") and len(args) == 2:
            word = " AND " if name == "and_kleene" else " OR "
            return "(" + word.join(self.boolean(a) for a in args) + ")"
        if name == "invert" and len(args) == 1:
            return f"(NOT {self.boolean(args[0])})"
        if name in _COMPARISONS and len(args) == 2:
            return self.comparison(_COMPARISONS[name], args[0], args[1])
        if name in ("is_null", "is_valid") and len(args) == 1 and args[0].kind == "field":
            t = self.column_type(args[0].path)
            if name == "is_null" and (n.options or {}).get("nan_is_null") and pa.types.is_floating(t):
                raise Untranslatable("is_null(nan_is_null=True)")
            return f"({_identifier(args[0].path)} IS {'NOT ' if name == 'is_valid' else ''}NULL)"
        if name == "is_in" and len(args) == 1 and args[0].kind == "field":
            return self.is_in(args[0].path, n.options or {})
        if name in ("starts_with", "ends_with", "match_substring", "match_like") and len(args) == 1 \
                and args[0].kind == "field":
            return self.match(name, args[0].path, n.options or {})
        raise Untranslatable(f"function {name}")

    def comparison(self, op: str, left: _Node, right: _Node) -> str:
        if left.kind == "literal" and right.kind == "field":
            op, left, right = _FLIPPED[op], right, left
        if left.kind == "field" and right.kind == "field":
            lt, rt = self.column_type(left.path), self.column_type(right.path)
            if not lt.equals(rt):
                raise Untranslatable(f"columns of types {lt} and {rt}")
            return f"({_identifier(left.path)} {op} {_identifier(right.path)})"
        if left.kind != "field" or right.kind != "literal":
            raise Untranslatable("a comparison of an expression")
        column = self.column_type(left.path)
        return _compare_literal(_identifier(left.path), op, column, right.value)

    def is_in(self, path: Sequence[str], options: dict) -> str:
        column = self.column_type(path)
        ident = _identifier(path)
        value_set = options.get("value_set")  # a ListScalar: its values keep their type
        if not isinstance(value_set, pa.ListScalar):
            raise Untranslatable("is_in without a value set")
        behaviour = options.get("null_matching_behavior", _SKIP if options.get("skip_nulls") else _MATCH)
        values = list(value_set.values) if value_set.is_valid else []
        has_null = any(not v.is_valid for v in values)
        texts = []
        for v in values:
            if v.is_valid:
                texts.append(_literal_for(column, v))
        in_list = f"{ident} IN ({', '.join(texts)})" if texts else None
        if behaviour == _INCONCLUSIVE:
            if has_null:
                texts.append("NULL")
            return f"({ident} IN ({', '.join(texts)}))" if texts else _never(ident)
        if behaviour == _EMIT_NULL:
            return f"({in_list})" if in_list else _never(ident)
        if behaviour == _MATCH and has_null:
            return f"({in_list} OR {ident} IS NULL)" if in_list else f"({ident} IS NULL)"
        return f"({ident} IS NOT NULL AND {in_list})" if in_list else "FALSE"

    def match(self, name: str, path: Sequence[str], options: dict) -> str:
        column = self.column_type(path)
        if not (pa.types.is_string(column) or pa.types.is_large_string(column)
                or pa.types.is_string_view(column)):
            raise Untranslatable(f"{name} on {column}")
        pattern = options.get("pattern")
        if not isinstance(pattern, str) or options.get("ignore_case"):
            raise Untranslatable(f"{name} with ignore_case")
        ident = _identifier(path)
        if name == "starts_with":
            return f"starts_with({ident}, {_string(pattern)})"
        if name == "match_like":
            return f"({ident} LIKE {_string(pattern)})"
        escaped = pattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        like = "%" + escaped if name == "ends_with" else "%" + escaped + "%"
        return f"({ident} LIKE {_string(like)})"


def _never(ident: str) -> str:
    """False for every value (NaN included), unknown for NULL, as a
    comparison is: IS NULL decides every value, and x = x is unknown on
    NULL."""
    return f"({ident} IS NULL AND {ident} = {ident})"


def _always(ident: str) -> str:
    """True for every value (NaN included), unknown for NULL."""
    return f"({ident} IS NOT NULL OR {ident} = {ident})"


def _compare_literal(ident: str, op: str, column: pa.DataType, value: pa.Scalar) -> str:
    if not value.is_valid:
        return f"({ident} {op} NULL)"
    t = value.type
    if pa.types.is_floating(t) and (pa.types.is_floating(column) or pa.types.is_integer(column)
                                    or pa.types.is_decimal(column)):
        f = float(value.as_py())
        if math.isnan(f):  # IEEE: only != is true
            return _always(ident) if op == "<>" else _never(ident)
        if math.isinf(f):
            if pa.types.is_floating(column):
                raise Untranslatable("an infinite literal against a float column")
            below = f > 0  # every value lies below +inf
            holds = {"=": False, "<>": True, "<": below, "<=": below, ">": not below, ">=": not below}[op]
            return _always(ident) if holds else _never(ident)
        if pa.types.is_float32(column) or pa.types.is_float16(column):
            return _compare_float32(ident, op, f)
    return f"({ident} {op} {_literal_for(column, value)})"


def _compare_float32(ident: str, op: str, f: float) -> str:
    """x op f for a float32 column x, where pyarrow compares in float64."""
    try:
        f32 = struct.unpack("<f", struct.pack("<f", f))[0]
    except OverflowError:
        f32 = math.copysign(math.inf, f)
    if f32 == f:
        return f"({ident} {op} {_float_text(f)})"
    # f lies strictly between two float32 values (or beyond the largest).
    if f32 > f:
        lo, hi = _next_float32(f32, -1), f32
    else:
        lo, hi = f32, _next_float32(f32, 1)
    if op == "=":
        return _never(ident)
    if op == "<>":
        return _always(ident)
    if op in ("<", "<="):
        return f"({ident} <= {_float_text(lo)})" if not math.isinf(lo) else _never(ident)
    return f"({ident} >= {_float_text(hi)})" if not math.isinf(hi) else _never(ident)


def _next_float32(x: float, direction: int) -> float:
    bits = struct.unpack("<i", struct.pack("<f", x))[0]
    if x == 0:
        bits = 1 if direction > 0 else -2147483647  # the smallest subnormals
    elif (x > 0) == (direction > 0):
        bits += 1
    else:
        bits -= 1
    return struct.unpack("<f", struct.pack("<i", bits))[0]


def _float_text(f: float) -> str:
    text = repr(float(f))
    return text if ("e" in text or "." in text) else text + ".0"


def _literal_for(column: pa.DataType, value: pa.Scalar) -> str:
    """value as a SQL literal that the server coerces to column's type with
    pyarrow's meaning, or Untranslatable."""
    t = value.type
    v = value.as_py()
    if pa.types.is_boolean(t) and pa.types.is_boolean(column):
        return "TRUE" if v else "FALSE"
    if pa.types.is_integer(t) and _numeric(column):
        return str(int(v))
    if pa.types.is_floating(t) and _numeric(column):
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            raise Untranslatable("a NaN or infinite literal here")
        return _float_text(f)
    if pa.types.is_decimal(t) and _numeric(column):
        return format(decimal.Decimal(v), "f")
    if (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)) and _stringy(column):
        return _string(v)
    if (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
            or pa.types.is_binary_view(t)) and _binary(column):
        return "X'" + bytes(v).hex() + "'"
    if pa.types.is_date(t) and pa.types.is_date(column):
        return f"DATE '{v.isoformat()}'"
    if pa.types.is_timestamp(t) and pa.types.is_timestamp(column):
        if (t.tz is None) != (column.tz is None):
            raise Untranslatable("a timestamp with a zone against one without")
        return f"TIMESTAMP '{_timestamp_text(value)}'"
    raise Untranslatable(f"a {t} literal against a {column} column")


def _numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def _stringy(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _binary(t: pa.DataType) -> bool:
    return (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
            or pa.types.is_binary_view(t))


def _timestamp_text(value: pa.Scalar) -> str:
    """A timestamp scalar as TIMESTAMP text: its wall clock in UTC with the
    zone Z when it has a zone (the instant), else its wall clock; to the
    nanosecond."""
    t = value.type
    per = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[t.unit]
    n = value.cast(pa.int64()).as_py()
    seconds, frac = divmod(n, per)
    try:
        wall = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    except OverflowError as e:
        raise Untranslatable(f"timestamp {value} out of range") from e
    text = wall.strftime("%Y-%m-%d %H:%M:%S")
    if frac:
        digits = {1_000: 3, 1_000_000: 6, 1_000_000_000: 9}[per]
        text += "." + str(frac).rjust(digits, "0")
    return text + ("Z" if t.tz is not None else "")


def _string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _identifier(path: Sequence[str]) -> str:
    return ".".join('"' + p.replace('"', '""') + '"' for p in path)
