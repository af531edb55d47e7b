"""Clients that open a stream each and never read it: run as a process of
its own by test_chaos.py::test_stalled_clients, so that a hundred of them
do not share the interpreter of the client whose latency the test measures.

    python stallers.py LOCATION PATH N

opens N clients, each with one DoGet of PATH (its first endpoint), prints
"opened K" once every opener has returned (K streams got their first
message; the rest were ended before it), then waits for a line on stdin.
On "read" it reads up to 8 of the streams to their end and prints the
status codes seen, as JSON, then waits for stdin to close.
"""

from __future__ import annotations

import json
import sys
import threading

import pyarrow as pa
import pyarrow.flight as flight

from scandlib import call_options, command, grpc_code


def main() -> None:
    location, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    clients, readers, lock = [], [], threading.Lock()

    def stall() -> None:
        c = flight.FlightClient(location)
        with lock:
            clients.append(c)
        try:
            info = c.get_flight_info(command({"paths": [path]}), options=call_options(60))
            r = c.do_get(info.endpoints[0].ticket, options=call_options(600))
        except (flight.FlightError, pa.ArrowException):
            return  # ended before its first message
        with lock:
            readers.append(r)

    openers = [threading.Thread(target=stall, daemon=True) for _ in range(n)]
    for t in openers:
        t.start()
    for t in openers:
        t.join(120)
    print(f"opened {len(readers)}", flush=True)
    if sys.stdin.readline().strip() == "read":
        codes = set()
        for r in readers[:8]:
            try:
                while True:
                    r.read_chunk()
            except StopIteration:
                codes.add("OK")
            except (flight.FlightError, pa.ArrowException) as e:
                code = grpc_code(e)
                codes.add(code if code != "RESOURCE_EXHAUSTED" or "read nothing" in str(e) else "RESOURCE_EXHAUSTED without why")
        print(json.dumps(sorted(codes)), flush=True)
        sys.stdin.readline()
    for c in clients:
        c.close()


if __name__ == "__main__":
    main()
