"""Hatchling build hook: a wheel that carries the scand binary is a platform wheel.

scripts/build-wheel.sh builds the server binary into src/scand/_bin/ (git-ignored),
then builds the wheel. With the binary there, this hook includes it (git-ignored
files are otherwise left out) and tags the wheel for the platform the binary runs on:
SCAND_WHEEL_PLATFORM (the script sets it from GOOS/GOARCH, e.g.
manylinux_2_17_x86_64 for a static Linux binary), else this machine's platform.
Without the binary (pip install ./client/python, the editable install of the tests,
the sdist) the wheel stays pure Python, and scand.serve() finds a server on
SCAND_BIN or PATH instead.
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BINARY_NAMES = ("scand", "scand.exe")


class PlatformWheelHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        bin_dir = Path(self.root) / "src" / "scand" / "_bin"
        binaries = [bin_dir / name for name in BINARY_NAMES if (bin_dir / name).is_file()]
        if not binaries:
            return
        for binary in binaries:
            if not os.access(binary, os.X_OK):
                raise RuntimeError(f"{binary} is not executable: rebuild it with scripts/build-wheel.sh")
            build_data["force_include"][str(binary)] = f"scand/_bin/{binary.name}"
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{platform_tag()}"


def platform_tag() -> str:
    """The wheel platform tag: SCAND_WHEEL_PLATFORM, else this machine's (linux_x86_64, ...)."""
    tag = os.environ.get("SCAND_WHEEL_PLATFORM", "").strip()
    return tag or sysconfig.get_platform().replace("-", "_").replace(".", "_")
