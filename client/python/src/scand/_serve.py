"""A local scand server for this process: ``scand.serve(root)``.

The server binary is the one bundled in the platform wheel
(``scand/_bin/scand``, put there by scripts/build-wheel.sh), else
``$SCAND_BIN``, else ``scand`` on ``PATH``. :func:`serve` starts
``scand serve --listen 127.0.0.1:PORT --root ROOT`` on a free port, waits
until it answers, and returns a :class:`ServedConnection`: a
:class:`Connection` whose ``close()`` (or the end of its ``with`` block)
also stops the server.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from typing import Optional, Sequence, Union

from ._connection import Connection
from ._errors import ConnectionFailed, ScandError

__all__ = ["serve", "find_binary", "ServedConnection", "ServeFailed", "BUNDLED_BINARY"]

#: Where the platform wheel carries the server binary.
BUNDLED_BINARY = Path(__file__).resolve().parent / "_bin" / ("scand.exe" if os.name == "nt" else "scand")

# A port picked by binding port 0 can be taken by someone else before scand
# binds it: that many ports are tried.
_PORT_ATTEMPTS = 3


class ServeFailed(ScandError, RuntimeError):
    """``scand.serve()`` could not start a server that answers; the message
    has the end of the server's log."""


def _executable(path: Union[str, os.PathLike]) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _is_entry_point(path: str) -> bool:
    """Whether ``path`` is this package's own ``scand`` console script (a
    Python launcher, which would only come back here), not a server."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!") and b"scand._cli" in head


def find_binary(binary: Union[None, str, os.PathLike] = None) -> str:
    """The path of the scand server binary.

    ``binary`` if given; else the one bundled in this package (the platform
    wheel); else ``$SCAND_BIN``; else ``scand`` on ``PATH`` (this package's
    own ``scand`` command is skipped). Raises FileNotFoundError saying how
    to get one.
    """
    if binary is not None:
        if not _executable(binary):
            raise FileNotFoundError(f"binary={os.fspath(binary)!r} is not an executable file: pass the path of a "
                                    f"scand binary, or leave binary=None to find one")
        return os.fspath(binary)
    if _executable(BUNDLED_BINARY):
        return str(BUNDLED_BINARY)
    env = os.environ.get("SCAND_BIN")
    if env:
        if not _executable(env):
            raise FileNotFoundError(f"SCAND_BIN={env!r} is not an executable file: point it at a scand binary "
                                    f"(go build -o .tools/bin/scand ./cmd/scand) or unset it")
        return env
    for d in os.get_exec_path():
        candidate = os.path.join(d, BUNDLED_BINARY.name)
        if _executable(candidate) and not _is_entry_point(candidate):
            return candidate
    raise FileNotFoundError(
        "no scand server binary: this scand package has none bundled (it was installed from source, not from "
        "the platform wheel), SCAND_BIN is not set, and there is no scand binary on PATH. Install the platform "
        "wheel (bash scripts/build-wheel.sh, then pip install the .whl it writes), or "
        "`go install github.com/scand/scand/cmd/scand@latest`, or set SCAND_BIN to a scand binary")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen, timeout: float) -> None:
    """SIGTERM (scand drains and stops), then SIGKILL after ``timeout`` s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _tail(path: Path, n: int = 4000) -> str:
    try:
        return path.read_bytes()[-n:].decode("utf-8", "replace")
    except OSError:
        return ""


class ServedConnection(Connection):
    """A :class:`Connection` to a server that :func:`serve` started.

    ``close()`` (or leaving its ``with`` block) closes the connection and
    stops the server: SIGTERM, then SIGKILL if it has not stopped within
    ``stop_timeout`` seconds. A server whose connection is never closed is
    stopped when the connection is garbage-collected or the interpreter
    exits.

    Attributes:
        process: the server's ``subprocess.Popen``.
        binary, root: what was started; ``log_path``: its stdout and stderr.
        returncode: the server's exit status once it has stopped, else None.
    """

    def __init__(self, process: subprocess.Popen, location: str, *, binary: str, root: str, log_path: Path,
                 remove_log: bool, stop_timeout: float, **connect_options):
        super().__init__(location, **connect_options)
        self.process = process
        self.binary = binary
        self.root = root
        self.log_path = log_path
        self.stop_timeout = stop_timeout
        self._remove_log = remove_log
        self._stopper = weakref.finalize(self, _stop, process, stop_timeout)

    @property
    def returncode(self) -> Optional[int]:
        return self.process.poll()

    def log_tail(self, n: int = 4000) -> str:
        """The last ``n`` bytes of the server's output."""
        return _tail(self.log_path, n)

    def close(self) -> None:
        """Closes the connection, then stops the server (idempotent)."""
        super().close()
        self._stopper()
        if self._remove_log:
            self._remove_log = False
            try:
                self.log_path.unlink()
            except OSError:
                pass

    def __repr__(self) -> str:
        state = "running" if self.returncode is None else f"exited with status {self.returncode}"
        return f"<scand.ServedConnection {self.location} root={self.root!r} (server pid {self.process.pid}, {state})>"


def serve(root: Union[str, os.PathLike] = ".", *, binary: Union[None, str, os.PathLike] = None,
          args: Sequence[str] = (), ready_timeout: float = 30.0, stop_timeout: float = 10.0,
          log: Union[None, str, os.PathLike] = None, **connect_options) -> ServedConnection:
    """Starts a scand server on ``root`` and connects to it.

    ``scand serve --listen 127.0.0.1:PORT --root ROOT [args...]`` on a free
    port of the loopback interface, with the binary :func:`find_binary`
    finds (or ``binary``). Returns a :class:`ServedConnection` once the
    server answers::

        with scand.serve("/data") as conn:     # stops the server at the end
            conn.scan("events/*.parquet").read_pandas()

        conn = scand.serve("/data")            # or: close it yourself
        ...
        conn.close()

    Args:
        root: the directory served (paths of scans are relative to it).
        binary: the scand binary; None: :func:`find_binary`.
        args: more ``scand serve`` flags (``["--io-memory", "256MiB"]``).
        ready_timeout: seconds to wait for the server to answer.
        stop_timeout: seconds ``close()`` waits after SIGTERM before SIGKILL.
        log: a file the server's output is appended to; None: a temporary
            file, removed by ``close()`` (``conn.log_tail()`` reads it).
        connect_options: passed to :func:`scand.connect` (``timeout``, ...).

    The server inherits the environment, so ``SCAND_*`` settings of flags
    not on its command line and AWS credentials apply. Raises
    :class:`ServeFailed` (with the end of the server's log) when the server
    exits or does not answer in time.
    """
    exe = find_binary(binary)
    root_dir = os.path.abspath(os.fspath(root))
    if not os.path.isdir(root_dir):
        raise FileNotFoundError(f"root {os.fspath(root)!r} is not a directory: serve a directory of Parquet or "
                                f"ORC files")
    if log is None:
        fd, name = tempfile.mkstemp(prefix="scand-serve-", suffix=".log")
        os.close(fd)
        log_path, remove_log = Path(name), True
    else:
        log_path, remove_log = Path(log), False
    try:
        return _start(exe, root_dir, args, log_path, remove_log, ready_timeout, stop_timeout, connect_options)
    except BaseException:
        if remove_log:
            log_path.unlink(missing_ok=True)
        raise


def _start(exe: str, root_dir: str, args: Sequence[str], log_path: Path, remove_log: bool, ready_timeout: float,
           stop_timeout: float, connect_options: dict) -> ServedConnection:
    for attempt in range(1, _PORT_ATTEMPTS + 1):
        port = _free_port()
        cmd = [exe, "serve", "--listen", f"127.0.0.1:{port}", "--root", root_dir, *map(str, args)]
        with open(log_path, "ab") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            conn = _connect_when_ready(proc, f"grpc://127.0.0.1:{port}", ready_timeout, stop_timeout,
                                       binary=exe, root=root_dir, log_path=log_path, remove_log=remove_log,
                                       **connect_options)
        except BaseException:
            _stop(proc, stop_timeout)
            raise
        if conn is not None:
            return conn
        output = _tail(log_path)
        if "address already in use" not in output or attempt == _PORT_ATTEMPTS:
            raise ServeFailed(f"scand serve ({exe}, root {root_dir}) exited with status {proc.returncode} before "
                              f"it answered. Its output ends with:\n{output}\nFix what it says (a flag in args=?), "
                              f"or run the command yourself: {' '.join(cmd)}")
    raise AssertionError("unreachable")


def _connect_when_ready(proc: subprocess.Popen, location: str, ready_timeout: float, stop_timeout: float,
                        **options) -> Optional[ServedConnection]:
    """The connection once the server answers; None if it exited first."""
    deadline = time.monotonic() + ready_timeout
    last: Optional[BaseException] = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return None
        try:
            # check=True: the connection calls the server, which is what "ready" means
            return ServedConnection(proc, location, stop_timeout=stop_timeout, **{**options, "check": True})
        except ConnectionFailed as e:  # not listening yet
            last = e
            time.sleep(0.05)
    raise ServeFailed(f"scand serve at {location} did not answer within {ready_timeout:g} s (ready_timeout=), "
                      f"so it was stopped. Last error: {last}. Its output ends with:\n{_tail(options['log_path'])}")
