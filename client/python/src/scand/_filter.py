"""The row filter of a scan request: SQL text, or a pyarrow Expression sent
as Substrait.

The request carries one of two fields (``ScanRequest.row_filter`` in
proto/scand/v1/scan.proto):

* ``filter``: the text of a SQL WHERE expression (``"fare > 10 AND city IN
  ('Paris', 'Rome')"``), with SQL's three-valued logic;
* ``filter_substrait``: a Substrait ExtendedExpression holding one boolean
  expression, as ``pyarrow.substrait.serialize_expressions`` writes it
  (base64 in the JSON request). It keeps pyarrow's meaning.

An Expression pyarrow refuses to write as Substrait (it inserted a safe
cast: a decimal column against a float, a dictionary column against a
string; or a function without a Substrait name, such as ``match_like``)
is sent as SQL text written to keep pyarrow's meaning (``_expr_sql``).

Substrait refers to columns by their position in a schema, so an Expression
is serialized against the scan's own schema: the one the server's GetSchema
returns for the same paths and every column (partition columns included),
whatever the projection. ``Connection.scan`` asks for it first.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

import pyarrow as pa

from ._errors import InvalidRequest

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow.compute as pc

__all__ = ["FilterArg", "encode_filter", "is_expression"]

FilterArg = Union[None, str, bytes, "pc.Expression"]

# The name serialize_expressions gives the one expression; the server
# does not look at it.
EXPRESSION_NAME = "filter"


def is_expression(value: Any) -> bool:
    """Whether value is a pyarrow.compute.Expression (imported lazily:
    pyarrow.compute is heavy and unused by unfiltered scans)."""
    if type(value).__module__.split(".")[0] != "pyarrow":
        return False
    import pyarrow.compute as pc

    return isinstance(value, pc.Expression)


def encode_filter(value: FilterArg, schema: Optional[pa.Schema] = None) -> Dict[str, Any]:
    """The request fields of a filter: ``{}`` for None, ``{"filter": text}``
    for a str, ``{"filter_substrait": base64}`` for a pyarrow Expression
    (serialized against ``schema``, the scan's schema, which it then
    requires) or for bytes that already hold a serialized
    ExtendedExpression."""
    if value is None:
        return {}
    if isinstance(value, str):
        if not value.strip():
            raise InvalidRequest("filter is empty: pass None for every row, or a SQL WHERE expression "
                                 "such as \"fare > 10\"", hint="Pass a filter, or None.")
        return {"filter": value}
    if isinstance(value, (bytes, bytearray, memoryview, pa.Buffer)):
        data = value.to_pybytes() if isinstance(value, pa.Buffer) else bytes(value)
        return {"filter_substrait": base64.b64encode(data).decode("ascii")}
    if is_expression(value):
        if schema is None:
            raise TypeError("a pyarrow Expression filter is serialized against the scan's schema: pass schema= "
                            "(conn.schema(paths), with every column)")
        try:
            return {"filter_substrait": base64.b64encode(serialize_expression(value, schema)).decode("ascii")}
        except InvalidRequest as refused:
            # pyarrow refuses to write it as Substrait (a safe cast it
            # inserted, a function without a Substrait name): the same
            # predicate as SQL text, where it means the same (_expr_sql).
            from ._expr_sql import Untranslatable, expression_sql

            try:
                return {"filter": expression_sql(value, schema)}
            except Untranslatable as why:
                raise InvalidRequest(f"{refused} It has no SQL form with pyarrow's meaning either ({why}).",
                                     hint=refused.hint) from refused
    raise TypeError(f"filter must be None, a SQL str, a pyarrow.compute.Expression or serialized Substrait bytes, "
                    f"got {type(value).__name__}")


def _bare_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([_bare_field(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_bare_field(t.key_field), _bare_field(t.item_field), keys_sorted=t.keys_sorted)
    if pa.types.is_large_list(t):
        return pa.large_list(_bare_field(t.value_field))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_bare_field(t.value_field), t.list_size)
    if pa.types.is_list(t):
        return pa.list_(_bare_field(t.value_field))
    return t


def _bare_field(f: pa.Field) -> pa.Field:
    return pa.field(f.name, _bare_type(f.type), f.nullable)


def without_metadata(schema: pa.Schema) -> pa.Schema:
    """schema without schema or field metadata, nested fields too: Substrait
    has no place for it (pyarrow refuses a struct whose fields carry any, as
    Parquet field ids do), and field positions do not change."""
    return pa.schema([_bare_field(f) for f in schema])


def serialize_expression(expr: "pc.Expression", schema: pa.Schema) -> bytes:
    """The Substrait ExtendedExpression of expr bound to schema. Failures
    (an unknown column, a type pyarrow cannot compare, a function Substrait
    has no name for) raise InvalidRequest naming the filter and the
    columns."""
    import pyarrow.substrait as substrait

    try:
        buf = substrait.serialize_expressions([expr], [EXPRESSION_NAME], without_metadata(schema))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        detail = str(e).split("\n")[0]
        columns = ", ".join(f"{f.name} ({f.type})" for f in schema)
        hint = ("Check the expression against the scan's columns, or send the filter as SQL text: "
                "filter=\"s LIKE 'a%'\".")
        raise InvalidRequest(f"filter {expr} cannot be sent as Substrait: {detail}; the scan's columns: "
                             f"{columns}. {hint}", hint=hint) from e
    return bytes(buf)  # a pyarrow.Buffer or a memoryview, depending on the version
