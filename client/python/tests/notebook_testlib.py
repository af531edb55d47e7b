"""Running examples/quickstart.ipynb headless and checking what it printed
(tests/test_notebook.py on the test venv's kernel, tests/test_wheel.py on a
fresh venv's)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "quickstart.ipynb"


def _text(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o.get("text", ""))
        elif "data" in o:
            out.append(o["data"].get("text/plain", ""))
    return "".join(out)


def run_quickstart(tmp_path: Path, monkeypatch, kernel_name: str = "python3"):
    """Executes the notebook on a real kernel; raises CellExecutionError on
    any failing cell. Returns the executed notebook."""
    monkeypatch.delenv("SCAND_SERVER", raising=False)  # the notebook starts its own server
    # keep the kernel's files out of the home directory
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(nb, kernel_name=kernel_name, timeout=90, allow_errors=False,
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    return nb


def check_quickstart_outputs(nb) -> tuple[str, str]:
    """Asserts what every run must show; returns the server's address and the
    first cell's output (which names the binary)."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    started = _text(code[0])
    m = re.search(r"on (grpc://\S+)", started)
    assert m, started
    everything = "\n".join(_text(c) for c in code)
    assert "20,000 rows" in everything
    assert "Berlin" in everything  # the pandas head / the DuckDB result
    assert "row groups kept" in everything and "dropped" in everything  # the filtered scan and its explain
    assert any("image/png" in o.get("data", {}) for c in code for o in c.get("outputs", []))  # the plot
    assert "InvalidRequest" in everything and "NotFound" in everything and "PermissionDenied" in everything
    assert "scand exited with status 0" in _text(code[-1])
    return m.group(1), started
