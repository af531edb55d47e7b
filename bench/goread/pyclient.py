"""pyarrow Flight client for goread -compare: reads "ADDR PATH" lines on
stdin, scans PATH from the scand server at ADDR with stock pyarrow.flight
(default options, endpoints in turn), and answers each line with a JSON
object like goread's: rows, batches, Arrow bytes, wall and CPU seconds
(user+system of this process, gRPC's threads included) and minor page
faults of the scan. One process serves the whole run, so pyarrow's import
and the connection are paid once."""
import json
import resource
import sys
import time

import pyarrow.flight as fl


def main() -> None:
    clients = {}
    print("ready", flush=True)
    for line in sys.stdin:
        addr, path = line.split()
        c = clients.get(addr)
        if c is None:
            c = clients[addr] = fl.connect(f"grpc://{addr}")
        ru0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        cmd = json.dumps({"paths": [path]}).encode()
        info = c.get_flight_info(fl.FlightDescriptor.for_command(cmd))
        rows = batches = nbytes = 0
        for ep in info.endpoints:
            for chunk in c.do_get(ep.ticket):
                rows += chunk.data.num_rows
                nbytes += chunk.data.nbytes
                batches += 1
        wall = time.perf_counter() - t0
        ru = resource.getrusage(resource.RUSAGE_SELF)
        cpu = ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime
        print(json.dumps({"rows": rows, "batches": batches, "bytes": nbytes, "wall": wall,
                          "cpu": cpu, "faults": ru.ru_minflt - ru0.ru_minflt}), flush=True)


if __name__ == "__main__":
    main()
