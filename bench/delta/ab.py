"""bench/delta/ab.py: scand builds against each other and deltalake on S3
(versitygw behind toxiproxy, +LATENCY ms), full scans in interleaved turns on
the tables bench/delta/run.py wrote under --data (dv and rewrite):

  NAME-dv        `scand serve` of each build (--build NAME=DIR, in order; the
                 first is the baseline), the dv table, read by a stock
                 pyarrow.flight client
  LAST-rewrite   the last build on the rewrite table (the same rows)
  dl-pyarrow     deltalake's to_pyarrow_dataset on the rewrite table (it
                 refuses deletion vectors): run.py's peer

    python bench/delta/ab.py --build before=DIR --build after=DIR [--data DIR] [--turns 3]

DIR holds a scand binary; versitygw and toxiproxy come from --tools. Prints
the median seconds of each, and ratios within the run.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "suite"))
import lib  # noqa: E402
import pyarrow.flight as flight  # noqa: E402
import pyarrow.fs as pafs  # noqa: E402
from deltalake import DeltaTable  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="append", required=True, help="NAME=DIR holding a scand binary")
    ap.add_argument("--tools", type=Path, default=HERE.parent.parent / ".tools" / "bin")
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "scand-bench-delta")
    ap.add_argument("--turns", type=int, default=3)
    ap.add_argument("--latency-ms", type=int, default=30)
    ap.add_argument("--serve-args", default="")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="scand-bench-delta-ab-"))
    lib.BIN = args.tools
    gw = lib.VersityGW(work / "gw").start()
    toxi = lib.Toxiproxy(work / "toxi").start()
    proxy = toxi.latency_proxy(gw.addr, args.latency_ms)
    fs = lib.s3_filesystem(gw.endpoint)
    fs.create_dir(lib.BUCKET)
    for k in ["dv", "rewrite"]:
        t0 = time.monotonic()
        pafs.copy_files(str(args.data / k), f"{lib.BUCKET}/{k}", destination_filesystem=fs, use_threads=True)
        lib.log(f"s3: uploaded {k} in {time.monotonic() - t0:.0f} s")
    servers, clients = {}, {}
    builds = [b.split("=", 1) for b in args.build]
    for name, d in builds:
        lib.BIN = Path(d)
        servers[name] = lib.Scand(work, name, args.data, args.serve_args.split(), s3_endpoint=proxy).start()
        clients[name] = flight.connect(servers[name].location)
    opts = {"AWS_ENDPOINT_URL": proxy, "AWS_ACCESS_KEY_ID": lib.ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": lib.SECRET_KEY,
            "AWS_REGION": lib.REGION, "AWS_ALLOW_HTTP": "true", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false"}
    dl = DeltaTable(f"s3://{lib.BUCKET}/rewrite", storage_options=opts)

    def scan(server: str, table: str):
        def run():
            res = lib.flight_scan(clients[server], {"table": f"s3://{lib.BUCKET}/{table}"})
            return res["rows"], res.get("bytes_fetched")
        return run

    engines = {f"{name}-dv": scan(name, "dv") for name, _ in builds}
    last = builds[-1][0]
    engines[f"{last}-rewrite"] = scan(last, "rewrite")
    engines["dl-pyarrow"] = lambda: (dl.to_pyarrow_dataset().to_table().num_rows, None)
    names = list(engines)
    for n in names:  # warm: plans cached, connections open, as run.py's turns after the first
        engines[n]()
    times = {n: [] for n in names}
    rows = {}
    for turn in range(args.turns):
        order = names[turn % len(names):] + names[:turn % len(names)]
        for n in order:
            t0 = time.perf_counter()
            r, _ = engines[n]()
            times[n].append(time.perf_counter() - t0)
            rows[n] = r
            lib.log(f"turn {turn}: {n} {times[n][-1]:.3f} s, {r} rows")
    med = {n: statistics.median(v) for n, v in times.items()}
    print(f"\nS3 full scan, +{args.latency_ms} ms, median of {args.turns} interleaved turns (seconds):")
    print("| engine | median | turns | rows |")
    print("|---|---:|---|---:|")
    for n in names:
        print(f"| {n} | {med[n]:.3f} | {', '.join(f'{x:.2f}' for x in times[n])} | {rows[n]:,} |")
    peer, base = med["dl-pyarrow"], med[f"{builds[0][0]}-dv"]
    print()
    for name, _ in builds:
        m = med[f"{name}-dv"]
        print(f"{name}-dv: {base / m:.2f}x faster than {builds[0][0]}-dv; against dl-pyarrow (peer s / scand s) {peer / m:.2f}x")
    print(f"{last}-dv / {last}-rewrite: {med[f'{last}-dv'] / med[f'{last}-rewrite']:.2f}")
    for c in clients.values():
        c.close()
    lib.stop_all()


if __name__ == "__main__":
    main()
