"""The part of a polars predicate that scand can filter on the server with
exactly polars' meaning, as scand SQL text.

polars hands an IO source its predicate as a ``pl.Expr``. Its JSON form
(``meta.serialize(format="json")``) is a tree of ``BinaryExpr``,
``Function``, ``Column`` and ``Literal`` nodes. The translation walks that
tree and keeps only what means the same in both engines:

* comparisons (``== != < <= > >=``) of a column with a literal, on
  integer, decimal, string, boolean, date and timestamp columns (a
  timestamp with a zone only against a literal with one, and the reverse).
  Integer and decimal columns compare exactly with any number (polars'
  ``pl.col("fare") > 10.123`` on a decimal(10, 2) is the server's
  ``fare >= 10.13``; a float literal is the number it prints as), and a
  timestamp literal finer than the column's unit is exact too;
* categorical (dictionary) columns: ``==``, ``!=`` and ``is_in`` with
  strings only. Their order is left out: polars has ordered Categoricals by
  their physical codes in some versions and by the strings in others;
* ``is_in`` with a list of literals on integer, decimal, string, boolean,
  date, timestamp and categorical columns: polars' null rules written out
  (``nulls_equal=False``: a NULL operand is unknown and NULLs in the list
  match nothing; ``nulls_equal=True``: a NULL operand matches a NULL in
  the list). Its list travels as Arrow IPC bytes, read with pyarrow;
* Float columns are left out: polars orders NaN above every number and
  says NaN == NaN; scand (SQL, pyarrow) says every comparison with NaN is
  false. Time and duration columns are left out: no SQL literal of theirs;
* ``is_null`` / ``is_not_null`` on any column (NaN is not null in either);
* ``~``, ``&``, ``|`` (both Kleene, and a NULL predicate drops the row in
  both); ``is_between`` with a closed interval; ``str.starts_with``;
* a boolean column used as the predicate.

An ``&`` keeps the conjuncts that translate, so the server gets a superset
of polars' rows; anything else that does not translate exactly sends
nothing. The caller still applies the whole predicate in polars, so a
partial or empty translation costs IO, never correctness. The JSON form is
unstable across polars versions: a shape this module does not know
translates to nothing.
"""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Any, Dict, List, Optional

import pyarrow as pa

_COMPARISONS = {"Eq": "=", "NotEq": "<>", "Lt": "<", "LtEq": "<=", "Gt": ">", "GtEq": ">="}
# The mirror image, for a literal on the left: 5 < x is x > 5.
_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


class _Untranslatable(Exception):
    """A node whose meaning scand's filter does not share exactly."""


def server_filter(predicate: Any, schema: pa.Schema) -> Optional[str]:
    """scand SQL for what of ``predicate`` filters exactly as polars does,
    or None when nothing does (or the predicate's form is unknown)."""
    if predicate is None:
        return None
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:  # noqa: BLE001 - any polars that cannot serialize it: nothing is pushed
        return None
    types = {f.name: f.type for f in schema}
    parts = [p for p in (_try(c, types) for c in _conjuncts(tree)) if p is not None]
    return " AND ".join(parts) if parts else None


def _conjuncts(node: Dict[str, Any]) -> List[Dict[str, Any]]:
    binary = node.get("BinaryExpr") if isinstance(node, dict) else None
    if binary and binary.get("op") in ("And", "LogicalAnd"):
        return _conjuncts(binary["left"]) + _conjuncts(binary["right"])
    return [node]


def _try(node: Dict[str, Any], types: Dict[str, pa.DataType]) -> Optional[str]:
    try:
        return _translate(node, types)
    except (_Untranslatable, KeyError, TypeError, ValueError, IndexError):
        return None


def _translate(node: Any, types: Dict[str, pa.DataType]) -> str:
    if not isinstance(node, dict) or len(node) != 1:
        raise _Untranslatable(node)
    kind, body = next(iter(node.items()))
    if kind == "BinaryExpr":
        return _binary(body, types)
    if kind == "Function":
        return _function(body, types)
    if kind == "Column":
        if not pa.types.is_boolean(_column_type(body, types)):
            raise _Untranslatable(body)
        return f"{_identifier(body)} = TRUE"
    raise _Untranslatable(kind)


def _binary(body: Dict[str, Any], types: Dict[str, pa.DataType]) -> str:
    op = body["op"]
    if op in ("And", "LogicalAnd", "Or", "LogicalOr"):
        word = "AND" if "And" in op else "OR"
        return f"({_translate(body['left'], types)} {word} {_translate(body['right'], types)})"
    if op not in _COMPARISONS:
        raise _Untranslatable(op)
    sql_op, left, right = _COMPARISONS[op], body["left"], body["right"]
    if "Column" in right and "Literal" in left:
        sql_op, left, right = _FLIPPED[sql_op], right, left
    return _comparison(left, sql_op, right, types)


def _comparison(column: Dict[str, Any], op: str, literal: Dict[str, Any], types: Dict[str, pa.DataType]) -> str:
    name = column["Column"]
    t = _comparable_type(name, types)
    if pa.types.is_dictionary(t) and op not in ("=", "<>"):
        raise _Untranslatable("the order of a Categorical")  # see the module's docstring
    return f"{_identifier(name)} {op} {_literal(literal['Literal'], t)}"


def _is_in(args: List[Any], options: Dict[str, Any], types: Dict[str, pa.DataType]) -> str:
    """``is_in`` of a column with a literal list, with polars' null rules."""
    name = args[0]["Column"]
    t = _value_type(_comparable_type(name, types))
    (kind, body), = args[1]["Literal"].items()
    if kind != "Scalar" or set(body) != {"List"}:
        raise _Untranslatable(args[1])
    values = pa.ipc.open_stream(bytes(body["List"])).read_all().column(0)
    texts = [_expr_literal(t, v) for v in values if v.is_valid]
    has_null = values.null_count > 0
    ident = _identifier(name)
    listed = f"{ident} IN ({', '.join(texts)})" if texts else None
    if options.get("nulls_equal"):
        if has_null:
            return f"({listed} OR {ident} IS NULL)" if listed else f"{ident} IS NULL"
        return f"({ident} IS NOT NULL AND {listed})" if listed else "FALSE"
    # NULL operand: unknown; NULLs in the list match nothing.
    return f"({listed})" if listed else f"({ident} IS NULL AND {ident} = {ident})"


def _expr_literal(column: pa.DataType, value: pa.Scalar) -> str:
    from ._expr_sql import Untranslatable, _literal_for

    try:
        return _literal_for(column, value)
    except Untranslatable as e:
        raise _Untranslatable(str(e)) from e


def _function(body: Dict[str, Any], types: Dict[str, pa.DataType]) -> str:
    fn, args = body["function"], body["input"]
    if fn in ({"Boolean": "IsNull"}, {"Boolean": "IsNotNull"}):
        name = args[0]["Column"]
        _column_type(name, types)
        return f"{_identifier(name)} IS {'NOT ' if fn['Boolean'] == 'IsNotNull' else ''}NULL"
    if fn == {"Boolean": "Not"}:
        return f"(NOT {_translate(args[0], types)})"
    if fn == {"StringExpr": "StartsWith"}:
        name = args[0]["Column"]
        if not _is_string(_column_type(name, types)):
            raise _Untranslatable(name)
        return f"starts_with({_identifier(name)}, {_literal(args[1]['Literal'], pa.string())})"
    is_in = fn.get("Boolean", {}).get("IsIn") if isinstance(fn, dict) and isinstance(fn.get("Boolean"), dict) else None
    if is_in is not None and len(args) == 2:
        return _is_in(args, is_in, types)
    between = fn.get("Boolean", {}).get("IsBetween") if isinstance(fn, dict) and isinstance(fn.get("Boolean"), dict) else None
    if between is not None and between.get("closed") == "Both":
        column = args[0]
        return (f"({_comparison(column, '>=', args[1], types)} AND "
                f"{_comparison(column, '<=', args[2], types)})")
    raise _Untranslatable(fn)


def _column_type(name: Any, types: Dict[str, pa.DataType]) -> pa.DataType:
    if not isinstance(name, str) or name not in types:
        raise _Untranslatable(name)
    return types[name]


def _comparable_type(name: Any, types: Dict[str, pa.DataType]) -> pa.DataType:
    """The column's type when comparisons on it mean the same in both engines."""
    t = _column_type(name, types)
    v = _value_type(t)
    if pa.types.is_dictionary(t) and _is_string(v):
        return t  # equality only (_comparison)
    if (pa.types.is_integer(v) or pa.types.is_boolean(v) or _is_string(v) or pa.types.is_date(v)
            or pa.types.is_decimal(v) or pa.types.is_timestamp(v)) and not pa.types.is_dictionary(t):
        return t
    raise _Untranslatable(t)


def _value_type(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


_UNITS = {"Milliseconds": "ms", "Microseconds": "us", "Nanoseconds": "ns"}


def _literal(lit: Dict[str, Any], column: pa.DataType) -> str:
    """A literal of the column's kind, as scand SQL; any other pairing (an
    int against a string column, a float against a string one) is left to polars."""
    (kind, body), = lit.items()
    if kind not in ("Dyn", "Scalar") or not isinstance(body, dict) or len(body) != 1:
        raise _Untranslatable(lit)
    (dtype, value), = body.items()
    column = _value_type(column)
    exact = pa.types.is_integer(column) or pa.types.is_decimal(column)
    if exact and dtype in _INT_KINDS and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if exact and dtype in ("Float", "Float32", "Float64") and isinstance(value, float):
        # The server compares exactly, reading the float as the number it prints as.
        if value != value or value in (float("inf"), float("-inf")):
            raise _Untranslatable(lit)
        return repr(value)
    if exact and dtype == "Decimal" and isinstance(value, list) and len(value) == 3:
        unscaled, _, scale = value
        return format(decimal.Decimal(int(unscaled)).scaleb(-int(scale)), "f")
    if pa.types.is_boolean(column) and dtype == "Boolean" and isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if _is_string(column) and dtype == "String" and isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if (pa.types.is_date(column) or (pa.types.is_timestamp(column) and column.tz is None)) \
            and dtype == "Date" and isinstance(value, int):
        return f"DATE '{(datetime.date(1970, 1, 1) + datetime.timedelta(days=value)).isoformat()}'"
    if (pa.types.is_timestamp(column) or pa.types.is_date(column)) and dtype == "Datetime" \
            and isinstance(value, list) and len(value) == 3:
        v, unit, tz = value
        zoned = tz is not None
        if unit not in _UNITS or zoned != (pa.types.is_timestamp(column) and column.tz is not None):
            raise _Untranslatable(lit)
        scalar = pa.scalar(int(v), pa.timestamp(_UNITS[unit], "UTC" if zoned else None))
        return _expr_literal(pa.timestamp(_UNITS[unit], "UTC" if zoned else None), scalar)
    raise _Untranslatable(lit)


_INT_KINDS = {"Int", "Int8", "Int16", "Int32", "Int64", "Int128", "UInt8", "UInt16", "UInt32", "UInt64"}


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
