"""examples/quickstart.ipynb runs headless on a real kernel, every cell
without error, with the server scand.serve() starts (here the binary of
$SCAND_BIN; tests/test_wheel.py runs it with the wheel's), and stops it."""

from __future__ import annotations

import pytest

import scand
from notebook_testlib import check_quickstart_outputs, run_quickstart
from scand_testlib import require_bin


@pytest.mark.timeout(150)
def test_quickstart_notebook(tmp_path, monkeypatch):
    monkeypatch.setenv("SCAND_BIN", require_bin())
    nb = run_quickstart(tmp_path, monkeypatch)
    address, started = check_quickstart_outputs(nb)
    assert require_bin() in started  # the server scand.serve() found
    with pytest.raises(scand.ConnectionFailed):  # the server is gone
        scand.connect(address, timeout=5)
