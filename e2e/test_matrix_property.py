"""Matrix property test of projection: for random combinations of

  layout      one file; many files, an endpoint per row group (split_bytes 1);
              hive partitions (pq.write_to_dataset(partition_cols=...) or
              key=value directories written by hand, one or two keys, string
              and int32 values); packed small files (many whole files in one
              endpoint, the default split bytes)
  projection  all columns; top-level scalars; nested struct fields
              ("s.x", "s.t.z", "s.t", a struct named whole and by a path);
              list, list-of-struct and map columns, and paths through a list
              of structs ("ls.p"); partition columns; in a random order, now
              and then one named twice
  filter      none; a comparison on a scalar column (filtergen's leaves), on a
              nested struct field, or on a partition column, projected or not
  format      Parquet (small row groups), ORC, or both in one scan (files of
              either format, many and packed layouts: the scan's types are the
              first file's, pyarrow's ORC list<item> against Parquet's
              list<element>)
  store       local disk, S3 (versitygw)

scand's answer read by a stock pyarrow.flight client, every endpoint in turn,
must equal pyarrow.dataset's on the same files:

  - the FlightInfo's schema equals every stream's schema, metadata included;
  - it equals pyarrow's (metadata aside) after scand's projection rule
    (scandlib.project: a dotted path keeps its struct, pruned to the fields
    named, where pyarrow would return a flat column);
  - the rows are pyarrow's (compared sorted: layouts differ in file order).

The first 16 cases cover every layout x format x store once; the rest are
drawn at random. Each case forces one kind of projection in turn (top-level,
nested, list, map, partition) and adds random others; half the hive cases name
a nested path besides.

Environment: SCAND_MATRIX_SEED (default 20261202), SCAND_MATRIX_CASES (default
64, about half of them on S3: the CI size, some 20 s; with the planner's old
projection of hive scans, where a nested path named with partitions was left
out of the FlightInfo's schema but not out of the streams, 10 of these 64
cases fail, 4 of the 34 local ones; with the tickets' old disregard of a
list's element name, 3 mixed-format cases, 1 local), SCAND_MATRIX_CASE=i runs
case i alone (what a failure says to rerun). The S3 half is skipped without
versitygw (scripts/install-tools.sh).
"""

from __future__ import annotations

import itertools
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.flight as flight
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

import filtergen as fg
from scandlib import call_options, command, grpc_code, grpc_message, normalize, normalize_schema, project, read_stream, \
    same_value

SEED = int(os.environ.get("SCAND_MATRIX_SEED", "20261202"))
CASES = int(os.environ.get("SCAND_MATRIX_CASES", "64"))
ONLY = os.environ.get("SCAND_MATRIX_CASE")

LAYOUTS = ["one", "many", "hive", "packed"]
FORMATS = ["parquet", "orc"]
STORES = ["local", "s3"]
COVER = list(itertools.product(LAYOUTS, FORMATS, STORES))  # the first cases, in this order
KINDS = ["top", "nested", "list", "map", "partition"]

STRUCT_T = pa.struct([("x", pa.int64()), ("y", pa.string()),
                      ("t", pa.struct([("z", pa.float64()), ("w", pa.string())]))])
LIST_T = pa.list_(pa.int64())
LIST_STRUCT_T = pa.list_(pa.struct([("p", pa.int64()), ("q", pa.string())]))
MAP_T = pa.map_(pa.string(), pa.int64())
NESTED = {"s": STRUCT_T, "l": LIST_T, "ls": LIST_STRUCT_T, "m": MAP_T}
NESTED_PATHS = ["s.x", "s.y", "s.t", "s.t.z", "s.t.w", "s", "ls.p", "ls.q"]
WORDS = ["a", "b", "ab", "z", "é", "日本", "x y"]
# Partition keys: a string key (one value with a space, URL-encoded in the
# path) and an int32 one.
PART_VALUES = {"region": ["eu", "us", "eu west"], "day": [1, 2, 3]}


@dataclass
class Case:
    index: int
    layout: str
    fmt: str
    store: str
    scalars: list  # filtergen.Column
    parts: list  # partition keys
    columns: list | None = None
    pred: object = None
    split_bytes: int = 0
    files: list = field(default_factory=list)  # local paths
    dirname: str = ""
    scan_path: str = ""

    def describe(self) -> str:
        return (f"case {self.index} (SCAND_MATRIX_SEED={SEED} SCAND_MATRIX_CASE={self.index}): {self.layout}, {self.fmt}, "
                f"{self.store}, {len(self.files)} file(s), split_bytes {self.split_bytes or 'default'}\n"
                f"  scalar columns: " + "; ".join(str(c) for c in self.scalars) +
                f"\n  partitions: {self.parts}\n  columns: {self.columns}\n  filter: {self.pred.sql() if self.pred else None}")


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------

def nested_values(name: str, n: int, rnd: random.Random) -> list:
    def maybe(v, frac=0.1):
        return None if rnd.random() < frac else v

    def word():
        return maybe(rnd.choice(WORDS))

    out = []
    for _ in range(n):
        if name == "s":
            out.append(maybe({"x": maybe(rnd.randint(-50, 50)), "y": word(),
                              "t": maybe({"z": maybe(rnd.choice([rnd.uniform(-10, 10), 0.5, float("nan")])), "w": word()})}))
        elif name == "l":
            out.append(maybe([maybe(rnd.randint(0, 9)) for _ in range(rnd.randint(0, 3))]))
        elif name == "ls":
            out.append(maybe([maybe({"p": maybe(rnd.randint(0, 9)), "q": word()}) for _ in range(rnd.randint(0, 3))]))
        else:
            keys = rnd.sample(WORDS, rnd.randint(0, 3))
            out.append(maybe([(k, maybe(rnd.randint(0, 99))) for k in keys]))
    return out


def make_table(case: Case, rid0: int, n: int, rnd: random.Random, spaces: dict) -> pa.Table:
    cols = {"rid": pa.array(range(rid0, rid0 + n), pa.int64())}
    for c in case.scalars:
        cols[c.name] = pa.array(fg.column_values(c, spaces[c.name], n, rnd), c.type)
    for name, t in NESTED.items():
        cols[name] = pa.array(nested_values(name, n, rnd), t)
    for k in case.parts:
        cols[k] = pa.array([rnd.choice(PART_VALUES[k]) for _ in range(n)], pa.int32() if k == "day" else pa.string())
    return pa.table(cols)


def fmt_of(path: Path) -> str:
    return path.suffix[1:]


def write_file(case: Case, table: pa.Table, path: Path, rnd: random.Random) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt_of(path) == "orc":
        po.write_table(table, path, stripe_size=4096, batch_size=64)
    else:
        pq.write_table(table, path, row_group_size=rnd.choice([8, 20, 50]))
    case.files.append(path)


def write_case(case: Case, root: Path, rnd: random.Random) -> None:
    """Writes the case's files under root/dirname (the local store, or the
    S3 mirror's local side)."""
    spaces = {c.name: fg.ValueSpace(c, rnd) for c in case.scalars}
    base = root / case.dirname
    ext = case.fmt
    if case.layout == "one":
        write_file(case, make_table(case, 0, rnd.randint(30, 150), rnd, spaces), base / f"f0.{ext}", rnd)
        return
    if case.layout in ("many", "packed"):
        rid = 0
        for i in range(rnd.randint(2, 4) if case.layout == "many" else rnd.randint(3, 8)):
            n = rnd.randint(1, 80) if case.layout == "packed" else rnd.randint(30, 120)
            if case.fmt == "mixed":
                ext = rnd.choice(FORMATS)
            write_file(case, make_table(case, rid, n, rnd, spaces), base / f"f{i}.{ext}", rnd)
            rid += n
        return
    # hive
    whole = make_table(case, 0, rnd.randint(60, 200), rnd, spaces)
    if case.fmt == "parquet" and rnd.random() < 0.5:
        pq.write_to_dataset(whole, base, partition_cols=case.parts, basename_template="part-{i}.parquet",
                            row_group_size=rnd.choice([8, 20, 50]))
        case.files.extend(sorted(base.rglob("*.parquet")))
        return
    keys = [tuple(r[k] for k in case.parts) for r in whole.select(case.parts).to_pylist()]
    for combo in sorted(set(keys), key=str):
        mask = pa.array([k == combo for k in keys])
        part = whole.filter(mask).drop_columns(case.parts)
        sub = "/".join(f"{k}={str(v).replace(' ', '%20')}" for k, v in zip(case.parts, combo))
        files = rnd.randint(1, 2)
        step = -(-part.num_rows // files)
        for j in range(files):
            chunk = part.slice(j * step, step)
            if chunk.num_rows:
                write_file(case, chunk, base / sub / f"part-{j}.{ext}", rnd)


# --------------------------------------------------------------------------
# Projections and filters
# --------------------------------------------------------------------------

def pick_columns(case: Case, rnd: random.Random) -> list | None:
    if rnd.random() < 0.12:
        return None  # all columns
    pools = {
        "top": ["rid"] + [c.name for c in case.scalars],
        "nested": NESTED_PATHS,
        "list": ["l", "ls"],
        "map": ["m"],
        "partition": list(case.parts),
    }
    forced = KINDS[case.index % len(KINDS)]
    if not pools[forced]:
        forced = "nested"
    cols = [rnd.choice(pools[forced])]
    if case.parts and rnd.random() < 0.5:
        cols.append(rnd.choice(NESTED_PATHS))  # partitions and nested paths together: the filter test never did
    everything = [c for pool in pools.values() for c in pool]
    cols += rnd.sample(everything, rnd.randint(0, min(4, len(everything))))
    if rnd.random() < 0.1:
        cols.append(rnd.choice(cols))  # named twice
    rnd.shuffle(cols)
    return cols


@dataclass
class NestedCmp:
    """A comparison on the nested field s.x."""
    op: str
    lit: int

    OPS = {"<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal, "=": pc.equal, "!=": pc.not_equal}

    def sql(self) -> str:
        return f"s.x {self.op} {self.lit}"

    def arrow_sql(self) -> pc.Expression:
        return self.OPS[self.op](pc.field("s", "x"), self.lit)


@dataclass
class PartitionCmp:
    key: str
    op: str
    value: object

    def sql(self) -> str:
        return f"{self.key} {self.op} " + (f"'{self.value}'" if isinstance(self.value, str) else str(self.value))

    def arrow_sql(self) -> pc.Expression:
        return NestedCmp.OPS[self.op](pc.field(self.key), self.value)


def pick_filter(case: Case, tables: list, rnd: random.Random):
    if rnd.random() < 0.45:
        return None
    choices = ["scalar", "scalar", "nested"] + (["partition"] if case.parts else [])
    what = rnd.choice(choices)
    if what == "nested":
        return NestedCmp(rnd.choice(list(NestedCmp.OPS)), rnd.randint(-40, 40))
    if what == "partition":
        k = rnd.choice(case.parts)
        return PartitionCmp(k, rnd.choice(["=", "!=", ">="] if k == "day" else ["=", "!="]), rnd.choice(PART_VALUES[k]))
    col = rnd.choice(case.scalars)
    data = [v for t in tables for v in t.column(col.name).to_pylist()]
    return fg.random_leaf(rnd, col, fg.ValueSpace(col, rnd), data)


def make_case(i: int) -> tuple[Case, random.Random]:
    rnd = random.Random(f"{SEED}-{i}")
    if i < len(COVER):
        layout, fmt, store = COVER[i]
    else:
        layout = rnd.choice(LAYOUTS)
        fmt = rnd.choice(FORMATS + (["mixed"] if layout in ("many", "packed") else []))
        store = rnd.choice(STORES)
    scalars = fg.random_columns(rnd, fmt != "parquet")[: rnd.randint(1, 3)]
    parts = []
    if layout == "hive":
        parts = rnd.sample(list(PART_VALUES), rnd.randint(1, 2))
    case = Case(i, layout, fmt, store, scalars, parts, dirname=f"matrix{SEED}_{i}")
    if layout == "many":
        case.split_bytes = 1
    elif layout in ("one", "hive"):
        case.split_bytes = rnd.choice([0, 1])
    return case, rnd


# --------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------

def reference(case: Case, root: Path) -> pa.Table:
    """pyarrow.dataset's answer: the whole dataset, filtered in memory, then
    projected by scand's rule (scandlib.project)."""
    if case.fmt == "mixed":
        # One dataset takes one format: read each file, and cast them all to
        # the first's schema, as scand unifies them (docs/schemas.md).
        tables = [ds.dataset(str(f), format=fmt_of(f)).to_table() for f in sorted(case.files, key=str)]
        whole = pa.concat_tables([t.cast(tables[0].schema) for t in tables])
    else:
        src = str(case.files[0]) if case.layout == "one" else str(root / case.dirname)
        whole = ds.dataset(src, format=case.fmt, partitioning="hive" if case.parts else None).to_table()
    if case.pred is not None:
        whole = whole.filter(case.pred.arrow_sql())
    return project(whole, case.columns) if case.columns is not None else whole


def sorted_rows(t: pa.Table) -> list:
    rows = [tuple(r.values()) for r in normalize(t).to_pylist()]
    return sorted(rows, key=repr)


def compare(case: Case, info: flight.FlightInfo, streams: list[pa.Table], expected: pa.Table) -> list[str]:
    problems = []
    for i, t in enumerate(streams):
        if not t.schema.equals(info.schema, check_metadata=True):
            problems.append(f"stream {i} of {len(streams)} has another schema than the FlightInfo's:\n"
                            f"    FlightInfo: {info.schema.to_string(show_schema_metadata=False)!r}\n"
                            f"    stream:     {t.schema.to_string(show_schema_metadata=False)!r}")
    want, got = normalize_schema(expected.schema), normalize_schema(info.schema)
    if want != got:
        problems.append(f"FlightInfo schema differs from pyarrow.dataset's:\n    pyarrow: {want.to_string()!r}\n"
                        f"    scand:   {got.to_string()!r}")
        return problems
    if problems:
        return problems
    got_rows = sorted_rows(pa.concat_tables(streams) if streams else info.schema.empty_table())
    want_rows = sorted_rows(expected)
    if len(got_rows) != len(want_rows):
        problems.append(f"{len(got_rows)} rows, pyarrow.dataset {len(want_rows)}")
    else:
        for g, w in zip(got_rows, want_rows):
            if not same_value(list(g), list(w)):
                problems.append(f"rows differ: first differing (sorted) row: scand {g!r}, pyarrow {w!r}")
                break
    return problems


def run_case(client: flight.FlightClient, case: Case, root: Path) -> list[str]:
    req = {"paths": [case.scan_path]}
    if case.columns is not None:
        req["columns"] = case.columns
    if case.pred is not None:
        req["filter"] = case.pred.sql()
    if case.split_bytes:
        req["split_bytes"] = case.split_bytes
    try:
        info = client.get_flight_info(command(req), options=call_options())
    except (flight.FlightError, pa.ArrowException) as e:
        return [f"GetFlightInfo failed: {grpc_code(e)}: {grpc_message(e)}"]
    streams = []
    for i, ep in enumerate(info.endpoints):
        try:
            t, _, _, _ = read_stream(client.do_get(ep.ticket, options=call_options()))
        except (flight.FlightError, pa.ArrowException) as e:
            return [f"DoGet of endpoint {i} of {len(info.endpoints)} failed: {grpc_code(e)}: {grpc_message(e)}"]
        streams.append(t)
    return compare(case, info, streams, reference(case, root))


class Tally:
    def __init__(self, store: str):
        self.store = store
        self.cases = self.endpoints = self.rows = 0
        self.by_layout: dict[str, int] = {}
        self.failures: list[str] = []

    def summary(self) -> str:
        layouts = ", ".join(f"{k} {v}" for k, v in sorted(self.by_layout.items()))
        return f"projection matrix ({self.store}), seed {SEED}: {self.cases} cases ({layouts}), {len(self.failures)} failed"


def cases_for(store: str) -> list[int]:
    indexes = [int(ONLY)] if ONLY else range(CASES)
    return [i for i in indexes if make_case(i)[0].store == store]


@pytest.mark.timeout(120 + CASES * 2)
@pytest.mark.parametrize("store", STORES)
def test_projection_matrix_equals_pyarrow_dataset(store, request, capsys):
    indexes = cases_for(store)
    if not indexes:
        pytest.skip(f"no {store} case among those chosen")
    if store == "s3":
        mirror = request.getfixturevalue("s3_mirror")  # skips without versitygw
        server = request.getfixturevalue("s3_server")
        root = mirror.root
    else:
        server = request.getfixturevalue("gen_server")
        root = request.getfixturevalue("gen_root")
    client = server.client()
    tally = Tally(store)
    started = time.monotonic()
    try:
        for i in indexes:
            case, rnd = make_case(i)
            write_case(case, root, rnd)
            tables = [ds.dataset(str(f), format=fmt_of(f)).to_table() for f in case.files]
            case.columns = pick_columns(case, rnd)
            case.pred = pick_filter(case, tables, rnd)
            rel = case.dirname + ("/" + case.files[0].name if case.layout == "one" else "/")
            if store == "s3":
                for f in case.files:
                    mirror.put(str(f.relative_to(root)), f, local=False)
                case.scan_path = mirror.uri(rel)
            else:
                case.scan_path = rel
            tally.cases += 1
            tally.by_layout[case.layout] = tally.by_layout.get(case.layout, 0) + 1
            problems = run_case(client, case, root)
            if problems:
                tally.failures.append(case.describe() + "\n  " + "\n  ".join(problems))
    finally:
        client.close()
    with capsys.disabled():
        print(f"\n{tally.summary()} in {time.monotonic() - started:.1f} s")
    assert not tally.failures, (f"{len(tally.failures)} of {tally.cases} cases differ (rerun one with "
                                f"SCAND_MATRIX_CASE=i):\n\n" + "\n\n".join(tally.failures[:8]))
