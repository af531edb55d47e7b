"""Generated data of the suite.

tput: NFILES snappy Parquet files of a trips-like table (ids, a timestamp,
floats, a low-cardinality string, a random string, an int32, a bool): what
experiments 4 (throughput) and 6 (concurrency) scan. Row groups of 512 Ki
rows. Deterministic (seeded) and kept between runs while the row count is
unchanged (a stamp file names it).

seekhole: a Parquet object with several row groups for experiment 1's scand
hole: random int64/float64 columns, uncompressed.
"""

from __future__ import annotations

import json
from pathlib import Path

NFILES = 4
ROW_GROUP = 512 * 1024
GEN_VERSION = 2


def _trips(rows: int, seed: int, start: int):
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(seed)
    cities = pa.array([f"city-{i:02d}-{'x' * (i % 7)}" for i in range(50)])
    words = rng.integers(0, 1 << 62, 200_000, dtype=np.int64)
    pool = pa.array([f"{w:016x}{'-note' * (w % 4)}" for w in words.tolist()])
    ts0 = np.datetime64("2026-01-01T00:00:00", "us").astype(np.int64)
    return pa.table({
        "id": pa.array(np.arange(start, start + rows, dtype=np.int64)),
        "user_id": pa.array(rng.integers(0, 5_000_000, rows, dtype=np.int64)),
        "pickup_at": pa.array(ts0 + np.sort(rng.integers(0, 86_400_000_000 * 30, rows)), pa.timestamp("us")),
        "fare": pa.array(np.round(rng.gamma(2.0, 9.0, rows), 2)),
        "tip": pa.array(np.round(rng.exponential(2.0, rows), 2)),
        "lat": pa.array(rng.uniform(40.5, 40.9, rows)),
        "lon": pa.array(rng.uniform(-74.2, -73.7, rows)),
        "city": cities.take(pa.array(rng.integers(0, 50, rows))),
        "note": pool.take(pa.array(rng.integers(0, len(pool), rows))),
        "passengers": pa.array(rng.integers(1, 7, rows, dtype=np.int32)),
        "paid": pa.array(rng.random(rows) < 0.9),
    })


def tput_files(data_dir: Path, rows_per_file: int) -> list[Path]:
    """The throughput files (written when missing or stale)."""
    import pyarrow.parquet as pq
    d = Path(data_dir) / "tput"
    stamp = d / ".stamp"
    want = json.dumps({"rows": rows_per_file, "files": NFILES, "v": GEN_VERSION})
    paths = [d / f"part-{i}.parquet" for i in range(NFILES)]
    if stamp.exists() and stamp.read_text() == want and all(p.exists() for p in paths):
        return paths
    d.mkdir(parents=True, exist_ok=True)
    for p in d.glob("*.parquet"):
        p.unlink()
    chunk = 1 << 20
    for i, p in enumerate(paths):
        with pq.ParquetWriter(p, _trips(8, 0, 0).schema, compression="snappy") as w:
            done = 0
            while done < rows_per_file:
                n = min(chunk, rows_per_file - done)
                w.write_table(_trips(n, 1000 * i + done // chunk, i * rows_per_file + done), row_group_size=ROW_GROUP)
                done += n
    stamp.write_text(want)
    return paths


def seekhole_file(data_dir: Path, rows: int, cols: int = 32, row_groups: int = 8) -> Path:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    p = Path(data_dir) / f"seekhole-{rows}x{cols}.parquet"
    if p.exists():
        return p
    rng = np.random.default_rng(7)
    arrays = [pa.array(rng.integers(0, 1 << 62, rows, dtype=np.int64)) if i % 2 == 0
              else pa.array(rng.standard_normal(rows)) for i in range(cols)]
    t = pa.Table.from_arrays(arrays, names=[f"c{i:03d}" for i in range(cols)])
    pq.write_table(t, p, compression="none", use_dictionary=False, row_group_size=max(1, rows // row_groups))
    return p
