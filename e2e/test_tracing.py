"""OpenTelemetry tracing, end to end (docs/tracing.md).

A real scand binary started with OTEL_TRACES_EXPORTER=console writes its
spans as JSON lines to stdout (here, its log file). Stock pyarrow.flight
sends a W3C traceparent header on every call; the server's spans must join
that trace: the RPC spans have the client's span as their remote parent, and
plan, footer, fetch, decode and send spans hang below them. Two replicas
sharing a ticket key, one planning and both streaming, write their spans
into that one trace, each with its own service.instance.id. Without any
OTEL_* variable the same scan writes no span at all.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

from conftest import _scand_bin
from scandlib import CALL_TIMEOUT_S, ScandServer, _die_with_parent, call_options, free_port

RPC_PREFIX = "arrow.flight.protocol.FlightService/"


def _write_table(root: Path) -> int:
    rows = 5000
    table = pa.table({"id": pa.array(range(rows), pa.int64()), "name": [f"n{i % 97}" for i in range(rows)]})
    (root / "t").mkdir()
    pq.write_table(table, root / "t" / "a.parquet", row_group_size=1000)
    return rows


def _scan(srv: ScandServer, trace_id: str, span_id: str) -> int:
    """GetFlightInfo and DoGet of every endpoint, each call carrying the
    client's traceparent; returns the rows read."""
    headers = [(b"traceparent", f"00-{trace_id}-{span_id}-01".encode())]
    opts = flight.FlightCallOptions(timeout=CALL_TIMEOUT_S, headers=headers)
    client = srv.client()
    try:
        cmd = json.dumps({"paths": ["t/"], "split_bytes": 1, "batch_rows": 1000}).encode()
        info = client.get_flight_info(flight.FlightDescriptor.for_command(cmd), opts)
        assert len(info.endpoints) >= 2
        return sum(client.do_get(ep.ticket, opts).read_all().num_rows for ep in info.endpoints)
    finally:
        client.close()


def _spans(log: str) -> list[dict]:
    """The console exporter's spans among the server's output lines."""
    out = []
    for line in log.splitlines():
        if line.startswith("{") and '"SpanContext"' in line:
            out.append(json.loads(line))
    return out


def _attrs(span: dict) -> dict:
    return {a["Key"]: a["Value"]["Value"] for a in span.get("Attributes") or []}


def _run(tmp_path: Path, monkeypatch, env: dict[str, str]) -> tuple[list[dict], str, str, int, int]:
    root = tmp_path / "root"
    root.mkdir()
    rows = _write_table(root)
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    srv = ScandServer(_scand_bin(), root, tmp_path / "scand.log", "tracing")
    srv.start()
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    try:
        got = _scan(srv, trace_id, span_id)
    finally:
        srv.stop()  # SIGTERM: the server flushes its spans before it exits
    return _spans(srv.log_tail(max_bytes=10 << 20)), trace_id, span_id, got, rows


def test_spans_join_the_clients_trace(tmp_path, monkeypatch):
    spans, trace_id, span_id, got, rows = _run(tmp_path, monkeypatch, {
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    })
    assert got == rows
    mine = [s for s in spans if s["SpanContext"]["TraceID"] == trace_id]
    assert mine, f"no span of trace {trace_id} among {len(spans)} spans"
    # ScandServer.start's readiness probe (ListActions) is a trace of its own.
    others = [s["Name"] for s in spans if s not in mine]
    assert set(others) <= {RPC_PREFIX + "ListActions"}, f"spans outside the client's trace: {others}"
    by_id = {s["SpanContext"]["SpanID"]: s for s in mine}

    rpcs = [s for s in mine if s["Name"].startswith(RPC_PREFIX)]
    assert {s["Name"][len(RPC_PREFIX):] for s in rpcs} == {"GetFlightInfo", "DoGet"}
    for s in rpcs:
        assert s["Parent"]["SpanID"] == span_id and s["Parent"]["Remote"], s["Name"]
        resource = {a["Key"]: a["Value"]["Value"] for a in s["Resource"]}
        assert resource["service.name"] == "scand"
        assert resource["service.instance.id"].startswith("127.0.0.1:")

    def rpc_of(s: dict) -> str:
        while not s["Name"].startswith(RPC_PREFIX):
            s = by_id[s["Parent"]["SpanID"]]
        return s["Name"][len(RPC_PREFIX):]

    names = {(s["Name"], rpc_of(s)) for s in mine if s not in rpcs}
    for want in [("plan", "GetFlightInfo"), ("footer", "GetFlightInfo"), ("fetch", "GetFlightInfo"),
                 ("footer", "DoGet"), ("fetch", "DoGet"), ("decode", "DoGet"), ("send", "DoGet")]:
        assert want in names, f"no {want[0]} span under {want[1]}: {sorted(names)}"

    plan = next(s for s in mine if s["Name"] == "plan")
    assert _attrs(plan)["scand.files"] == 1
    assert _attrs(plan)["scand.endpoints"] == sum(1 for s in rpcs if s["Name"].endswith("/DoGet"))
    fetches = [_attrs(s) for s in mine if s["Name"] == "fetch"]
    assert all(a["scand.bytes"] > 0 and a["scand.backend"] == "local" and "scand.offset" in a for a in fetches)
    assert sum(_attrs(s)["scand.rows"] for s in mine if s["Name"] == "send") == rows
    assert sum(_attrs(s)["scand.rows"] for s in mine if s["Name"] == "decode") == rows


class _Replica:
    """One of two `scand serve` processes sharing a ticket key, so that
    either serves the other's tickets, both writing spans to their logs."""

    def __init__(self, root: Path, key_file: Path, log: Path):
        self.port, self.log = free_port(), log
        cmd = [_scand_bin(), "serve", "--listen", f"127.0.0.1:{self.port}", "--root", str(root),
               "--ticket-key-file", str(key_file)]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SCAND_", "OTEL_"))}
        env.update(OTEL_TRACES_EXPORTER="console", OTEL_BSP_SCHEDULE_DELAY="100")
        self._out = open(log, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=env, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, f"scand exited:\n{log.read_text()[-4000:]}"
            try:
                c = flight.FlightClient(self.location)
                list(c.list_actions(options=call_options(2)))
                c.close()
                return
            except (flight.FlightError, pa.ArrowException, OSError):
                assert time.monotonic() < deadline, f"scand not ready:\n{log.read_text()[-4000:]}"
                time.sleep(0.1)

    @property
    def location(self) -> str:
        return f"grpc://127.0.0.1:{self.port}"

    def stop(self) -> list[dict]:
        """SIGTERM (the spans are flushed), then the spans it wrote."""
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self._out.close()
        return _spans(self.log.read_text(errors="replace"))


def test_trace_crosses_replicas(tmp_path):
    """GetFlightInfo on replica A, DoGet of alternate endpoints on A and B:
    one trace, whose RPC spans say which replica served them."""
    root = tmp_path / "root"
    root.mkdir()
    rows = _write_table(root)
    key_file = tmp_path / "ticket.key"
    key_file.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    a = _Replica(root, key_file, tmp_path / "a.log")
    b = _Replica(root, key_file, tmp_path / "b.log")
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    opts = flight.FlightCallOptions(timeout=CALL_TIMEOUT_S, headers=[(b"traceparent", f"00-{trace_id}-{span_id}-01".encode())])
    try:
        ca, cb = flight.FlightClient(a.location), flight.FlightClient(b.location)
        cmd = json.dumps({"paths": ["t/"], "split_bytes": 1}).encode()
        info = ca.get_flight_info(flight.FlightDescriptor.for_command(cmd), opts)
        assert len(info.endpoints) >= 2
        got = sum((ca, cb)[i % 2].do_get(ep.ticket, opts).read_all().num_rows for i, ep in enumerate(info.endpoints))
        ca.close()
        cb.close()
    finally:
        spans_a, spans_b = a.stop(), b.stop()
    assert got == rows

    def served(spans: list[dict], port: int) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in spans:
            if s["SpanContext"]["TraceID"] != trace_id or not s["Name"].startswith(RPC_PREFIX):
                continue
            assert s["Parent"]["SpanID"] == span_id and s["Parent"]["Remote"]
            resource = {kv["Key"]: kv["Value"]["Value"] for kv in s["Resource"]}
            assert resource["service.instance.id"] == f"127.0.0.1:{port}"
            method = s["Name"][len(RPC_PREFIX):]
            out[method] = out.get(method, 0) + 1
        return out

    n = len(info.endpoints)
    assert served(spans_a, a.port) == {"GetFlightInfo": 1, "DoGet": (n + 1) // 2}
    assert served(spans_b, b.port) == {"DoGet": n // 2}
    sent_b = [s for s in spans_b if s["Name"] == "send" and s["SpanContext"]["TraceID"] == trace_id]
    assert sent_b, "replica B's streams have send spans in the client's trace"


def test_off_by_default(tmp_path, monkeypatch):
    spans, _, _, got, rows = _run(tmp_path, monkeypatch, {})
    assert got == rows
    assert spans == [], "without OTEL_TRACES_EXPORTER the server writes no span"


@pytest.mark.parametrize("value", ["jaeger", "zipkin"])
def test_unknown_exporter_fails_at_start(tmp_path, monkeypatch, value):
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", value)
    srv = ScandServer(_scand_bin(), tmp_path, tmp_path / "scand.log", "tracing")
    with pytest.raises(RuntimeError):
        srv.start(ready_timeout=10)
    assert f'OTEL_TRACES_EXPORTER="{value}"' in srv.log_tail()
