"""The progress bar: tqdm, driven by the plan's total_records."""

from __future__ import annotations

import pytest

import scand
from scand import _progress


def test_progress_true_draws_a_bar(conn, capfd):
    conn.scan("multi/", columns=["id"], split_bytes=1, progress=True).read_all()
    err = capfd.readouterr().err
    assert "scand" in err and "rows" in err
    assert "20.0k/20.0k" in err  # the bar reached the planned total


def test_progress_false_draws_nothing(conn, capfd):
    conn.scan("multi/", columns=["id"], progress=False).read_all()
    assert capfd.readouterr().err == ""


def test_auto_is_off_for_small_scans_and_non_interactive_runs(conn, capfd, monkeypatch):
    conn.scan("multi/", columns=["id"]).read_all()  # 20,000 rows, stderr not a terminal
    assert capfd.readouterr().err == ""
    assert not _progress.wanted(None, 10 * scand.AUTO_PROGRESS_ROWS)  # pytest: not interactive
    monkeypatch.setattr(_progress, "_interactive", lambda: True)
    assert not _progress.wanted(None, scand.AUTO_PROGRESS_ROWS - 1)
    assert _progress.wanted(None, scand.AUTO_PROGRESS_ROWS)


def test_auto_on_for_large_interactive_scans(conn, capfd, monkeypatch):
    monkeypatch.setattr(_progress, "_interactive", lambda: True)
    monkeypatch.setattr(_progress, "AUTO_PROGRESS_ROWS", 10_000)
    conn.scan("multi/", columns=["id"]).read_all()
    assert "rows" in capfd.readouterr().err


def test_progress_without_tqdm_warns_and_scans(conn, monkeypatch):
    monkeypatch.setattr(_progress, "_tqdm_class", lambda: None)
    monkeypatch.setattr(_progress, "_warned_missing", False)
    with pytest.warns(RuntimeWarning, match="tqdm"):
        t = conn.scan("multi/part-0.parquet", progress=True).read_all()
    assert t.num_rows == 5_000


def test_bar_closes_when_a_scan_fails_midway(conn, capfd, monkeypatch):
    reader = conn.scan("big/big.parquet", columns=["k"], split_bytes=1, batch_rows=1_000, progress=True)
    it = iter(reader)
    next(it)
    conn.cancel()
    with pytest.raises(scand.Cancelled):
        for _ in it:
            pass
    err = capfd.readouterr().err
    assert "/400k" in err
