"""Writes the ORC files of bench/orc with pyarrow (run by `go run ./bench/orc`).

usage: gen.py OUTDIR SCALE

Four datasets, each written with zlib, zstd and snappy (pyarrow's defaults
otherwise: 64 MiB stripes, 64 KiB compression blocks, RLE v2); SCALE 1.0
gives 60-100 MB of Arrow data per file. Values come from a fixed seed, so
every run writes the same files.

  ints     int64 wide random, int64 sequence (delta runs), int32 small range
           (repeats), int16 with 10% nulls
  doubles  float64 uniform, float64 with 2 decimals (repeats), float32 with
           10% nulls
  strings  low-cardinality words (dictionary encoded), unique ids (direct),
           free text of 0-60 bytes with 10% nulls (direct)
  nested   struct<a: int64, b: string, c: float64>, list<int64> (0-9
           elements), map<string, int32> (0-4 entries)
"""

import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as po

out = Path(sys.argv[1])
scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
out.mkdir(parents=True, exist_ok=True)

_seed = [1]


def rnd(n):
    """n uniform doubles in [0, 1), deterministic."""
    _seed[0] += 1
    return pc.random(n, initializer=_seed[0])


def rint(n, lo, hi, typ=pa.int64()):
    return pc.cast(pc.floor(pc.add(pc.multiply(rnd(n), hi - lo), lo)), typ)


def with_nulls(arr, rate=0.1):
    mask = pc.less(rnd(len(arr)), rate)
    return pc.if_else(mask, pa.scalar(None, arr.type), arr)


WORDS = pa.array(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
                  "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"] * 5)
WORDS = pc.binary_join_element_wise(WORDS, pc.cast(pa.array(range(len(WORDS))), pa.string()), "-")


def words(n):
    return WORDS.take(rint(n, 0, len(WORDS)))


def ints(n):
    return pa.table({
        "wide": rint(n, -(10 ** 12), 10 ** 12),
        "seq": pa.array(range(n), pa.int64()),
        "small": rint(n, 0, 1000, pa.int32()),
        "nullable": with_nulls(rint(n, -30000, 30000, pa.int16())),
    })


def doubles(n):
    return pa.table({
        "uniform": pc.multiply(rnd(n), 1e6),
        "prices": pc.round(pc.multiply(rnd(n), 100), 2),
        "f32": with_nulls(pc.cast(rnd(n), pa.float32())),
    })


def strings(n):
    ids = pc.binary_join_element_wise("user", pc.cast(rint(n, 0, 10 ** 12), pa.string()), "x", "-")
    text_words = [words(n) for _ in range(6)]
    k = rint(n, 0, 7)
    text = text_words[0]
    for i, w in enumerate(text_words[1:], 1):
        text = pc.if_else(pc.greater(k, i), pc.binary_join_element_wise(text, w, " "), text)
    text = pc.if_else(pc.equal(k, 0), "", text)
    return pa.table({"word": words(n), "id": ids, "text": with_nulls(text)})


def nested(n):
    st = pa.StructArray.from_arrays([rint(n, 0, 10 ** 9), words(n), rnd(n)], names=["a", "b", "c"])
    lens = rint(n, 0, 10, pa.int32())
    offs = pa.concat_arrays([pa.array([0], pa.int32()), pc.cumulative_sum(lens)])
    lst = pa.ListArray.from_arrays(offs, rint(offs[-1].as_py(), -1000, 1000))
    mlens = rint(n, 0, 5, pa.int32())
    moffs = pa.concat_arrays([pa.array([0], pa.int32()), pc.cumulative_sum(mlens)])
    m = moffs[-1].as_py()
    mp = pa.MapArray.from_arrays(moffs, words(m), rint(m, 0, 100, pa.int32()))
    return pa.table({"s": st, "l": lst, "m": mp})


DATASETS = {
    # name: (make, rows at scale 1, dictionary_key_size_threshold)
    "ints": (ints, 4_000_000, 0.0),
    "doubles": (doubles, 4_000_000, 0.0),
    "strings": (strings, 1_500_000, 0.5),  # the low-cardinality column gets a dictionary
    "nested": (nested, 600_000, 0.5),
}

files = []
for name, (make, rows, dict_threshold) in DATASETS.items():
    t = make(int(rows * scale))
    for codec in ("zlib", "zstd", "snappy"):
        path = out / f"{name}-{codec}.orc"
        po.write_table(t, path, compression=codec, dictionary_key_size_threshold=dict_threshold)
        files.append({"name": f"{name}-{codec}", "path": str(path), "rows": t.num_rows,
                      "file_bytes": path.stat().st_size})
json.dump(files, sys.stdout)
