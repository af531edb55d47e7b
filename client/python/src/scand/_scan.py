"""A running scan: the endpoints' streams fetched by a bounded set of worker
threads, handed to the consumer in endpoint order.

Memory stays bounded: at most ``max_workers`` streams are open at a time
(endpoints i .. i+max_workers-1 while the consumer reads endpoint i), and
each holds at most ``read_ahead`` record batches that the consumer has not
taken yet. Workers start when the consumer asks for the first batch, not
before.

A scan that ends early (an exception in the consumer, KeyboardInterrupt, the
reader garbage-collected, ``Connection.cancel()``) cancels every open server
stream with ``FlightStreamReader.cancel()`` and stops its workers.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import threading
import time
from typing import Any, Iterator, List, Optional, Protocol, Tuple

import pyarrow as pa
import pyarrow.flight as flight

from ._errors import Cancelled, ServerError, translate
from ._replicas import Replicas, all_failed, fails_over, message_of, resume_failed, resume_ticket
from ._stats import Stats, StreamStats


class ScanHost(Protocol):
    """What a running scan needs of the connection that started it. Declared
    here, where it is used, so that this module does not import
    ``_connection`` (which imports this one)."""

    location: str
    timeout: Optional[float]
    _client: flight.FlightClient
    _replicas: Replicas

    def _options(self, timeout: Optional[float]) -> flight.FlightCallOptions: ...

    def _scan_ended(self, run: "ScanRun") -> None: ...

_POLL_S = 0.05


class ScanRun:
    def __init__(self, conn: ScanHost, info: flight.FlightInfo, options: flight.FlightCallOptions,
                 stats: Stats, progress: Any, max_workers: int, read_ahead: int, started: float,
                 limit: Optional[int] = None):
        self._conn = conn
        self._client = conn._client
        self._location = conn.location
        self._options = options
        self._action_options = conn._options(conn.timeout)
        self._endpoints = list(info.endpoints)
        self.schema: Optional[pa.Schema] = info.schema
        self._stats = stats
        self._progress = progress
        self._max_workers = max(1, int(max_workers))
        self._read_ahead = max(1, int(read_ahead))
        self._started_at = started
        self._queues: List[Optional[queue.Queue]] = [None] * len(self._endpoints)
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._open: set = set()  # FlightStreamReaders not yet ended
        self._error: Optional[Tuple[int, BaseException]] = None
        self._next = 0  # next endpoint to start
        self._threads: List[threading.Thread] = []
        self._finished = False
        # With a filter the server cannot know which endpoint holds the first
        # `limit` matches, so each carries the whole limit. Once the scan has
        # handed out limit rows it reads the current stream to its end (at
        # most limit rows more, dropped; its IO figures come last) and
        # cancels the others. None: every endpoint to its end.
        self._limit = limit or None

    # -- workers --------------------------------------------------------------

    def _start_until(self, end: int) -> None:
        end = min(end, len(self._endpoints))
        while self._next < end and not self._cancel.is_set():
            i = self._next
            self._next += 1
            self._queues[i] = queue.Queue(maxsize=self._read_ahead)
            t = threading.Thread(target=self._worker, args=(i,), name=f"scand-scan-{i}", daemon=True)
            self._threads.append(t)
            t.start()

    def _put(self, q: queue.Queue, item) -> bool:
        while not self._cancel.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _worker(self, i: int) -> None:
        try:
            if self._cancel.is_set() or self._queues[i] is None:
                return
            self._read_endpoint(i)
        except BaseException as e:  # noqa: BLE001 - handed to the consumer
            if self._cancel.is_set():
                return
            with self._lock:
                if self._error is None:
                    self._error = (i, e)

    def _read_endpoint(self, i: int) -> None:
        """Reads endpoint i from its replicas in turn (see _replicas.py):
        the next one when a replica is UNAVAILABLE, resumed after the rows
        already handed out once some have arrived."""
        ep = self._endpoints[i]
        rows = [0]  # rows of the endpoint put on its queue, across replicas
        tried: List[str] = []
        broke: Optional[BaseException] = None
        broke_at = self._location
        for location, client in self._conn._replicas.candidates(ep):
            ticket = ep.ticket
            if rows[0] > 0:
                try:
                    ticket = resume_ticket(client, ep.ticket.ticket, rows[0], self._action_options)
                except BaseException as e:  # noqa: BLE001
                    if self._cancel.is_set() or not fails_over(e):
                        why = f"the resume action on {location} failed: {message_of(translate(e, location, 'action'))}"
                        raise resume_failed(i, rows[0], broke_at, broke, why) from e
                    tried.append(f"{location} (resume: {message_of(e)})")
                    continue
            if broke is not None:
                self._stats._add_failover()
            try:
                self._stream(i, client, ticket, rows)
                return
            except BaseException as e:  # noqa: BLE001
                if self._cancel.is_set() or not fails_over(e):
                    raise translate(e, location, "stream") from e
                broke, broke_at = e, location
                tried.append(f"{location} ({message_of(e)})")
        assert broke is not None
        if rows[0] > 0:
            why = ("the endpoint lists no other replica to resume on" if len(tried) <= 1 else
                   "no replica was left to resume on; tried " + ", ".join(tried))
            raise resume_failed(i, rows[0], broke_at, broke, why) from broke
        raise all_failed(i, tried, broke, broke_at) from broke

    def _stream(self, i: int, client: flight.FlightClient, ticket: flight.Ticket, rows: List[int]) -> None:
        """One DoGet of endpoint i onto its queue; rows[0] counts the rows."""
        q = self._queues[i]
        if q is None:
            return
        skipped = rows[0]  # a resumed stream's figures count only its own rows
        reader = client.do_get(ticket, options=self._options)
        try:
            with self._lock:
                if self._cancel.is_set():
                    _cancel_reader(reader)
                    return
                self._open.add(reader)
            last_meta: Optional[bytes] = None
            while True:
                try:
                    chunk = reader.read_chunk()
                except StopIteration:
                    break
                if chunk.app_metadata is not None and chunk.app_metadata.size > 0:
                    last_meta = chunk.app_metadata.to_pybytes()
                if chunk.data is not None:
                    if not self._put(q, ("batch", chunk.data)):
                        return
                    rows[0] += chunk.data.num_rows
            if last_meta is not None:
                try:
                    meta = json.loads(last_meta)
                except ValueError:
                    meta = None
                if isinstance(meta, dict):
                    s = StreamStats.from_metadata(i, meta)
                    self._stats._add_stream(dataclasses.replace(s, rows=s.rows + skipped) if skipped else s)
            self._put(q, ("end", None))
        finally:
            with self._lock:
                self._open.discard(reader)

    # -- consumer -------------------------------------------------------------

    def _raise_if_failed(self) -> None:
        err = self._error
        if err is None:
            return
        _, exc = err
        raise translate(exc, self._location, "stream") from exc

    def _conform(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        if self.schema is None or batch.schema.equals(self.schema, check_metadata=True):
            return batch
        if len(batch.schema) == len(self.schema) and all(
                a.type.equals(b.type) for a, b in zip(batch.schema, self.schema)):
            return pa.RecordBatch.from_arrays(batch.columns, schema=self.schema)
        raise ServerError(
            f"scand at {self._location} sent a batch whose schema differs from the planned one: "
            f"got {batch.schema}, planned {self.schema}. This is a server bug: please report it.",
            location=self._location)

    def batches(self) -> Iterator[pa.RecordBatch]:
        ok = False
        remaining = self._limit
        try:
            n = len(self._endpoints)
            self._start_until(self._max_workers)
            for i in range(n):
                q = self._queues[i]
                while True:
                    self._raise_if_failed()
                    if self._cancel.is_set():
                        raise Cancelled(f"the scan on scand at {self._location} was cancelled (Connection.cancel() or "
                                        f"Connection.close()) before it ended.", code="CANCELLED",
                                        location=self._location)
                    try:
                        kind, value = q.get(timeout=_POLL_S)
                    except queue.Empty:
                        continue
                    if kind == "end":
                        break
                    if remaining is not None and remaining <= 0:
                        continue  # past the limit: read this stream to its end (its figures come last)
                    batch = self._conform(value)
                    self._raise_if_failed()
                    if remaining is not None:
                        if batch.num_rows > remaining:
                            batch = batch.slice(0, remaining)
                        remaining -= batch.num_rows
                    self._stats._add_rows(batch.num_rows)
                    self._progress.update(batch.num_rows)
                    if batch.num_rows or remaining is None:
                        yield batch
                if remaining is not None and remaining <= 0:
                    self.cancel()  # limit rows handed out: the streams still open are not needed
                    break
                self._queues[i] = None
                self._start_until(i + 1 + self._max_workers)
            ok = True
        except GeneratorExit:
            raise
        except BaseException as e:
            self._stats.error = e
            raise
        finally:
            self._finish(ok)

    # -- ending ---------------------------------------------------------------

    def cancel(self) -> None:
        """Cancels every open stream and stops the workers (idempotent)."""
        self._cancel.set()
        with self._lock:
            readers = list(self._open)
            self._open.clear()
        for r in readers:
            _cancel_reader(r)
        for j, q in enumerate(self._queues):
            if q is not None:
                _drain(q)
                self._queues[j] = None

    def _finish(self, ok: bool) -> None:
        if self._finished:
            return
        self._finished = True
        if not ok:
            self.cancel()
        self._cancel.set()
        self._progress.close(ok)
        st = self._stats
        st.wall_seconds = time.perf_counter() - self._started_at
        st.complete = ok
        st.done = True
        self._conn._scan_ended(self)

    def join(self, timeout: float = 5.0) -> None:
        """Waits for the worker threads to exit (tests use it)."""
        deadline = time.monotonic() + timeout
        for t in list(self._threads):
            t.join(max(0.0, deadline - time.monotonic()))


def _cancel_reader(reader) -> None:
    try:
        reader.cancel()
    except Exception:  # noqa: BLE001 - cancelling a finished stream may fail
        pass


def _drain(q: queue.Queue) -> None:
    try:
        while True:
            q.get_nowait()
    except queue.Empty:
        pass
