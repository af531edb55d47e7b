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


# --- the throughput matrix's other data sets (experiment 4) -----------------
#
# lineitem: TPC-H lineitem's columns and value shapes (keys, quantities,
# prices, flags, three dates, low-cardinality strings, a comment), with the
# prices as float64 or, as TPC-H defines them, decimal(15,2) plus one
# boolean. nested: lists of structs and a map beside flat ids. small: many
# files of 1,000 trips rows, the case multi-file splits are for. All
# pyarrow's defaults (snappy, dictionary), deterministic, and kept between
# runs while their stamp matches.

MATRIX_VERSION = 1


def _lineitem(rows: int, seed: int, start: int, decimal: bool):
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(seed)
    d0 = np.datetime64("1992-01-01", "D").astype(np.int32)
    ship = d0 + rng.integers(0, 2500, rows, dtype=np.int32)
    words = pa.array([f"{w} carefully final deposits {w % 97} sleep" for w in rng.integers(0, 1 << 40, 50_000).tolist()])
    cols = {
        "l_orderkey": pa.array(np.arange(start, start + rows, dtype=np.int64) // 4),
        "l_partkey": pa.array(rng.integers(1, 200_000, rows, dtype=np.int64)),
        "l_suppkey": pa.array(rng.integers(1, 10_000, rows, dtype=np.int64)),
        "l_linenumber": pa.array(rng.integers(1, 8, rows, dtype=np.int32)),
    }
    prices = {"l_quantity": rng.integers(1, 51, rows) * 100, "l_extendedprice": rng.integers(90_000, 10_500_000, rows),
              "l_discount": rng.integers(0, 11, rows), "l_tax": rng.integers(0, 9, rows)}
    for name, cents in prices.items():
        if decimal:
            cols[name] = _cents_decimal(cents)
        else:
            cols[name] = pa.array(cents / 100.0)
    cols.update({
        "l_returnflag": pa.array(["A", "N", "R"]).take(pa.array(rng.integers(0, 3, rows))),
        "l_linestatus": pa.array(["F", "O"]).take(pa.array(rng.integers(0, 2, rows))),
        "l_shipdate": pa.array(ship, pa.date32()),
        "l_commitdate": pa.array(ship + rng.integers(-60, 60, rows, dtype=np.int32), pa.date32()),
        "l_receiptdate": pa.array(ship + rng.integers(1, 30, rows, dtype=np.int32), pa.date32()),
        "l_shipinstruct": pa.array(["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"]).take(
            pa.array(rng.integers(0, 4, rows))),
        "l_shipmode": pa.array(["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"]).take(
            pa.array(rng.integers(0, 7, rows))),
        "l_comment": words.take(pa.array(rng.integers(0, len(words), rows))),
    })
    if decimal:
        cols["l_returned"] = pa.array(rng.random(rows) < 0.25)
    return pa.table(cols)


def _cents_decimal(cents):
    """decimal(15,2) values of non-negative int cents, built from the
    16-byte little-endian layout directly (a Python Decimal per value is
    far too slow for millions of rows)."""
    import numpy as np
    import pyarrow as pa
    words = np.zeros((len(cents), 2), dtype=np.int64)
    words[:, 0] = cents
    return pa.Array.from_buffers(pa.decimal128(15, 2), len(cents), [None, pa.py_buffer(words.tobytes())])


def _nested(rows: int, seed: int, start: int):
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(seed)
    n_items = rng.integers(0, 6, rows)
    offsets = np.concatenate([[0], np.cumsum(n_items)]).astype(np.int32)
    total = int(offsets[-1])
    skus = pa.array([f"sku-{i:05d}" for i in range(5000)])
    items = pa.StructArray.from_arrays(
        [pa.array(rng.integers(0, 1 << 40, total, dtype=np.int64)), skus.take(pa.array(rng.integers(0, 5000, total))),
         pa.array(np.round(rng.gamma(2.0, 5.0, total), 2))], names=["id", "sku", "price"])
    n_tags = rng.integers(0, 4, rows)
    toff = np.concatenate([[0], np.cumsum(n_tags)]).astype(np.int32)
    keys = pa.array(["color", "size", "brand", "promo", "lane"]).take(pa.array(rng.integers(0, 5, int(toff[-1]))))
    tags = pa.MapArray.from_arrays(pa.array(toff), keys, pa.array(rng.integers(0, 1000, int(toff[-1]), dtype=np.int64)))
    return pa.table({
        "order_id": pa.array(np.arange(start, start + rows, dtype=np.int64)),
        "customer": pa.array(rng.integers(0, 1_000_000, rows, dtype=np.int64)),
        "items": pa.ListArray.from_arrays(pa.array(offsets), items),
        "tags": tags,
        "scores": pa.ListArray.from_arrays(pa.array(offsets), pa.array(rng.standard_normal(total))),
    })


def _write_set(d: Path, want: str, paths: list[Path], make, row_group: int) -> list[Path]:
    import pyarrow.parquet as pq
    stamp = d / ".stamp"
    if stamp.exists() and stamp.read_text() == want and all(p.exists() for p in paths):
        return paths
    d.mkdir(parents=True, exist_ok=True)
    for p in d.glob("*.parquet"):
        p.unlink()
    for i, p in enumerate(paths):
        pq.write_table(make(i), p, compression="snappy", row_group_size=row_group)
    stamp.write_text(want)
    return paths


def matrix_sets(data_dir: Path, rows_per_file: int, small_files: int = 2000) -> dict[str, list[Path]]:
    """The throughput matrix's data sets other than the trips files, by name:
    lineitem-float64, lineitem-decimal, nested (4 files each) and small
    (small_files files of 1,000 rows)."""
    data_dir = Path(data_dir)
    out = {}
    for name, decimal in (("lineitem-float64", False), ("lineitem-decimal", True)):
        d = data_dir / name
        want = json.dumps({"rows": rows_per_file, "files": NFILES, "v": MATRIX_VERSION})
        out[name] = _write_set(d, want, [d / f"part-{i}.parquet" for i in range(NFILES)],
                               lambda i, dec=decimal: _lineitem(rows_per_file, 10 + i, i * rows_per_file, dec), ROW_GROUP)
    d = data_dir / "nested"
    nrows = max(1 << 12, rows_per_file // 2)
    want = json.dumps({"rows": nrows, "files": NFILES, "v": MATRIX_VERSION})
    out["nested"] = _write_set(d, want, [d / f"part-{i}.parquet" for i in range(NFILES)],
                               lambda i: _nested(nrows, 20 + i, i * nrows), ROW_GROUP)
    d = data_dir / "small"
    want = json.dumps({"rows": 1000, "files": small_files, "v": MATRIX_VERSION})
    whole = []

    def small(i):
        if not whole:  # one table sliced, as _trips builds a 200,000-word pool per call
            whole.append(_trips(1000 * small_files, 30, 0))
        return whole[0].slice(1000 * i, 1000)
    out["small"] = _write_set(d, want, [d / f"part-{i:05d}.parquet" for i in range(small_files)], small, ROW_GROUP)
    return out
