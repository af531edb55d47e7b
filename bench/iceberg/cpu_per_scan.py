"""Server CPU per full scan: `scand serve` (BINARY) on the deleted and the
undeleted table in turn, TURNS times, each scan's server CPU from /proc and
its wall time (a stock pyarrow.flight client, endpoints in order); with
SECONDS, then a CPU profile (OUT.pprof) of that long over scans of WHICH.

    python bench/iceberg/cpu_per_scan.py BINARY OUT [TURNS [SECONDS [WHICH]]]

Defaults to bench/iceberg's tables under /tmp/scand-bench-iceberg (written by
run.py); ROOT and TABLES ('{"undeleted": ..., "deleted": ...}', paths under
ROOT) name others, e.g. bench/delta's: ROOT=/tmp/scand-bench-delta
TABLES='{"undeleted": "base", "deleted": "dv"}'. On a shared machine CPU per
scan varies far less than wall time."""
import json, os, subprocess, sys, time, socket, threading, urllib.request
import pyarrow.flight as flight

binary, out = sys.argv[1], sys.argv[2]
turns = int(sys.argv[3]) if len(sys.argv) > 3 else 4
root = os.environ.get("ROOT", "/tmp/scand-bench-iceberg")
def port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
p, mp = port(), port()
proc = subprocess.Popen([binary, "serve", "--root", root, "--listen", f"127.0.0.1:{p}", "--metrics-listen", f"127.0.0.1:{mp}", "--pprof"],
                        stdout=open(out + ".log", "w"), stderr=subprocess.STDOUT)
try:
    for _ in range(100):
        try:
            c = flight.connect(f"grpc://127.0.0.1:{p}"); list(c.list_actions()); break
        except Exception:
            time.sleep(0.2)
    def cpu():
        with open(f"/proc/{proc.pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
    def scan(table):
        info = c.get_flight_info(flight.FlightDescriptor.for_command(json.dumps({"table": table})))
        rows = 0
        for ep in info.endpoints:
            r = c.do_get(ep.ticket)
            for chunk in r:
                rows += chunk.data.num_rows
        return rows
    tables = json.loads(os.environ["TABLES"]) if "TABLES" in os.environ else {"undeleted": "local/wh/bench/t", "deleted": "local/spark/db/t_del"}
    for t in tables.values():
        scan(t)
    res = {k: [] for k in tables}
    for i in range(turns):
        for k, t in tables.items():
            c0, w0 = cpu(), time.perf_counter()
            rows = scan(t)
            res[k].append((cpu() - c0, time.perf_counter() - w0, rows))
    for k, v in res.items():
        print(k, "cpu s", sorted(round(x[0], 2) for x in v), "wall s", sorted(round(x[1], 2) for x in v), "rows", v[0][2])
    if len(sys.argv) > 4:
        secs = int(sys.argv[4])
        def prof():
            with urllib.request.urlopen(f"http://127.0.0.1:{mp}/debug/pprof/profile?seconds={secs}") as r:
                open(out + ".pprof", "wb").write(r.read())
        th = threading.Thread(target=prof); th.start()
        end = time.time() + secs
        while time.time() < end:
            scan(tables[sys.argv[5] if len(sys.argv) > 5 else "deleted"])
        th.join()
finally:
    proc.terminate(); proc.wait()
