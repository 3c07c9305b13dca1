"""The pipeline runs one way: no module imports from a later stage (imports inside functions count).

Stages, earliest first. A module may import from its own stage and from earlier ones only.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

STAGES = [
    ["tablewright.errors"],
    ["tablewright.blueprint"],  # the blueprint language, key templates and value encodings included
    ["tablewright.design"],
    ["tablewright.monitoring"],  # alarms, maintenance window, change rule as data (priced by capacity)
    ["tablewright.capacity"],
    ["tablewright.simulate"],  # the throttle simulator (lint proves its fixes with it)
    ["tablewright.lint"],
    # one stack value (blueprint, design, capacity, findings); the catalog; blueprints of existing tables
    ["tablewright.stacks", "tablewright.adopt"],
    ["tablewright.calibrate"],  # CloudWatch's metrics of a deployed stack against its blueprint
    ["tablewright.client"],  # the generated data-access modules (Python, TypeScript) of a stack's design
    ["tablewright.constructs", "tablewright.synth"],
    ["tablewright.verify"],
    # a local AWS (moto) with the stacks' tables, and Terraform runs pointed at it; the files `init` writes
    ["tablewright.local", "tablewright.scaffold"],
    ["tablewright.testing"],  # application tests against the local AWS (a fixture and a context manager)
    ["tablewright.review"],
    ["tablewright.report"],  # every renderer
    ["tablewright.cli", "tablewright.__main__"],
]


def stage_of(module: str) -> int:
    for position, members in enumerate(STAGES):
        if any(module == member or module.startswith(member + ".") for member in members):
            return position
    raise AssertionError(f"{module} belongs to no stage: add it to STAGES")


def absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a `from` import names, a relative one resolved against the importing module's package."""
    if not node.level:
        return node.module or ""
    parts = package.split(".") if package else []
    if node.level - 1 >= len(parts):
        raise AssertionError(f"line {node.lineno}: relative import beyond the top-level package {package!r}")
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports(path: Path, package: str | None = None, source: str | None = None) -> list[tuple[int, str]]:
    """Every `tablewright…` import in a file (`package`: the importing module's package, for relative imports)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.ImportFrom):
            if node.level and package is None:
                package = package_of(path)
            module = absolute(node, package or "")
            if module != "tablewright" and not module.startswith("tablewright."):
                continue
            # `from tablewright import x` and `from . import x` may name submodules: count each name as one
            names = [module] if module != "tablewright" and node.module else [f"{module}.{a.name}" for a in node.names]
            found += [(node.lineno, name) for name in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("tablewright")]
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT / "modules").with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    """The package relative imports in a file resolve against: itself for an `__init__.py`, else its parent."""
    if path.name == "__init__.py":
        return module_name(path)
    return module_name(path).rpartition(".")[0]


def test_no_module_imports_from_a_later_stage():
    backwards = []
    for path in sorted((ROOT / "modules").rglob("*.py")):
        own = module_name(path)
        if own == "tablewright":
            continue
        for line, imported in imports(path):
            if stage_of(imported) > stage_of(own):
                backwards.append(f"{path.relative_to(ROOT)}:{line}: {own} imports {imported}")
    assert not backwards, "\n".join(backwards)


def test_the_check_sees_a_backward_import(tmp_path):
    """The check itself: a design module importing the review would be reported."""
    assert stage_of("tablewright.review.classify") > stage_of("tablewright.design.designer")
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tablewright.review.classify import classify\n")
    assert imports(probe) == [(2, "tablewright.review.classify")]


def test_the_check_resolves_relative_imports(tmp_path):
    """`from ..review import classify` in modules/tablewright/design/x.py is tablewright.review: a backward import."""
    source = "from ..review import classify\nfrom . import designer\nfrom .design import TableDesign\n"
    probe = tmp_path / "probe.py"
    found = imports(probe, package="tablewright.design", source=source)
    assert found == [(1, "tablewright.review"), (2, "tablewright.design.designer"), (3, "tablewright.design.design")]
    backwards = [name for _, name in found if stage_of(name) > stage_of("tablewright.design.probe")]
    assert backwards == ["tablewright.review"]


def test_relative_imports_resolve_against_the_package(tmp_path):
    """An `__init__.py` is its own package; a plain module's package is its parent; too many dots is an error."""
    init = ROOT / "modules" / "tablewright" / "design" / "__init__.py"
    assert package_of(init) == "tablewright.design"
    assert package_of(ROOT / "modules" / "tablewright" / "design" / "designer.py") == "tablewright.design"
    assert package_of(ROOT / "modules" / "tablewright" / "cli" / "project.py") == "tablewright.cli"
    probe = tmp_path / "probe.py"
    assert imports(probe, package="tablewright", source="from .review.gate import gate\n") == [
        (1, "tablewright.review.gate")
    ]
    with pytest.raises(AssertionError, match="beyond the top-level package"):
        imports(probe, package="tablewright", source="from .. import x\n")


def test_every_stage_package_says_what_it_reads_and_produces():
    """Each package directly under modules/tablewright/ opens with a docstring (what the stage reads and produces)."""
    packages = sorted(path.parent for path in (ROOT / "modules" / "tablewright").glob("*/__init__.py"))
    assert packages
    silent = [package.name for package in packages
              if not (ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or "").strip()]
    assert not silent, f"packages without a docstring: {silent}"

