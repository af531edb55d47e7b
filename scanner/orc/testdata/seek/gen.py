"""Writes the ORC files of seek_test.go with pyarrow.orc: one stripe of
50,000 rows, row_index_stride 1000, the default compression block (64 KiB), with nulls in every column but seq.
Run: /work/main/.venv/bin/python gen.py"""
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.orc as orc

N = 50000
rng = np.random.default_rng(15)


def nulls(a, frac=0.1):
    mask = rng.random(N) < frac
    return pa.array(a, mask=mask)


t = pa.table({
    "seq": pa.array(np.arange(N, dtype=np.int64)),
    "i32": nulls(rng.integers(-1 << 30, 1 << 30, N).astype(np.int32)),
    "x": nulls(rng.random(N)),
    "f": nulls(rng.random(N).astype(np.float32)),
    "s": nulls(["s%08x" % v for v in rng.integers(0, 1 << 32, N)]),
    "d": nulls(["k%d" % v for v in rng.integers(0, 50, N)]),
    "b": nulls(rng.random(N) < 0.5),
    "t8": nulls(rng.integers(-128, 128, N).astype(np.int8)),
    "i16": pa.array(rng.integers(-1000, 1000, N).astype(np.int16)),
    "ts": nulls(rng.integers(-(1 << 62), 1 << 62, N).astype("datetime64[ns]")),
    "dec": pa.array([decimal.Decimal(int(v)).scaleb(-3) for v in rng.integers(-10**12, 10**12, N)],
                    pa.decimal128(20, 3), mask=rng.random(N) < 0.1),
    "day": nulls(rng.integers(-20000, 20000, N).astype("datetime64[D]")),
})
for comp in ["uncompressed", "zlib", "zstd", "snappy"]:
    orc.write_table(t, f"seek_{comp}.orc", compression=comp, row_index_stride=1000,
                    dictionary_key_size_threshold=0.5)
