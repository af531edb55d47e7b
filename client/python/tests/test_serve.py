"""scand.serve(): a local server started, answered and stopped by the package;
scand.find_binary() and the scand command (the binary from $SCAND_BIN: the
editable install of the tests bundles none; tests/test_wheel.py covers the
bundled one)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import scand
from scand_testlib import N_ROWS, assert_tables_equal, local, require_bin


def _env_without_scand() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("SCAND_")}


def test_serve_as_a_context_manager(root):
    with scand.serve(root, binary=require_bin()) as conn:
        assert isinstance(conn, scand.Connection) and conn.location.startswith("grpc://127.0.0.1:")
        assert conn.server_version and conn.returncode is None
        assert_tables_equal(local(root, "data/a.parquet"), conn.read_table("data/a.parquet"))
        proc, location, log = conn.process, conn.location, conn.log_path
        assert "serving" in conn.log_tail()
    assert proc.returncode == 0  # SIGTERM: scand drains and exits 0
    assert not log.exists()  # the temporary log goes with the server
    with pytest.raises(scand.ConnectionFailed):
        scand.connect(location, timeout=5)


def test_serve_as_a_call_then_close(root, tmp_path):
    conn = scand.serve(root, binary=require_bin(), args=["--split-bytes", "1"], log=tmp_path / "server.log")
    try:
        assert conn.explain("data/a.parquet").endpoints > 1  # the extra flag reached the server
        assert conn.scan("data/a.parquet", columns="id").read_all().num_rows == N_ROWS
        assert "running" in repr(conn)
    finally:
        conn.close()
    conn.close()  # idempotent
    assert conn.returncode == 0 and "exited with status 0" in repr(conn)
    assert (tmp_path / "server.log").read_text()  # a log that was asked for stays


def test_serve_finds_the_binary_in_scand_bin(root, monkeypatch):
    monkeypatch.setenv("SCAND_BIN", require_bin())
    with scand.serve(root / "multi") as conn:
        assert conn.binary == require_bin()
        assert len(conn.list_files()) == 4


def test_a_server_that_exits_is_an_error_with_its_output(root):
    with pytest.raises(scand.ServeFailed) as e:
        scand.serve(root, binary=require_bin(), args=["--no-such-flag"])
    msg = str(e.value)
    assert "exited with status 2" in msg and "no-such-flag" in msg and "serve --listen 127.0.0.1:" in msg


def test_serve_a_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        scand.serve(tmp_path / "nothing", binary=require_bin())


def _fake_entry_point(d: Path) -> Path:
    """A console script as pip writes it for project.scripts."""
    script = d / "scand"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom scand._cli import main\nsys.exit(main())\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_find_binary_order_and_errors(tmp_path, monkeypatch):
    real = Path(require_bin())
    assert not scand.BUNDLED_BINARY.exists(), "the editable install must not bundle a binary"
    monkeypatch.delenv("SCAND_BIN", raising=False)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_entry_point(bin_dir)
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(FileNotFoundError) as e:
        scand.find_binary()  # the package's own scand command is not a server
    assert "build-wheel.sh" in str(e.value) and "go install github.com/scand/scand/cmd/scand@latest" in str(e.value)

    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{real.parent}")
    if real.name == "scand":
        assert scand.find_binary() == str(real)
    monkeypatch.setenv("SCAND_BIN", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="SCAND_BIN=.*is not an executable file"):
        scand.find_binary()
    assert scand.find_binary(real) == str(real)
    with pytest.raises(FileNotFoundError, match="binary=.*is not an executable file"):
        scand.find_binary(tmp_path)


def test_the_scand_command_runs_the_binary(tmp_path):
    env = _env_without_scand() | {"SCAND_BIN": require_bin()}
    cli = [sys.executable, "-c", "from scand._cli import main; main()"]
    out = subprocess.run([*cli, "version"], env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.startswith("scand "), out
    bad = subprocess.run([*cli, "frobnicate"], env=env, capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2, bad  # the binary's own usage error and status

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = _fake_entry_point(bin_dir)
    alone = subprocess.run([str(script), "version"], env=_env_without_scand() | {"PATH": str(bin_dir)},
                           capture_output=True, text=True, timeout=30)
    assert alone.returncode == 127 and "no scand server binary" in alone.stderr, alone
