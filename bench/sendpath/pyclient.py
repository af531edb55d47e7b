"""pyarrow Flight client for bench/sendpath: reads "ADDR DATASET" lines on
stdin, scans DATASET.parquet from the scand server at ADDR with stock
pyarrow.flight (default options), and answers each line with the rows read.
One process serves the whole run, so pyarrow's import and the connections
are paid once."""
import json
import sys

import pyarrow.flight as fl


def main() -> None:
    clients = {}
    print("ready", flush=True)
    for line in sys.stdin:
        addr, ds = line.split()
        c = clients.get(addr)
        if c is None:
            c = clients[addr] = fl.connect(f"grpc://{addr}")
        cmd = json.dumps({"paths": [ds + ".parquet"]}).encode()
        info = c.get_flight_info(fl.FlightDescriptor.for_command(cmd))
        rows = 0
        for ep in info.endpoints:
            for chunk in c.do_get(ep.ticket):
                rows += chunk.data.num_rows
        print(rows, flush=True)


if __name__ == "__main__":
    main()
