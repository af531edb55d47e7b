"""scand against pyarrow.dataset on Google Cloud Storage and Azure Blob
Storage emulators behind toxiproxy (+30 ms on every response), in one run:

  wide    alternate columns (64 of 128 int64 columns) of one Parquet file of
          4 row groups (2048 rows each, plain, uncompressed: ~16 KiB per
          column chunk, ~2 MiB per row group)
  small   500 small Parquet files (3 columns, 200 rows each), all columns

scand (`scand serve` with its defaults, --gcs-endpoint / --azure-endpoint
pointing at the proxies) is read by a stock pyarrow.flight client:
GetFlightInfo, then every endpoint's DoGet in turn. pyarrow reads the same
objects through pyarrow.fs.GcsFileSystem / AzureFileSystem (the same
proxies) with pyarrow.dataset(...).to_table(columns=...). Turns are
interleaved (every turn runs every configuration, scand and pyarrow in an
order that alternates), each turn against a freshly started scand, so its
metadata cache starts cold, as pyarrow's does.

Figures: median wall seconds of the turns (min-max), scand/pyarrow, and
scand's storage reads (ranged GETs, from scand_storage_requests_total
{op="read"} on --metrics-listen) per scan, and per row group for wide.
Targets: GETs <= 2 per row group; wall <= 0.5x pyarrow's.

    SCAND_BIN=.tools/bin/scand /work/main/.venv/bin/python bench/clouds/run.py [--turns 5] [--latency-ms 30]

fake-gcs-server, Azurite and toxiproxy come from scripts/install-tools.sh
(found as the e2e tests find them, e2e/cloudlib.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "e2e"))

import pyarrow as pa  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
import pyarrow.flight as flight  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from cloudlib import AZ_ACCOUNT, AZ_KEY, Azurite, FakeGCS, find_azurite  # noqa: E402
from s3lib import S3ScandServer, Toxiproxy, find_tool, parse_metrics  # noqa: E402

BUCKET = "bench"
WIDE_COLS, WIDE_RG, WIDE_RG_ROWS = 128, 4, 2048
ALTERNATE = [f"c{i:03d}" for i in range(0, WIDE_COLS, 2)]
SMALL_FILES, SMALL_ROWS = 500, 200
STORES = {"gcs": "gs", "azure": "az"}


def make_data(d: Path) -> tuple[bytes, list[bytes]]:
    rows = WIDE_RG * WIDE_RG_ROWS
    t = pa.table({f"c{i:03d}": pa.Array.from_buffers(pa.int64(), rows, [None, pa.py_buffer(os.urandom(rows * 8))])
                  for i in range(WIDE_COLS)})
    pq.write_table(t, d / "wide.parquet", row_group_size=WIDE_RG_ROWS, use_dictionary=False, compression="none")
    small = []
    for i in range(SMALL_FILES):
        st = pa.table({"id": pa.array(range(i * SMALL_ROWS, (i + 1) * SMALL_ROWS), pa.int64()),
                       "v": pa.array([float(j) for j in range(SMALL_ROWS)]),
                       "s": pa.array([f"f{i}-{j % 13}" for j in range(SMALL_ROWS)])})
        p = d / f"small-{i}.parquet"
        pq.write_table(st, p)
        small.append(p.read_bytes())
    return (d / "wide.parquet").read_bytes(), small


def scand_scan(srv: S3ScandServer, path: str, columns: list[str]) -> tuple[float, int]:
    client = flight.connect(srv.location)
    try:
        start = time.perf_counter()
        info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps({"paths": [path], "columns": columns})))
        rows = sum(client.do_get(ep.ticket).read_all().num_rows for ep in info.endpoints)
        return time.perf_counter() - start, rows
    finally:
        client.close()


def pyarrow_scan(fs, path: str, columns: list[str] | None) -> tuple[float, int]:
    start = time.perf_counter()
    t = ds.dataset(path, filesystem=fs, format="parquet").to_table(columns=columns)
    return time.perf_counter() - start, t.num_rows


def reads(srv: S3ScandServer, backend: str) -> int:
    m = parse_metrics(srv.metrics_text())
    return int(m.get(("scand_storage_requests_total", frozenset({("backend", backend), ("op", "read")})), 0))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--latency-ms", type=int, default=30)
    args = ap.parse_args()
    scand_bin = os.environ.get("SCAND_BIN") or str(REPO / ".tools" / "bin" / "scand")
    work = Path(tempfile.mkdtemp(prefix="scand-bench-clouds-"))
    gcs = FakeGCS(find_tool("fake-gcs-server", "SCAND_FAKE_GCS"), work)
    azurite = Azurite(find_azurite(), work)
    toxi = Toxiproxy(find_tool("server", "SCAND_TOXIPROXY"), work)
    servers = []
    try:
        for p in (gcs, azurite, toxi):
            p.start()
        gcs.create_bucket(BUCKET)
        azurite.create_container(BUCKET)
        wide, small = make_data(work)
        for put in (gcs.put, azurite.put):
            put(BUCKET, "wide/wide.parquet", wide)
            for i, data in enumerate(small):
                put(BUCKET, f"small/part-{i:04d}.parquet", data)
        proxies = {"gcs": toxi.proxy(gcs.addr), "azure": toxi.proxy(azurite.addr)}
        for p in proxies.values():
            p.add_latency(args.latency_ms)
        fss = {"gcs": gcs.filesystem(proxies["gcs"].listen), "azure": azurite.filesystem(proxies["azure"].listen)}
        shapes = {"wide": ("wide/wide.parquet", "wide/", ALTERNATE, WIDE_RG * WIDE_RG_ROWS),
                  "small": ("small/", "small/", None, SMALL_FILES * SMALL_ROWS)}
        results: dict[tuple, list] = {}
        gets: dict[tuple, list] = {}
        (work / "root").mkdir()
        for turn in range(args.turns):
            srv = S3ScandServer(scand_bin, work / "root", work / f"scand-{turn}.log", f"scand-{turn}",
                                ["--gcs-endpoint", f"http://{proxies['gcs'].listen}/storage/v1/", "--gcs-anonymous",
                                 "--azure-account", AZ_ACCOUNT,
                                 "--azure-endpoint", f"http://{proxies['azure'].listen}/{AZ_ACCOUNT}"],
                                {"AZURE_STORAGE_KEY": AZ_KEY})
            srv.start()
            servers.append(srv)
            for store, scheme in STORES.items():
                for shape, (scand_key, pa_key, cols, want_rows) in shapes.items():
                    order = ["scand", "pyarrow"] if turn % 2 == 0 else ["pyarrow", "scand"]
                    for who in order:
                        if who == "scand":
                            before = reads(srv, store)
                            secs, rows = scand_scan(srv, f"{scheme}://{BUCKET}/{scand_key}", cols or [])
                            gets.setdefault((store, shape), []).append(reads(srv, store) - before)
                        else:
                            secs, rows = pyarrow_scan(fss[store], f"{BUCKET}/{pa_key}", cols)
                        assert rows == want_rows, (store, shape, who, rows, want_rows)
                        results.setdefault((store, shape, who), []).append(secs)
            srv.stop()
            servers.remove(srv)
            print(f"turn {turn + 1}/{args.turns} done", file=sys.stderr, flush=True)

        print(f"\n+{args.latency_ms} ms per response (toxiproxy), {args.turns} turns interleaved, "
              f"pyarrow {pa.__version__}, {os.cpu_count()} CPUs\n")
        print(f"{'store':7} {'shape':6} {'scand s (min-max)':>20} {'pyarrow s (min-max)':>22} {'scand/pyarrow':>14} "
              f"{'scand GETs':>11} {'GETs/row group':>15}")
        for store in STORES:
            for shape in shapes:
                s, p = results[(store, shape, "scand")], results[(store, shape, "pyarrow")]
                ms, mp = statistics.median(s), statistics.median(p)
                g = statistics.median(gets[(store, shape)])
                per_rg = f"{g / WIDE_RG:.2f}" if shape == "wide" else "-"
                print(f"{store:7} {shape:6} {ms:7.3f} ({min(s):.3f}-{max(s):.3f}) {mp:8.3f} ({min(p):.3f}-{max(p):.3f}) "
                      f"{ms / mp:14.2f} {g:11.0f} {per_rg:>15}")
    finally:
        for s in servers:
            s.stop()
        for p in (toxi, azurite, gcs):
            p.stop()


if __name__ == "__main__":
    main()
