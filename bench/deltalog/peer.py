"""bench/deltalog's helper: writes the benchmark's Delta tables with deltalake, and
times deltalake's own snapshot load as the peer, one turn per line read on stdin.

    peer.py gen DIR COMMITS FILES_PER_COMMIT CHECKPOINT_INTERVAL
    peer.py serve            (stdin: one table path per line; stdout: seconds)
"""
import sys
import time

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake


def gen(path, commits, per, interval):
    cfg = {"delta.checkpointInterval": str(interval)}
    for c in range(commits):
        rows = per * 4
        t = pa.table({
            "id": pa.array(range(c * rows, (c + 1) * rows), pa.int64()),
            "p": pa.array([f"k{(c * per + i // 4) % (per * 8)}" for i in range(rows)]),
            "v": pa.array([float(i) for i in range(rows)]),
        })
        write_deltalake(path, t, partition_by=["p"], mode="append", configuration=cfg if c == 0 else None)


def serve():
    for line in sys.stdin:
        path = line.strip()
        t0 = time.perf_counter()
        dt = DeltaTable(path)
        n = dt.get_add_actions(flatten=True).num_rows
        print(f"{time.perf_counter() - t0:.6f} {n}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        serve()
