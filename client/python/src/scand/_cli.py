"""The ``scand`` command of the Python package: runs the server binary.

pip installs it as a console script (pyproject.toml, project.scripts). It
replaces itself with the binary that :func:`scand.find_binary` finds (the
one bundled in the platform wheel first), with the same arguments, so
``scand serve``, ``scand scan``, ``scand version``, ... behave as the binary
does, exit status and signals included.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import List, Optional

from ._serve import find_binary


def main(argv: Optional[List[str]] = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    try:
        binary = find_binary()
    except FileNotFoundError as e:
        print(f"scand: {e}", file=sys.stderr)
        sys.exit(127)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":  # no exec on Windows: run it and pass its status on
        sys.exit(subprocess.call([binary, *args]))
    os.execv(binary, [binary, *args])
