"""Small files and short functions, so each can be read whole: no file in modules/ (Python or TypeScript) or tests/
(Python) over 500 lines, and no Python function or method in modules/, tests/, bench/, main.py or tools/ over 80
lines (from its `def` line to its last; decorators and the lines before them not counted)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path

from tests.conftest import ROOT

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80

SIZED_FILES = {"modules": ("py", "ts"), "tests": ("py",)}  # folder -> the suffixes whose files are counted
FUNCTION_PLACES = ["modules", "tests", "bench", "main.py", "tools"]


def files(place: Path, suffixes: Iterable[str]) -> list[Path]:
    """The files under a folder (or the file itself) with one of the suffixes, installed packages and caches left
    out (tools/*/node_modules, __pycache__, hidden folders)."""
    if place.is_file():
        return [place]
    return sorted(path for suffix in suffixes for path in place.rglob(f"*.{suffix}")
                  if not any(part in ("node_modules", "__pycache__") or part.startswith(".")
                             for part in path.relative_to(place).parts))


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method with its qualified name (`Class.method`, `outer.inner`)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                yield name, node
            yield from functions(node, f"{name}.")
        else:
            yield from functions(node, prefix)


def long_files(paths: Iterable[Path], limit: int = MAX_FILE_LINES, root: Path = ROOT) -> list[str]:
    """`path: N lines` of each file over the limit."""
    found = []
    for path in paths:
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit:
            found.append(f"{path.relative_to(root)}: {count} lines")
    return found


def long_functions(paths: Iterable[Path], limit: int = MAX_FUNCTION_LINES, root: Path = ROOT) -> list[str]:
    """`path:line: name is N lines` of each function over the limit."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, node in functions(tree):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {name} is {length} lines")
    return found


def test_no_file_is_over_500_lines():
    paths = [path for folder, suffixes in SIZED_FILES.items() for path in files(ROOT / folder, suffixes)]
    assert len(paths) > 100
    found = long_files(paths)
    assert not found, f"{len(found)} file(s) over {MAX_FILE_LINES} lines (split them):\n" + "\n".join(found)


def test_no_function_is_over_80_lines():
    paths = [path for place in FUNCTION_PLACES for path in files(ROOT / place, ["py"])]
    assert ROOT / "main.py" in paths and ROOT / "tools" / "reference.py" in paths
    found = long_functions(paths)
    assert not found, (f"{len(found)} function(s) over {MAX_FUNCTION_LINES} lines (split them):\n"
                       + "\n".join(found))


def test_the_checks_count_as_they_say(tmp_path):
    """80 lines from the `def` line pass and 81 do not, decorators aside; methods and nested functions are named;
    501 lines is a long file and 500 is not; installed packages are not looked at."""
    line, inner = "    x = 1\n", "        x = 1\n"
    source = ("@decorator\n@another\ndef fits():\n" + line * 79
              + "class Box:\n    def method(self):\n" + inner * 80
              + "async def outer():\n    def inner():\n" + inner * 79 + "    return inner\n")
    tests = tmp_path / "tests"
    (tests / "node_modules").mkdir(parents=True)
    (tests / "node_modules" / "vendored.py").write_text("x = 1\n" * 600)
    (tests / "probe.py").write_text(source)
    (tests / "fits.py").write_text("x = 1\n" * 500)
    assert files(tests, ["py"]) == [tests / "fits.py", tests / "probe.py"]
    assert long_functions(files(tests, ["py"]), 80, tmp_path) == [
        "tests/probe.py:84: Box.method is 81 lines", "tests/probe.py:165: outer is 82 lines"]
    assert long_files(files(tests, ["py"]), 500, tmp_path) == []
    (tests / "big.py").write_text("x = 1\n" * 501)
    assert long_files(files(tests, ["py"]), 500, tmp_path) == ["tests/big.py: 501 lines"]
