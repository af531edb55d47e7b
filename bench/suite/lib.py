"""Shared pieces of the benchmark suite (bench/suite/run.py): child processes
that die with the suite, versitygw, toxiproxy, `scand serve`, Prometheus
metrics, peak-RSS sampling, Flight scans with their IO figures, statistics.

Every server listens on 127.0.0.1 and is registered in PROCS, which
stop_all() (atexit and signal handlers in run.py) empties; each child also
gets PR_SET_PDEATHSIG, so none outlives a killed suite.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import statistics
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / ".tools" / "bin"

ACCESS_KEY = "scandbench"
SECRET_KEY = "scandbench-secret-0123456789"
REGION = "us-east-1"
BUCKET = "bench"

PROCS: list["Proc"] = []
PGIDS: list[int] = []  # process groups of the benchmark programs being run


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _die_with_parent() -> None:
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001
        pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: Path, n: int = 3000) -> str:
    try:
        return Path(path).read_bytes()[-n:].decode("utf-8", "replace")
    except OSError:
        return ""


class Proc:
    """A child process whose output goes to a log file; stop() ends it
    (SIGTERM, then SIGKILL after a grace period)."""

    def __init__(self, name: str, cmd: list[str], log_path: Path, env: dict[str, str] | None = None,
                 cwd: Path | None = None):
        self.name, self.cmd, self.log_path = name, [str(c) for c in cmd], Path(log_path)
        self.env = env if env is not None else dict(os.environ)
        self.cwd = cwd
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, ready=None, timeout: float = 30.0, stdout=None) -> "Proc":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab")
        self._log.write(f"$ {' '.join(self.cmd)}\n".encode())
        self._log.flush()
        self.proc = subprocess.Popen(self.cmd, stdout=stdout or self._log, stderr=self._log,
                                     stdin=subprocess.DEVNULL, env=self.env, cwd=self.cwd,
                                     preexec_fn=_die_with_parent)
        PROCS.append(self)
        if ready is None:
            return self
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {self.proc.returncode}:\n{tail(self.log_path)}")
            try:
                if ready():
                    return self
            except Exception:  # noqa: BLE001 - not up yet
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.name} did not come up in {timeout} s:\n{tail(self.log_path)}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace: float = 5.0) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
            except ProcessLookupError:
                pass
        if self in PROCS:
            PROCS.remove(self)
        try:
            self._log.close()
        except Exception:  # noqa: BLE001
            pass


def stop_all() -> None:
    for pgid in list(PGIDS):
        try:
            os.killpg(pgid, signal.SIGTERM)
        except OSError:
            pass
    for p in list(reversed(PROCS)):
        try:
            p.stop(grace=3.0)
        except Exception:  # noqa: BLE001
            pass


def http_up(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def http_get(url: str, timeout: float = 10) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


# --- versitygw and toxiproxy ------------------------------------------------

class VersityGW:
    """versitygw (S3 over a directory) with static keys and an access log,
    which counts the GETs of any client (scand's or pyarrow's)."""

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.addr = ""
        self.proc: Proc | None = None
        self.access_log = self.workdir / "versitygw-access.log"

    @property
    def endpoint(self) -> str:
        return "http://" + self.addr

    def start(self) -> "VersityGW":
        root = self.workdir / "gw"
        root.mkdir(parents=True, exist_ok=True)
        last = None
        for _ in range(3):
            self.addr = f"127.0.0.1:{free_port()}"
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.workdir), "TMPDIR": str(self.workdir)}
            self.proc = Proc("versitygw", [BIN / "versitygw", "--port", self.addr, "--access", ACCESS_KEY,
                                           "--secret", SECRET_KEY, "--keep-alive", "--quiet",
                                           "--access-log", self.access_log, "posix", root],
                             self.workdir / "versitygw.log", env)
            try:
                self.proc.start(lambda: http_up(self.endpoint + "/"))
                return self
            except RuntimeError as e:
                last = e
        raise RuntimeError(f"could not start versitygw: {last}")

    def object_gets(self) -> int:
        """GET-object requests in the access log so far."""
        try:
            text = self.access_log.read_text(errors="replace")
        except OSError:
            return 0
        return sum(1 for line in text.splitlines() if " s3_GetObject " in line)


class Toxiproxy:
    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self.api = ""
        self._seq = 0

    def start(self) -> "Toxiproxy":
        last = None
        for _ in range(3):
            port = free_port()
            self.api = f"http://127.0.0.1:{port}"
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.workdir)}
            proc = Proc("toxiproxy", [BIN / "server", "-host", "127.0.0.1", "-port", str(port)],
                        self.workdir / "toxiproxy.log", env)
            try:
                proc.start(lambda: http_up(self.api + "/version"))
                return self
            except RuntimeError as e:
                last = e
        raise RuntimeError(f"could not start toxiproxy: {last}")

    def call(self, method: str, path: str, body: dict | None = None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            out = resp.read()
        return json.loads(out) if out else None

    def latency_proxy(self, upstream: str, latency_ms: int) -> str:
        """A proxy to upstream with latency_ms added to every response chunk
        (downstream; bandwidth is not limited). Returns its endpoint URL."""
        self._seq += 1
        name = f"s3-{self._seq}"
        created = self.call("POST", "/proxies", {"name": name, "listen": "127.0.0.1:0", "upstream": upstream,
                                                 "enabled": True})
        self.call("POST", f"/proxies/{name}/toxics", {
            "name": "latency", "type": "latency", "stream": "downstream", "toxicity": 1.0,
            "attributes": {"latency": latency_ms, "jitter": 0}})
        return "http://" + created["listen"]


def s3_filesystem(endpoint: str):
    import pyarrow.fs as pafs
    # See e2e/s3lib.py: versitygw v1.8.0 and aws-chunked upload trailers.
    os.environ["AWS_REQUEST_CHECKSUM_CALCULATION"] = "when_required"
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    scheme, host = endpoint.split("://", 1)
    return pafs.S3FileSystem(access_key=ACCESS_KEY, secret_key=SECRET_KEY, endpoint_override=host, scheme=scheme,
                             region=REGION, allow_bucket_creation=True)


def upload(fs, local: Path, key: str, attempts: int = 3) -> None:
    data = Path(local).read_bytes()
    for i in range(attempts):
        try:
            with fs.open_output_stream(f"{BUCKET}/{key}") as out:
                out.write(data)
            return
        except OSError:
            if i == attempts - 1:
                raise
            time.sleep(0.3)


# --- scand ------------------------------------------------------------------

_METRIC_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$')


def parse_metrics(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _METRIC_LINE.match(line)
        if m:
            labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


class Scand:
    """`scand serve` as a child process, with Prometheus metrics."""

    def __init__(self, workdir: Path, name: str, root: Path, args: list[str] = (), s3_endpoint: str | None = None):
        self.workdir, self.name, self.root, self.args = Path(workdir), name, Path(root), list(args)
        self.s3_endpoint = s3_endpoint
        self.port = self.metrics_port = 0
        self.proc: Proc | None = None

    @property
    def location(self) -> str:
        return f"grpc://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self) -> "Scand":
        import pyarrow.flight as flight
        last = None
        for _ in range(3):
            self.port, self.metrics_port = free_port(), free_port()
            cmd = [BIN / "scand", "serve", "--listen", f"127.0.0.1:{self.port}", "--root", self.root,
                   "--metrics-listen", f"127.0.0.1:{self.metrics_port}", *self.args]
            env = {k: v for k, v in os.environ.items() if not k.startswith(("SCAND_", "AWS_"))}
            env["AWS_EC2_METADATA_DISABLED"] = "true"
            if self.s3_endpoint:
                cmd += ["--s3-endpoint", self.s3_endpoint, "--s3-path-style", "--s3-access-key", ACCESS_KEY,
                        "--s3-region", REGION]
                env["SCAND_S3_SECRET_KEY"] = SECRET_KEY

            def ready():
                c = flight.FlightClient(self.location)
                try:
                    list(c.list_actions(options=flight.FlightCallOptions(timeout=3)))
                finally:
                    c.close()
                self.metrics_text()
                return True

            self.proc = Proc(f"scand-{self.name}", cmd, self.workdir / f"scand-{self.name}.log", env)
            try:
                self.proc.start(ready)
                return self
            except RuntimeError as e:
                last = e
        raise RuntimeError(f"could not start scand: {last}")

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()

    def metrics_text(self) -> str:
        return http_get(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5)

    def metrics(self) -> dict:
        return parse_metrics(self.metrics_text())

    def metric(self, name: str, **labels) -> float:
        return self.metrics().get((name, frozenset(labels.items())), 0.0)

    def s3_gets(self) -> int:
        return int(self.metric("scand_storage_requests_total", backend="s3", op="read"))

    def s3_bytes(self) -> int:
        return int(self.metric("scand_storage_read_bytes_total", backend="s3"))


def scand_version() -> str:
    try:
        return subprocess.run([str(BIN / "scand"), "version"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"unknown ({e})"


def flight_scan(client, request: dict | None = None, descriptor=None, timeout: float = 300) -> dict:
    """A scan with a stock pyarrow.flight client: GetFlightInfo, then every
    endpoint's DoGet in order, batches counted and dropped. Returns rows,
    Arrow bytes, and the sums of the IO figures of the streams (app_metadata
    of the last message), plus the list of per-stream figures."""
    import pyarrow.flight as flight
    opts = flight.FlightCallOptions(timeout=timeout)
    if descriptor is None:
        descriptor = flight.FlightDescriptor.for_command(json.dumps(request))
    info = client.get_flight_info(descriptor, options=opts)
    rows = nbytes = 0
    streams = []
    for ep in info.endpoints:
        reader = client.do_get(ep.ticket, options=opts)
        meta = None
        while True:
            try:
                chunk = reader.read_chunk()
            except StopIteration:
                break
            if chunk.data is not None:
                rows += chunk.data.num_rows
                nbytes += chunk.data.nbytes
            if chunk.app_metadata is not None:
                meta = chunk.app_metadata
        if meta is not None:
            try:
                streams.append(json.loads(meta.to_pybytes()))
            except ValueError:
                pass
    out = {"rows": rows, "nbytes": nbytes, "endpoints": len(info.endpoints), "streams": streams}
    for k in ("reads", "bytes_fetched", "bytes_used", "bytes_wasted", "io_seconds"):
        out[k] = sum(s.get(k, 0) for s in streams)
    holes = [s["hole"] for s in streams if "hole" in s]
    out["hole"] = holes[-1] if holes else None
    return out


# --- memory -----------------------------------------------------------------

def proc_status(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM (bytes) of a process."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    k, v = line.split(":", 1)
                    out[k] = int(v.split()[0]) * 1024
    except OSError:
        pass
    return out


def reset_hwm(pid: int) -> bool:
    """Resets VmHWM to the current RSS (clear_refs 5)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class RSSSampler:
    """Samples VmRSS of a pid every interval seconds in a thread; max_rss is
    the largest seen. Stops by itself after max_seconds."""

    def __init__(self, pid: int, interval: float = 0.02, max_seconds: float = 600):
        self.pid, self.interval, self.max_seconds = pid, interval, max_seconds
        self.max_rss = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        end = time.monotonic() + self.max_seconds
        while not self._stop.is_set() and time.monotonic() < end:
            rss = proc_status(self.pid).get("VmRSS", 0)
            self.max_rss = max(self.max_rss, rss)
            self._stop.wait(self.interval)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(5)


# --- statistics -------------------------------------------------------------

def mmm(xs: list[float]) -> dict:
    """min / median / max (and the samples)."""
    xs = [float(x) for x in xs]
    if not xs:
        return {"min": None, "median": None, "max": None, "n": 0, "samples": []}
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs), "n": len(xs), "samples": xs}


class Deadline:
    """A time budget: left() seconds remain; expired() once spent."""

    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def expired(self) -> bool:
        return self.left() <= 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (/proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def self_cpu_seconds() -> float:
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def goroutine_dump_summary(log_path: Path, since: int) -> dict:
    """Counts the scand functions goroutines were blocked in, from a Go
    runtime dump (SIGQUIT) appended to log_path after byte offset since."""
    try:
        text = Path(log_path).read_bytes()[since:].decode("utf-8", "replace")
    except OSError:
        return {}
    counts: dict[str, int] = {}
    for block in text.split("\ngoroutine ")[1:]:
        for line in block.splitlines()[1:]:
            m = re.match(r"^(github\.com/scand/scand/\S+?)\((?=0x|\{|\)|\.\.\.|\d)", line)
            if m:
                name = m.group(1).replace("github.com/scand/scand/", "")
                counts[name] = counts.get(name, 0) + 1
                break
    return dict(sorted(counts.items(), key=lambda kv: -kv[1])[:8])
