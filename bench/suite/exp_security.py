"""Experiment 8, security: what TLS and token authentication cost. Two
`scand serve` processes on the same files: one plaintext with --auth none
(the loopback default), one with TLS (an ECDSA P-256 certificate made by
openssl for this run) and --auth tokens. Turns are interleaved: each repeat
scans plain, then secure, with a stock pyarrow.flight client.

Figures: the full scan of the tput files (the throughput experiment's), in
MB/s of Arrow data, and the latency of GetFlightInfo for those files
(footers cached after the warm-up: the cost is the call's own), both as
min/median/max. Target: the secure server no more than 10 % slower on the
full scan.

Also the CPU seconds each full scan costs, in the server process and in the
client (this process), since on a shared machine wall time is mostly other
sessions' load: on 2 loaded cores the scan's wall time is about the sum of
both sides' CPU, so a client whose TLS is slower than the server's shows up
as a slowdown of the server. The split says whose cost it is.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import time

import lib

TOKEN = "bench-token-0123456789"
LATENCY_CALLS = 40


def make_certs(d) -> None:
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "1", "-subj", "/CN=scand bench CA")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
            "-out", "server.csr", "-subj", "/CN=localhost")
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "1", "-extfile", "san.ext")


def start(ctx, name, root, args, location_of, call_opts, ca=None):
    import pyarrow.flight as flight
    port = lib.free_port()
    cmd = [lib.BIN / "scand", "serve", "--listen", f"127.0.0.1:{port}", "--root", root, "--log-level", "warn", *args]
    loc = location_of(port)

    def ready():
        c = flight.FlightClient(loc, tls_root_certs=ca) if ca else flight.FlightClient(loc)
        try:
            list(c.list_actions(options=call_opts))
        finally:
            c.close()
        return True
    return lib.Proc(f"scand-{name}", cmd, ctx.work / f"scand-{name}.log").start(ready), loc


def run(ctx) -> dict:
    import pyarrow.flight as flight

    deadline = lib.Deadline(ctx.budget("security"))
    files = ctx.tput_files
    root = files[0].parent.parent
    rel = [f"{files[0].parent.name}/{p.name}" for p in files]
    d = ctx.work / "security"
    d.mkdir(parents=True, exist_ok=True)
    make_certs(d)
    ids = {"identities": [{"name": "bench", "token_sha256": [hashlib.sha256(TOKEN.encode()).hexdigest()], "roots": ["."]}]}
    (d / "ids.json").write_text(json.dumps(ids))
    ca = (d / "ca.pem").read_bytes()
    plain_opts = flight.FlightCallOptions(timeout=300)
    secure_opts = flight.FlightCallOptions(timeout=300, headers=[(b"authorization", f"Bearer {TOKEN}".encode())])
    plain, plain_loc = start(ctx, "plain", root, [], lambda p: f"grpc://127.0.0.1:{p}", plain_opts)
    secure, secure_loc = start(ctx, "secure", root, ["--tls-cert", d / "server.pem", "--tls-key", d / "server.key",
                                                     "--auth", "tokens", "--identities", d / "ids.json"],
                               lambda p: f"grpc+tls://127.0.0.1:{p}", secure_opts, ca)
    try:
        clients = {"plain": (flight.FlightClient(plain_loc), plain_opts, plain.pid),
                   "TLS + tokens": (flight.FlightClient(secure_loc, tls_root_certs=ca), secure_opts, secure.pid)}
        return measure(clients, rel, ctx.repeats, deadline)
    finally:
        plain.stop()
        secure.stop()


def scan(client, opts, rel) -> tuple[int, int]:
    import pyarrow.flight as flight
    info = client.get_flight_info(flight.FlightDescriptor.for_command(json.dumps({"paths": rel})), opts)
    rows = nbytes = 0
    for ep in info.endpoints:
        for chunk in client.do_get(ep.ticket, opts):
            rows += chunk.data.num_rows
            nbytes += chunk.data.nbytes
    return rows, nbytes


def measure(clients, rel, repeats, deadline) -> dict:
    import pyarrow.flight as flight
    desc = flight.FlightDescriptor.for_command(json.dumps({"paths": rel}))
    times, lat, server_cpu, client_cpu = ({k: [] for k in clients} for _ in range(4))
    nbytes = 0
    for name, (c, o, _) in clients.items():
        scan(c, o, rel)  # warm-up: page cache, footers, connections
    for _ in range(max(repeats, 3)):
        for name, (c, o, pid) in clients.items():
            s0, c0, t = lib.cpu_seconds(pid), lib.self_cpu_seconds(), time.perf_counter()
            _, nbytes = scan(c, o, rel)
            times[name].append(time.perf_counter() - t)
            server_cpu[name].append(lib.cpu_seconds(pid) - s0)
            client_cpu[name].append(lib.self_cpu_seconds() - c0)
            for _ in range(LATENCY_CALLS // max(repeats, 3)):
                t = time.perf_counter()
                c.get_flight_info(desc, o)
                lat[name].append(time.perf_counter() - t)
        if deadline.expired():
            break
    res = {"arrow_bytes": nbytes, "servers": []}
    for name in clients:
        r = {"server": name, "wall": lib.mmm(times[name]), "arrow_MBps": lib.mmm([nbytes / 1e6 / t for t in times[name]]),
             "flightinfo_s": lib.mmm(lat[name]), "server_cpu_s": lib.mmm(server_cpu[name]),
             "client_cpu_s": lib.mmm(client_cpu[name])}
        res["servers"].append(r)
        lib.log(f"security: {name}: {r['arrow_MBps']['median']:.0f} MB/s, GetFlightInfo median "
                f"{r['flightinfo_s']['median'] * 1e3:.1f} ms, CPU per scan: server {r['server_cpu_s']['median']:.2f} s, "
                f"client {r['client_cpu_s']['median']:.2f} s")
    return verdict(res)


def verdict(res: dict) -> dict:
    """The slowdowns: wall time (the target's), and CPU per side."""
    plain, secure = res["servers"]
    med = lambda r, k: r[k]["median"] or float("nan")  # noqa: E731
    res["slowdown"] = med(secure, "wall") / med(plain, "wall")
    res["server_cpu_slowdown"] = med(secure, "server_cpu_s") / med(plain, "server_cpu_s")
    res["client_cpu_slowdown"] = med(secure, "client_cpu_s") / med(plain, "client_cpu_s")
    res["target"] = 1.10
    res["met"] = res["slowdown"] <= res["target"]
    lib.log(f"security: TLS + tokens / plain full scan time = {res['slowdown']:.3f} (target <= 1.10): "
            f"{'PASS' if res['met'] else 'MISS'}; CPU per scan: server {res['server_cpu_slowdown']:.2f}x, "
            f"client (pyarrow) {res['client_cpu_slowdown']:.2f}x")
    return res
