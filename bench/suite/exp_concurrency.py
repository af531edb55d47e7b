"""Experiment 6, concurrency and memory: 1, 4 and 16 concurrent clients, each
scanning one whole tput file (client i scans file i mod NFILES), all at once.

  scand      a fresh `scand serve` per level with the default --io-memory
             (1 GiB), then once more with 16 clients under a tight budget
             (--io-memory 256MiB, ctx.io_memory); the clients are stock
             pyarrow.flight clients in threads of this process. Peak RSS of
             the scand process: VmHWM from /proc/PID/status (reset with
             clear_refs after a warm-up scan), and the largest VmRSS sampled
             every 20 ms; scand_io_memory_peak_bytes beside; server CPU
             seconds per GB of Arrow data. A level in which scand sends no row
             for STALL_SECONDS is recorded as a stall, with the functions its
             goroutines were blocked in (SIGQUIT stack dump in its log).
  pyarrow    a fresh Python process per level (this file, `peer` mode) with
             N threads, each pq.ParquetFile(path, pre_buffer=True)
             .iter_batches() with the batches dropped as they arrive (a
             streaming consumer, like the Flight clients). Its peak RSS
             (VmHWM, and sampled VmRSS) covers reading and decoding; it has
             no memory budget.
  peer       the pyarrow.dataset Flight peer of experiment 4
             (pyarrow_flight_server.py), fresh per level, read by N stock
             pyarrow.flight clients in threads like scand; peak RSS of the
             peer's server process (VmHWM, reset after a warm-up scan).

Aggregate throughput: Arrow MB of all clients / wall time of the level.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

LEVELS = (1, 4, 16)


def peer_main(n: int, paths: list[str]) -> None:
    """`python exp_concurrency.py peer N PATH...`: N threads reading with
    pre_buffer=True; prints one JSON line."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    results = [None] * n
    errors = []

    def worker(i):
        try:
            f = pq.ParquetFile(paths[i % len(paths)], pre_buffer=True)
            rows = nbytes = 0
            for b in f.iter_batches():
                rows += b.num_rows
                nbytes += b.nbytes
            results[i] = (rows, nbytes)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    # Warm-up: one file, then reset the high-water mark.
    worker(0)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    import resource
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = ru0.ru_utime + ru0.ru_stime
    t = time.perf_counter()
    ths = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for th in ths:
        th.start()
    for th in ths:
        th.join(600)
    wall = time.perf_counter() - t
    import resource
    ru = resource.getrusage(resource.RUSAGE_SELF)
    status = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmHWM:", "VmRSS:")):
                k, v = line.split(":", 1)
                status[k] = int(v.split()[0]) * 1024
    print(json.dumps({"wall": wall, "rows": sum(r[0] for r in results if r), "nbytes": sum(r[1] for r in results if r),
                      "vmhwm": status.get("VmHWM"), "errors": errors, "cpu": ru.ru_utime + ru.ru_stime - cpu0, "pyarrow": pa.__version__,
                      "pool": pa.default_memory_pool().backend_name}), flush=True)


STALL_SECONDS = 20


def scand_level(ctx, n: int, rel: list[str], root, io_memory: str | None) -> dict:
    """n concurrent stock Flight clients against a fresh scand. A scan that
    sends no row for STALL_SECONDS while clients still wait is a stall:
    scand is then sent SIGQUIT (Go prints every goroutine's stack into its
    log) and the functions the goroutines were blocked in are recorded."""
    import signal

    import pyarrow.flight as flight

    import lib
    args = ["--io-memory", io_memory] if io_memory else []
    name = f"conc{n}" + (f"-{io_memory}" if io_memory else "")
    srv = lib.Scand(ctx.work, name, root.parent, args=args).start()
    try:
        idle = lib.proc_status(srv.pid).get("VmRSS")
        c = flight.FlightClient(srv.location)
        lib.flight_scan(c, {"paths": rel[:1]})  # warm-up
        c.close()
        warm = lib.proc_status(srv.pid).get("VmRSS")
        lib.reset_hwm(srv.pid)
        out = [None] * n
        errs = []

        def client(i):
            try:
                cl = flight.FlightClient(srv.location)
                r = lib.flight_scan(cl, {"paths": [rel[i % len(rel)]]}, timeout=300)
                cl.close()
                out[i] = (r["rows"], r["nbytes"])
                ends[i] = time.perf_counter()
            except Exception as e:  # noqa: BLE001
                errs.append(repr(e))

        ends = [0.0] * n
        stall = None
        cpu0 = lib.cpu_seconds(srv.pid)
        with lib.RSSSampler(srv.pid) as sampler:
            t = time.perf_counter()
            ths = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(n)]
            for th in ths:
                th.start()
            rows_seen, last_change = -1.0, time.monotonic()
            end = time.monotonic() + 300
            while any(th.is_alive() for th in ths) and time.monotonic() < end:
                tick = time.monotonic() + 1  # wait 1 s at most, less when all are done
                for th in ths:
                    th.join(max(0.0, tick - time.monotonic()))
                if not any(th.is_alive() for th in ths):
                    break
                try:
                    rows_now = srv.metric("scand_rows_sent_total")
                except OSError:
                    continue
                if rows_now != rows_seen:
                    rows_seen, last_change = rows_now, time.monotonic()
                elif time.monotonic() - last_change > STALL_SECONDS:
                    peak = srv.metric("scand_io_memory_peak_bytes")
                    budget = srv.metric("scand_io_memory_budget_bytes")
                    waiting = sum(th.is_alive() for th in ths)
                    offset = srv.proc.log_path.stat().st_size
                    srv.proc.proc.send_signal(signal.SIGQUIT)
                    try:
                        srv.proc.proc.wait(10)
                    except Exception:  # noqa: BLE001
                        pass
                    stall = {"stalled": True, "seconds_without_rows": STALL_SECONDS,
                             "after_seconds": time.perf_counter() - t, "clients_waiting": waiting,
                             "io_memory_peak": peak, "io_memory_budget": budget,
                             "vmhwm": lib.proc_status(srv.pid).get("VmHWM") or sampler.max_rss,
                             "rss_sampled_max": sampler.max_rss,
                             "blocked_in": lib.goroutine_dump_summary(srv.proc.log_path, offset),
                             "log": str(srv.proc.log_path.relative_to(lib.REPO))}
                    break
            wall = (max(ends) if all(ends) else time.perf_counter()) - t
        cpu = lib.cpu_seconds(srv.pid) - cpu0
        for th in ths:
            th.join(30)
        if stall:
            lib.log(f"concurrency: scand STALLED with {n} clients (--io-memory {io_memory or 'default'}): no rows for "
                    f"{STALL_SECONDS} s; goroutines blocked in {stall['blocked_in']}")
            return stall
        if any(th.is_alive() for th in ths):
            raise RuntimeError(f"scand, {n} clients: clients still running after 300 s")
        if errs:
            raise RuntimeError(f"scand, {n} clients: {errs[0]}")
        nbytes = sum(o[1] for o in out)
        return {"wall": wall, "arrow_bytes": nbytes, "MBps": nbytes / 1e6 / wall, "rows": sum(o[0] for o in out),
                "cpu_s_per_GB": cpu / (nbytes / 1e9),
                "vmhwm": lib.proc_status(srv.pid).get("VmHWM"), "rss_sampled_max": sampler.max_rss,
                "rss_idle": idle, "rss_after_warmup": warm,
                "io_memory_peak": srv.metric("scand_io_memory_peak_bytes"),
                "io_memory_budget": srv.metric("scand_io_memory_budget_bytes")}
    finally:
        srv.stop()


def flight_peer_level(ctx, n: int, rel: list[str], root) -> dict:
    """n concurrent stock Flight clients against a fresh pyarrow.dataset
    Flight peer, each scanning one file."""
    import pyarrow.flight as flight

    import exp_throughput
    import lib
    proc, loc = exp_throughput.start_pyarrow_server(ctx, root.parent)
    try:
        c = flight.FlightClient(loc)
        lib.flight_scan(c, {"paths": rel[:1]})  # warm-up
        c.close()
        lib.reset_hwm(proc.pid)
        out, errs = [None] * n, []

        def client(i):
            try:
                cl = flight.FlightClient(loc)
                r = lib.flight_scan(cl, {"paths": [rel[i % len(rel)]]}, timeout=300)
                cl.close()
                out[i] = r["nbytes"]
            except Exception as e:  # noqa: BLE001
                errs.append(repr(e))
        cpu0 = lib.cpu_seconds(proc.pid)
        with lib.RSSSampler(proc.pid) as sampler:
            t = time.perf_counter()
            ths = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(n)]
            for th in ths:
                th.start()
            for th in ths:
                th.join(300)
            wall = time.perf_counter() - t
        if errs or any(th.is_alive() for th in ths):
            raise RuntimeError(f"Flight peer, {n} clients: {errs[0] if errs else 'still running after 300 s'}")
        nbytes = sum(out)
        return {"wall": wall, "arrow_bytes": nbytes, "MBps": nbytes / 1e6 / wall,
                "cpu_s_per_GB": (lib.cpu_seconds(proc.pid) - cpu0) / (nbytes / 1e9),
                "vmhwm": lib.proc_status(proc.pid).get("VmHWM"), "rss_sampled_max": sampler.max_rss}
    finally:
        proc.stop()


def pyarrow_level(n: int, files, deadline) -> dict:
    import lib
    cmd = [sys.executable, __file__, "peer", str(n), *[str(p) for p in files]]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lib._die_with_parent)
    try:
        with lib.RSSSampler(p.pid, max_seconds=300) as sampler:
            out_text, err_text = p.communicate(timeout=max(60.0, min(300.0, deadline.left() + 60)))
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise RuntimeError(f"pyarrow peer, {n} clients: timed out")
    if p.returncode != 0:
        raise RuntimeError(f"pyarrow peer, {n} clients: exit {p.returncode}: {err_text[-2000:]}")
    r = json.loads(out_text.strip().splitlines()[-1])
    if r["errors"]:
        raise RuntimeError(f"pyarrow peer, {n} clients: {r['errors'][0]}")
    return {"wall": r["wall"], "arrow_bytes": r["nbytes"], "MBps": r["nbytes"] / 1e6 / r["wall"],
            "rows": r["rows"], "vmhwm": r["vmhwm"], "rss_sampled_max": sampler.max_rss, "pool": r["pool"],
            "cpu_s_per_GB": r.get("cpu", 0) / (r["nbytes"] / 1e9) if r["nbytes"] else None}


def run(ctx) -> dict:
    import lib

    deadline = lib.Deadline(ctx.budget("concurrency"))
    files = ctx.tput_files
    root = files[0].parent
    rel = [f"{root.name}/{p.name}" for p in files]
    res = {"levels": [], "io_memory": "default", "files": len(files), "file_bytes_each": files[0].stat().st_size,
           "stall_seconds": STALL_SECONDS}

    def fmt(x):
        if x.get("stalled"):
            return "STALLED"
        return f"{x['MBps']:.0f} MB/s, peak RSS {x['vmhwm'] / 2**20:.0f} MiB"

    # The default budget at 1, 4 and 16 clients, then 16 clients under a
    # tight budget.
    plan = [(n, None) for n in LEVELS] + [(LEVELS[-1], ctx.io_memory)]
    for n, mem in plan:
        if deadline.expired():
            res["truncated"] = f"time budget spent before {n} clients (--io-memory {mem or 'default'})"
            break
        level = {"clients": n, "io_memory": mem or "default"}
        try:
            level["scand"] = scand_level(ctx, n, rel, root, mem)
        except Exception as e:  # noqa: BLE001
            level["scand"] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        if mem is None:
            try:
                level["pyarrow"] = pyarrow_level(n, files, deadline)
            except Exception as e:  # noqa: BLE001
                level["pyarrow"] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
            try:
                level["flight_peer"] = flight_peer_level(ctx, n, rel, root)
            except Exception as e:  # noqa: BLE001
                level["flight_peer"] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        res["levels"].append(level)
        lib.log(f"concurrency: {n:2d} clients, --io-memory {mem or 'default'}: scand "
                f"{fmt(level['scand']) if 'error' not in level['scand'] else level['scand']['error']}"
                + (f"; pyarrow pre_buffer {fmt(level['pyarrow']) if 'error' not in level['pyarrow'] else level['pyarrow']['error']}"
                   if "pyarrow" in level else "")
                + (f"; Flight peer {fmt(level['flight_peer']) if 'error' not in level['flight_peer'] else level['flight_peer']['error']}"
                   if "flight_peer" in level else ""))
    return res


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "peer":
    peer_main(int(sys.argv[2]), sys.argv[3:])
