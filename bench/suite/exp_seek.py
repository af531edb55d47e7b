"""Experiment 1, seek vs read (Apache ORC's "read vs seek" design question).

On S3 (versitygw behind toxiproxy, +LATENCY ms on every response): read X
bytes, skip Y, read X again, either as ONE ranged GET covering X+Y+X or as
TWO ranged GETs of X, one after the other (a reader that seeks). The gap Y
where both cost the same is the break-even hole; reading through a gap below
it is cheaper than a second request. The two GETs are also timed when sent
at once (a reader with parallel requests), for reference; the break-even is
computed against the sequential pair, as in ORC's design.

Beside it, the hole scand's adaptive planner picks for the same store:
`scand serve` with S3 flags against the same proxy scans a Parquet object
with several row groups a few times; the hole each DoGet stream used is the
`hole` key of its app_metadata (the Prometheus gauge scand_io_hole_bytes
reports the local backend's hole, so it is recorded only for reference).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import lib


def gaps(max_gap: int) -> list[int]:
    out, g = [], 64 << 10
    while g <= max_gap:
        out.append(g)
        g *= 2
    return out


def run(ctx) -> dict:
    import pyarrow.flight as flight

    x = ctx.seek_x
    max_gap = ctx.seek_max_gap
    repeats = ctx.seek_repeats
    deadline = lib.Deadline(ctx.budget("seek"))
    res = {"x": x, "latency_ms": ctx.latency_ms, "repeats": repeats, "points": []}

    # The object: X + max gap + X of random bytes.
    blob = ctx.work / "seek.bin"
    size = 2 * x + max_gap
    if not blob.exists() or blob.stat().st_size != size:
        blob.write_bytes(os.urandom(size))
    lib.upload(ctx.admin_fs, blob, "seek/seek.bin")

    fs = lib.s3_filesystem(ctx.proxy_endpoint)
    f = fs.open_input_file(f"{lib.BUCKET}/seek/seek.bin")
    # Warm the connection pool.
    for _ in range(3):
        f.read_at(x, 0)

    from concurrent.futures import ThreadPoolExecutor
    pool = ThreadPoolExecutor(2)
    gets0 = ctx.gw.object_gets()
    n_reads = 0
    for gap in gaps(max_gap):
        one, two, par = [], [], []
        for r in range(repeats):
            if deadline.expired():
                break
            order = ("one", "two", "par") if r % 2 == 0 else ("par", "two", "one")
            for mode in order:
                if mode == "par":
                    # The two GETs at once (a reader with parallel requests).
                    t = time.perf_counter()
                    fa = pool.submit(f.read_at, x, 0)
                    fb = pool.submit(f.read_at, x, x + gap)
                    assert len(fa.result()) == x and len(fb.result()) == x
                    par.append(time.perf_counter() - t)
                    n_reads += 2
                    continue
                t = time.perf_counter()
                if mode == "one":
                    b = f.read_at(2 * x + gap, 0)
                    assert len(b) == 2 * x + gap
                    one.append(time.perf_counter() - t)
                    n_reads += 1
                else:
                    a = f.read_at(x, 0)
                    b = f.read_at(x, x + gap)
                    assert len(a) == x and len(b) == x
                    two.append(time.perf_counter() - t)
                    n_reads += 2
        if not one or not two:
            res["truncated"] = f"time budget spent at gap {gap}"
            break
        res["points"].append({"gap": gap, "one_get": lib.mmm(one), "two_gets": lib.mmm(two),
                              "two_gets_parallel": lib.mmm(par)})
        lib.log(f"seek: gap {gap >> 10} KiB: one GET {lib.mmm(one)['median'] * 1e3:.1f} ms, "
                f"two GETs {lib.mmm(two)['median'] * 1e3:.1f} ms")
    pool.shutdown()
    f.close()
    time.sleep(0.5)
    res["gets_seen"] = ctx.gw.object_gets() - gets0
    res["gets_expected"] = n_reads

    # Break-even: where median(one) - median(two) changes sign (log-linear
    # interpolation between the neighbouring gaps), and a least-squares fit
    # of one-GET time = a + Y / bandwidth against the mean two-GET time.
    pts = res["points"]
    crossing = None
    for p, q in zip(pts, pts[1:]):
        d0 = p["one_get"]["median"] - p["two_gets"]["median"]
        d1 = q["one_get"]["median"] - q["two_gets"]["median"]
        if d0 < 0 <= d1:
            import math
            t = -d0 / (d1 - d0)
            crossing = int(math.exp(math.log(p["gap"]) + t * (math.log(q["gap"]) - math.log(p["gap"]))))
            break
    res["break_even_crossing"] = crossing
    if len(pts) >= 3:
        xs = [p["gap"] for p in pts]
        ys = [p["one_get"]["median"] for p in pts]
        n = len(xs)
        mx, my = sum(xs) / n, sum(ys) / n
        sxx = sum((a - mx) ** 2 for a in xs)
        slope = sum((a - mx) * (b - my) for a, b in zip(xs, ys)) / sxx
        icept = my - slope * mx
        two_mean = sum(p["two_gets"]["median"] for p in pts) / n
        res["fit"] = {"one_get_intercept_s": icept, "bandwidth_Bps": (1 / slope) if slope > 0 else None,
                      "two_gets_mean_s": two_mean}
        res["break_even_fit"] = int((two_mean - icept) / slope) if slope > 0 else None
    if not all(p["one_get"]["median"] < p["two_gets"]["median"] for p in pts[:1]):
        res["note"] = "one GET was not cheaper even at the smallest gap"

    # scand's hole for this store.
    res["scand"] = scand_hole(ctx, deadline)
    return res


def scand_hole(ctx, deadline) -> dict:
    import pyarrow.flight as flight

    key = ctx.seek_parquet_key
    out = {"object": key, "scans": []}
    srv = lib.Scand(ctx.work, "seek-hole", ctx.work, args=[], s3_endpoint=ctx.proxy_endpoint).start()
    try:
        client = flight.FlightClient(srv.location)
        cols = ctx.seek_parquet_cols
        # Different projections give requests of different sizes, which the
        # latency model needs to fit TTFB and bandwidth (it starts from a
        # 1 MiB default until 8 requests were measured).
        projections = [("all", []), ("alternate", cols[::2]), ("every 4th", cols[::4]), ("one column", cols[:1]),
                       ("every 8th", cols[::8]), ("first half", cols[:16])] * 2
        scan_deadline = lib.Deadline(60)
        for label, columns in projections:
            if (deadline.expired() or scan_deadline.expired()) and out["scans"]:
                break
            g0 = srv.s3_gets()
            t = time.perf_counter()
            r = lib.flight_scan(client, {"paths": [f"s3://{lib.BUCKET}/{key}"], "columns": columns})
            dt = time.perf_counter() - t
            out["scans"].append({"columns": label, "seconds": dt, "gets": srv.s3_gets() - g0,
                                 "stream_holes": [s.get("hole") for s in r["streams"]],
                                 "bytes_fetched": r["bytes_fetched"], "bytes_wasted": r["bytes_wasted"]})
        client.close()
        last = out["scans"][-1]["stream_holes"]
        out["hole"] = last[-1] if last else None
        late = [h for sc in out["scans"][len(out["scans"]) // 2:] for h in sc["stream_holes"] if h]
        out["hole_range_second_half"] = [min(late), max(late)] if late else None
        out["gauge_scand_io_hole_bytes"] = srv.metric("scand_io_hole_bytes")
        out["source"] = "app_metadata 'hole' of the last S3 scan's last stream"
        lib.log(f"seek: scand's learned S3 hole {out['hole']} bytes (gauge, local backend: "
                f"{out['gauge_scand_io_hole_bytes']:.0f})")
    finally:
        srv.stop()
    return out
