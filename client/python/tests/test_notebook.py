"""examples/quickstart.ipynb runs headless on a real kernel, every cell
without error, and stops the server it started."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import scand
from scand_testlib import require_bin

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "quickstart.ipynb"


def _text(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o.get("text", ""))
        elif "data" in o:
            out.append(o["data"].get("text/plain", ""))
    return "".join(out)


@pytest.mark.timeout(150)
def test_quickstart_notebook(tmp_path, monkeypatch):
    monkeypatch.setenv("SCAND_BIN", require_bin())
    # keep the kernel's files out of the home directory
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=90, allow_errors=False,
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError on any failing cell

    code = [c for c in nb.cells if c.cell_type == "code"]
    started = _text(code[0])
    m = re.search(r"on (grpc://\S+)", started)
    assert m, started
    address = m.group(1)
    everything = "\n".join(_text(c) for c in code)
    assert "20,000 rows" in everything
    assert "Berlin" in everything  # the pandas head / the DuckDB result
    assert any("image/png" in o.get("data", {}) for c in code for o in c.get("outputs", []))  # the plot
    assert "InvalidRequest" in everything and "NotFound" in everything and "PermissionDenied" in everything
    assert "scand exited with status 0" in _text(code[-1])
    # the server is gone
    with pytest.raises(scand.ConnectionFailed):
        scand.connect(address, timeout=5)
