"""Writes bloom.parquet: 4 row groups of 500 rows, ids shuffled (unsorted,
so statistics cannot prune a point lookup), bloom filters (ndv 500, fpp
0.01) on every column but `nobloom`. Run with pyarrow >= 22:
    python gen.py
"""
import datetime
import random

import pyarrow as pa
import pyarrow.parquet as pq

random.seed(15)
n = 2000
ids = list(range(0, 2 * n, 2))  # even ids only: odd ones are absent
random.shuffle(ids)
t = pa.table({
    "id": pa.array(ids, pa.int64()),
    "i32": pa.array([i // 2 for i in ids], pa.int32()),
    "u16": pa.array([i % 60000 for i in ids], pa.uint16()),
    "name": pa.array([f"n{i}" for i in ids], pa.string()),
    "f": pa.array([i / 4 for i in ids], pa.float64()),
    "day": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in ids], pa.date32()),
    "ts": pa.array([i * 1000 for i in ids], pa.timestamp("ms")),
    "nobloom": pa.array(ids, pa.int64()),
})
cols = [c for c in t.column_names if c != "nobloom"]
pq.write_table(t, "bloom.parquet", row_group_size=500,
               bloom_filter_options={c: {"ndv": 500, "fpp": 0.01} for c in cols})
