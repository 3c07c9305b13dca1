"""The pipeline runs one way: no module imports from a later stage (imports inside functions count).

Stages, earliest first. A module may import from its own stage and from earlier ones only.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

STAGES = [
    ["modules.errors"],
    ["modules.blueprint"],  # the blueprint language, key templates and value encodings included
    ["modules.window"],
    ["modules.design"],
    ["modules.monitoring"],  # the alarms and the change rule as data (priced by capacity, written by constructs)
    ["modules.capacity"],
    ["modules.lint"],
    # one stack value (blueprint, design, capacity, findings); the catalog; blueprints of existing tables
    ["modules.stack", "modules.catalog", "modules.adopt"],
    ["modules.constructs", "modules.output", "modules.synth"],
    ["modules.verify"],
    ["modules.review"],
    ["modules.report"],  # every renderer
    ["modules.cli"],
]


def stage_of(module: str) -> int:
    for position, members in enumerate(STAGES):
        if any(module == member or module.startswith(member + ".") for member in members):
            return position
    raise AssertionError(f"{module} belongs to no stage: add it to STAGES")


def imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("modules"):
            names = [node.module] if node.module != "modules" else [f"modules.{a.name}" for a in node.names]
            found += [(node.lineno, name) for name in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("modules")]
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_module_imports_from_a_later_stage():
    backwards = []
    for path in sorted((ROOT / "modules").rglob("*.py")):
        own = module_name(path)
        if own == "modules":
            continue
        for line, imported in imports(path):
            if stage_of(imported) > stage_of(own):
                backwards.append(f"{path.relative_to(ROOT)}:{line}: {own} imports {imported}")
    assert not backwards, "\n".join(backwards)


def test_the_check_sees_a_backward_import(tmp_path):
    """The check itself: a design module importing the review would be reported."""
    assert stage_of("modules.review.classify") > stage_of("modules.design.plan")
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from modules.review.classify import classify\n")
    assert imports(probe) == [(2, "modules.review.classify")]
