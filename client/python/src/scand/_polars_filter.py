"""The part of a polars predicate that scand can filter on the server with
exactly polars' meaning, as scand SQL text.

polars hands an IO source its predicate as a ``pl.Expr``. Its JSON form
(``meta.serialize(format="json")``) is a tree of ``BinaryExpr``,
``Function``, ``Column`` and ``Literal`` nodes. The translation walks that
tree and keeps only what means the same in both engines:

* comparisons (``== != < <= > >=``) of a column with a literal, on integer,
  string, boolean and date columns. Float columns are left out: polars
  orders NaN above every number and says NaN == NaN; scand (SQL, pyarrow)
  says every comparison with NaN is false. Decimal, time and timestamp
  columns are left out too: their literals carry units and zones whose
  coercion differs;
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
    return f"{_identifier(name)} {op} {_literal(literal['Literal'], _comparable_type(name, types))}"


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
    # Dictionary columns become polars Categoricals, whose order is not
    # always the strings': left out.
    t = _column_type(name, types)
    if pa.types.is_integer(t) or pa.types.is_boolean(t) or _is_string(t) or pa.types.is_date(t):
        return t
    raise _Untranslatable(t)


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _literal(lit: Dict[str, Any], column: pa.DataType) -> str:
    """A literal of the column's kind, as scand SQL; any other pairing (an
    int against a string column, a float against an int one) is left to polars."""
    (kind, body), = lit.items()
    if kind not in ("Dyn", "Scalar") or not isinstance(body, dict) or len(body) != 1:
        raise _Untranslatable(lit)
    (dtype, value), = body.items()
    if pa.types.is_integer(column) and dtype in _INT_KINDS and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if pa.types.is_boolean(column) and dtype == "Boolean" and isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if _is_string(column) and dtype == "String" and isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if pa.types.is_date(column) and dtype == "Date" and isinstance(value, int):
        return f"DATE '{(datetime.date(1970, 1, 1) + datetime.timedelta(days=value)).isoformat()}'"
    raise _Untranslatable(lit)


_INT_KINDS = {"Int", "Int8", "Int16", "Int32", "Int64", "Int128", "UInt8", "UInt16", "UInt32", "UInt64"}


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
