"""The code stays clean: ruff over the code and the tests, `mypy --strict` over modules/tablewright/ (both configured in
pyproject.toml, pinned in the `test` extra). About 7 s with a cold mypy cache, under 1 s warm: the fast tier.
What the README and the docs name must exist: tests/contract/test_docs.py checks them with the functions below."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    result = _run("ruff", "check", "--no-fix", "modules", "tests", "bench", "tools", "main.py")
    assert result.returncode == 0, f"ruff check failed:\n{result.stdout}{result.stderr}"


def test_mypy_strict_finds_nothing():
    result = _run("mypy")  # files, strictness and plugins: [tool.mypy] in pyproject.toml
    assert result.returncode == 0, f"mypy failed:\n{result.stdout}{result.stderr}"


# Folders of the repository: a backticked path starting with one of these names a file that must exist.
TRACKED = ("modules/tablewright/", "tests/", "examples/", "schema/", "blueprints/", "tools/", "bench/", ".ci/", "docs/")


FILE_SUFFIXES = frozenset({"yml", "yaml", "json", "txt", "md", "py", "rego", "hcl", "tf"})


def missing_modules(text: str) -> list[str]:
    """Every `tablewright.x.y` a text names that does not import (the module) or resolve (the attribute)."""
    import importlib
    import re

    missing = []
    for dotted in sorted(set(re.findall(r"(?<![\w/.-])tablewright(?:\.[A-Za-z_]\w*)+", text))):
        parts = dotted.split(".")
        if parts[-1] in FILE_SUFFIXES:  # a file name (`.github/workflows/tablewright.yml`), not a module
            continue
        for split in range(len(parts), 0, -1):
            try:
                found: object = importlib.import_module(".".join(parts[:split]))
            except ModuleNotFoundError:
                continue
            break
        for attribute in parts[split:]:
            if not hasattr(found, attribute):
                missing.append(dotted)
                break
            found = getattr(found, attribute)
    return missing


def missing_files(text: str) -> list[str]:
    """Every backticked path into the repository's folders (no placeholders) that does not exist."""
    import re

    missing = []
    for code in re.findall(r"`([^`\n]+)`", text):
        for word in code.split():
            path = word.strip("(),;:'\"").split(":")[0].split("#")[0]
            placeholder = re.search(r"[<>{}*]|\b[A-Z]{3,}\b|\.\.\.", path)
            if path.startswith(TRACKED) and not placeholder and not (ROOT / path).exists():
                missing.append(path)
    return sorted(set(missing))


def test_the_check_sees_a_module_and_a_file_that_do_not_exist():
    text = ("`tablewright.errors.ErrorCode` and `tablewright.errors.NoSuchThing`, `docs/index.md` and "
            "`docs/nothing.md`, `.github/workflows/tablewright.yml`")
    assert missing_modules(text) == ["tablewright.errors.NoSuchThing"]
    assert missing_files(text) == ["docs/nothing.md"]

