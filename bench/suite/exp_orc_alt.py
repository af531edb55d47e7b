"""Experiment 2, ORC alternate columns on S3 (bench/iosched covers Parquet
only, so ORC is measured here).

Files (pyarrow.orc.write_table, uncompressed, random int64/float64 columns
so nothing compresses, one stripe each as in the design doc's measurement):
  orc128  65,536 rows x 128 columns (~67 MB at BENCH_SCALE=1)
  orc400   6,554 rows x 400 columns (~21 MB)
uploaded to versitygw, read through toxiproxy (+LATENCY ms per response).

Readers, each scanning ALL and ALTERNATE columns (c000, c002, ...):
  scand, a fresh `scand serve` per mode: --io-no-coalesce, --io-hole 4MiB,
  adaptive (no flag; the latency model is first warmed with scans of another
  object, so the measured object's first scan is still cold), read by a
  stock pyarrow.flight client;
  pyarrow.orc.ORCFile over pyarrow.fs.S3FileSystem (.read(columns)).
GETs come from versitygw's access log (the same count for every reader;
scand's own counter scand_storage_requests_total{backend="s3",op="read"} is
recorded beside it); bytes fetched from scand's IO figures. Each row: one
cold scan, then REPEATS timed scans (min/median/max).
"""

from __future__ import annotations

import time

import lib

MODES = [
    ("scand coalescing off", ["--io-no-coalesce"]),
    ("scand static 4 MiB hole", ["--io-hole", "4MiB"]),
    ("scand adaptive", []),
]


def write_orc(path, rows: int, cols: int, seed: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.orc as po
    rng = np.random.default_rng(seed)
    arrays, names = [], []
    for i in range(cols):
        # c000 int64, c001 float64, c002 int64, ...: alternate columns take both types.
        if i % 4 in (0, 1):
            arrays.append(pa.array(rng.integers(-(1 << 62), 1 << 62, rows, dtype=np.int64)))
        else:
            arrays.append(pa.array(rng.standard_normal(rows)))
        names.append(f"c{i:03d}")
    t = pa.Table.from_arrays(arrays, names=names)
    po.write_table(t, str(path), stripe_size=1 << 30, compression="uncompressed")


def datasets(ctx) -> list[dict]:
    s = ctx.scale
    return [
        {"name": "orc128", "rows": max(64, int(65536 * s)), "cols": 128, "seed": 11},
        {"name": "orc400", "rows": max(64, int(6554 * s)), "cols": 400, "seed": 12},
    ]


def prepare(ctx) -> list[dict]:
    import pyarrow.orc as po
    out = []
    for d in datasets(ctx) + [{"name": "orcwarm", "rows": max(64, int(6554 * ctx.scale)), "cols": 400, "seed": 13}]:
        path = ctx.data / f"{d['name']}-{d['rows']}.orc"
        if not path.exists():
            write_orc(path, d["rows"], d["cols"], d["seed"])
        d["path"] = path
        d["size"] = path.stat().st_size
        d["stripes"] = po.ORCFile(str(path)).nstripes
        d["key"] = f"orc/{d['name']}.orc"
        lib.upload(ctx.admin_fs, path, d["key"])
        out.append(d)
    return out


def run(ctx) -> dict:
    import pyarrow.flight as flight
    deadline = lib.Deadline(ctx.budget("orc_alt"))
    ds = prepare(ctx)
    warm = ds[-1]
    ds = ds[:-1]
    repeats = ctx.repeats
    rows_out = []
    res = {"datasets": [{k: d[k] for k in ("name", "rows", "cols", "size", "stripes")} for d in ds],
           "repeats": repeats, "latency_ms": ctx.latency_ms, "rows": rows_out}

    def cols_of(d, alt):
        return [f"c{i:03d}" for i in range(0, d["cols"], 2)] if alt else []

    for label, args in MODES:
        if deadline.expired():
            res["truncated"] = f"time budget spent before {label}"
            break
        srv = lib.Scand(ctx.work, "orc-alt", ctx.work, args=args, s3_endpoint=ctx.proxy_endpoint).start()
        try:
            client = flight.FlightClient(srv.location)
            if not args:
                for _ in range(2):
                    for alt in (False, True):
                        lib.flight_scan(client, {"paths": [f"s3://{lib.BUCKET}/{warm['key']}"],
                                                 "columns": cols_of(warm, alt)})
            for d in ds:
                for alt in (True, False):
                    req = {"paths": [f"s3://{lib.BUCKET}/{d['key']}"], "columns": cols_of(d, alt)}
                    row = {"dataset": d["name"], "columns": "alternate" if alt else "all", "reader": label,
                           "scand": True}
                    times, gets, sgets, fetched, holes = [], [], [], [], []
                    for i in range(repeats + 1):
                        g0, s0 = ctx.gw.object_gets(), srv.s3_gets()
                        t = time.perf_counter()
                        r = lib.flight_scan(client, req)
                        dt = time.perf_counter() - t
                        time.sleep(0.05)
                        g, sg = ctx.gw.object_gets() - g0, srv.s3_gets() - s0
                        if r["rows"] != d["rows"]:
                            raise RuntimeError(f"{d['name']}: {r['rows']} rows, want {d['rows']}")
                        if i == 0:
                            row["cold"] = {"seconds": dt, "gets": g, "scand_gets": sg, "bytes_fetched": r["bytes_fetched"]}
                            continue
                        times.append(dt)
                        gets.append(g)
                        sgets.append(sg)
                        fetched.append(r["bytes_fetched"])
                        holes.append(r["hole"])
                        if deadline.expired():
                            break
                    row.update(wall=lib.mmm(times), gets=gets, scand_gets=sgets, bytes_fetched=fetched,
                               hole=holes[-1] if holes else None)
                    rows_out.append(row)
                    lib.log(f"orc-alt: {d['name']} {row['columns']:9s} {label:24s} GETs {row['cold']['gets']}/"
                            f"{gets}, median {row['wall']['median']:.3f} s")
            client.close()
        finally:
            srv.stop()

    # pyarrow.orc over S3FileSystem.
    if not deadline.expired():
        import pyarrow as pa
        import pyarrow.orc as po
        fs = lib.s3_filesystem(ctx.proxy_endpoint)
        label = "pyarrow.orc S3FileSystem"
        for d in ds:
            for alt in (True, False):
                row = {"dataset": d["name"], "columns": "alternate" if alt else "all", "reader": label,
                       "scand": False}
                times, gets = [], []
                n = repeats
                for i in range(repeats + 1):
                    if i > n:
                        break
                    g0 = ctx.gw.object_gets()
                    t = time.perf_counter()
                    with fs.open_input_file(f"{lib.BUCKET}/{d['key']}") as f:
                        tab = po.ORCFile(f).read(columns=cols_of(d, alt) or None)
                    dt = time.perf_counter() - t
                    time.sleep(0.05)
                    g = ctx.gw.object_gets() - g0
                    assert tab.num_rows == d["rows"]
                    del tab
                    if i == 0:
                        row["cold"] = {"seconds": dt, "gets": g}
                        if dt > 5:  # latency-bound and steady: one timed scan is enough
                            n = 1
                        continue
                    times.append(dt)
                    gets.append(g)
                row.update(wall=lib.mmm(times), gets=gets)
                rows_out.append(row)
                lib.log(f"orc-alt: {d['name']} {row['columns']:9s} {label:24s} GETs {gets}, "
                        f"median {row['wall']['median']:.3f} s")
        res["pyarrow"] = pa.__version__
    return res
