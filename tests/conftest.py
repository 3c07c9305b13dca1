from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Callable

import pytest

from modules.cli import main

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = sorted((ROOT / "blueprints").glob("*.yaml"))


@pytest.fixture
def write_blueprint(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a blueprint (dedented YAML) into the test's directory and return its path."""

    shared = tmp_path / "shared"
    if not shared.exists():  # bundled blueprints extend shared/platform-base.yaml, relative to themselves
        shutil.copytree(ROOT / "blueprints" / "shared", shared)

    def write(text: str, name: str = "blueprint.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run the CLI in-process; returns (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def bundled_stacks():
    """Every stack of the bundled blueprints (one per environment)."""
    from modules.blueprint.load import load_blueprints

    return [stack for path in BUNDLED for stack in load_blueprints(path)]
