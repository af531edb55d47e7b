"""Writes bloom.orc (bloom_filter_columns are ORC column ids: 0 is the root struct): 20,000 rows, row index stride 1,000, bloom filters on
id (shuffled even int64), name (string), f (double), i32 (int32); seq is
sorted (stride statistics select it). Run: python gen.py
"""
import random

import pyarrow as pa
import pyarrow.orc as po

random.seed(15)
n = 20000
ids = list(range(0, 2 * n, 2))
random.shuffle(ids)
t = pa.table({
    "seq": pa.array(range(n), pa.int64()),
    "id": pa.array(ids, pa.int64()),
    "i32": pa.array([i // 2 for i in ids], pa.int32()),
    "name": pa.array([f"n{i}" for i in ids], pa.string()),
    "f": pa.array([i / 4 for i in ids], pa.float64()),
})
po.write_table(t, "bloom.orc", row_index_stride=1000, stripe_size=4 << 20, batch_size=4096,
               bloom_filter_columns=[2, 3, 4, 5], bloom_filter_fpp=0.05)
