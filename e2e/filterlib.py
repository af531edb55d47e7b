"""Helpers of the filter tests (test_filter.py, test_hive.py): requests with
a filter, in SQL or as Substrait, and the reference result of the same
predicate from pyarrow.dataset."""

from __future__ import annotations

import base64
import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.flight as flight
import pyarrow.substrait as substrait

from scandlib import ScanResult, call_options, command, normalize_schema, scan


def scan_schema(client: flight.FlightClient, paths: list[str]) -> pa.Schema:
    """The scan's unified schema, every column (GetSchema)."""
    return client.get_schema(command({"paths": paths}), options=call_options()).schema


def substrait_filter(client: flight.FlightClient, paths: list[str], expr: pc.Expression) -> str:
    """expr as the request's filter_substrait (base64), serialized against
    the schema scand gives the scan, as the Python client does (without
    field metadata, which Substrait cannot carry)."""
    raw = substrait.serialize_expressions([expr], ["filter"], normalize_schema(scan_schema(client, paths)))
    return base64.b64encode(bytes(raw)).decode()


def sql_scan(client, paths: list[str], sql: str, **req) -> ScanResult:
    return scan(client, {"paths": paths, "filter": sql, **req})


def expr_scan(client, paths: list[str], expr: pc.Expression, **req) -> ScanResult:
    return scan(client, {"paths": paths, "filter_substrait": substrait_filter(client, paths, expr), **req})


def plan_stats(res_or_info) -> dict:
    """The PlanStats JSON of a scan's FlightInfo ({} when there is none)."""
    info = getattr(res_or_info, "info", res_or_info)
    return json.loads(info.app_metadata) if info.app_metadata else {}


def reference(files, expr: pc.Expression, columns=None, fmt: str = "parquet", **dataset_kw) -> pa.Table:
    """pyarrow's rows for the same files and predicate: the files read with
    pyarrow.dataset, then filtered in memory. (Pushed into the dataset scan,
    pyarrow prunes Parquet row groups with NaN wrongly: NOT (x > -0.5)
    loses row groups whose numbers are all above -0.5 but that hold NaN.)"""
    t = ds.dataset(files, format=fmt, **dataset_kw).to_table().filter(expr)
    return t.select(columns) if columns is not None else t


def col_values(t: pa.Table, name: str) -> list:
    return t.column(name).to_pylist()
