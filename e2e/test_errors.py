"""Bad requests and bad files: each must fail with the right gRPC status and a
useful message, and leave the server running and serving (a good scan is
checked after every one)."""

from __future__ import annotations

import json
import os
import random

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest

from scandlib import (CLEAN_DATA_ERROR_CODES, assert_tables_equal, call_options, command, expect_error, grpc_code,
                      read_stream, scan)

GOOD = {"alpha_col": pa.array(range(100), pa.int64()), "beta_col": [f"v{i}" for i in range(100)],
        "gamma": pa.array([{"inner": i, "other": "o"} for i in range(100)])}


@pytest.fixture(scope="module")
def good(gen_root):
    """A valid file at the gen root, used for the after-each-error check."""
    d = gen_root / "errors-good"
    d.mkdir(exist_ok=True)
    pq.write_table(pa.table(GOOD), d / "good.parquet")
    return "errors-good/good.parquet", pq.read_table(d / "good.parquet")


@pytest.fixture
def still_serving(gen_server, good):
    """After the test: the server is alive and a good scan returns the right data."""
    yield
    gen_server.assert_alive()
    c = gen_server.client()
    try:
        res = scan(c, {"paths": [good[0]]})
        assert_tables_equal(good[1], res.table, "good scan after the failed request")
    finally:
        c.close()


pytestmark = pytest.mark.usefixtures("still_serving")


# ----------------------------------------------------------------------------
# Columns
# ----------------------------------------------------------------------------

def test_unknown_column(gen_client, good):
    err = expect_error(gen_client, {"paths": [good[0]], "columns": ["alpha_col", "no_such_col"]},
                       "INVALID_ARGUMENT", "no_such_col")
    for name in ("alpha_col", "beta_col", "gamma"):
        assert name in err.message, f"error does not list available column {name!r}: {err.message!r}"


def test_unknown_nested_column(gen_client, good):
    expect_error(gen_client, {"paths": [good[0]], "columns": ["gamma.nope"]}, "INVALID_ARGUMENT", "gamma.nope")


def test_unknown_column_get_schema(gen_client, good):
    with pytest.raises(Exception) as ei:
        gen_client.get_schema(command({"paths": [good[0]], "columns": ["zzz_missing"]}), options=call_options())
    assert grpc_code(ei.value) == "INVALID_ARGUMENT", repr(ei.value)
    assert "zzz_missing" in str(ei.value)


# ----------------------------------------------------------------------------
# Requests
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("raw", [b"{not json", b'{"paths": "a.parquet"}', b'{"paths": []}', b"",
                                 b'{"columns": ["x"]}', b'{"paths": ["a.parquet"], "limit": "many"}',
                                 b'{"paths": ["errors-good/good.parquet"], "unknownField": 1}'])
def test_malformed_request(gen_client, raw):
    expect_error(gen_client, flight.FlightDescriptor.for_command(raw), "INVALID_ARGUMENT")


def test_negative_limit(gen_client, good):
    expect_error(gen_client, {"paths": [good[0]], "limit": -1}, "INVALID_ARGUMENT")


def test_bad_ticket(gen_client):
    # Tickets are signed: anything the server did not sign is
    # UNAUTHENTICATED, telling the client to pass GetFlightInfo's tickets.
    for raw in (b"", b"\x00\x01garbage", os.urandom(64)):
        with pytest.raises(Exception) as ei:
            read_stream(gen_client.do_get(flight.Ticket(raw), options=call_options()))
        assert grpc_code(ei.value) == "UNAUTHENTICATED", repr(ei.value)
        assert "GetFlightInfo" in str(ei.value), repr(ei.value)


def test_unknown_action(gen_client):
    with pytest.raises(Exception) as ei:
        list(gen_client.do_action(flight.Action("no-such-action", b""), options=call_options()))
    assert grpc_code(ei.value) in ("UNIMPLEMENTED", "INVALID_ARGUMENT", "NOT_FOUND"), repr(ei.value)


# ----------------------------------------------------------------------------
# Missing files
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["missing.parquet", "errors-good/missing.parquet", "no-dir/x.parquet",
                                  "nomatch/*.parquet", "errors-good/*.orc", "errors-good/**/zz*.parquet",
                                  "no-such-dir/"])
def test_not_found(gen_client, path):
    expect_error(gen_client, {"paths": [path]}, "NOT_FOUND", path)


def test_not_found_among_good(gen_client, good):
    expect_error(gen_client, {"paths": [good[0], "missing-2.parquet"]}, "NOT_FOUND", "missing-2.parquet")


# ----------------------------------------------------------------------------
# Paths leaving the root
# ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def outside(tmp_path_factory, gen_root):
    """A valid Parquet file and a folder outside the gen root, and symlinks to
    them inside it."""
    out = tmp_path_factory.mktemp("outside-root")
    pq.write_table(pa.table(GOOD), out / "secret.parquet")
    d = gen_root / "errors-links"
    d.mkdir(exist_ok=True)
    for name, target in (("file-link.parquet", out / "secret.parquet"), ("dir-link", out)):
        if not (d / name).is_symlink():
            os.symlink(target, d / name)
    return out


@pytest.mark.parametrize("path", ["../x.parquet", "../../etc/passwd", "/etc/passwd", "errors-good/../../x.parquet",
                                  "errors-good/../../../../../../etc/passwd", "..", "../", "../*.parquet"])
def test_traversal_denied(gen_client, path):
    expect_error(gen_client, {"paths": [path]}, "PERMISSION_DENIED")


@pytest.mark.parametrize("path", ["errors-links/file-link.parquet", "errors-links/dir-link/secret.parquet",
                                  "errors-links/dir-link/*.parquet"])
def test_symlink_out_of_root_denied(gen_client, outside, path):
    expect_error(gen_client, {"paths": [path]}, "PERMISSION_DENIED")


def test_symlink_out_of_root_in_listing(gen_client, outside):
    # Listing a folder that holds symlinks leaving the root must not read
    # through them: either refuse, or skip them.
    try:
        res = scan(gen_client, {"paths": ["errors-links/"]})
    except Exception as e:  # noqa: BLE001
        assert grpc_code(e) in ("PERMISSION_DENIED", "NOT_FOUND"), repr(e)
    else:
        assert res.table.num_rows == 0, "read a file outside the root through a symlink"
    for info in gen_client.list_flights(criteria=b"errors-links/", options=call_options()):
        d = info.descriptor
        listed = "/".join(p.decode() for p in d.path) if d.path else ""
        assert "secret" not in listed, f"list_flights shows a file outside the root: {listed}"


@pytest.mark.parametrize("path", ["../../../../etc/passwd", "/etc/passwd", "errors-links/file-link.parquet"])
def test_forged_ticket_outside_root_denied(gen_client, good, outside, path):
    # A real ticket with what it vouches for replaced: protobuf keeps the
    # last value of a non-repeated field, so appending the signed envelope's
    # field 3 (its claims, which hold the ScanTask) again overrides them.
    # Tickets are signed, so DoGet refuses the changed envelope
    # before decoding it: UNAUTHENTICATED, "pass the ticket from
    # GetFlightInfo unchanged" (it was PERMISSION_DENIED from the path check
    # when tickets were bare ScanTasks, whose field 1 is the path).
    info = gen_client.get_flight_info(command({"paths": [good[0]]}), options=call_options())
    p = path.encode()
    ticket = info.endpoints[0].ticket.ticket + bytes([0x1A, len(p)]) + p
    with pytest.raises(Exception) as ei:
        read_stream(gen_client.do_get(flight.Ticket(ticket), options=call_options()))
    assert grpc_code(ei.value) == "UNAUTHENTICATED", repr(ei.value)
    assert "unchanged" in str(ei.value), repr(ei.value)


# ----------------------------------------------------------------------------
# Malformed files
# ----------------------------------------------------------------------------

def _bad_files(d):
    valid = pq.read_table  # noqa: F841
    buf = pa.BufferOutputStream()
    pq.write_table(pa.table(GOOD), buf)
    data = buf.getvalue().to_pybytes()
    rnd = random.Random(42)
    footer_len = int.from_bytes(data[-8:-4], "little")
    files = {
        "random.parquet": bytes(rnd.getrandbits(8) for _ in range(4096)),
        "empty.parquet": b"",
        "tiny.parquet": b"PAR1",
        "magic-only.parquet": b"PAR1PAR1",
        "truncated-half.parquet": data[: len(data) // 2],
        "truncated-tail.parquet": data[:-1],
        "no-footer-magic.parquet": data[:-4] + b"XXXX",
        "huge-footer-len.parquet": data[:-8] + (2**31 - 1).to_bytes(4, "little") + b"PAR1",
        "footer-len-past-start.parquet": data[:-8] + (len(data) + 10).to_bytes(4, "little") + b"PAR1",
        "garbage-footer.parquet": data[: len(data) - 8 - footer_len]
        + bytes(rnd.getrandbits(8) for _ in range(footer_len)) + data[-8:],
        "garbage-pages.parquet": b"PAR1" + bytes(rnd.getrandbits(8) for _ in range(len(data) - 8 - footer_len - 4))
        + data[len(data) - 8 - footer_len:],
        "text.parquet": b"hello, this is not parquet\n" * 100,
    }
    for name, content in files.items():
        (d / name).write_bytes(content)
    return sorted(files)


@pytest.fixture(scope="module")
def bad_dir(gen_root):
    d = gen_root / "errors-bad"
    d.mkdir(exist_ok=True)
    return d, _bad_files(d)


BAD_NAMES = ["random.parquet", "empty.parquet", "tiny.parquet", "magic-only.parquet", "truncated-half.parquet",
             "truncated-tail.parquet", "no-footer-magic.parquet", "huge-footer-len.parquet",
             "footer-len-past-start.parquet", "garbage-footer.parquet", "garbage-pages.parquet", "text.parquet"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_malformed_file(gen_client, bad_dir, name):
    assert name in bad_dir[1]
    err = expect_error(gen_client, {"paths": [f"errors-bad/{name}"]}, CLEAN_DATA_ERROR_CODES)
    assert f"errors-bad/{name}" in err.message or name in err.message, \
        f"error does not name the file: {err.message!r}"


def test_malformed_file_among_good(gen_client, bad_dir, good):
    expect_error(gen_client, {"paths": [good[0], "errors-bad/truncated-half.parquet"]}, CLEAN_DATA_ERROR_CODES)
    expect_error(gen_client, {"paths": ["errors-bad/"]}, CLEAN_DATA_ERROR_CODES)


def test_file_changed_after_planning(gen_client, gen_root):
    # ScanTask pins the file's size and version; a file rewritten between
    # GetFlightInfo and DoGet must fail with FailedPrecondition instead of
    # mixing two versions.
    d = gen_root / "errors-changed"
    d.mkdir(exist_ok=True)
    pq.write_table(pa.table({"x": list(range(100))}), d / "c.parquet")
    info = gen_client.get_flight_info(command({"paths": ["errors-changed/c.parquet"]}), options=call_options())
    pq.write_table(pa.table({"x": list(range(1000)), "y": ["z"] * 1000}), d / "c.parquet")
    with pytest.raises(Exception) as ei:
        read_stream(gen_client.do_get(info.endpoints[0].ticket, options=call_options()))
    assert grpc_code(ei.value) == "FAILED_PRECONDITION", repr(ei.value)
    # Replanning reads the new version.
    res = scan(gen_client, {"paths": ["errors-changed/c.parquet"]})
    assert res.table.num_rows == 1000


def test_file_deleted_after_planning(gen_client, gen_root):
    d = gen_root / "errors-deleted"
    d.mkdir(exist_ok=True)
    pq.write_table(pa.table({"x": list(range(100))}), d / "c.parquet")
    info = gen_client.get_flight_info(command({"paths": ["errors-deleted/c.parquet"]}), options=call_options())
    os.remove(d / "c.parquet")
    with pytest.raises(Exception) as ei:
        read_stream(gen_client.do_get(info.endpoints[0].ticket, options=call_options()))
    assert grpc_code(ei.value) in ("NOT_FOUND", "FAILED_PRECONDITION"), repr(ei.value)


def test_directory_as_file(gen_client, good):
    expect_error(gen_client, {"paths": ["errors-good"]}, {"INVALID_ARGUMENT", "NOT_FOUND"})


def test_error_message_is_json_safe(gen_client):
    # Paths with odd characters come back in errors without breaking anything.
    for path in ('we"ird\n.parquet', "ünïcödé.parquet", "a b.parquet"):
        err = expect_error(gen_client, {"paths": [path]}, "NOT_FOUND")
        json.dumps(err.message)
