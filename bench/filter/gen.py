"""The data set of bench/filter: web events sorted by time, hive-partitioned
by day, and a manifest the Go program reads (files, row groups, queries and
the figures the targets are checked against).

    gen.py OUT_DIR ROWS [page-index]   (run by `go run ./bench/filter`)

With page-index (`go run ./bench/filter -page-index`), the same rows are
written with the Parquet page index (write_page_index=True) in data pages
of 64 KiB, dictionaries for the string columns only (DICT_COLUMNS), and a
tenant column; the queries are the ts ranges, `limit 10` on the largest
file (docs/filters.md, "Page pruning"), and 1 % on tenant and on score
with 20 other columns projected (late materialization).

OUT_DIR/events/day=2026-01-DD/part-K.parquet: snappy, row groups of 65,536
rows, column statistics on, 24 columns in the files and the day only in the
path. The rows are sorted by ts (timestamp[us], no zone) across the whole
set. Traffic ramps up after a launch, so the days differ in size and every
selectivity the benchmark asks for is a whole number of days:

    day 1   0.01 % of the rows     day 2   0.99 %     day 3   9 %
    days 4-10  90 % / 7 each (12.86 %)

A day's rows are cut into files of 2 row groups (131,072 rows; part-0
holds the day's earliest rows, the last part the rest). OUT_DIR/manifest.json lists every file with its size,
footer size and row groups (offset, compressed bytes, rows, ts range), and
the queries: for each, the filter as SQL and in a structured form (for
pyarrow), the exact number of matching rows, and for filters on ts the row
groups that hold matching rows (from the data, not the statistics). The
output is deterministic (seeded) and kept while ROWS and GEN_VERSION are
unchanged.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

GEN_VERSION = 3
ROW_GROUP = 65536
FILE_ROW_GROUPS = 2
DAYS = 10
FIRST_DAY = np.datetime64("2026-01-01", "D")
# Share of the rows per day: launch day, then a ramp-up, then steady days.
SHARES = [0.0001, 0.0099, 0.09] + [0.9 / 7] * 7
SCORE_MAX = 1_000_000  # score is uniform in [0, SCORE_MAX)


def day_rows(total: int) -> list[int]:
    rows = [max(1, round(total * s)) for s in SHARES[:-1]]
    rows.append(total - sum(rows))
    return rows


def day_name(d: int) -> str:
    return str(FIRST_DAY + d)


def events(rng, n: int, ts: np.ndarray, first_id: int) -> pa.Table:
    """n events with the given (sorted) timestamps: 24 columns of the kinds
    an events table has (ids, low-cardinality strings, measures, flags)."""
    ev_types = pa.array(["page_view", "click", "scroll", "add_to_cart", "purchase", "login", "logout", "search",
                         "share", "error"])
    countries = pa.array([f"C{i:02d}" for i in range(60)])
    devices = pa.array(["desktop", "phone", "tablet", "tv", "watch"])
    oses = pa.array(["linux", "windows", "macos", "ios", "android", "chromeos", "other", "unknown"])
    browsers = pa.array(["firefox", "chrome", "safari", "edge", "opera", "other"])
    paths = pa.array([f"/p/{i % 37}/item-{i:04d}" for i in range(2000)])
    referrers = pa.array([f"https://ref{i:03d}.example/{'x' * (i % 5)}" for i in range(300)])
    versions = pa.array([f"5.{i // 5}.{i % 5}" for i in range(25)])
    campaign = rng.integers(0, 500, n).astype(np.int32)
    campaign_mask = rng.random(n) < 0.7  # null for most events
    return pa.table({
        "ts": pa.array(ts, pa.timestamp("us")),
        "event_id": pa.array(np.arange(first_id, first_id + n, dtype=np.int64)),
        "user_id": pa.array(rng.integers(0, 2_000_000, n, dtype=np.int64)),
        "session_id": pa.array(rng.integers(0, 1 << 40, n, dtype=np.int64)),
        "score": pa.array(rng.integers(0, SCORE_MAX, n, dtype=np.int32)),
        "event_type": ev_types.take(pa.array(rng.integers(0, len(ev_types), n))),
        "country": countries.take(pa.array(rng.integers(0, len(countries), n))),
        "device": devices.take(pa.array(rng.integers(0, len(devices), n))),
        "os": oses.take(pa.array(rng.integers(0, len(oses), n))),
        "browser": browsers.take(pa.array(rng.integers(0, len(browsers), n))),
        "url_path": paths.take(pa.array(rng.integers(0, len(paths), n))),
        "referrer": referrers.take(pa.array(rng.integers(0, len(referrers), n))),
        "app_version": versions.take(pa.array(rng.integers(0, len(versions), n))),
        "status_code": pa.array(rng.choice(np.array([200, 200, 200, 204, 301, 304, 404, 500], np.int16), n)),
        "duration_ms": pa.array(rng.integers(0, 60_000, n, dtype=np.int32)),
        "bytes_sent": pa.array(rng.integers(0, 5_000_000, n, dtype=np.int64)),
        "latency_ms": pa.array(np.round(rng.exponential(40.0, n), 3)),
        "price": pa.array(np.round(rng.gamma(2.0, 15.0, n), 2)),
        "quantity": pa.array(rng.integers(1, 10, n, dtype=np.int16)),
        "is_mobile": pa.array(rng.random(n) < 0.55),
        "is_new_user": pa.array(rng.random(n) < 0.1),
        "lat": pa.array(rng.uniform(-60, 70, n)),
        "lon": pa.array(rng.uniform(-180, 180, n)),
        "campaign_id": pa.array(campaign, mask=campaign_mask),
    })


def ts_literal(us: int) -> str:
    return str(np.datetime64(int(us), "us").astype("datetime64[s]")).replace("T", " ")


PAGE_INDEX_PAGE = 64 << 10  # data page size of the page-index variant
# The page-index variant's tenant column: events arrive in runs of
# TENANT_RUN rows of one tenant, the tenants (0-99, each 1 % of the rows)
# taking turns in a fixed shuffled order. Unsorted (every row group's and
# most pages' statistics span tenant 50), but clustered: the rows of one
# tenant fill few pages of the other columns, so late materialization pays.
TENANT_RUN = 1000
TENANT_PERM = np.random.default_rng(7).permutation(100).astype(np.int32)
# The page-index variant's dictionary-encoded columns: the strings and
# tenant. The numeric columns are PLAIN, as writers with row groups larger
# than these 65,536 rows end up (their dictionaries overflow the 1 MiB
# dictionary page and fall back); dictionary-encoded, each would carry a
# dictionary page of up to 512 KiB per row group that neither page pruning
# nor late materialization can skip.
DICT_COLUMNS = ["event_type", "country", "device", "os", "browser", "url_path", "referrer", "app_version", "tenant"]
# The 20 columns beside the filter column of the late-materialization
# queries (every column but ts, event_id, session_id and campaign_id).
# status_code and quantity (int16) are left out: the native reader does
# not decode them, and a column it leaves to pqarrow keeps the read one
# pass (explain says so).
LATE_COLUMNS = ["user_id", "event_type", "country", "device", "os", "browser", "url_path", "referrer", "app_version",
                "duration_ms", "bytes_sent", "latency_ms", "price", "is_mobile", "is_new_user", "lat", "lon",
                "session_id", "event_id", "score"]


def main() -> None:
    out, total = Path(sys.argv[1]), int(sys.argv[2])
    page_index = len(sys.argv) > 3 and sys.argv[3] == "page-index"
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        m = json.loads(manifest_path.read_text())
        if m.get("rows") == total and m.get("gen_version") == GEN_VERSION and m.get("page_index", False) == page_index and all(
                (out / f["path"]).exists() for f in m["files"]):
            print(json.dumps({"cached": True, "bytes": m["bytes"]}))
            return
    started = time.monotonic()
    rng = np.random.default_rng(20260101)
    events_dir = out / "events"
    if events_dir.exists():
        for p in sorted(events_dir.rglob("*"), reverse=True):
            p.unlink() if p.is_file() else p.rmdir()
    per_day = day_rows(total)
    # Sorted timestamps of the whole set, microseconds; each day's events
    # are spread over the day.
    day_us = 86_400_000_000
    base = int(FIRST_DAY.astype("datetime64[us]").astype(np.int64))
    all_ts = np.concatenate([base + d * day_us + np.sort(rng.integers(0, day_us, n)) for d, n in enumerate(per_day)])
    files, scores, first = [], [], 0
    for d, n in enumerate(per_day):
        ddir = events_dir / f"day={day_name(d)}"
        ddir.mkdir(parents=True, exist_ok=True)
        # A writer that rolls over to a new file every FILE_ROW_GROUPS
        # full row groups: the day's last file holds the rest.
        per_file = ROW_GROUP * FILE_ROW_GROUPS
        nfiles = max(1, -(-n // per_file))
        cuts = [min(n, k * per_file) for k in range(nfiles + 1)]
        for k in range(nfiles):
            lo, hi = first + cuts[k], first + cuts[k + 1]
            t = events(rng, hi - lo, all_ts[lo:hi], lo)
            if page_index:
                t = t.append_column("tenant", pa.array(TENANT_PERM[(np.arange(lo, hi) // TENANT_RUN) % 100]))
            scores.append(t.column("score").to_numpy())
            rel = f"events/day={day_name(d)}/part-{k}.parquet"
            extra = {"write_page_index": True, "data_page_size": PAGE_INDEX_PAGE, "use_dictionary": DICT_COLUMNS} if page_index else {}
            pq.write_table(t, out / rel, row_group_size=ROW_GROUP, compression="snappy", write_statistics=True, **extra)
            files.append({"path": rel, "day": day_name(d), "first_row": lo, "rows": hi - lo})
        first += n
    # Metadata, as pyarrow.parquet reads it back.
    total_bytes = 0
    for f in files:
        p = out / f["path"]
        md = pq.ParquetFile(p).metadata
        f["size"] = p.stat().st_size
        f["footer"] = md.serialized_size + 8  # the footer, its length and the magic
        total_bytes += f["size"]
        rgs, row = [], f["first_row"]
        ts_idx = md.schema.to_arrow_schema().get_field_index("ts")
        for i in range(md.num_row_groups):
            rg = md.row_group(i)
            start = min(min(c.dictionary_page_offset or c.data_page_offset, c.data_page_offset)
                        for c in (rg.column(j) for j in range(rg.num_columns)))
            comp = sum(rg.column(j).total_compressed_size for j in range(rg.num_columns))
            st = rg.column(ts_idx).statistics
            rgs.append({"offset": start, "bytes": comp, "rows": rg.num_rows, "first_row": row,
                        "ts_min": str(st.min), "ts_max": str(st.max)})
            row += rg.num_rows
        f["row_groups"] = rgs
    queries = make_queries(all_ts, np.concatenate(scores), per_day, total)
    if page_index:
        # The ts ranges, and limit 10 on the largest file.
        biggest = max(files, key=lambda f: f["size"])
        score1 = next(q for q in queries if q["name"] == "score 1%")
        queries = [q for q in queries if q["name"] in ("none", "ts 0.01%", "ts 1%", "ts 10%")]
        queries.append({"name": "limit 10", "column": "-", "target": 0.0, "sql": "", "spec": [], "rows": 10,
                        "limit": 10, "path": biggest["path"], "dict_bytes": first_pages_dict_bytes(out / biggest["path"])})
        # Late materialization: 1 % on tenant (clustered: pays) and on
        # score (scattered: every page holds a survivor, auto must back
        # off), 20 other columns projected.
        tenant = np.concatenate([TENANT_PERM[(np.arange(f["first_row"], f["first_row"] + f["rows"]) // TENANT_RUN) % 100]
                                 for f in files])
        queries.append({"name": "tenant 1%", "column": "tenant", "target": 1.0, "sql": "tenant = 50",
                        "spec": [["tenant", "=", "int", 50]], "rows": int(np.count_nonzero(tenant == 50)),
                        "columns": ["tenant"] + [c for c in LATE_COLUMNS if c != "score"] + ["campaign_id"]})
        queries.append(dict(score1, name="score 1% x20", columns=LATE_COLUMNS + ["ts"]))
    manifest = {"gen_version": GEN_VERSION, "page_index": page_index, "rows": total, "bytes": total_bytes, "files": files,
                "row_group_rows": ROW_GROUP, "days": [day_name(d) for d in range(DAYS)], "day_rows": per_day,
                "columns": len(events(rng, 1, all_ts[:1], 0).schema) + 1 + int(page_index), "queries": queries,
                "seconds": time.monotonic() - started}
    manifest_path.write_text(json.dumps(manifest, indent=1))
    print(json.dumps({"cached": False, "bytes": total_bytes, "seconds": manifest["seconds"]}))


def first_pages_dict_bytes(path: Path) -> int:
    """The dictionary pages' bytes of the first row group's columns: what a
    limit 10 read must fetch beside their first data pages."""
    rg = pq.ParquetFile(path).metadata.row_group(0)
    n = 0
    for j in range(rg.num_columns):
        c = rg.column(j)
        if c.has_dictionary_page and c.dictionary_page_offset is not None and c.dictionary_page_offset < c.data_page_offset:
            n += c.data_page_offset - c.dictionary_page_offset
    return n


def make_queries(all_ts, scores, per_day, total):
    """The queries: the same four selectivities on ts (sorted), score
    (uniform, unsorted) and day (the partition), plus no filter."""
    qs = [{"name": "none", "column": "-", "target": 100.0, "sql": "", "spec": [], "rows": total}]
    # ts: ranges of whole seconds starting 55 % into the set (days 6-7).
    start = int(total * 0.55)
    for pct in (0.01, 1, 10):
        k = max(1, round(total * pct / 100))
        lo_us = int(all_ts[start]) // 1_000_000 * 1_000_000
        hi_us = -(-int(all_ts[min(start + k, total - 1)]) // 1_000_000) * 1_000_000
        lo, hi = ts_literal(lo_us), ts_literal(hi_us)
        i0, i1 = np.searchsorted(all_ts, lo_us, "left"), np.searchsorted(all_ts, hi_us, "left")
        qs.append({"name": f"ts {pct:g}%", "column": "ts", "target": pct,
                   "sql": f"ts >= TIMESTAMP '{lo}' AND ts < TIMESTAMP '{hi}'",
                   "spec": [["ts", ">=", "timestamp", lo], ["ts", "<", "timestamp", hi]],
                   "rows": int(i1 - i0), "row_range": [int(i0), int(i1)]})
    lo = ts_literal(int(all_ts[0]) // 1_000_000 * 1_000_000)
    qs.append({"name": "ts 100%", "column": "ts", "target": 100.0, "sql": f"ts >= TIMESTAMP '{lo}'",
               "spec": [["ts", ">=", "timestamp", lo]], "rows": total, "row_range": [0, total]})
    # score: thresholds of a uniform column; rows counted from the data.
    for pct in (0.01, 1, 10):
        thr = int(SCORE_MAX * pct / 100)
        qs.append({"name": f"score {pct:g}%", "column": "score", "target": pct, "sql": f"score < {thr}",
                   "spec": [["score", "<", "int", thr]], "rows": int(np.count_nonzero(scores < thr))})
    qs.append({"name": "score 100%", "column": "score", "target": 100.0, "sql": "score >= 0",
               "spec": [["score", ">=", "int", 0]], "rows": total})
    # day: whole days (see SHARES).
    days = [day_name(d) for d in range(DAYS)]
    for pct, last, sql, spec in (
            (0.01, 0, f"day = '{days[0]}'", [["day", "=", "string", days[0]]]),
            (1, 1, f"day <= '{days[1]}'", [["day", "<=", "string", days[1]]]),
            (10, 2, f"day <= '{days[2]}'", [["day", "<=", "string", days[2]]]),
            (100, DAYS - 1, f"day >= '{days[0]}'", [["day", ">=", "string", days[0]]])):
        qs.append({"name": f"day {pct:g}%", "column": "day", "target": float(pct), "sql": sql, "spec": spec,
                   "rows": int(sum(per_day[:last + 1])), "days": days[:last + 1]})
    return qs


if __name__ == "__main__":
    main()
