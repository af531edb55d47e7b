"""Failures raise scand.ScandError subclasses with helpful messages, the
pyarrow exception kept as __cause__; the server stays healthy after each."""

from __future__ import annotations

import time

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

import scand
from scand_testlib import free_port, make_table


def healthy(conn):
    assert conn.read_table("data/a.parquet", columns=["id"], limit=2).num_rows == 2


def test_unknown_column(conn):
    with pytest.raises(scand.InvalidRequest) as ei:
        conn.scan("data/a.parquet", columns=["id", "nope"])
    e = ei.value
    assert isinstance(e, ValueError)  # like pyarrow's ArrowInvalid
    assert e.code == "INVALID_ARGUMENT"
    assert '"nope"' in str(e) and "available columns" in str(e) and "name" in str(e)
    assert str(e).startswith('INVALID_ARGUMENT: unknown column "nope"')  # the format of every client
    assert isinstance(e.__cause__, pa.ArrowInvalid)
    assert "gRPC client debug context" not in str(e)
    healthy(conn)


def test_unknown_column_in_schema_call(conn):
    with pytest.raises(scand.InvalidRequest, match="nope"):
        conn.schema("data/a.parquet", columns=["nope"])


def test_missing_file(conn):
    with pytest.raises(scand.NotFound) as ei:
        conn.scan("data/missing.parquet")
    assert "missing.parquet" in str(ei.value)
    assert "--root" in str(ei.value)
    assert ei.value.code == "NOT_FOUND"
    assert isinstance(ei.value.__cause__, pa.ArrowException)
    healthy(conn)


def test_glob_matching_nothing(conn):
    with pytest.raises(scand.NotFound):
        conn.explain("nothing-here/*.parquet")


@pytest.mark.parametrize("path", ["../outside.parquet", "data/../../outside.parquet", "/etc/passwd"])
def test_path_traversal(conn, path):
    with pytest.raises(scand.PermissionDenied) as ei:
        conn.scan(path)
    assert "root" in str(ei.value)
    assert ei.value.code == "PERMISSION_DENIED"
    assert isinstance(ei.value.__cause__, flight.FlightUnauthorizedError)
    healthy(conn)


def test_not_a_parquet_file(conn):
    with pytest.raises(scand.InvalidRequest, match="text.parquet") as ei:
        conn.scan("bad/text.parquet")
    assert "Leave that file out" in str(ei.value)


def test_corrupt_file(own_server, tmp_path):
    t = make_table(20_000)
    pq.write_table(t, tmp_path / "good.parquet", row_group_size=5_000, compression="snappy")
    data = bytearray((tmp_path / "good.parquet").read_bytes())
    for i in range(100, len(data) // 2):  # pages garbled, footer intact
        data[i] = 0xAB
    (tmp_path / "corrupt.parquet").write_bytes(bytes(data))
    (tmp_path / "truncated.parquet").write_bytes(bytes(data[: len(data) // 2]))
    srv = own_server(tmp_path)
    with scand.connect(srv.location) as c:
        with pytest.raises(scand.CorruptFile, match="truncated.parquet"):
            c.scan("truncated.parquet")
        # planned fine (footer intact), fails while streaming
        with pytest.raises(scand.CorruptFile, match="corrupt.parquet") as ei:
            c.scan("corrupt.parquet").read_all()
        assert "corrupt or truncated" in str(ei.value)
        assert c.last_stats.done and not c.last_stats.complete
        assert isinstance(c.last_stats.error, scand.CorruptFile)
        assert c.read_table("good.parquet").num_rows == 20_000


def test_file_changed_between_plan_and_read(own_server, tmp_path):
    t = make_table(20_000)
    pq.write_table(t, tmp_path / "f.parquet", row_group_size=5_000)
    srv = own_server(tmp_path)
    with scand.connect(srv.location) as c:
        reader = c.scan("f.parquet")
        time.sleep(0.01)  # a different modification time
        pq.write_table(t.slice(0, 100), tmp_path / "f.parquet")
        with pytest.raises(scand.FileChanged) as ei:
            reader.read_all()
        assert "run the scan again" in str(ei.value)
        assert c.read_table("f.parquet").num_rows == 100


def test_over_the_server_limits(conn):
    with pytest.raises(scand.LimitExceeded, match="10001 paths") as ei:
        conn.scan(["data/a.parquet"] * 10_001)
    assert "fewer paths" in str(ei.value)
    healthy(conn)


def test_storage_backend_not_configured(conn):
    with pytest.raises(scand.Unsupported) as ei:
        conn.scan("s3://bucket/key.parquet")
    assert "s3://bucket/key.parquet" in str(ei.value)


def test_connection_refused():
    port = free_port()  # nothing listens there
    with pytest.raises(scand.ConnectionFailed) as ei:
        scand.connect(f"grpc://127.0.0.1:{port}")
    msg = str(ei.value)
    assert "connection refused" in msg
    assert f"scand serve --root DIR --listen 127.0.0.1:{port}" in msg  # what to do
    assert isinstance(ei.value, ConnectionError)
    assert isinstance(ei.value.__cause__, flight.FlightUnavailableError)
    assert "gRPC client debug context" not in msg


def test_connect_without_check_fails_at_the_first_call():
    port = free_port()
    c = scand.connect(f"127.0.0.1:{port}", check=False)
    with pytest.raises(scand.ConnectionFailed, match="Is scand running"):
        c.scan("x.parquet")
    c.close()


def test_unresolvable_host():
    with pytest.raises(scand.ConnectionFailed, match="is not reachable"):
        scand.connect("grpc://no-such-host.invalid:8815", timeout=10)


def test_stopped_server(own_server):
    srv = own_server()
    c = scand.connect(srv.location)
    healthy(c)
    srv.stop()
    with pytest.raises(scand.ConnectionFailed) as ei:
        c.scan("data/a.parquet")
    assert "Is scand running" in str(ei.value)
    c.close()


def test_server_stopped_during_a_scan(own_server):
    srv = own_server()
    c = scand.connect(srv.location)
    reader = c.scan("big/big.parquet", batch_rows=100, split_bytes=1, max_workers=1, read_ahead=1)
    it = iter(reader)
    next(it)
    srv.proc.kill()
    srv.proc.wait(10)
    with pytest.raises(scand.ConnectionFailed) as ei:
        for _ in it:
            pass
    assert "while reading the scan" in str(ei.value)
    assert c.last_stats.done and not c.last_stats.complete
    c.close()


def test_bad_arguments_fail_before_any_call(conn):
    with pytest.raises(scand.InvalidRequest, match="paths is empty"):
        conn.scan([])
    with pytest.raises(scand.InvalidRequest, match="limit must be >= 0"):
        conn.scan("data/a.parquet", limit=-1)
    with pytest.raises(TypeError):
        conn.scan("data/a.parquet", limit=1.5)
    with pytest.raises(TypeError):
        conn.scan(42)
    with pytest.raises(ValueError, match="grpc\\+tls"):
        scand.connect("grpc://127.0.0.1:1", tls_root_certs=b"-----BEGIN CERTIFICATE-----", check=False)
    with pytest.raises(ValueError, match="scheme"):
        scand.connect("http://127.0.0.1:1", check=False)


def test_tls_against_a_plain_server(server):
    # The server does not speak TLS: the handshake fails, and the message
    # says so rather than dumping gRPC internals.
    with pytest.raises(scand.ConnectionFailed) as ei:
        scand.connect(f"grpc+tls://127.0.0.1:{server.port}", disable_server_verification=True, timeout=10)
    assert "grpc+tls" in str(ei.value) or "TLS" in str(ei.value)


def test_every_error_is_a_scand_error():
    for cls in (scand.ConnectionFailed, scand.InvalidRequest, scand.NotFound, scand.PermissionDenied,
                scand.Unauthenticated, scand.CorruptFile, scand.Unsupported, scand.FileChanged,
                scand.LimitExceeded, scand.Timeout, scand.Cancelled, scand.ServerError):
        assert issubclass(cls, scand.ScandError)


@pytest.mark.parametrize("text,cls,code", [
    ("Flight returned invalid argument error, with message: bad", scand.InvalidRequest, "INVALID_ARGUMENT"),
    ("Flight returned not found error, with message: gone", scand.NotFound, "NOT_FOUND"),
    ("Flight returned unauthorized error, with message: no", scand.PermissionDenied, "PERMISSION_DENIED"),
    ("Flight returned unauthenticated error, with message: who", scand.Unauthenticated, "UNAUTHENTICATED"),
    ("gRPC returned data loss error, with message: x", scand.CorruptFile, "DATA_LOSS"),
    ("Flight returned unimplemented error, with message: lz4", scand.Unsupported, "UNIMPLEMENTED"),
    ("gRPC returned precondition failed error, with message: changed", scand.FileChanged, "FAILED_PRECONDITION"),
    ("gRPC returned resource exhausted error, with message: big", scand.LimitExceeded, "RESOURCE_EXHAUSTED"),
    ("Flight returned timeout error, with message: slow", scand.Timeout, "DEADLINE_EXCEEDED"),
    ("Flight returned internal error, with message: boom", scand.ServerError, "INTERNAL"),
    ("Flight returned unavailable error, with message: Connection refused", scand.ConnectionFailed, "UNAVAILABLE"),
])
def test_translation_of_each_status(text, cls, code):
    from scand._errors import translate
    cause = pa.ArrowException(text + ". gRPC client debug context: UNKNOWN:...")
    e = translate(cause, "grpc://h:1", "plan")
    assert type(e) is cls
    assert e.code == code
    assert "debug context" not in str(e)
    assert str(e).split("\n")[0] == f"{code}: {e.server_message}" or code == "UNAVAILABLE"
    # Only where the code says something beyond the message: a generic
    # "fix the request" would be noise.
    want_hint = code in ("NOT_FOUND", "PERMISSION_DENIED", "UNAUTHENTICATED", "DATA_LOSS", "FAILED_PRECONDITION",
                         "RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", "INTERNAL", "UNAVAILABLE")
    assert bool(e.hint) == want_hint, e.hint
    if e.hint:
        assert str(e).endswith("\nhint: " + e.hint)


# The same cases as the Go client's TestErrorMessageAndHint (client/errors_test.go):
# one message format and the same hints across the clients.
@pytest.mark.parametrize("msg,want,hint", [
    ("open a.csv: invalid argument", "INVALID_ARGUMENT: open a.csv", ""),
    ("invalid argument: x", "INVALID_ARGUMENT: invalid argument: x", ""),
    ('unknown column "fair"; available columns: id, fare, city',
     'INVALID_ARGUMENT: unknown column "fair"; available columns: id, fare, city', 'did you mean "fare"?'),
    ('unknown column "zzzzzz"; available columns: id, loc.x, loc.y and 3 more',
     'INVALID_ARGUMENT: unknown column "zzzzzz"; available columns: id, loc.x, loc.y and 3 more',
     'nested fields are named by their path, as "loc.x"'),
    ('unknown column "zzzzzz"; available columns: id, fare',
     'INVALID_ARGUMENT: unknown column "zzzzzz"; available columns: id, fare', ""),
    ("limit must not be negative", "INVALID_ARGUMENT: limit must not be negative", ""),
])
def test_message_format_like_the_go_client(msg, want, hint):
    from scand._errors import translate
    cause = pa.ArrowInvalid(f"Flight returned invalid argument error, with message: {msg}")
    e = translate(cause, "grpc://h:1", "plan")
    assert e.hint == hint
    assert str(e) == (f"{want}\nhint: {hint}" if hint else want)
    assert "pickup.lat" not in str(e)  # never the demo's columns


def test_object_store_not_found_has_no_root_hint():
    """A missing bucket or object of an object store says so; --root has
    nothing to do with it (the same hint as the Go client's)."""
    from scand._errors import translate
    msg = 'gcs: stat gs://b/x.parquet: bucket "b" does not exist: HTTP 404'
    e = translate(pa.ArrowException(f"Flight returned not found error, with message: {msg}"), "grpc://h:1", "plan")
    assert e.code == "NOT_FOUND"
    assert "--root" not in e.hint
    assert e.hint == "Check the bucket (or container) and the object name; the message says which is missing."
