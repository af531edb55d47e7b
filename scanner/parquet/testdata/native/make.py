"""Writes the pyarrow files TestNativeMatchesPyarrowFiles reads natively (and
flba-delta.expected, the PLAIN twin of flba-delta.parquet).

Run with pyarrow 26: python make.py (in this folder). The files are small
(2,000 rows) and committed; re-running gives equal files.
"""
import decimal
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

N = 2000
rng = np.random.default_rng(19)


def nulls(values, every=9):
    return [None if i % every == 4 else v for i, v in enumerate(values)]


table = pa.table({
    "flag": pa.array(nulls([bool(x) for x in rng.integers(0, 2, N)]), pa.bool_()),
    "price": pa.array(nulls([decimal.Decimal(int(x)) / 100 for x in rng.integers(-10**9, 10**9, N)]), pa.decimal128(15, 2)),
    "qty": pa.array([decimal.Decimal(int(x)) for x in rng.integers(0, 50, N)], pa.decimal128(4, 0)),
    "big": pa.array(nulls([decimal.Decimal(int(x)) * 10**20 for x in rng.integers(-10**9, 10**9, N)]), pa.decimal128(38, 3)),
    "huge": pa.array(nulls([decimal.Decimal(int(x)) * 10**30 for x in rng.integers(-10**9, 10**9, N)]), pa.decimal256(50, 1)),
    "half": pa.array(nulls(rng.random(N).astype(np.float16)), pa.float16()),
    "code": pa.array(nulls([b"%04d" % (i % 9999) for i in range(N)]), pa.binary(4)),
    "id": pa.array([uuid.UUID(int=int(x)).bytes for x in rng.integers(0, 2**62, N)], pa.uuid()),
    "ts": pa.array(nulls([int(v) for v in np.arange(N, dtype="int64") * 1_000_000_007 + 10**18]), pa.int64()).cast(pa.timestamp("ns")),
    "n32": pa.array(nulls(rng.integers(-1000, 1000, N).astype("int32")), pa.int32()),
    "n64": pa.array(np.cumsum(rng.integers(0, 100, N)), pa.int64()),
    "x": pa.array(nulls(rng.random(N)), pa.float64()),
    "y": pa.array(rng.random(N).astype(np.float32), pa.float32()),
    "key": pa.array(nulls([f"orders/2026/{i:07d}" for i in range(N)]), pa.string()),
    "word": pa.array([f"w{int(x)}" for x in rng.integers(0, 300, N)], pa.string()),
})

common = dict(row_group_size=800, data_page_size=4096)
pq.write_table(table, "defaults.parquet", **common)
pq.write_table(table, "v2-zstd-plain.parquet", data_page_version="2.0", compression="zstd",
               use_dictionary=False, **common)
pq.write_table(table, "int96.parquet", use_deprecated_int96_timestamps=True, **common)
pq.write_table(table, "encodings.parquet", use_dictionary=False, data_page_version="2.0",
               store_decimal_as_integer=True,
               column_encoding={
                   "n32": "DELTA_BINARY_PACKED", "n64": "DELTA_BINARY_PACKED",
                   "price": "DELTA_BINARY_PACKED", "qty": "DELTA_BINARY_PACKED",
                   "key": "DELTA_BYTE_ARRAY", "word": "DELTA_LENGTH_BYTE_ARRAY",
                   "id": "BYTE_STREAM_SPLIT",
                   "x": "BYTE_STREAM_SPLIT", "y": "BYTE_STREAM_SPLIT", "half": "BYTE_STREAM_SPLIT",
                   "big": "BYTE_STREAM_SPLIT", "flag": "RLE",
               }, **common)

# DELTA_BYTE_ARRAY of FIXED_LEN_BYTE_ARRAY, which arrow-go v18.8.0's reader
# does not implement: the test compares it with the same column in PLAIN.
codes = table.select(["code"])
pq.write_table(codes, "flba-delta.parquet", use_dictionary=False, column_encoding={"code": "DELTA_BYTE_ARRAY"}, **common)
pq.write_table(codes, "flba-delta.expected", use_dictionary=False, **common)
