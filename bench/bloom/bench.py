"""Point lookups with bloom filters: scand against pyarrow.dataset on the
same local files (docs/indexes.md).

Writes 2,000,000 rows of events (id: a shuffled high-cardinality int64, so
row-group statistics cannot prune; 20 Parquet row groups of 100,000 rows;
ORC with 10,000-row strides) in two versions of each format: with bloom
filters on id and without, starts scand on them, looks up 20 ids (present),
and prints one table: row groups (ORC: rows) read, bytes fetched and GETs
of the data streams, and the median wall time of a lookup, next to
pyarrow.dataset's.

    go build -o /tmp/scand ./cmd/scand
    python bench/bloom/bench.py --scand /tmp/scand [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.orc as po
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e"))
from scandlib import ScandServer, scan  # noqa: E402

ROWS, GROUP, STRIDE, LOOKUPS = 2_000_000, 100_000, 10_000, 20


def write_files(root: Path) -> list[int]:
    rnd = random.Random(15)
    ids = list(range(0, 2 * ROWS, 2))
    rnd.shuffle(ids)
    t = pa.table({
        "id": pa.array(ids, pa.int64()),
        "value": pa.array([float(i % 1009) for i in ids]),
        "payload": pa.array([f"event-{i:012d}-payload" for i in ids]),
    })
    pq.write_table(t, root / "bloom.parquet", row_group_size=GROUP, bloom_filter_options={"id": {"ndv": GROUP, "fpp": 0.01}})
    pq.write_table(t, root / "plain.parquet", row_group_size=GROUP)
    po.write_table(t, root / "bloom.orc", row_index_stride=STRIDE, bloom_filter_columns=[1], bloom_filter_fpp=0.01)
    po.write_table(t, root / "plain.orc", row_index_stride=STRIDE)
    return rnd.sample(ids, LOOKUPS)


def scand_row(client, name: str, targets: list[int]) -> dict:
    walls, groups, fetched, gets, rows = [], 0, 0, 0, 0
    for v in targets:
        start = time.perf_counter()
        res = scan(client, {"paths": [name], "filter": f"id = {v}"})
        walls.append(time.perf_counter() - start)
        assert res.table.num_rows == 1, (name, v, res.table.num_rows)
        ps = json.loads(res.info.app_metadata)
        groups += ps["row_groups"] - ps.get("row_groups_pruned", 0) - ps.get("row_groups_pruned_by_bloom", 0)
        for m in res.metadata:
            if m:
                fetched += m.get("bytes_fetched", 0)
                gets += m.get("reads", 0)
                rows += m.get("rows_read", 0)
    n = len(targets)
    return {"reader": "scand", "file": name, "groups": groups / n, "rows_read": rows / n,
            "MiB": fetched / n / 2**20, "GETs": gets / n, "ms": 1000 * statistics.median(walls)}


def pyarrow_row(root: Path, name: str, targets: list[int]) -> dict:
    fmt = "orc" if name.endswith(".orc") else "parquet"
    walls = []
    for v in targets:
        start = time.perf_counter()
        t = ds.dataset(root / name, format=fmt).to_table(filter=ds.field("id") == v)
        walls.append(time.perf_counter() - start)
        assert t.num_rows == 1
    return {"reader": "pyarrow.dataset", "file": name, "groups": float("nan"), "rows_read": float("nan"),
            "MiB": float("nan"), "GETs": float("nan"), "ms": 1000 * statistics.median(walls)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scand", required=True)
    ap.add_argument("--workdir")
    args = ap.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="bench-bloom-"))
    root.mkdir(parents=True, exist_ok=True)
    targets = write_files(root)
    srv = ScandServer(args.scand, root, root / "scand.log", "bench-bloom")
    srv.start()
    try:
        client = srv.client()
        rows = []
        for name in ("bloom.parquet", "plain.parquet", "bloom.orc", "plain.orc"):
            scand_row(client, name, targets[:2])  # warm the metadata cache and the page cache
            rows.append(scand_row(client, name, targets))
            rows.append(pyarrow_row(root, name, targets))
    finally:
        srv.stop()
    print(f"{ROWS:,} rows, {LOOKUPS} point lookups on a shuffled int64 id, local disk; per lookup:")
    print(f"| reader | file | row groups/stripes read | rows the reader returned | data MiB fetched | data GETs | median ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['reader']} | {r['file']} | {r['groups']:.1f} | {r['rows_read']:,.0f} | {r['MiB']:.2f} | {r['GETs']:.1f} | {r['ms']:.1f} |")


if __name__ == "__main__":
    main()
