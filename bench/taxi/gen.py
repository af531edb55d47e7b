"""The data set of bench/taxi: taxi trips written as a new user writes them,
with pyarrow's defaults (snappy, dictionaries, statistics, no page index),
as a hive dataset by service and month.

    gen.py OUT_DIR [--rows N]      (default 3,000,000 rows)

OUT_DIR/trips/service=S/month=M/part-0.parquet, for the services yellow,
green and fhv and the months 1-6: 18 files. Columns:

    pickup_ts     timestamp[us]   2026, within the file's month, sorted per file
    dropoff_ts    timestamp[us]   pickup + 2..90 minutes
    vendor_id     int32           1..4
    city          string          one of CITIES (skewed), dictionary-encoded
    payment_type  string          card 70 %, cash 25 %, voucher 3 %, dispute 2 %
    passengers    int64           1..6, 2 % null
    distance_km   double          exponential, mean 6 km
    fare          double          3 + 2.1 x distance, +- noise
    tip           double          card only, else null; also 3 % null
    note          string          null but for about 1 in 1,000 rows

The output is deterministic (seeded) and kept while ROWS and GEN_VERSION are
unchanged (OUT_DIR/trips/_manifest.json records them).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

GEN_VERSION = 1
SERVICES = ["yellow", "green", "fhv"]
SERVICE_SHARE = [0.6, 0.15, 0.25]
MONTHS = list(range(1, 7))
CITIES = ["New York", "Boston", "Chicago", "San Francisco", "San Diego", "San Jose", "Seattle", "Austin",
          "Denver", "Miami", "Portland", "Atlanta"]
CITY_SHARE = np.array([30, 8, 12, 6, 4, 3, 7, 5, 6, 7, 5, 7], dtype=float)
PAYMENTS = ["card", "cash", "voucher", "dispute"]
PAYMENT_SHARE = [0.70, 0.25, 0.03, 0.02]
NOTES = ["lost umbrella", "driver was great", "detour due to roadworks", "airport flat rate", "child seat"]


def part(rng: np.random.Generator, n: int, month: int) -> pa.Table:
    start = np.datetime64(f"2026-{month:02d}-01", "us").astype(np.int64)
    end = np.datetime64(f"2026-{month + 1:02d}-01" if month < 12 else "2027-01-01", "us").astype(np.int64)
    pickup = np.sort(rng.integers(start, end, n))
    dropoff = pickup + rng.integers(120, 5400, n) * 1_000_000
    distance = np.round(rng.exponential(6.0, n), 2)
    fare = np.round(np.maximum(2.5, 3 + 2.1 * distance + rng.normal(0, 2, n)), 2)
    payment_idx = rng.choice(len(PAYMENTS), n, p=PAYMENT_SHARE)
    card = payment_idx == 0
    tip = np.round(fare * rng.uniform(0, 0.3, n), 2)
    tip_null = ~card | (rng.random(n) < 0.03)
    passengers = rng.integers(1, 7, n)
    passengers_null = rng.random(n) < 0.02
    note_at = rng.random(n) < 0.001
    notes = np.array(NOTES, dtype=object)[rng.integers(0, len(NOTES), n)]
    city = np.array(CITIES, dtype=object)[rng.choice(len(CITIES), n, p=CITY_SHARE / CITY_SHARE.sum())]
    return pa.table({
        "pickup_ts": pa.array(pickup, pa.timestamp("us")),
        "dropoff_ts": pa.array(dropoff, pa.timestamp("us")),
        "vendor_id": pa.array(rng.integers(1, 5, n), pa.int32()),
        "city": pa.array(city, pa.string()),
        "payment_type": pa.array(np.array(PAYMENTS, dtype=object)[payment_idx], pa.string()),
        "passengers": pa.array(passengers, pa.int64(), mask=passengers_null),
        "distance_km": pa.array(distance, pa.float64()),
        "fare": pa.array(fare, pa.float64()),
        "tip": pa.array(tip, pa.float64(), mask=tip_null),
        "note": pa.array(np.where(note_at, notes, None), pa.string()),
    })


def generate(out: Path, rows: int) -> Path:
    root = out / "trips"
    manifest = root / "_manifest.json"
    want = {"rows": rows, "gen_version": GEN_VERSION}
    if manifest.exists() and json.loads(manifest.read_text()) == want:
        return root
    rng = np.random.default_rng(20261202)
    per_service = [int(rows * s) for s in SERVICE_SHARE]
    per_service[0] += rows - sum(per_service)
    for s, service in enumerate(SERVICES):
        left = per_service[s]
        for i, month in enumerate(MONTHS):
            n = left // (len(MONTHS) - i)
            left -= n
            d = root / f"service={service}" / f"month={month}"
            d.mkdir(parents=True, exist_ok=True)
            pq.write_table(part(rng, n, month), d / "part-0.parquet")  # pyarrow's defaults
    manifest.write_text(json.dumps(want))
    return root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--rows", type=int, default=3_000_000)
    args = ap.parse_args()
    root = generate(args.out, args.rows)
    print(f"{root}: {sum(p.stat().st_size for p in root.rglob('*.parquet')) / 1e6:.1f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
