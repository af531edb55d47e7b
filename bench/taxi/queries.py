"""The nine queries of bench/taxi (run.py), also run by e2e/test_holes.py:
each a name, the columns (None: all), a SQL filter (None: none) for scand
and DuckDB, and the same filter as a pyarrow expression."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc

ALL = None
FOUR = ["pickup_ts", "city", "fare", "distance_km"]
DAY_LO, DAY_HI = dt.datetime(2026, 3, 14), dt.datetime(2026, 3, 15)

# name, columns, SQL filter (scand and DuckDB), pyarrow expression.
QUERIES = [
    ("4 cols, fare > 100 AND city = 'Boston'", FOUR, "fare > 100 AND city = 'Boston'",
     (pc.field("fare") > 100) & (pc.field("city") == "Boston")),
    ("partition service='green' AND month=3", ALL, "service = 'green' AND month = 3",
     (pc.field("service") == "green") & (pc.field("month") == 3)),
    ("city LIKE 'San%' AND distance_km > 25", FOUR, "city LIKE 'San%' AND distance_km > 25",
     pc.starts_with(pc.field("city"), "San") & (pc.field("distance_km") > 25)),
    ("payment_type IN ('cash','voucher') AND fare < 3", ["pickup_ts", "payment_type", "fare", "tip"],
     "payment_type IN ('cash', 'voucher') AND fare < 3",
     pc.field("payment_type").isin(["cash", "voucher"]) & (pc.field("fare") < 3)),
    ("tip IS NULL AND passengers IS NULL", ["pickup_ts", "fare", "tip", "passengers"],
     "tip IS NULL AND passengers IS NULL", pc.field("tip").is_null() & pc.field("passengers").is_null()),
    ("one-day pickup_ts range", FOUR,
     "pickup_ts >= TIMESTAMP '2026-03-14 00:00:00' AND pickup_ts < TIMESTAMP '2026-03-15 00:00:00'",
     (pc.field("pickup_ts") >= pa.scalar(DAY_LO, pa.timestamp("us")))
     & (pc.field("pickup_ts") < pa.scalar(DAY_HI, pa.timestamp("us")))),
    ("note IS NOT NULL, all columns", ALL, "note IS NOT NULL", pc.field("note").is_valid()),
    ("4 cols, no filter", FOUR, None, None),
    ("all columns, no filter", ALL, None, None),
]
