"""Processes and helpers for the S3 end-to-end tests (test_s3.py).

  VersityGW       versitygw (an S3 gateway over a temporary directory) on
                  127.0.0.1:free-port with static keys
  Toxiproxy       toxiproxy's server, with proxies and toxics made through its
                  HTTP API (latency between scand and versitygw)
  S3ScandServer   `scand serve` with extra flags and environment (the --s3-*
                  flags, SCAND_S3_SECRET_KEY, --metrics-listen), whose
                  Prometheus metrics the tests read

The tools come from scripts/install-tools.sh (CI: scripts/test.sh runs it).
They are found through $SCAND_VERSITYGW / $SCAND_TOXIPROXY (the binaries, as
the Go tests of storage/s3 use), $SCAND_TOOLS (a directory holding
`versitygw` and toxiproxy's `server`), or <repo>/.tools/bin; without them the
S3 tests skip and say so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight

from scandlib import REPO, ScandServer, _die_with_parent, call_options, free_port

INSTALL_HINT = "run `bash scripts/install-tools.sh` (scripts/test.sh does)"

# Static credentials of the test versitygw.
ACCESS_KEY = "scande2e"
SECRET_KEY = "scande2e-secret-0123456789"
REGION = "us-east-1"
# The bucket the session's fixtures create (conftest.s3_mirror).
S3_BUCKET = "scand-e2e"


def find_tool(name: str, env: str) -> str | None:
    """The path of a test tool: $env, else $SCAND_TOOLS/name, else
    <repo>/.tools/bin/name; None when none exists."""
    candidates = []
    if os.environ.get(env):
        candidates.append(os.environ[env])
    if os.environ.get("SCAND_TOOLS"):
        candidates.append(os.path.join(os.environ["SCAND_TOOLS"], name))
    candidates.append(str(REPO / ".tools" / "bin" / name))
    for c in candidates:
        if os.access(c, os.X_OK):
            return c
    return None


def _tail(path: Path, n: int = 4000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-n:].decode("utf-8", "replace")


class Process:
    """A test server process: its output goes to a log file, it dies with the
    test process, and stop() kills it."""

    def __init__(self, name: str, cmd: list[str], env: dict[str, str], log_path: Path):
        self.name = name
        self.cmd = cmd
        self.env = env
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None

    def start(self, ready, timeout: float = 20.0) -> None:
        with open(self.log_path, "ab") as log:
            log.write(f"$ {' '.join(self.cmd)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=self.env, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with status {self.proc.returncode}:\n{_tail(self.log_path)}")
            if ready():
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.name} did not come up in {timeout} s:\n{_tail(self.log_path)}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


def _http_up(url: str) -> bool:
    """True once anything answers HTTP at url (an error status included)."""
    try:
        with urllib.request.urlopen(url, timeout=1):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


class VersityGW:
    """versitygw serving a temporary directory, with static keys."""

    def __init__(self, binary: str, workdir: Path):
        self.binary = binary
        self.workdir = workdir
        self.port = 0
        self.proc: Process | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        root = self.workdir / "gw"
        root.mkdir(parents=True, exist_ok=True)
        last = None
        for _ in range(3):  # a port found free can be taken again
            self.port = free_port()
            # Only what it needs: versitygw reads ROOT_ACCESS_KEY, VGW_* and
            # AWS_* from the environment.
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.workdir), "TMPDIR": str(self.workdir)}
            self.proc = Process("versitygw", [self.binary, "--port", self.addr, "--access", ACCESS_KEY,
                                              "--secret", SECRET_KEY, "--keep-alive", "--quiet", "posix", str(root)],
                                env, self.workdir / "versitygw.log")
            try:
                self.proc.start(lambda: _http_up(self.endpoint + "/"))
                return
            except RuntimeError as e:
                last = e
        raise RuntimeError(f"could not start versitygw: {last}")

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()


def s3_filesystem(endpoint: str, access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY):
    """pyarrow's S3 filesystem on an S3-compatible endpoint (http)."""
    import pyarrow.fs as pafs

    # aws-sdk-cpp (in pyarrow) sends upload parts as aws-chunked bodies with
    # a CRC64 trailer by default; versitygw v1.8.0 then sometimes fails the
    # CompleteMultipartUpload that follows on the same connection (HTTP 400,
    # "An error occurred when parsing the HTTP request", about 1 upload in
    # 10). Checksums only when required avoids the trailer; with it, 60 of 60
    # uploads passed. It must be set before the S3 client is made.
    os.environ["AWS_REQUEST_CHECKSUM_CALCULATION"] = "when_required"
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    host = endpoint.split("://", 1)[1]
    return pafs.S3FileSystem(access_key=access_key, secret_key=secret_key, endpoint_override=host, scheme="http",
                             region=REGION, allow_bucket_creation=True, allow_bucket_deletion=True)


def upload(fs, local: Path | bytes, bucket_key: str, attempts: int = 3) -> None:
    """Writes a local file (or bytes) to bucket/key, retrying a failed
    upload."""
    data = local if isinstance(local, bytes) else Path(local).read_bytes()
    for i in range(attempts):
        try:
            with fs.open_output_stream(bucket_key) as out:
                out.write(data)
            return
        except OSError:
            if i == attempts - 1:
                raise
            time.sleep(0.2)


class Toxiproxy:
    """toxiproxy's server and its HTTP API."""

    def __init__(self, binary: str, workdir: Path):
        self.binary = binary
        self.workdir = workdir
        self.port = 0
        self.proc: Process | None = None
        self._seq = 0

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        last = None
        for _ in range(3):
            self.port = free_port()
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.workdir)}
            self.proc = Process("toxiproxy", [self.binary, "-host", "127.0.0.1", "-port", str(self.port)], env,
                                self.workdir / "toxiproxy.log")
            try:
                self.proc.start(lambda: _http_up(self.api + "/version"))
                return
            except RuntimeError as e:
                last = e
        raise RuntimeError(f"could not start toxiproxy: {last}")

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()

    def call(self, method: str, path: str, body: dict | None = None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            out = resp.read()
        return json.loads(out) if out else None

    def proxy(self, upstream: str) -> "ToxiProxy":
        """A new proxy to upstream (host:port), listening on a free port."""
        self._seq += 1
        name = f"p{self._seq}"
        created = self.call("POST", "/proxies", {"name": name, "listen": "127.0.0.1:0", "upstream": upstream,
                                                 "enabled": True})
        return ToxiProxy(self, name, created["listen"])


class ToxiProxy:
    def __init__(self, toxi: Toxiproxy, name: str, listen: str):
        self.toxi = toxi
        self.name = name
        self.listen = listen

    @property
    def endpoint(self) -> str:
        return "http://" + self.listen

    def add_latency(self, ms: int, stream: str = "downstream") -> str:
        name = f"latency-{stream}"
        self.toxi.call("POST", f"/proxies/{self.name}/toxics", {
            "name": name, "type": "latency", "stream": stream, "toxicity": 1.0,
            "attributes": {"latency": ms, "jitter": 0}})
        return name

    def delete(self) -> None:
        try:
            self.toxi.call("DELETE", f"/proxies/{self.name}")
        except OSError:
            pass


_METRIC_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$')


def parse_metrics(text: str) -> dict[tuple[str, frozenset], float]:
    """Prometheus text format -> {(name, frozenset of (label, value)): value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _METRIC_LINE.match(line)
        if not m:
            continue
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


class S3ScandServer(ScandServer):
    """`scand serve` with extra flags and environment variables, and a
    Prometheus endpoint (--metrics-listen) the tests read."""

    def __init__(self, binary: str, root: Path, log_path: Path, name: str, args: list[str],
                 env: dict[str, str]):
        super().__init__(binary, root, log_path, name)
        self.args = list(args)
        self.extra_env = dict(env)
        self.metrics_port = 0

    def start(self, ready_timeout: float = 30.0) -> None:
        last_error = ""
        for _attempt in range(3):  # a port picked by binding 0 can be taken again
            self.port = free_port()
            self.metrics_port = free_port()
            self._log = open(self.log_path, "ab")
            cmd = [self.binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--root", str(self.root),
                   "--metrics-listen", f"127.0.0.1:{self.metrics_port}", *self.args]
            self._log.write(f"$ {' '.join(cmd)}\n".encode())
            self._log.flush()
            # As ScandServer: no stray SCAND_* (nor AWS_*) settings from the
            # test environment; only the ones given.
            env = {k: v for k, v in os.environ.items() if not k.startswith(("SCAND_", "AWS_"))}
            env.update(self.extra_env)
            self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env, preexec_fn=_die_with_parent)
            deadline = time.monotonic() + ready_timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    last_error = f"scand exited with status {self.proc.returncode} while starting"
                    break
                try:
                    c = flight.FlightClient(self.location)
                    list(c.list_actions(options=call_options(5)))
                    c.close()
                    self.metrics_text()
                    return
                except (OSError, flight.FlightError, pa.ArrowException) as e:
                    last_error = repr(e)
                    time.sleep(0.1)
            else:
                last_error = f"scand did not accept Flight calls within {ready_timeout} s ({last_error})"
            self.stop()
        raise RuntimeError(f"could not start scand ({self.name}): {last_error}\n--- scand output ---\n{self.log_tail()}")

    def metrics_text(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as resp:
            return resp.read().decode()

    def metric(self, name: str, **labels: str) -> float:
        """The value of one series (0 when absent)."""
        return parse_metrics(self.metrics_text()).get((name, frozenset(labels.items())), 0.0)

    def s3_gets(self) -> int:
        """Ranged GETs scand sent to S3 so far (completed or abandoned)."""
        return int(self.metric("scand_storage_requests_total", backend="s3", op="read"))


def s3_server_args(endpoint: str, access_key: str = ACCESS_KEY) -> list[str]:
    return ["--s3-endpoint", endpoint, "--s3-path-style", "--s3-access-key", access_key, "--s3-region", REGION]


def s3_server_env(secret_key: str = SECRET_KEY) -> dict[str, str]:
    # The secret through the environment, as the flag's help advises (flags
    # show in ps); no instance-metadata lookups.
    return {"SCAND_S3_SECRET_KEY": secret_key, "AWS_EC2_METADATA_DISABLED": "true"}


def wait_for(pred, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return pred()


__all__ = ["S3_BUCKET", "ACCESS_KEY", "SECRET_KEY", "REGION", "INSTALL_HINT", "find_tool", "VersityGW", "Toxiproxy",
           "S3ScandServer", "s3_filesystem", "upload", "parse_metrics", "s3_server_args", "s3_server_env",
           "wait_for"]
