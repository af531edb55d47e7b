"""The progress bar of a scan, driven by the plan's total_records.

``progress=None`` (the default) shows a bar only when all of these hold:
tqdm is installed, the scan plans at least ``AUTO_PROGRESS_ROWS`` rows, and
the session is interactive (a Jupyter/IPython kernel, or stderr is a
terminal). ``progress=True`` always shows one (a warning if tqdm is missing),
``progress=False`` never does.
"""

from __future__ import annotations

import sys
import warnings
from typing import Optional, Union

# Scans planning fewer rows finish before a bar would tell anything.
AUTO_PROGRESS_ROWS = 1_000_000

_warned_missing = False


class _NoProgress:
    def update(self, n: int) -> None:
        pass

    def close(self, ok: bool = True) -> None:
        pass


def _tqdm_class():
    try:
        from tqdm.auto import tqdm  # notebook widget when available, text otherwise
    except ImportError:
        return None
    return tqdm


def _interactive() -> bool:
    ipython = sys.modules.get("IPython")
    if ipython is not None:
        try:
            shell = ipython.get_ipython()
        except Exception:  # noqa: BLE001
            shell = None
        if shell is not None and getattr(shell, "kernel", None) is not None:
            return True
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def wanted(progress: Optional[bool], total_records: int) -> bool:
    """Whether a scan with this progress argument shows a bar."""
    if progress is None:
        return total_records >= AUTO_PROGRESS_ROWS and _interactive() and _tqdm_class() is not None
    return bool(progress)


class _Bar:
    def __init__(self, tqdm, total: Optional[int], desc: str):
        self._bar = tqdm(total=total, desc=desc, unit=" rows", unit_scale=True, dynamic_ncols=True,
                         mininterval=0.2)

    def update(self, n: int) -> None:
        self._bar.update(n)

    def close(self, ok: bool = True) -> None:
        # A bar that stopped early stays as it is, so one can see how far it got.
        self._bar.close()


def make(progress: Union[bool, None], total_records: int, desc: str = "scand"):
    """An object with update(rows) and close(ok)."""
    global _warned_missing
    if not wanted(progress, total_records):
        return _NoProgress()
    tqdm = _tqdm_class()
    if tqdm is None:
        if not _warned_missing:
            _warned_missing = True
            warnings.warn("progress=True needs tqdm: pip install 'scand[progress]' (or tqdm); "
                          "scanning without a progress bar", RuntimeWarning, stacklevel=4)
        return _NoProgress()
    return _Bar(tqdm, total_records if total_records >= 0 else None, desc)
