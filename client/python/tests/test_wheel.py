"""The platform wheel: scripts/build-wheel.sh builds it (once per session),
a fresh venv pip-installs it, and there, with no SCAND_BIN and no Go, the
`scand` command, scand.serve() and the quickstart notebook work on the
binary the wheel carries. Also: without the binary the wheel stays pure.

Needs `go` on PATH (skipped otherwise) and PyPI or pip's cache for the fresh
venv's packages (pinned by requirements-test.txt, as constraints).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from notebook_testlib import check_quickstart_outputs, run_quickstart
from scand_testlib import REPO

PKG = REPO / "client" / "python"
VERSION = "v0.0.0-wheel-test"
# A cold Go build cache compiles the whole static binary (minutes on 2 busy cores).
pytestmark = pytest.mark.timeout(900)


def _run(cmd, *, timeout: float, **kw) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    assert out.returncode == 0, f"{' '.join(map(str, cmd))} exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
    return out


def _clean_env(**extra: str) -> dict:
    """The environment without SCAND_* and without this venv's bin on PATH, so
    only the fresh venv's scand can be found."""
    here = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCAND_") and k != "VIRTUAL_ENV"}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != here)
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    if shutil.which("go") is None:
        pytest.skip("go is not on PATH: scripts/build-wheel.sh compiles the scand binary the wheel carries")
    out = tmp_path_factory.mktemp("dist")
    env = dict(os.environ, PYTHON=sys.executable, SCAND_VERSION=VERSION)
    res = _run(["bash", str(REPO / "scripts" / "build-wheel.sh"), str(out)], env=env, timeout=840)
    path = Path(res.stdout.strip().splitlines()[-1])
    assert path.is_file() and path.parent == out, res.stdout
    return path


@pytest.fixture(scope="session")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel and what the notebook imports, at the test pins."""
    d = tmp_path_factory.mktemp("wheel-venv") / "venv"
    _run([sys.executable, "-m", "venv", str(d)], timeout=120)
    py = d / "bin" / "python"
    _run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel),
          "pandas", "duckdb", "matplotlib", "ipykernel", "-c", str(PKG / "requirements-test.txt")],
         timeout=600, env=_clean_env())
    return d


def test_the_wheel_is_tagged_for_the_platform_and_carries_the_binary(wheel):
    assert wheel.name.startswith("scand-0.1.0-py3-none-")
    assert not wheel.name.endswith("-any.whl")
    if sys.platform.startswith("linux"):
        assert "manylinux_2_17_" in wheel.name  # static binary: needs no particular glibc
    with zipfile.ZipFile(wheel) as z:
        meta = z.read("scand-0.1.0.dist-info/WHEEL").decode()
        binary = z.getinfo("scand/_bin/scand")
        entry_points = z.read("scand-0.1.0.dist-info/entry_points.txt").decode()
    assert "Root-Is-Purelib: false" in meta
    assert (binary.external_attr >> 16) & 0o111, "the binary must be executable"
    assert "scand = scand._cli:main" in entry_points


def test_without_the_binary_the_wheel_is_pure(tmp_path):
    # The source tree never holds the binary (build-wheel.sh builds a staged copy).
    assert not (PKG / "src" / "scand" / "_bin").exists()
    _run([sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(tmp_path)], cwd=PKG, timeout=120)
    (built,) = tmp_path.glob("*.whl")
    assert built.name == "scand-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(built) as z:
        assert not [n for n in z.namelist() if "_bin" in n]


def test_the_scand_command(venv):
    out = _run([str(venv / "bin" / "scand"), "version"], env=_clean_env(), timeout=60)
    assert out.stdout.strip() == f"scand {VERSION}"
    bad = subprocess.run([str(venv / "bin" / "scand"), "serve", "--no-such-flag"], env=_clean_env(),
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "no-such-flag" in bad.stderr


SERVE_SCRIPT = textwrap.dedent("""
    import json, sys
    import pyarrow as pa, pyarrow.parquet as pq
    import scand

    root = sys.argv[1]
    table = pa.table({"id": pa.array(range(10_000), pa.int64()), "v": [f"v{i % 7}" for i in range(10_000)]})
    pq.write_table(table, f"{root}/t.parquet", row_group_size=1_000)
    with scand.serve(root) as conn:
        got = conn.read_table("t.parquet", columns="v,id", limit=2_500)
        st = conn.last_stats
        proc = conn.process
        print(json.dumps({"binary": conn.binary, "bundled": str(scand.BUNDLED_BINARY),
                          "server_version": conn.server_version, "rows": got.num_rows,
                          "columns": got.column_names, "equal": got.equals(table.select(["v", "id"]).slice(0, 2_500)),
                          "server_rows": st.rows, "bytes_fetched": st.bytes_fetched}))
    print(json.dumps({"returncode": proc.returncode}))
""")


def test_serve_in_a_fresh_venv(venv, tmp_path):
    (tmp_path / "data").mkdir()
    out = _run([str(venv / "bin" / "python"), "-c", SERVE_SCRIPT, str(tmp_path / "data")], env=_clean_env(),
               cwd=tmp_path, timeout=120)
    scanned, stopped = (json.loads(line) for line in out.stdout.strip().splitlines()[-2:])
    assert scanned["binary"] == scanned["bundled"] and str(venv) in scanned["binary"]
    assert scanned["server_version"] == VERSION
    assert scanned["rows"] == 2_500 and scanned["columns"] == ["v", "id"] and scanned["equal"]
    assert scanned["server_rows"] == 2_500 and scanned["bytes_fetched"] > 0
    assert stopped == {"returncode": 0}


def test_quickstart_notebook_on_the_wheel(venv, tmp_path, monkeypatch):
    # A kernel that runs the fresh venv's Python, launched by nbclient from this one.
    spec = tmp_path / "jupyter" / "kernels" / "scand-wheel"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(venv / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "scand wheel venv", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    for k in [k for k in os.environ if k.startswith("SCAND_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("PATH", _clean_env()["PATH"])
    nb = run_quickstart(tmp_path, monkeypatch, kernel_name="scand-wheel")
    _, started = check_quickstart_outputs(nb)
    assert str(venv) in started and "scand/_bin/scand" in started  # the wheel's binary served it
