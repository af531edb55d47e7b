"""Failover: the replicas an endpoint's locations name, one pooled
pyarrow.flight client each, and the "resume" action.

scand lists each endpoint's locations owner first, and any replica of a
deployment serves any ticket (tickets are signed with a key the replicas
share), so a location is a preference. A scan reads an endpoint from its
first location; when that replica is UNAVAILABLE (down, draining, the
connection broke) it moves to the next, and after the last location to the
connection's own server. Before the first batch it simply redeems the ticket
there; after batches have arrived it asks the next replica for a ticket that
skips the rows already handed out (the "resume" action) and reads on, or
fails with :class:`ResumeFailed` saying how many rows arrived and why it
could not go on exactly.
"""

from __future__ import annotations

import base64
import json
import threading
from typing import Any, Dict, List, Optional, Tuple

import pyarrow as pa
import pyarrow.flight as flight

from ._errors import ConnectionFailed, ScandError, format_message, grpc_code, translate

__all__ = ["Replicas", "ResumeFailed", "resume_ticket", "fails_over"]

# Flight's URI for "the connection the FlightInfo came on".
_REUSE = "arrow-flight-reuse-connection://?"


class ResumeFailed(ConnectionFailed):
    """An endpoint's stream broke after rows had arrived, and no replica
    could resume it exactly. ``rows`` is how many of its rows arrived
    (and were handed out)."""

    rows: int = 0


def normalize(location: str) -> str:
    """A location URI as the pool keys it: grpc+tcp:// is grpc://, no
    trailing slash."""
    loc = location.strip().rstrip("/")
    if loc.startswith("grpc+tcp://"):
        loc = "grpc://" + loc[len("grpc+tcp://"):]
    elif "://" not in loc:
        loc = "grpc://" + loc
    return loc


def _uri(loc: Any) -> str:
    uri = getattr(loc, "uri", loc)
    return uri.decode() if isinstance(uri, bytes) else str(uri)


class Replicas:
    """One pyarrow.flight.FlightClient per replica, opened on first use with
    the connection's own TLS settings (the token goes with every call's
    options) and closed with the connection. The connection's own client is
    in the pool from the start, so a location naming it reuses it.
    Thread-safe."""

    def __init__(self, own_location: str, own_client: flight.FlightClient, client_kwargs: Dict[str, Any],
                 channel_kwargs: Optional[Dict[str, Any]] = None):
        self.own = (own_location, own_client)
        self._own_key = normalize(own_location)
        self._kwargs = client_kwargs
        # Options of every replica's channel, TLS or not (the receive limit).
        self._channel = dict(channel_kwargs or {})
        self._lock = threading.Lock()
        self._clients: Dict[str, flight.FlightClient] = {}
        self._closed = False

    def get(self, location: str) -> Tuple[str, flight.FlightClient]:
        """(location, client) of a location URI; raises ValueError for a
        URI pyarrow cannot use, ScandError once closed."""
        if location == _REUSE:
            return self.own
        key = normalize(location)
        if key == self._own_key:
            return self.own
        scheme = key.split("://", 1)[0]
        if scheme not in ("grpc", "grpc+tls"):
            raise ValueError(f"location {location!r}: unsupported scheme {scheme!r}")
        with self._lock:
            if self._closed:
                raise ScandError("the connection is closed; open a new one with scand.connect()")
            c = self._clients.get(key)
            if c is None:
                kwargs = dict(self._kwargs if scheme == "grpc+tls" else {}, **self._channel)
                try:
                    c = flight.FlightClient(key, **kwargs)
                except (flight.FlightError, pa.ArrowException) as e:
                    raise ValueError(f"location {location!r}: {e}") from e
                self._clients[key] = c
            return key, c

    def candidates(self, endpoint: flight.FlightEndpoint) -> List[Tuple[str, flight.FlightClient]]:
        """The replicas to try for endpoint, in order: its locations, then
        the connection's own server, each once. A location that does not
        parse is skipped: a preference lost, not an error."""
        replicas: List[Tuple[str, flight.FlightClient]] = []
        for loc in endpoint.locations:
            try:
                replicas.append(self.get(_uri(loc)))
            except ValueError:
                continue
        replicas.append(self.own)
        out, seen = [], set()
        for key, c in replicas:
            if id(c) not in seen:
                seen.add(id(c))
                out.append((key, c))
        return out

    def count(self) -> int:
        """Clients the pool opened (the connection's own not included)."""
        with self._lock:
            return len(self._clients)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            clients, self._clients = list(self._clients.values()), {}
        for c in clients:
            try:
                c.close()
            except Exception:  # noqa: BLE001
                pass


def fails_over(exc: BaseException) -> bool:
    """Worth another replica: UNAVAILABLE (refused or broken connection, a
    draining replica). Other codes are the request's or the data's problem,
    which another replica would repeat."""
    return grpc_code(exc) == "UNAVAILABLE"


def resume_ticket(client: flight.FlightClient, ticket: bytes, offset: int,
                  options: flight.FlightCallOptions) -> flight.Ticket:
    """A ticket of the same task as ticket that skips its first offset rows
    (the server's "resume" action, JSON body and answer)."""
    body = json.dumps({"ticket": base64.b64encode(ticket).decode(), "offset": offset}).encode()
    results = list(client.do_action(flight.Action("resume", body), options=options))
    if not results:
        raise ScandError("the resume action sent no result")
    try:
        answer = json.loads(results[0].body.to_pybytes())
        return flight.Ticket(base64.b64decode(answer["ticket"]))
    except (ValueError, KeyError, TypeError) as e:
        raise ScandError(f"the resume action answered something that is not a ResumeResult: {e}") from e


def resume_failed(index: int, rows: int, location: str, broke: BaseException, why: str) -> ResumeFailed:
    """The error of endpoint index that broke after rows had arrived."""
    base = translate(broke, location, "stream")
    head = str(base).split("\nhint: ")[0]  # "UNAVAILABLE: lost the connection to scand at ... while reading the scan: ..."
    hint = "Run the scan again once the replicas are back."
    msg = f"{head}; endpoint {index}'s stream broke after {rows} rows had arrived, and it cannot resume exactly: {why}"
    err = ResumeFailed(format_message(msg, hint), code=base.code or "UNAVAILABLE", server_message=base.server_message,
                       hint=hint, location=location)
    err.rows = rows
    return err


def all_failed(index: int, tried: List[str], broke: BaseException, location: str) -> ScandError:
    """The error of endpoint index that no replica would start."""
    base = translate(broke, location, "stream")
    if len(tried) <= 1:
        return base
    return ConnectionFailed(f"UNAVAILABLE: endpoint {index}: no replica could serve it; tried {', '.join(tried)}",
                            code=base.code, server_message=base.server_message, hint=base.hint, location=location)


def message_of(exc: BaseException) -> str:
    """A short reason for exc, for the list of replicas tried."""
    if isinstance(exc, ScandError):
        return exc.server_message or str(exc)
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__

