"""A scan that ends early cancels its server streams and stops its worker
threads; the server stays healthy and the next scan works."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time

import pytest

import scand
from scand import _progress
from scand_testlib import scan_threads

BIG_ROWS = 400_000


def assert_clean_and_healthy(conn, server):
    deadline = time.monotonic() + 5
    while scan_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not scan_threads(), "scan worker threads left running"
    assert server.alive()
    t = conn.read_table("big/big.parquet", columns=["k"], split_bytes=1)
    assert t.num_rows == BIG_ROWS
    assert t.column("k").to_pylist()[-1] == BIG_ROWS - 1


def big_scan(conn, **kw):
    kw.setdefault("split_bytes", 1)
    kw.setdefault("batch_rows", 500)
    kw.setdefault("read_ahead", 1)
    return conn.scan("big/big.parquet", **kw)


class _InterruptAfter:
    """A progress object whose update raises KeyboardInterrupt, as Ctrl-C
    does, inside the scan's own generator."""

    def __init__(self, batches: int):
        self.left = batches

    def update(self, n):
        self.left -= 1
        if self.left == 0:
            raise KeyboardInterrupt

    def close(self, ok=True):
        pass


def test_keyboard_interrupt_during_read_all(conn, server, monkeypatch):
    monkeypatch.setattr(_progress, "make", lambda *a, **k: _InterruptAfter(5))
    reader = big_scan(conn, max_workers=4)
    st = conn.last_stats
    with pytest.raises(KeyboardInterrupt):
        reader.read_all()
    assert st.done and not st.complete
    assert isinstance(st.error, KeyboardInterrupt)
    assert len(st.streams) < st.endpoints  # the server streams were cut off
    monkeypatch.undo()
    assert_clean_and_healthy(conn, server)


def test_real_sigint_during_read_all(conn, server):
    """SIGINT delivered to the process while read_all() runs."""
    reader = big_scan(conn, batch_rows=100, max_workers=2)
    st = conn.last_stats

    def interrupt():
        deadline = time.monotonic() + 10
        while st.rows_received == 0 and time.monotonic() < deadline:
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=interrupt)
    t.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            reader.read_all()
            time.sleep(5)  # the scan ended before the signal came: wait for it here
    finally:
        t.join()
    assert st.done
    if not st.complete:
        assert isinstance(st.error, KeyboardInterrupt)
    assert_clean_and_healthy(conn, server)


def test_interrupt_in_a_loop_over_an_unnamed_reader(conn, server):
    """`for batch in conn.scan(...)`: the exception unwinds the loop, which
    drops the reader, which ends the scan at once."""
    with pytest.raises(KeyboardInterrupt):
        for i, _batch in enumerate(big_scan(conn, max_workers=3)):
            if i == 10:
                raise KeyboardInterrupt
    st = conn.last_stats
    assert st.done and not st.complete
    assert_clean_and_healthy(conn, server)


def test_interrupt_in_the_consumer_then_reader_dropped(conn, server):
    reader = big_scan(conn, max_workers=3)
    st = conn.last_stats
    with pytest.raises(KeyboardInterrupt):
        for i, _batch in enumerate(reader):
            if i == 10:
                raise KeyboardInterrupt  # raised in the user's loop, not in the scan
    assert not st.done  # the reader still exists; its workers wait on full queues
    del reader
    gc.collect()
    assert st.done and not st.complete
    assert_clean_and_healthy(conn, server)


def test_connection_cancel(conn, server):
    reader = big_scan(conn, max_workers=2)
    it = iter(reader)
    next(it)
    assert conn.cancel() == 1
    with pytest.raises(scand.Cancelled, match="cancelled"):
        for _ in it:
            pass
    assert conn.last_stats.done and not conn.last_stats.complete
    assert conn.cancel() == 0
    assert_clean_and_healthy(conn, server)


def test_close_cancels_running_scans(server):
    c = scand.connect(server.location)
    reader = big_scan(c)
    it = iter(reader)
    next(it)
    with c:
        pass  # __exit__ closes
    with pytest.raises(scand.ScandError):
        for _ in it:
            pass
    with scand.connect(server.location) as c2:
        assert_clean_and_healthy(c2, server)


def test_reader_never_read(conn, server):
    reader = big_scan(conn)
    assert not scan_threads()  # workers start at the first read, not before
    del reader
    gc.collect()
    assert_clean_and_healthy(conn, server)


def test_many_abandoned_scans_leave_the_server_healthy(conn, server):
    for _ in range(10):
        it = iter(big_scan(conn, max_workers=4))
        next(it)
        del it
    gc.collect()
    assert_clean_and_healthy(conn, server)
