"""The package as users install it: the wheel built from a copy of the sources, and a fresh virtual environment
outside the repository with that wheel and its dependencies (the exact versions of constraints.txt)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT

# What building the wheel reads: nothing else of the repository goes into it.
SOURCES = ("pyproject.toml", "README.md", "modules")


def build_wheel(destination: Path) -> Path:
    """Build the wheel from a copy of the sources (no build directory or egg-info left in the repository),
    offline: the build backend is the running environment's setuptools."""
    source = destination / "source"
    source.mkdir(parents=True)
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--wheel-dir", str(destination), str(source)], check=True, capture_output=True, text=True)
    [wheel] = destination.glob("tablewright-*.whl")
    return wheel


@dataclass(frozen=True)
class Installed:
    venv: Path
    wheel: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def environment(self, **extra: str) -> dict[str, str]:
        """The environment of a user whose PATH starts with the venv (no repository on PYTHONPATH)."""
        env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(PATH=f"{self.bin}{os.pathsep}{env['PATH']}", VIRTUAL_ENV=str(self.venv),
                   JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION="1", **extra)
        return env


def install(wheel: Path, venv: Path) -> Installed:
    """A fresh venv at `venv` with the wheel and its dependencies, pinned by constraints.txt."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", "-c",
                    str(ROOT / "constraints.txt"), str(wheel)], check=True, capture_output=True, text=True)
    return Installed(venv, wheel)
