"""Writes docs/benchmarks.md and the plots in docs/benchmarks/ from the
results of one run of the suite (docs/benchmarks/results.json, written by
bench/suite/run.py). Every figure in the report comes from that file; the
report is generated, never edited by hand.

    python bench/report.py [--results docs/benchmarks/results.json]
                           [--md docs/benchmarks.md] [--plots docs/benchmarks]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TITLES = {
    "seek": "1. Seek vs read on S3",
    "orc_alt": "2. ORC alternate columns on S3",
    "parquet_alt": "3. Parquet alternate columns on S3 (bench/iosched)",
    "throughput": "4. Throughput: full scans of five data sets",
    "sendpath": "5. Copies: stock vs zero-copy send path (bench/sendpath)",
    "concurrency": "6. Concurrency and memory",
    "orc_decode": "7. ORC decode (bench/orc)",
    "security": "8. Security: TLS and token authentication",
    "filter": "9. Filters on S3 (bench/filter)",
    "scaleout": "10. Scale-out: 1, 2 and 3 replicas (bench/scaleout)",
}


def anchor(title: str) -> str:
    a = re.sub(r"[^\w\- ]", "", title.lower()).strip().replace(" ", "-")
    return a


# --- formatting -------------------------------------------------------------

def size(n) -> str:
    if n is None:
        return "-"
    n = float(n)
    for unit, m in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= m:
            v = n / m
            return f"{v:.0f} {unit}" if v >= 100 or v == int(v) else f"{v:.1f} {unit}"
    return f"{n:.0f} B"


def mb(n) -> str:
    return "-" if n is None else f"{n / 1e6:.1f}"


def secs(x) -> str:
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def ms(x) -> str:
    return "-" if x is None else f"{x * 1e3:.1f}"


def mmm(d, f=secs) -> str:
    """min / **median** / max"""
    if not d or d.get("median") is None:
        return "-"
    if d.get("n", 0) <= 1:
        return f(d["median"])
    return f"{f(d['min'])} / **{f(d['median'])}** / {f(d['max'])}"


def plural(n, word) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def ratio(a, b, digits=2) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.{digits}f}x"


def table(header: list[str], rows: list[list], align: str | None = None) -> str:
    align = align or "l" + "r" * (len(header) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(sep) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def gets_str(xs) -> str:
    if not xs:
        return "-"
    lo, hi = min(xs), max(xs)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def ok(e) -> bool:
    return bool(e) and e.get("status") == "ok"


# --- plots ------------------------------------------------------------------

def plt_module():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"figure.dpi": 110, "font.size": 9, "axes.grid": True, "grid.alpha": 0.3})
    return plt


def plot_seek(e, path) -> bool:
    pts = e.get("points") or []
    if len(pts) < 2:
        return False
    plt = plt_module()
    fig, ax = plt.subplots(figsize=(7, 4))
    x = [p["gap"] for p in pts]
    for key, label, color, ls in (("one_get", "one GET (X + gap + X)", "tab:blue", "-"),
                                  ("two_gets", "two GETs (X, then X)", "tab:orange", "-"),
                                  ("two_gets_parallel", "two GETs at once (reference)", "tab:orange", ":")):
        if not all(p.get(key, {}).get("median") is not None for p in pts):
            continue
        med = [p[key]["median"] * 1e3 for p in pts]
        ax.plot(x, med, marker="o" if ls == "-" else ".", ms=4, ls=ls, label=label + ", median", color=color)
        if ls != "-":
            continue
        ax.fill_between(x, [p[key]["min"] * 1e3 for p in pts], [p[key]["max"] * 1e3 for p in pts], color=color,
                        alpha=0.15, lw=0)
    hole = (e.get("scand") or {}).get("hole")
    if hole:
        ax.axvline(hole, color="tab:green", ls="--", label=f"scand's learned S3 hole ({size(hole)})")
    be = e.get("break_even_crossing") or e.get("break_even_fit")
    if be:
        ax.axvline(be, color="grey", ls=":", label=f"measured break-even ({size(be)})")
    ax.set_xscale("log", base=2)
    ax.set_xticks(x)
    ax.set_xticklabels([size(g).replace(" ", "\n") for g in x], fontsize=7)
    ax.set_xlabel("gap Y between the two ranges")
    ax.set_ylabel("time (ms); band: min..max")
    ax.set_title(f"Read X={size(e['x'])}, skip Y, read X: S3 (versitygw) +{e['latency_ms']} ms latency")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def plot_bars(groups: list[str], series: list[tuple[str, list]], path, title, ylabel, log=False) -> bool:
    """Grouped bars: groups on x, one bar per series."""
    if not groups or not series:
        return False
    plt = plt_module()
    fig, ax = plt.subplots(figsize=(min(12, max(6, 1.6 * len(groups) + 2)), 4.2))
    w = 0.8 / len(series)
    for i, (label, vals) in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * w for g in range(len(groups))]
        ys = [v if v is not None else 0 for v in vals]
        bars = ax.bar(xs, ys, w, label=label)
        for b, v in zip(bars, vals):
            if v is not None:
                ax.annotate(f"{v:.0f}" if v >= 100 else f"{v:.3g}", (b.get_x() + b.get_width() / 2, b.get_height()),
                            ha="center", va="bottom", fontsize=6)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8, rotation=30 if len(groups) > 6 else 0,
                       ha="right" if len(groups) > 6 else "center")
    top = max((v for _, vals in series for v in vals if v is not None), default=1)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(top=top * 8)
    else:
        ax.set_ylim(top=top * 1.25)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper center", ncol=min(3, len(series)))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def plot_throughput(e, path) -> bool:
    sets = {k: v for k, v in (e.get("sets") or {}).items() if v.get("readers")}
    if not sets:
        return False
    plt = plt_module()
    fig, ax = plt.subplots(figsize=(9, 3.6))
    labels = [r["reader"] for r in next(iter(sets.values()))["readers"]]
    width = 0.8 / len(labels)
    for j, label in enumerate(labels):
        ys = [next((r["arrow_MBps"]["median"] for r in v["readers"] if r["reader"] == label), 0) for v in sets.values()]
        ax.bar([i + j * width for i in range(len(sets))], ys, width, label=label)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(sets))])
    ax.set_xticklabels(list(sets))
    ax.set_ylabel("MB/s of Arrow data, median")
    ax.set_title("Full scans into pyarrow or Go, by data set and reader")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def plot_concurrency(e, path) -> bool:
    lv = [x for x in e.get("levels") or [] if x.get("io_memory") == "default"]
    if not lv:
        return False
    plt = plt_module()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
    n = [x["clients"] for x in lv]

    def val(x, key, f):
        d = x.get(key) or {}
        return None if "error" in d or d.get("stalled") or key not in x else f(d)

    for key, label, color in (("scand", "scand", "tab:green"), ("pyarrow", "pyarrow pre_buffer=True", "tab:grey")):
        ys = [val(x, key, lambda d: d["MBps"]) for x in lv]
        a1.plot([c for c, y in zip(n, ys) if y is not None], [y for y in ys if y is not None], marker="o",
                label=label, color=color)
        rs = [val(x, key, lambda d: d["vmhwm"] / 2**20) for x in lv]
        a2.plot([c for c, y in zip(n, rs) if y is not None], [y for y in rs if y is not None], marker="o",
                label=f"{label} peak RSS", color=color)
    for x in lv:
        if (x.get("scand") or {}).get("stalled"):
            a1.annotate("scand stalled", (x["clients"], 0), xytext=(0, 10), textcoords="offset points",
                        ha="center", color="tab:red", fontsize=8)
    budget = next((x["scand"].get("io_memory_budget") for x in lv if x["scand"].get("io_memory_budget")), None)
    if budget:
        a2.axhline(budget / 2**20, color="tab:green", ls="--", label=f"scand --io-memory ({size(budget)})")
    pk = [val(x, "scand", lambda d: d["io_memory_peak"] / 2**20) for x in lv]
    a2.plot([c for c, y in zip(n, pk) if y is not None], [y for y in pk if y is not None], marker="x", ls=":",
            color="tab:green", label="scand prefetched bytes, peak")
    for a in (a1, a2):
        a.set_xscale("log", base=2)
        a.set_xticks(n)
        a.set_xticklabels([str(v) for v in n])
        a.set_xlabel("concurrent clients")
        a.legend(fontsize=7)
    a1.set_ylim(bottom=0)
    a1.set_ylabel("aggregate MB/s (Arrow)")
    a2.set_ylabel("MiB")
    a1.set_title("Aggregate throughput")
    a2.set_title("Peak RSS (VmHWM) of the reading process")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


# --- parsing the sub-programs' tables ----------------------------------------

def md_tables(text: str) -> list[list[list[str]]]:
    """Markdown-ish tables ('|'-separated lines) in text, as lists of cells;
    separator lines dropped."""
    tables, cur = [], []
    for line in (text or "").splitlines():
        s = line.strip()
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) or c == "" for c in cells):
                continue
            cur.append(cells)
        else:
            if cur:
                tables.append(cur)
            cur = []
    if cur:
        tables.append(cur)
    return tables


def num(s: str):
    m = re.search(r"-?\d+(?:\.\d+)?", s or "")
    return float(m.group()) if m else None


def parse_iosched(out: str) -> list[dict]:
    """Rows of bench/iosched's table as dicts keyed by header."""
    rows = []
    for t in md_tables(out):
        if len(t) < 2:
            continue
        head = [h.lower() for h in t[0]]
        for r in t[1:]:
            if len(r) >= len(head) - 1:
                d = dict(zip(head, r))
                if len(r) > len(head):
                    d["note"] = " ".join(r[len(head):])
                rows.append(d)
    return rows


def col(row: dict, *names):
    for k, v in row.items():
        for n in names:
            if n in k:
                return v
    return None


# --- the report -------------------------------------------------------------

class Report:
    def __init__(self, res, plots_dir: Path, md_path: Path):
        self.res = res
        self.ex = res["experiments"]
        self.plots = plots_dir
        self.md_path = md_path
        self.headline = []   # rows: experiment, measure, scand, peer, ratio
        self.behind = []     # (experiment, text)
        self.not_run = []    # (experiment, reason)
        self.findings = []   # (experiment, text): no peer, but worth the top section
        self.sections = []

    def img(self, name) -> str:
        rel = (self.plots / name).relative_to(self.md_path.parent)
        return f"![{name}]({rel.as_posix()})"

    def status_line(self, key) -> str | None:
        e = self.ex.get(key)
        if not e:
            self.not_run.append((key, "not run: the suite did not reach it"))
            return "**Not run:** the suite did not reach it."
        if e["status"] != "ok":
            self.not_run.append((key, e["status"]))
            return f"**{e['status'][0].upper() + e['status'][1:]}.**"
        return None

    # 1
    def seek(self):
        key = "seek"
        s = [f"## {TITLES[key]}"]
        st = self.status_line(key)
        e = self.ex.get(key) or {}
        s.append(
            "Apache ORC's *read vs seek* question on S3: read X bytes, skip a gap Y, read X again, either as **one "
            "ranged GET** covering X+Y+X or as **two ranged GETs** of X one after the other (a reader that seeks). "
            f"versitygw behind toxiproxy with +{self.res['latency_ms']} ms on every response, pyarrow's "
            "S3 filesystem issuing the GETs (`read_at`), alternating which variant goes first. The gap where both "
            "cost the same is the break-even hole. For reference, the two GETs are also timed when sent at once "
            "(two threads), as a reader with parallel requests would; the break-even is taken against the "
            "sequential pair, as in ORC's design. Beside it: the hole scand's adaptive planner learned for the "
            "same store (`scand serve` with `--s3-*` flags against the same proxy, a few scans of a Parquet object "
            "with 8 row groups; the hole is the `hole` key of the DoGet app_metadata, since the Prometheus gauge "
            "`scand_io_hole_bytes` reports the local backend's).")
        if st:
            s.append(st)
            self.sections.append("\n\n".join(s))
            return
        pts = e["points"]
        rows = []
        for p in pts:
            rows.append([size(p["gap"]), mmm(p["one_get"], ms), mmm(p["two_gets"], ms),
                         ratio(p["one_get"]["median"], p["two_gets"]["median"]),
                         mmm(p.get("two_gets_parallel"), ms)])
        s.append(f"X = {size(e['x'])}, {e['repeats']} repeats per point; times in ms, min / **median** / max. "
                 f"GETs seen in versitygw's access log: {e.get('gets_seen')} (expected {e.get('gets_expected')}).")
        s.append(table(["gap Y", "one GET (ms)", "two GETs (ms)", "one / two", "two GETs at once (ms), reference"],
                       rows))
        sc = e.get("scand") or {}
        hole = sc.get("hole")
        be_c, be_f = e.get("break_even_crossing"), e.get("break_even_fit")
        fit = e.get("fit") or {}
        lines = []
        if be_c:
            lines.append(f"- Break-even gap, where the medians cross: **{size(be_c)}**.")
        else:
            lines.append("- The medians do not cross within the gaps measured.")
        if be_f:
            bw = fit.get("bandwidth_Bps")
            lines.append(f"- From a linear fit of the one-GET time (intercept {ms(fit.get('one_get_intercept_s'))} ms, "
                         f"{bw / 1e6:.0f} MB/s) against the mean two-GET time ({ms(fit.get('two_gets_mean_s'))} ms): "
                         f"**{size(be_f)}**." if bw else f"- Fit: {size(be_f)}.")
        if hole:
            lines.append(f"- scand's learned hole for this store: **{size(hole)}** ({sc.get('source')}; "
                         f"holes per stream over the scans: "
                         f"{', '.join(size(h) for sc_ in sc.get('scans', []) for h in sc_['stream_holes'][-1:])}). "
                         f"The gauge `scand_io_hole_bytes` read {size(sc.get('gauge_scand_io_hole_bytes'))} "
                         f"(the local backend's).")
        be = be_c or be_f
        if hole and be:
            lines.append(f"- scand's hole / measured break-even: **{hole / be:.2f}**.")
            self.headline.append(["1 seek vs read", "learned S3 hole vs measured break-even gap", size(hole),
                                  size(be), f"{hole / be:.2f}"])
            if not 0.5 <= hole / be <= 2:
                why = ("it reads through gaps that cost more than a second GET" if hole > be else
                       "it issues a second GET for gaps cheaper to read through")
                self.behind.append((TITLES[key], f"the learned hole is {hole / be:.2f}x the measured break-even: "
                                                 f"{why}."))
        s.append("\n".join(lines))
        if plot_seek(e, self.plots / "seek.png"):
            s.append(self.img("seek.png"))
        self.sections.append("\n\n".join(s))

    # 2
    def orc_alt(self):
        key = "orc_alt"
        s = [f"## {TITLES[key]}"]
        st = self.status_line(key)
        e = self.ex.get(key) or {}
        s.append(
            "ORC files written by `pyarrow.orc.write_table` (uncompressed, random int64/float64 columns, one stripe), "
            f"on versitygw behind toxiproxy (+{self.res['latency_ms']} ms). scand (`scand serve`, a fresh process "
            "per mode, read by a stock pyarrow.flight client) with coalescing off (`--io-no-coalesce`), a static 4 "
            "MiB hole (`--io-hole 4MiB`) and adaptive (the default; its latency model is first warmed on another "
            "object); and pyarrow.orc (`ORCFile(S3FileSystem file).read(columns)`). GETs: object GETs in versitygw's "
            "access log, the cold scan / each timed scan (scand's own counter "
            "`scand_storage_requests_total{backend=\"s3\",op=\"read\"}` is in results.json). MB: bytes scand fetched "
            "(its IO figures). Wall: timed scans, min / **median** / max, seconds.\n\n"
            "Reference: the IO-scheduler design doc reported **5.8 s -> 1.5 s** and **64 GETs -> 1** for alternate "
            "columns on AWS S3.")
        if st:
            s.append(st)
            self.sections.append("\n\n".join(s))
            return
        dsinfo = ", ".join(f"{d['name']}: {d['rows']:,} rows x {d['cols']} columns, {d['size'] / 1e6:.1f} MB, "
                           f"{d['stripes']} stripe(s)" for d in e["datasets"])
        s.append(f"Files: {dsinfo}. {e['repeats']} timed scans per row after a cold one (pyarrow.orc rows whose "
                 "cold scan took over 5 s: one timed scan, shown alone).")
        rows = []
        base = {}
        for r in e["rows"]:
            if r["reader"] == "scand coalescing off":
                base[(r["dataset"], r["columns"])] = r["wall"]["median"]
        pyb = {(r["dataset"], r["columns"]): r["wall"]["median"] for r in e["rows"] if not r["scand"]}
        for r in sorted(e["rows"], key=lambda r: (r["dataset"], r["columns"] != "alternate")):
            k = (r["dataset"], r["columns"])
            rows.append([r["dataset"], r["columns"], r["reader"], f"{r['cold']['gets']} / {gets_str(r['gets'])}",
                         mb(statistics.median(r["bytes_fetched"])) if r.get("bytes_fetched") else "-",
                         secs(r["cold"]["seconds"]), mmm(r["wall"]),
                         ratio(r["wall"]["median"], base.get(k)), ratio(r["wall"]["median"], pyb.get(k)),
                         "off" if r.get("hole") is not None and r["hole"] < 0 else
                         size(r["hole"]) if r.get("hole") else "-"])
        s.append(table(["file", "columns", "reader", "GETs cold / timed", "MB fetched", "cold s", "wall s",
                        "vs coalescing off", "vs pyarrow.orc", "hole"], rows, "lllrrrrrrr"))
        by = {(r["dataset"], r["columns"], r["reader"]): r for r in e["rows"]}
        ad, off = by.get(("orc128", "alternate", "scand adaptive")), by.get(("orc128", "alternate", "scand coalescing off"))
        py = by.get(("orc128", "alternate", "pyarrow.orc S3FileSystem"))
        if ad and off:
            self.headline.append(["2 ORC alternate columns (orc128)", "wall, adaptive vs coalescing off",
                                  f"{secs(ad['wall']['median'])} s, {gets_str(ad['gets'])} GETs",
                                  f"{secs(off['wall']['median'])} s, {gets_str(off['gets'])} GETs",
                                  ratio(off["wall"]["median"], ad["wall"]["median"]) + " faster"])
        if ad and py:
            self.headline.append(["2 ORC alternate columns (orc128)", "wall, scand adaptive vs pyarrow.orc",
                                  f"{secs(ad['wall']['median'])} s", f"{secs(py['wall']['median'])} s",
                                  ratio(py["wall"]["median"], ad["wall"]["median"]) + " faster"])
        for (dsn, cols, reader), r in by.items():
            if reader == "scand adaptive" and (dsn, cols, "pyarrow.orc S3FileSystem") in by:
                p = by[(dsn, cols, "pyarrow.orc S3FileSystem")]
                if r["wall"]["median"] > p["wall"]["median"] * 1.1:
                    self.behind.append((TITLES[key], f"{dsn} {cols} columns: scand adaptive "
                                        f"{secs(r['wall']['median'])} s vs pyarrow.orc {secs(p['wall']['median'])} s "
                                        f"({gets_str(r['gets'])} vs {gets_str(p['gets'])} GETs)."))
        groups, series = [], {}
        for (dsn, cols) in sorted({(r["dataset"], r["columns"]) for r in e["rows"]}):
            groups.append(f"{dsn}\n{cols}")
            for r in e["rows"]:
                series.setdefault(r["reader"], [])
            for reader in series:
                rr = by.get((dsn, cols, reader))
                series[reader].append(rr["wall"]["median"] if rr else None)
        if plot_bars(groups, list(series.items()), self.plots / "orc_alt.png",
                     f"ORC on S3 (+{self.res['latency_ms']} ms): median wall time per scan", "seconds (log scale)", log=True):
            s.append(self.img("orc_alt.png"))
        self.sections.append("\n\n".join(s))

    # 3, 5, 7: the sub-programs
    def program(self, key, intro, parse):
        s = [f"## {TITLES[key]}"]
        s.append(intro)
        st = self.status_line(key)
        e = self.ex.get(key) or {}
        if e.get("command"):
            s.append(f"Command: `{e['command']}`" + (f" ({e['seconds']:.0f} s)" if e.get("seconds") else "") +
                     (f"; flags it does not take (not passed): {', '.join(e['flags_not_supported'])}"
                      if e.get("flags_not_supported") else ""))
        if st:
            s.append(st)
            if e.get("stderr_tail"):
                s.append("Last lines of its output:\n\n```\n" + "\n".join(e["stderr_tail"].splitlines()[-15:]) +
                         "\n```")
            self.sections.append("\n\n".join(s))
            return
        out = (e.get("stdout") or "").rstrip()
        try:
            extra = parse(e, out) or []
        except Exception as ex:  # noqa: BLE001 - the program's format changed; the table is still shown
            extra = [f"(Its table could not be parsed for the headline: {type(ex).__name__}: {ex}.)"]
        s.append("Its output, verbatim:")
        s.append("```text\n" + out + "\n```")
        s.extend(extra)
        self.sections.append("\n\n".join(s))

    def parse_parquet_alt(self, e, out):
        rows = parse_iosched(out)
        if not rows:
            raise ValueError("no table")
        extra = []

        def find(dsn, cols, reader):
            for r in rows:
                vals = " ".join(r.values()).lower()
                if dsn in vals and re.search(rf"\b{cols}\b", vals) and reader in vals:
                    return r
            return None

        def wall_median(r):
            w = col(r, "wall")
            m = re.search(r"\*\*([\d.]+)\*\*", w or "")
            if m:
                return float(m.group(1))
            parts = re.findall(r"[\d.]+", w or "")
            return float(parts[1]) if len(parts) >= 3 else (float(parts[0]) if parts else None)

        groups, series = [], {}
        readers = []
        for r in rows:
            rd = col(r, "reader")
            if rd and rd not in readers:
                readers.append(rd)
        keys = []
        for r in rows:
            k = (col(r, "file", "data"), col(r, "columns", "cols"))
            if k not in keys and None not in k:
                keys.append(k)
        for k in keys:
            groups.append(f"{k[0]}\n{k[1]}")
            for rd in readers:
                m = next((r for r in rows if (col(r, "file", "data"), col(r, "columns", "cols")) == k
                          and col(r, "reader") == rd), None)
                series.setdefault(rd, []).append(wall_median(m) if m else None)
        if plot_bars(groups, list(series.items()), self.plots / "parquet_alt.png",
                     "Parquet on S3 (bench/iosched): median wall time per scan", "seconds", log=True):
            extra.append(self.img("parquet_alt.png"))
        for dsn in ("wide128", "wide400"):
            ad = find(dsn, "alternate", "scand adaptive")
            pb = find(dsn, "alternate", "pre_buffer=true")
            if ad and pb:
                a, p = wall_median(ad), wall_median(pb)
                self.headline.append([f"3 Parquet alternate columns ({dsn})", "wall, scand adaptive vs pyarrow "
                                      "pre_buffer=True", f"{secs(a)} s, {col(ad, 'gets')} GETs",
                                      f"{secs(p)} s, {col(pb, 'gets')} GETs", ratio(p, a) + " faster"])
                if a and p and a > p * 1.1:
                    self.behind.append((TITLES["parquet_alt"], f"{dsn} alternate columns: scand adaptive {secs(a)} s "
                                        f"vs pyarrow pre_buffer=True {secs(p)} s." + self.reason_from(out)))
        missed = [ln.strip() for ln in out.splitlines() if "MISSED" in ln and not ln.startswith("memory")]
        if missed:
            self.findings.append((TITLES["parquet_alt"], "targets bench/iosched reports as missed: " +
                                  "; ".join(f"`{x}`" for x in missed)))
        m = re.search(r"^memory:.*$", out, re.M)
        if m:
            line = m.group(0)
            rss = re.search(r"peak RSS ([\d.]+) MiB", line)
            bud = re.search(r"--io-memory ([\d.]+) MiB", line)
            scans = re.search(r"(\d+) concurrent full scans of (\w+)", line)
            if rss and bud:
                r_, b_ = float(rss.group(1)), float(bud.group(1))
                what = f"{scans.group(1)} concurrent full scans of {scans.group(2)}" if scans else "concurrent scans"
                self.headline.append(["3 memory on S3 (bench/iosched)", f"scand peak RSS, {what}",
                                      f"{r_:.0f} MiB", f"--io-memory {b_:.0f} MiB (no peer)", f"{r_ / b_:.1f}x budget"])
                if "OVER" in line:
                    self.findings.append((TITLES["parquet_alt"], f"memory line: scand's peak RSS {r_:.0f} MiB is over "
                                        f"the target its program sets (--io-memory {b_:.0f} MiB + 128 MiB); the "
                                        "program notes the scheduler's own prefetch peak beside it: " +
                                        (re.search(r"scheduler's peak prefetch memory [\d.]+ \w+", line).group(0)
                                         if "scheduler's peak" in line else "-") + "."))
        return extra

    def reason_from(self, out: str) -> str:
        """A reason the program itself gives (a line saying why), if any."""
        for line in out.splitlines():
            low = line.lower()
            if any(w in low for w in ("because", "reason:", "behind:", "slower:", "why:")):
                return " The program says: " + line.strip().strip("|").strip() + ""
        return ""

    def parse_sendpath(self, e, out):
        extra = []
        rows = []
        for line in out.splitlines():
            f = line.split()
            if len(f) > 8 and f[0] in ("wide", "strings") and f[1] in ("stock", "zerocopy"):
                cells = [c for c in re.split(r"\s+\|?\s*", line.strip()) if c and c != "|"]
                rows.append(cells)
        if not rows:
            raise ValueError("no rows")
        # data send comp client IPCMB wireMB srv_s/GB vs send_s/GB vs allocB/B sendB/B MB/s vs
        for data in ("wide", "strings"):
            st = next((r for r in rows if r[0] == data and r[1] == "stock" and r[2] == "-" and r[3] == "stock"), None)
            zc = next((r for r in rows if r[0] == data and r[1] == "zerocopy" and r[2] == "-" and r[3] == "stock"), None)
            if st and zc:
                s_cpu, z_cpu = float(st[6]), float(zc[6])
                s_mbs, z_mbs = float(st[12]), float(zc[12])
                self.headline.append([f"5 send path ({data}, no IPC compression)",
                                      "server CPU s/GB, zero-copy vs stock (stock client)",
                                      f"{z_cpu:.2f} s/GB, {z_mbs:.0f} MB/s", f"{s_cpu:.2f} s/GB, {s_mbs:.0f} MB/s",
                                      f"{s_cpu / z_cpu:.2f}x less CPU, {z_mbs / s_mbs:.2f}x MB/s"])
        for r in rows:
            if r[1] == "zerocopy":
                try:
                    vs = float(r[13].rstrip("x"))
                except (IndexError, ValueError):
                    continue
                if vs < 0.9:
                    self.behind.append((TITLES["sendpath"], f"{r[0]}, IPC compression {r[2]}, {r[3]} client: zero-copy "
                                        f"throughput {vs:.2f}x of stock." + self.reason_from(out)))
        self.parse_sendpath_floor(out)
        return extra

    def parse_sendpath_floor(self, out):
        """The transport-floor table: send stock|zerocopy|bare, client stock|pyarrow|bare, then
        srv s/GB, x floor, vs stock, send s/GB, x floor, alloc B/B, MB/s."""
        rows = {}
        for line in out.splitlines():
            cells = [c for c in re.split(r"\s+\|?\s*", line.strip()) if c and c != "|"]
            if len(cells) == 9 and cells[0] in ("stock", "zerocopy", "bare") and cells[1] in ("stock", "pyarrow", "bare"):
                rows[(cells[0], cells[1])] = cells
        bare = rows.get(("bare", "bare"))
        if not bare:
            return
        for client in ("stock", "pyarrow"):
            zc, st = rows.get(("zerocopy", client)), rows.get(("stock", client))
            if not zc or not st:
                continue
            x_floor, vs_stock = float(zc[3].rstrip("x")), float(zc[4].rstrip("x"))
            self.headline.append([f"5 send path vs a bare socket (int64, {client} client)",
                                  "server CPU s/GB, zero-copy vs a bare loopback TCP sender of the same bytes",
                                  f"{float(zc[2]):.2f} s/GB", f"{float(bare[2]):.2f} s/GB",
                                  f"{x_floor:.2f}x the floor (stock {float(st[3].rstrip('x')):.2f}x); "
                                  f"{vs_stock:.2f}x stock's CPU"])
            if x_floor > 3 or vs_stock > 0.75:
                self.behind.append((TITLES["sendpath"], f"int64, {client} client: zero-copy server CPU {x_floor:.2f}x "
                                    f"a bare socket's (goal <= 3x) and {vs_stock:.2f}x stock's (goal <= 0.75x)."))

    def parse_orc_decode(self, e, out):
        extra = []
        ratios = []
        behind = []
        groups, s_vals, p_vals = [], [], []
        for t in md_tables(out) or []:
            head = [h.lower() for h in t[0]]
            for r in t[1:]:
                d = dict(zip(head, r))
                rt = col(d, "ratio", "scand/pyarrow")
                if rt is None:
                    continue
                v = num(rt)
                if v is None:
                    continue
                ratios.append(v)
                name = r[0]
                if v < 0.9:
                    behind.append(f"{name} ({v:.2f}x)")
        if not ratios:
            # whitespace table: the last column is the ratio, e.g. "1.23x"
            for line in out.splitlines():
                f = line.split()
                if len(f) >= 5 and f[1].isdigit() and re.fullmatch(r"\d+(\.\d+)?x", f[-1]):
                    v = float(f[-1][:-1])
                    ratios.append(v)
                    meds = [float(x) for x in re.findall(r"/\s*\*?\*?([\d.]+)\*?\*?\s*/", line)]
                    if len(f) == 11:  # file rows fileMB arrowMB s_min s_med s_max p_min p_med p_max ratio
                        meds = [float(f[5]), float(f[8])]
                    if len(meds) >= 2:
                        groups.append(f[0])
                        s_vals.append(meds[0])
                        p_vals.append(meds[1])
                    if v < 0.9:
                        behind.append(f"{f[0]} ({v:.2f}x)")
        if not ratios:
            raise ValueError("no ratio column")
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        own = re.search(r"geometric mean[^:\n]*:\s*([\d.]+)x", out)
        if own:
            gm = float(own.group(1))
        self.headline.append(["7 ORC decode", f"MB/s, scand vs pyarrow.orc, geometric mean of the per-file "
                              f"median ratios ({len(ratios)} files)", "-", "-", f"{gm:.2f}x"])
        if behind:
            self.behind.append((TITLES["orc_decode"], "scand decodes slower than pyarrow.orc on: " + ", ".join(behind) +
                                "." + self.reason_from(out)))
        if groups and plot_bars(groups, [("scand", s_vals), ("pyarrow.orc", p_vals)], self.plots / "orc_decode.png",
                                "ORC decode, one core: median MB/s", "MB/s"):
            extra.append(self.img("orc_decode.png"))
        return extra

    def parse_filter(self, e, out):
        """Headline rows from bench/filter's target lines; a MISS is a finding."""
        n = 0
        for line in out.splitlines():
            m = re.match(r"\s*\((a|b|c)\) (PASS|MISS) (.+)$", line)
            if not m:
                continue
            n += 1
            target, verdict, rest = m.groups()
            w = re.match(r"(\S+ [\d.]+%):\s+wall: scand no-cache median ([\d.]+) s = ([\d.]+) x pyarrow's ([\d.]+) s", rest)
            if w:
                self.headline.append([f"9 filter ({w.group(1)}, target b)", "wall, scand no-cache vs pyarrow.dataset",
                                      f"{w.group(2)} s", f"{w.group(4)} s", f"{float(w.group(4)) / float(w.group(2)):.2f}x faster"])
            if verdict == "MISS":
                self.findings.append((TITLES["filter"], f"target ({target}) missed: {rest.strip()}"))
        if not n:
            raise ValueError("no target lines")
        return []

    # 4
    def throughput(self):
        key = "throughput"
        s = [f"## {TITLES[key]}"]
        st = self.status_line(key)
        e = self.ex.get(key) or {}
        s.append(
            "Full scans, all columns, of five data sets of snappy Parquet on local disk (in the page cache after a "
            "warm-up turn): trips, TPC-H lineitem with float64 prices, the same with decimal(15,2) prices and a "
            "boolean, a nested set (lists of structs, a map, a list of doubles) and 2,000 files of 1,000 rows. "
            "Readers: `pyarrow.parquet.read_table` of each file in the benchmark process (the limit: no server, no "
            "network); `scand serve` (defaults) read by a stock `pyarrow.flight` client, endpoints one after another "
            f"and up to {e.get('at_once', 8)} at a time; the Python package and the Go client (their defaults); and "
            "the peer a user would write, `bench/suite/pyarrow_flight_server.py` (pyarrow.dataset behind "
            "`pyarrow.flight`, one endpoint per file), read by the stock client both ways. The readers take turns "
            "in that order, every turn. MB/s is the data set's Arrow bytes (`Table.nbytes`, the same for every "
            "reader) per second; CPU s/GB counts user + system seconds of the server process and of the client "
            "per GB of Arrow data. Server and client share the machine's cores.")
        if st:
            s.append(st)
            self.sections.append("\n\n".join(s))
            return
        for name, d in (e.get("sets") or {}).items():
            if not d.get("readers"):
                s.append(f"**{name}**: {d.get('status', 'not run')}")
                continue
            s.append(f"**{name}**: {d['files']:,} files, {d['rows']:,} rows, {d['file_bytes'] / 1e6:.0f} MB of "
                     f"Parquet, {d['arrow_bytes'] / 1e6:.0f} MB of Arrow; scand {d['endpoints']['scand']} endpoints, "
                     f"the peer {d['endpoints']['peer']}; {d['turns']} timed turns.")
            self.throughput_set(name, d, s)
        if plot_throughput(e, self.plots / "throughput.png"):
            s.append(self.img("throughput.png"))
        self.sections.append("\n\n".join(s))

    def throughput_set(self, name, d, s):
        rs = {r["reader"]: r for r in d["readers"]}

        def cpu(v):
            return "-" if v is None else f"{v:.2f}"

        def peer_of(label):
            if not label.startswith("scand, stock"):
                return rs.get("peer, stock client, at once")
            return rs.get(label.replace("scand", "peer"))
        rows = []
        for r in d["readers"]:
            p = peer_of(r["reader"]) if r["reader"].startswith("scand") else None
            rows.append([r["reader"], mmm(r["wall"]), f"{r['arrow_MBps']['median']:.0f}",
                         ratio(r["arrow_MBps"]["median"], p["arrow_MBps"]["median"]) if p else "-",
                         cpu(r.get("server_cpu_s_per_GB")), cpu(r.get("client_cpu_s_per_GB"))])
        s.append(table(["reader", "wall s", "MB/s (Arrow)", "vs peer", "server CPU s/GB", "client CPU s/GB"], rows))
        for how in ("in turn", "at once"):
            sc, pe = rs.get(f"scand, stock client, {how}"), rs.get(f"peer, stock client, {how}")
            if not (sc and pe):
                continue
            v = sc["arrow_MBps"]["median"] / pe["arrow_MBps"]["median"]
            self.headline.append(["4 throughput", f"{name}, stock client {how}, scand vs pyarrow.dataset Flight peer",
                                  f"{sc['arrow_MBps']['median']:.0f} MB/s", f"{pe['arrow_MBps']['median']:.0f} MB/s",
                                  ratio(sc["arrow_MBps"]["median"], pe["arrow_MBps"]["median"])])
            if v < 1.2:
                self.behind.append((TITLES["throughput"], f"{name}, stock client {how}: {v:.2f}x the peer (target "
                                    f"1.2x); server CPU {cpu(sc.get('server_cpu_s_per_GB'))} vs "
                                    f"{cpu(pe.get('server_cpu_s_per_GB'))} s/GB."))

    # 6
    def concurrency(self):
        key = "concurrency"
        s = [f"## {TITLES[key]}"]
        st = self.status_line(key)
        e = self.ex.get(key) or {}
        s.append(
            "1, 4 and 16 concurrent clients, all started at once, each scanning one whole file of experiment 4 "
            "(client i scans file i mod 4). scand: a fresh `scand serve` per level with the default `--io-memory`, "
            "then 16 clients once more under a tight budget (`--io-memory 256MiB`); stock pyarrow.flight clients in "
            "threads of the benchmark process. scand's peak RSS is VmHWM of the scand process (reset with clear_refs "
            "after a warm-up scan), with the largest VmRSS sampled every 20 ms beside it, and "
            "`scand_io_memory_peak_bytes` (prefetched, not yet decoded bytes). pyarrow: a fresh Python process per "
            "level with N threads, each `pq.ParquetFile(path, pre_buffer=True).iter_batches()` dropping the batches "
            "as they arrive; its peak RSS is the process's VmHWM after a warm-up read (it reads and decodes; scand's "
            "clients decode the IPC stream in another process, not counted). Aggregate throughput: Arrow MB of all "
            f"clients / wall time. A level where scand sends no row for {e.get('stall_seconds', 20)} s while clients "
            "wait is recorded as a **stall**: scand is sent SIGQUIT, and the functions its goroutines were blocked "
            "in are read from the Go stack dump in its log.")
        if st:
            s.append(st)
            self.sections.append("\n\n".join(s))
            return

        def cell(d, f):
            if d is None:
                return "-"
            if "error" in d:
                return "failed"
            if d.get("stalled"):
                return "**stalled**"
            return f(d)

        rows = []
        for lv in e["levels"]:
            a, b = lv.get("scand"), lv.get("pyarrow")
            ok_a = a and "error" not in a and not a.get("stalled")
            ok_b = b and "error" not in b
            rows.append([lv["clients"], lv["io_memory"] if lv["io_memory"] != "default" else
                         f"default ({size(a.get('io_memory_budget'))})" if ok_a else "default",
                         cell(a, lambda d: f"{d['MBps']:.0f}"), cell(b, lambda d: f"{d['MBps']:.0f}"),
                         ratio(a["MBps"], b["MBps"]) if ok_a and ok_b else "-",
                         cell(a, lambda d: size(d["vmhwm"])), cell(a, lambda d: size(d["rss_sampled_max"])),
                         size(a.get("io_memory_peak")) if a and "io_memory_peak" in a else "-",
                         cell(b, lambda d: size(d["vmhwm"])),
                         ratio(a["vmhwm"], b["vmhwm"]) if ok_a and ok_b else "-",
                         cell(a, lambda d: f"{d['cpu_s_per_GB']:.1f}"),
                         cell(b, lambda d: f"{d['cpu_s_per_GB']:.1f}" if d.get("cpu_s_per_GB") else "-")]
                        + self.flight_peer_cells(lv, cell))
        first = e["levels"][0]["scand"] if e["levels"] else {}
        if first.get("rss_idle"):
            s.append(f"scand's RSS at start {size(first['rss_idle'])}, after the warm-up scan "
                     f"{size(first['rss_after_warmup'])} (1 client level).")
        s.append(table(["clients", "scand --io-memory", "scand MB/s", "pyarrow MB/s", "scand / pyarrow",
                        "scand peak RSS", "scand sampled RSS max", "scand prefetched peak", "pyarrow peak RSS",
                        "RSS scand / pyarrow", "scand CPU s/GB", "pyarrow CPU s/GB", "Flight peer MB/s",
                        "scand / Flight peer", "Flight peer peak RSS", "RSS scand / Flight peer"], rows,
                       "rlrrrrrrrrrrrrrr"))
        notes = []
        for lv in e["levels"]:
            for who in ("scand", "pyarrow"):
                d = lv.get(who) or {}
                if "error" in d:
                    notes.append(f"- {plural(lv['clients'], 'client')} ({who}, --io-memory {lv['io_memory']}): "
                                 f"failed: {d['error']}")
            a = lv.get("scand") or {}
            if a.get("stalled"):
                blocked = ", ".join(f"{k} ({v})" for k, v in (a.get("blocked_in") or {}).items()) or "-"
                text = (f"{plural(lv['clients'], 'client')}, --io-memory {lv['io_memory']}: scand **stalled** "
                        f"{a['after_seconds']:.0f} s into the level: no row sent for {a['seconds_without_rows']} s "
                        f"while {a['clients_waiting']} clients waited; prefetched bytes at "
                        f"{size(a['io_memory_peak'])} of the {size(a['io_memory_budget'])} budget; goroutines "
                        f"blocked in (first scand frame, count): {blocked}. Stack dump: `{a.get('log')}`.")
                notes.append("- " + text)
                self.findings.append((TITLES[key], text))
        if notes:
            s.append("\n".join(notes))
        good = [lv for lv in e["levels"] if lv["io_memory"] == "default" and "MBps" in (lv.get("scand") or {})
                and "MBps" in (lv.get("pyarrow") or {})]
        top = good[-1] if good else None
        if top:
            a, b = top["scand"], top["pyarrow"]
            self.headline.append([f"6 concurrency ({top['clients']} clients)", "aggregate MB/s, scand vs pyarrow "
                                  "pre_buffer=True", f"{a['MBps']:.0f} MB/s", f"{b['MBps']:.0f} MB/s",
                                  ratio(a["MBps"], b["MBps"])])
            self.headline.append([f"6 concurrency ({top['clients']} clients)", "peak RSS, scand vs pyarrow",
                                  f"{size(a['vmhwm'])} (--io-memory {size(a['io_memory_budget'])})", size(b["vmhwm"]),
                                  ratio(a["vmhwm"], b["vmhwm"])])
        peer_top = next((lv for lv in reversed(e["levels"]) if "MBps" in (lv.get("flight_peer") or {})
                         and "MBps" in (lv.get("scand") or {})), None)
        if peer_top:
            a, b = peer_top["scand"], peer_top["flight_peer"]
            self.headline.append([f"6 concurrency ({peer_top['clients']} clients)", "aggregate MB/s and peak RSS, "
                                  "scand vs the pyarrow.dataset Flight peer",
                                  f"{a['MBps']:.0f} MB/s, {size(a['vmhwm'])}", f"{b['MBps']:.0f} MB/s, {size(b['vmhwm'])}",
                                  f"{ratio(a['MBps'], b['MBps'])}, RSS {ratio(a['vmhwm'], b['vmhwm'])}"])
        rss_behind = []
        for lv in e["levels"]:
            a, b = lv.get("scand") or {}, lv.get("pyarrow") or {}
            if "MBps" not in a:
                continue
            if a.get("io_memory_budget") and a["vmhwm"] > a["io_memory_budget"] * 1.5:
                self.findings.append((TITLES[key], f"{plural(lv['clients'], 'client')}, --io-memory {lv['io_memory']}: "
                                      f"scand's peak RSS ({size(a['vmhwm'])}) is "
                                      f"{a['vmhwm'] / a['io_memory_budget']:.1f}x its budget "
                                      f"({size(a['io_memory_budget'])}) while its prefetched bytes peaked at "
                                      f"{size(a['io_memory_peak'])}: the budget bounds prefetched file bytes only, "
                                      "not decoded batches or send buffers."))
            if "MBps" not in b:
                continue
            if a["MBps"] < b["MBps"] * 0.9:
                why = ""
                if a.get("cpu_s_per_GB") and b.get("cpu_s_per_GB"):
                    why = (f" scand's process used {a['cpu_s_per_GB']:.1f} CPU-s per GB, the pyarrow process "
                           f"{b['cpu_s_per_GB']:.1f} (which includes its decoding); scand's clients also decode the "
                           "IPC stream on the same 2 cores.")
                self.behind.append((TITLES[key], f"{plural(lv['clients'], 'client')}: scand {a['MBps']:.0f} MB/s "
                                    f"aggregate vs pyarrow {b['MBps']:.0f} MB/s.{why}"))
            if a["vmhwm"] > b["vmhwm"] * 1.1:
                rss_behind.append(f"{plural(lv['clients'], 'client')}: {size(a['vmhwm'])} vs {size(b['vmhwm'])}")
        if rss_behind:
            self.behind.append((TITLES[key], "scand's peak RSS is above pyarrow's at " + "; ".join(rss_behind) +
                                " (scand's is the server's alone; it holds prefetched file bytes under --io-memory "
                                "and, outside it, decoded batches and send buffers of every stream)."))
        if plot_concurrency(e, self.plots / "concurrency.png"):
            s.append(self.img("concurrency.png"))
        self.sections.append("\n\n".join(s))

    @staticmethod
    def flight_peer_cells(lv, cell):
        a, c = lv.get("scand"), lv.get("flight_peer")
        ok = a and c and "MBps" in a and "MBps" in c
        return [cell(c, lambda d: f"{d['MBps']:.0f}"), ratio(a["MBps"], c["MBps"]) if ok else "-",
                cell(c, lambda d: size(d["vmhwm"])), ratio(a["vmhwm"], c["vmhwm"]) if ok else "-"]

    # 8
    def security(self):
        key = "security"
        s = [f"## {TITLES[key]}"]
        st = self.status_line(key)
        e = self.ex.get(key) or {}
        s.append(
            "Two `scand serve` processes on the files of experiment 4: plaintext with `--auth none`, and TLS (an "
            "ECDSA P-256 certificate made by openssl for the run) with `--auth tokens`, the token sent on every call. "
            "Turns interleaved: each repeat scans plain, then secure, with a stock pyarrow.flight client (one request, "
            "every endpoint in order), and times GetFlightInfo calls for the same files (footers cached: the cost of "
            "the call itself). Target: the secure full scan at most 10 % slower.")
        if st:
            s.append(st)
            self.sections.append("\n\n".join(s))
            return
        rows = [[r["server"], mmm(r["wall"]), f"{r['arrow_MBps']['median']:.0f} MB/s", mmm(r["flightinfo_s"], ms)]
                for r in e["servers"]]
        s.append(table(["server", "full scan (s)", "Arrow MB/s (median)", "GetFlightInfo (ms)"], rows, "lrrr"))
        verdict = "met" if e["met"] else "**missed**"
        s.append(f"TLS + tokens / plaintext full-scan time: **{e['slowdown']:.3f}** (target <= {e['target']:.2f}: {verdict}).")
        self.headline.append(["8 security", "full scan time, TLS + tokens vs plaintext", mmm(e["servers"][1]["wall"]),
                              mmm(e["servers"][0]["wall"]), f"{e['slowdown']:.2f}x"])
        self.sections.append("\n\n".join(s))

    def mark_reruns(self):
        """A section re-run after the full run (run.py --merge-into) says
        when, at which commit, and under what load, under its title."""
        for key, e in self.ex.items():
            rr = e.get("rerun")
            if not rr:
                continue
            head = f"## {TITLES[key]}"
            for i, sec in enumerate(self.sections):
                if sec.startswith(head):
                    la = e.get("load_average") or [0, 0]
                    note = (f"*Re-run on {rr['date']} at commit {rr['git']} (load average {la[0]:.1f} at its start), "
                            "after the full run the header describes; the other sections are from that run.*")
                    self.sections[i] = sec.replace(head, head + "\n\n" + note, 1)

    def write(self):
        r = self.res
        m = r["machine"]
        self.seek()
        self.orc_alt()
        self.program("parquet_alt",
                     "The same layout in Parquet (bench/iosched generates it: 128 and 400 random int64/float64 "
                     "columns), scand (in-process server, coalescing off / static 4 MiB / adaptive) against pyarrow's "
                     "S3 filesystem with pre_buffer True/False, on versitygw behind toxiproxy "
                     f"(+{r['latency_ms']} ms); GETs counted by its own proxy; and its memory line (16 concurrent "
                     "full scans against scand's --io-memory).", self.parse_parquet_alt)
        self.throughput()
        self.program("sendpath",
                     "scand's two DoGet send paths, stock (arrow-go's Flight writer) and zero-copy, with Go Flight "
                     "clients over loopback: server CPU seconds per GB of Arrow IPC sent, bytes allocated per byte "
                     "sent, and throughput; then the transport floor: 16 uncompressed int64 columns into stock clients "
                     "against a bare loopback TCP sender of the same bytes (see docs/send-path.md).", self.parse_sendpath)
        self.concurrency()
        self.program("orc_decode",
                     "Single-core decode throughput of scand's ORC reader against pyarrow.orc on the same files "
                     "(generated ints, doubles, strings, nested with zlib, zstd and snappy; the ORC examples of the "
                     "test corpus when present).", self.parse_orc_decode)
        self.security()
        self.program("filter",
                     "Filters (ScanRequest.filter) on a hive-partitioned events data set sorted by time, on versitygw "
                     f"behind toxiproxy (+{r['latency_ms']} ms): 0.01 / 1 / 10 / 100 % of the rows selected on the sort "
                     "column, on an unsorted column and on the partition column, scand (with and without its metadata "
                     "cache) against pyarrow.dataset on the same S3 and DuckDB on local copies, turns interleaved; "
                     "GETs counted per object by the program's own proxy; targets (a) partition pruning reads nothing "
                     "of pruned files, (b) selective time ranges fetch at most 2x the matching row groups and run in "
                     "at most half pyarrow's time, (c) a 100 % filter costs at most 5 %.", self.parse_filter)
        self.program("scaleout",
                     "An IO-bound scan of 48 endpoints from versitygw with 1, 2 and 3 replicas (--peers), each "
                     "replica behind its own toxiproxy proxy with a bandwidth toxic (its network link); the reader "
                     "reads every endpoint from its first location in parallel. Targets: 2 replicas at most 0.6x of "
                     "1, 3 at most 0.45x; metadata cache hit rate of repeated scans with 3 replicas at least 90 % "
                     "(see docs/scale-out.md).", lambda e, out: [])

        self.mark_reruns()
        total = r.get("total_seconds")
        whole = ""
        if r.get("setup_seconds") is not None:
            whole = (f" With the build, tools and venv before them ({r['setup_seconds']:.0f} s), the command took "
                     f"{(r['setup_seconds'] + total) / 60:.1f} minutes.")
        out = ["# Benchmarks", "",
               "<!-- GENERATED by bench/report.py from docs/benchmarks/results.json (one run of `bash scripts/bench.sh`)."
               " Do not edit by hand: run `make bench` to regenerate. -->", "",
               f"One run of `bash scripts/bench.sh` (BENCH_SCALE={r['scale']:g}) on {m['date']}, "
               f"the experiments took {total / 60:.1f} minutes.{whole} Every figure below comes from that run; ratios compare scand with the "
               "peer measured in the same run. Times are min / **median** / max over the repeats.", "",
               "## Headline", ""]
        if self.headline:
            out.append(table(["experiment", "measure", "scand", "peer", "ratio"], self.headline, "llrrr"))
            out.append("")
            out.append("Ratios: \"faster\" = peer time / scand time; MB/s ratios = scand / peer (above 1: scand "
                       "ahead); RSS ratio = scand / peer (below 1: scand uses less).")
        else:
            out.append("No experiment produced a comparison in this run.")
        out.append("")
        out.append("**Where scand is behind its peer:**")
        out.append("")
        if self.behind:
            for exp, text in self.behind:
                out.append(f"- [{exp}](#{anchor(exp)}): {text}")
        else:
            out.append("- Nowhere in this run (within 10%).")
        out.append("")
        if self.findings:
            out.append("**Other findings of this run:**")
            out.append("")
            for exp, text in self.findings:
                out.append(f"- [{exp}](#{anchor(exp)}): {text}")
            out.append("")
        if self.not_run:
            out.append("**Not run:**")
            out.append("")
            for k, why in self.not_run:
                out.append(f"- [{TITLES[k]}](#{anchor(TITLES[k])}): {why}")
            out.append("")
        out += ["## Machine and versions", "",
                table(["", ""], [
                    ["CPUs (nproc)", m["nproc"]], ["CPU", m["cpu"]], ["memory", size(m["memory_bytes"])],
                    ["kernel", m["kernel"]], ["Go", m["go"]], ["Python", m["python"]], ["pyarrow", m["pyarrow"]],
                    ["matplotlib", m["matplotlib"]], ["scand", m["scand"]], ["commit", m["git"]],
                    ["date", m["date"]]], "ll"), "",
                "The machine is small (2 cores): servers, clients and the S3 stand-ins share them, so absolute "
                "figures are low and the ratios are what carries over. S3 is versitygw (a local S3 gateway) behind "
                f"toxiproxy adding {r['latency_ms']} ms to every response; bandwidth is loopback's.", ""]
        out += ["## Scale", "",
                f"BENCH_SCALE={r['scale']:g} (the default is 1; sizes below are at this run's scale):", ""]
        for k, v in r.get("scaling", {}).items():
            if k != "BENCH_SCALE":
                out.append(f"- {k}: {v}")
        out += ["", "Phase times (s): " + ", ".join(f"{k} {v.get('seconds', 0):.0f}" for k, v in self.ex.items()) +
                f"; data generation {r.get('data_seconds', 0):.0f}.", "",
                "Load average (1 min) at the start and end of each phase — a figure well above the 2 cores means "
                "something else was running on the machine and the timings of that phase are noisy: " +
                ", ".join(f"{k} {v['load_average'][0]:.1f}/{v['load_average'][1]:.1f}" for k, v in self.ex.items()
                          if v.get("load_average")) + ".", ""]
        out += [x + "\n" for x in self.sections]
        out += ["## Reproduce", "",
                "```sh\nmake bench                 # = bash scripts/bench.sh\nBENCH_SCALE=0.5 make bench # smaller files\n"
                "```", "",
                "Results of the run: `docs/benchmarks/results.json`; logs of the servers: `.tools/bench-run/`. "
                "The suite: `bench/suite/` (experiments 1, 2, 4, 6 and the pyarrow Flight server), "
                "`bench/iosched`, `bench/sendpath`, `bench/orc`, `bench/filter`; this report: `bench/report.py`.", ""]
        self.md_path.write_text("\n".join(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", default=str(REPO / "docs" / "benchmarks" / "results.json"))
    ap.add_argument("--md", default=str(REPO / "docs" / "benchmarks.md"))
    ap.add_argument("--plots", default=str(REPO / "docs" / "benchmarks"))
    args = ap.parse_args()
    res = json.loads(Path(args.results).read_text())
    plots = Path(args.plots)
    plots.mkdir(parents=True, exist_ok=True)
    for old in plots.glob("*.png"):
        old.unlink()
    md = Path(args.md)
    Report(res, plots, md).write()
    print(f"wrote {md} and {len(list(plots.glob('*.png')))} plots in {plots}")


if __name__ == "__main__":
    main()
