"""Emulators for the Google Cloud Storage and Azure Blob Storage end-to-end
tests (test_clouds.py) and the cloud benchmark (bench/clouds):

  FakeGCS   fake-gcs-server (in memory) on 127.0.0.1:free-port, no auth
  Azurite   Azurite's blob service (in memory) on 127.0.0.1:free-port, with
            the well-known development account and its shared key

Both come from scripts/install-tools.sh: fake-gcs-server in .tools/bin
($SCAND_FAKE_GCS, or $SCAND_TOOLS/fake-gcs-server), Azurite in .tools/azurite
($SCAND_AZURITE names azurite-blob). Uploads go through plain HTTP (GCS) and
pyarrow's AzureFileSystem (Azure), so no extra Python package is needed.
"""

from __future__ import annotations

import json
import os
import urllib.parse
import urllib.request
from pathlib import Path

from scandlib import REPO, free_port
from s3lib import Process, _http_up, find_tool

# Azurite's well-known development account (public, documented by Microsoft).
AZ_ACCOUNT = "devstoreaccount1"
AZ_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def find_azurite() -> str | None:
    for c in [os.environ.get("SCAND_AZURITE", ""),
              str(REPO / ".tools" / "azurite" / "node_modules" / ".bin" / "azurite-blob")]:
        if c and os.access(c, os.X_OK):
            return c
    return None


class FakeGCS:
    """fake-gcs-server serving from memory."""

    def __init__(self, binary: str, workdir: Path):
        self.binary, self.workdir, self.port, self.proc = binary, workdir, 0, None

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def endpoint(self) -> str:
        """The JSON API's base URL, as --gcs-endpoint takes it."""
        return f"http://{self.addr}/storage/v1/"

    def start(self) -> None:
        last = None
        for _ in range(3):
            self.port = free_port()
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.workdir)}
            self.proc = Process("fake-gcs-server", [self.binary, "-scheme", "http", "-host", "127.0.0.1", "-port",
                                                    str(self.port), "-public-host", self.addr, "-backend", "memory",
                                                    "-log-level", "error"], env, self.workdir / "fake-gcs.log")
            try:
                self.proc.start(lambda: _http_up(f"http://{self.addr}/storage/v1/b"))
                return
            except RuntimeError as e:
                last = e
        raise RuntimeError(f"could not start fake-gcs-server: {last}")

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()

    def create_bucket(self, name: str) -> None:
        req = urllib.request.Request(f"http://{self.addr}/storage/v1/b", method="POST",
                                     data=json.dumps({"name": name}).encode(),
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=10).close()

    def put(self, bucket: str, key: str, data: bytes) -> None:
        q = urllib.parse.urlencode({"uploadType": "media", "name": key})
        req = urllib.request.Request(f"http://{self.addr}/upload/storage/v1/b/{bucket}/o?{q}", method="POST",
                                     data=data, headers={"Content-Type": "application/octet-stream"})
        urllib.request.urlopen(req, timeout=30).close()

    def filesystem(self, addr: str | None = None):
        """pyarrow's GcsFileSystem on the emulator (or a proxy at addr)."""
        import pyarrow.fs as pafs
        return pafs.GcsFileSystem(anonymous=True, endpoint_override=addr or self.addr, scheme="http",
                                  retry_time_limit=__import__("datetime").timedelta(seconds=5))


class Azurite:
    """Azurite's blob service, in memory."""

    def __init__(self, binary: str, workdir: Path):
        self.binary, self.workdir, self.port, self.proc = binary, workdir, 0, None

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def endpoint(self) -> str:
        """The Blob service URL, as --azure-endpoint takes it."""
        return f"http://{self.addr}/{AZ_ACCOUNT}"

    def start(self) -> None:
        last = None
        for _ in range(3):
            self.port = free_port()
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.workdir)}
            self.proc = Process("azurite", [self.binary, "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
                                            "--inMemoryPersistence", "--skipApiVersionCheck",
                                            "--disableProductStyleUrl", "--silent"], env,
                                self.workdir / "azurite.log")
            try:
                self.proc.start(lambda: _http_up(f"http://{self.addr}/"), timeout=60)
                return
            except RuntimeError as e:
                last = e
        raise RuntimeError(f"could not start Azurite: {last}")

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()

    def filesystem(self, addr: str | None = None):
        """pyarrow's AzureFileSystem on Azurite (or a proxy at addr)."""
        import pyarrow.fs as pafs
        return pafs.AzureFileSystem(account_name=AZ_ACCOUNT, account_key=AZ_KEY,
                                    blob_storage_authority=addr or self.addr, blob_storage_scheme="http",
                                    dfs_storage_authority=addr or self.addr, dfs_storage_scheme="http")

    def create_container(self, name: str) -> None:
        self.filesystem().create_dir(name)

    def put(self, container: str, key: str, data: bytes) -> None:
        with self.filesystem().open_output_stream(f"{container}/{key}") as out:
            out.write(data)


__all__ = ["AZ_ACCOUNT", "AZ_KEY", "FakeGCS", "Azurite", "find_tool", "find_azurite"]
