"""Writes the Substrait fixtures of scanner/filter/substrait: one .bin per
case, each pyarrow.substrait.serialize_expressions([expr], ["filter"],
SCHEMA) of one pyarrow expression; and the evaluation oracle: rows.arrow,
a few rows of SCHEMA, and oracle.json, what pyarrow's dataset scanner
computes for each case on them (true, false or null per row).

Run with the project's venv (pyarrow 26):

    /work/main/.venv/bin/python scanner/filter/substrait/testdata/gen.py

It also prints the expressions pyarrow refuses to serialize, with its
reason (the report of the branch that added them lists them).
"""
import datetime
import decimal
import json
import os
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.substrait as ps

SCHEMA = pa.schema([
    ("i8", pa.int8()), ("i16", pa.int16()), ("i32", pa.int32()), ("i64", pa.int64()),
    ("u8", pa.uint8()), ("u64", pa.uint64()),
    ("f32", pa.float32()), ("f64", pa.float64()),
    ("s", pa.string()), ("b", pa.binary()), ("ok", pa.bool_()),
    ("d", pa.date32()), ("ts", pa.timestamp("us")), ("tsz", pa.timestamp("ns", tz="UTC")),
    ("tsms", pa.timestamp("ms")), ("tsuz", pa.timestamp("us", tz="Europe/Paris")),
    ("dec", pa.decimal128(10, 2)),
    ("st", pa.struct([("a", pa.int32()), ("inner", pa.struct([("x", pa.string())]))])),
    ("after", pa.int64()),  # after the struct: checks the depth-first names
])

f = pc.field
DT = datetime.datetime(2020, 1, 1, 12, 30)
UTC = datetime.timezone.utc

# Cases that serialize; translate_test.go holds each one's expected text.
CASES = {
    "eq_i64": f("i64") == 5,
    "ne_i64": f("i64") != 5,
    "lt_i8": f("i8") < 5,
    "le_i16": f("i16") <= -3,
    "gt_i32": f("i32") > 7,
    "ge_i64": f("i64") >= 2**40,
    "lit_left": 5 < f("i64"),
    "u8": f("u8") == pa.scalar(200, pa.uint8()),
    "u64": f("u64") > pa.scalar(2**63 + 1, pa.uint64()),
    "f32": f("f32") > 1.5,
    "f64": f("f64") <= 2.25,
    "f64_int": f("f64") > 1,
    "f64_nan": f("f64") == float("nan"),
    "f64_inf": f("f64") < float("inf"),
    "str": f("s") == "it's",
    "bin": f("b") == b"\x00\xff",
    "bool_col": f("ok"),
    "bool_eq": f("ok") == True,  # noqa: E712
    "date": f("d") >= datetime.date(2024, 2, 29),
    "ts_us": f("ts") > pa.scalar(DT, pa.timestamp("us")),
    "ts_py": f("ts") < DT,
    "ts_date": f("ts") > pa.scalar(datetime.date(2020, 1, 1)),
    "ts_ms": f("tsms") == pa.scalar(DT, pa.timestamp("ms")),
    "ts_tz": f("tsuz") > datetime.datetime(2020, 1, 1, tzinfo=UTC),
    "dec": f("dec") > pa.scalar(decimal.Decimal("1.50"), pa.decimal128(10, 2)),
    "dec_neg": f("dec") < decimal.Decimal("-12.5"),
    "null_i64": f("i64") == pa.scalar(None, pa.int64()),
    "null_str": f("s") != pa.scalar(None, pa.string()),
    "col_col": f("i64") == f("after"),
    "and": (f("i64") > 1) & f("ok"),
    "or": (f("i64") > 1) | f("ok"),
    "and3": (f("i64") > 1) & f("ok") & f("s").is_null(),
    "or_and": ((f("i64") > 1) | (f("i64") < -1)) & ~f("ok"),
    "not": ~f("ok"),
    "not_cmp": ~(f("s") == "x"),
    "and_kleene": pc.and_kleene(f("ok"), f("i8") == 1),
    "or_kleene": pc.or_kleene(f("ok"), f("i8") == 1),
    "invert": pc.invert(f("ok")),
    "is_null": f("i64").is_null(),
    "is_valid": f("s").is_valid(),
    "is_null_ts_ns": f("tsz").is_null(),
    "isin": f("i64").isin([1, 2, 3]),
    "isin_str": f("s").isin(["a", "b'c"]),
    "isin_null": f("i64").isin([1, None]),
    "isin_i32": f("i32").isin([1, 2]),
    "isin_empty": f("i64").isin(pa.array([], pa.int64())),
    "not_isin": ~f("i64").isin([1, 2]),
    "starts_with": pc.starts_with(f("s"), "ab%"),
    "ends_with": pc.ends_with(f("s"), "x_y"),
    "contains": pc.match_substring(f("s"), "50%"),
    "nested": f(("st", "inner", "x")) == "a",
    "nested_a": f("st", "a") > 1,
    "nested_starts": pc.starts_with(f(("st", "inner", "x")), "p"),
    "after_struct": f("after") == 1,
    "literal_true": pc.scalar(True),
    # translate to errors
    "err_nonbool": f("i64"),
    "err_is_nan": pc.is_nan(f("f64")),
    "err_add": (f("i64") + 1) > 3,
    "err_starts_ci": pc.starts_with(f("s"), "x", ignore_case=True),
}

# Expressions pyarrow 26 refuses to serialize (kept to show the reason).
REFUSED = {
    "match_like": lambda: pc.match_like(f("s"), "a%"),
    "starts_with_binary": lambda: pc.starts_with(f("b"), "a"),
    "i32_eq_float": lambda: f("i32") == 1.5,
    "i8_eq_300": lambda: f("i8") == 300,
    "u8_eq_int": lambda: f("u8") == 5,
    "dec_gt_int": lambda: f("dec") > 1,
    "ts_ns_tz_literal": lambda: f("tsz") > datetime.datetime(2020, 1, 1, tzinfo=UTC),
    "cast_column": lambda: f("i32").cast(pa.int64()) > 3,
    "xor": lambda: pc.xor(f("ok"), f("ok")),
    "and_not": lambda: pc.and_not(f("ok"), f("ok")),
    "is_null_nan": lambda: pc.is_null(f("f64"), nan_is_null=True),
}


def table():
    """Rows with nulls, NaN and edge values, for the evaluation oracle."""
    d = datetime.date
    return pa.table({
        "i8": pa.array([5, 4, None, -128], pa.int8()),
        "i16": pa.array([-3, -4, None, 0], pa.int16()),
        "i32": pa.array([7, 1, None, 2], pa.int32()),
        "i64": pa.array([5, 1, None, 2**40], pa.int64()),
        "u8": pa.array([200, 0, None, 255], pa.uint8()),
        "u64": pa.array([2**63 + 1, 2**64 - 1, None, 0], pa.uint64()),
        "f32": pa.array([1.5, 2.0, None, float("nan")], pa.float32()),
        "f64": pa.array([2.25, float("nan"), None, float("inf")], pa.float64()),
        "s": pa.array(["it's", "abx_y", None, "a50%b"], pa.string()),
        "b": pa.array([b"\x00\xff", b"", None, b"x"], pa.binary()),
        "ok": pa.array([True, False, None, True], pa.bool_()),
        "d": pa.array([d(2024, 2, 29), d(2024, 3, 1), None, d(1970, 1, 1)], pa.date32()),
        "ts": pa.array([DT, datetime.datetime(2020, 1, 1), None, datetime.datetime(2019, 12, 31)], pa.timestamp("us")),
        "tsz": pa.array([DT, None, None, DT], pa.timestamp("ns", tz="UTC")),
        "tsms": pa.array([DT, datetime.datetime(2020, 1, 1), None, DT], pa.timestamp("ms")),
        "tsuz": pa.array([datetime.datetime(2020, 1, 1, 1, tzinfo=UTC), datetime.datetime(2020, 1, 1, tzinfo=UTC),
                          None, datetime.datetime(2019, 1, 1, tzinfo=UTC)], pa.timestamp("us", tz="Europe/Paris")),
        "dec": pa.array([decimal.Decimal("1.50"), decimal.Decimal("1.51"), None, decimal.Decimal("-12.51")],
                        pa.decimal128(10, 2)),
        "st": pa.array([{"a": 2, "inner": {"x": "a"}}, {"a": 1, "inner": {"x": "pq"}}, None,
                        {"a": None, "inner": None}], SCHEMA.field("st").type),
        "after": pa.array([5, 2, None, 2**40], pa.int64()),
    }, schema=SCHEMA)


def write_oracle(out, tbl):
    """rows.arrow holds tbl; oracle.json each case's pyarrow result."""
    with pa.OSFile(os.path.join(out, "rows.arrow"), "wb") as sink:
        with pa.ipc.new_file(sink, tbl.schema) as w:
            w.write_table(tbl)
    results = {}
    for name, expr in CASES.items():
        if name.startswith("err_"):
            continue
        got = ds.dataset(tbl).to_table(columns={"m": expr}).column("m").to_pylist()
        results[name] = got
    lines = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(results.items())]
    with open(os.path.join(out, "oracle.json"), "w") as fh:
        fh.write("{\n" + ",\n".join(lines) + "\n}\n")


def main():
    out = os.path.dirname(os.path.abspath(__file__))
    for name, expr in CASES.items():
        data = ps.serialize_expressions([expr], ["filter"], SCHEMA)
        with open(os.path.join(out, name + ".bin"), "wb") as fh:
            fh.write(bytes(data))
    write_oracle(out, table())
    for name, make in REFUSED.items():
        try:
            ps.serialize_expressions([make()], ["filter"], SCHEMA)
            print(f"{name}: serializes now; move it to CASES", file=sys.stderr)
        except Exception as e:  # pyarrow raises ArrowInvalid / ArrowNotImplementedError
            print(f"{name}: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
