"""The pipeline runs one way: no module imports from a later stage (imports inside functions count), and nothing
imports in a circle: neither two packages (`tablewright.constructs`, `tablewright.synth`, ...) nor two modules.

Stages, earliest first. A module may import from its own stage and from earlier ones only. tools/reference.py draws
docs/concepts/pipeline.md from this list and from the imports found here.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

from tests.conftest import ROOT

MODULES = ROOT / "modules"

STAGES = [
    ["tablewright.text"],  # text as terminals and generated code show it (hidden characters escaped)
    ["tablewright.errors"],
    ["tablewright.files"],  # creating the files Tablewright writes beside the user's own (never over them)
    ["tablewright.blueprint"],  # the blueprint language, key templates and value encodings included
    ["tablewright.design"],
    ["tablewright.monitoring"],  # alarms, maintenance window, change rule as data (priced by capacity)
    ["tablewright.capacity"],  # and the traffic model (capacity/traffic.py)
    ["tablewright.simulate"],  # the throttle simulator (lint proves its fixes with it)
    ["tablewright.lint"],
    ["tablewright.stacks"],  # one stack value: blueprint, design, capacity, findings
    ["tablewright.adopt"],  # blueprints of existing tables
    ["tablewright.alternatives"],  # the alternatives to each GSI
    ["tablewright.catalog"],  # `list` and `new`: the catalog of a directory of blueprints
    ["tablewright.calibrate"],  # CloudWatch's metrics of a deployed stack against its blueprint
    ["tablewright.client"],  # the generated data-access modules (Python, TypeScript) of a stack's design
    ["tablewright.constructs"],
    ["tablewright.synth"],
    ["tablewright.verify"],
    # a local AWS (moto) with the stacks' tables, and Terraform runs pointed at it; the files `init` writes
    ["tablewright.local", "tablewright.scaffold"],
    ["tablewright.testing"],  # application tests against the local AWS (a fixture and a context manager)
    ["tablewright.review"],
    ["tablewright.migrate"],  # the data migrations a review lists, run against a table: plan, run, verify
    ["tablewright.report"],  # renderers only
    ["tablewright.cli"],
    ["tablewright.__main__"],
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


@dataclass(frozen=True)
class Import:
    line: int
    name: str  # what it names: `from tablewright.stacks.stack import Stack` is tablewright.stacks.stack.Stack
    typing_only: bool  # under `if TYPE_CHECKING:`: never run


def statements(tree: ast.AST, typing_only: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Every node below `tree`, each with whether it sits under `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            for branch, flag in ((child.body, True), (child.orelse, typing_only)):
                for node in branch:
                    yield node, flag
                    yield from statements(node, flag)
            continue
        yield child, typing_only
        yield from statements(child, typing_only)


def tablewright_imports(tree: ast.AST, package: str) -> Iterator[Import]:
    """Every `tablewright…` import below `tree`, a relative one resolved against `package`."""
    for node, typing_only in statements(tree):
        if isinstance(node, ast.ImportFrom):
            module = absolute(node, package)
            if module == "tablewright" or module.startswith("tablewright."):
                for alias in node.names:
                    name = module if alias.name == "*" else f"{module}.{alias.name}"
                    yield Import(node.lineno, name, typing_only)
        elif isinstance(node, ast.Import):
            yield from (Import(node.lineno, alias.name, typing_only) for alias in node.names
                        if alias.name == "tablewright" or alias.name.startswith("tablewright."))


def imports(path: Path, package: str | None = None, source: str | None = None) -> list[tuple[int, str]]:
    """Every `tablewright…` import in a file, as (line, what it names); `package`: the importing module's package,
    for relative imports (by default the file's own)."""
    tree = ast.parse(path.read_text() if source is None else source)
    if package is None:
        has_relative = any(isinstance(node, ast.ImportFrom) and node.level for node in ast.walk(tree))
        package = package_of(path) if has_relative else ""
    return [(found.line, found.name) for found in tablewright_imports(tree, package)]


def module_name(path: Path) -> str:
    parts = path.relative_to(MODULES).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    """The package relative imports in a file resolve against: itself for an `__init__.py`, else its parent."""
    if path.name == "__init__.py":
        return module_name(path)
    return module_name(path).rpartition(".")[0]


@cache
def module_files() -> dict[str, Path]:
    """Every module under modules/, by name (a package by its `__init__.py`)."""
    return {module_name(path): path for path in sorted(MODULES.rglob("*.py"))}


def module_of(name: str, known: frozenset[str] | set[str] | dict[str, Path]) -> str:
    """The module an imported name is or lives in: the longest known prefix (`tablewright.stacks.stack.Stack` ->
    `tablewright.stacks.stack`); the name itself when nothing is known of it."""
    candidate = name
    while candidate not in known and "." in candidate:
        candidate = candidate.rpartition(".")[0]
    return candidate if candidate in known else name


@cache
def module_imports(module: str) -> tuple[Import, ...]:
    path = module_files()[module]
    return tuple(tablewright_imports(ast.parse(path.read_text()), package_of(path)))


def import_graph(run_time_only: bool = False) -> dict[str, dict[str, int]]:
    """module -> {module it imports: the line of its first import}: what each import names, resolved to its module
    (a package's `__init__` only when the package itself is named). `run_time_only` leaves out `TYPE_CHECKING`."""
    files = module_files()
    graph: dict[str, dict[str, int]] = {}
    for module in files:
        edges = graph.setdefault(module, {})
        for found in module_imports(module):
            if run_time_only and found.typing_only:
                continue
            target = module_of(found.name, files)
            if target != module:
                edges.setdefault(target, found.line)
    return graph


def package(module: str) -> str:
    """The top-level package (or module) under `tablewright` a module belongs to: `tablewright.synth.output` ->
    `tablewright.synth`; `tablewright` itself for the root package."""
    return ".".join(module.split(".")[:2])


def package_graph(run_time_only: bool = False) -> dict[str, dict[str, tuple[str, int, str]]]:
    """package -> {package it imports: (the first importing module, its line, the module imported)}, the root
    package `tablewright` (an entry point, no stage) left out."""
    graph: dict[str, dict[str, tuple[str, int, str]]] = {}
    for module, edges in import_graph(run_time_only).items():
        if package(module) == "tablewright":
            continue
        for target, line in edges.items():
            if package(target) not in (package(module), "tablewright"):
                graph.setdefault(package(module), {}).setdefault(package(target), (module, line, target))
    return graph


def strongly_connected(graph: dict[str, set[str]] | dict[str, dict]) -> list[list[str]]:
    """The graph's strongly connected components (Tarjan), each sorted; a node alone in its own is left out."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    break
                if successor in stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def cycle_through(graph: dict[str, set[str]] | dict[str, dict], component: list[str]) -> list[str]:
    """A shortest cycle through the first node of a strongly connected component: [a, b, ..., a]."""
    start, members = component[0], set(component)
    before: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph.get(node, ())):
            if successor == start:
                path = [node]
                while path[-1] != start:
                    path.append(before[path[-1]])
                return [*reversed(path), start]
            if successor in members and successor not in before:
                before[successor] = node
                queue.append(successor)
    raise AssertionError(f"{component} is not strongly connected")


def cycles(graph: dict[str, set[str]] | dict[str, dict]) -> list[list[str]]:
    """One cycle of each strongly connected component: empty when the graph is acyclic."""
    return [cycle_through(graph, component) for component in strongly_connected(graph)]


def where(module: str, line: int, imported: str) -> str:
    return f"{module_files()[module].relative_to(ROOT)}:{line}: {module} imports {imported}"


def short(module: str) -> str:
    return module.removeprefix("tablewright.")


def test_no_module_imports_from_a_later_stage():
    backwards = []
    for own, path in module_files().items():
        if own == "tablewright":
            continue
        for line, imported in imports(path):
            if stage_of(imported) > stage_of(own):
                backwards.append(f"{path.relative_to(ROOT)}:{line}: {own} imports {imported}")
    assert not backwards, "\n".join(backwards)


def test_no_two_packages_import_each_other():
    """Within a stage too: `constructs -> synth -> constructs` is one package, not two stages."""
    graph = package_graph()
    found = []
    for cycle in cycles(graph):
        found.append("import cycle between packages: " + " -> ".join(map(short, cycle)))
        found += [f"  {where(*graph[source][target])}" for source, target in pairwise(cycle)]
    assert not found, "\n".join(found)


def test_no_two_modules_import_each_other():
    """Imports inside functions and under `TYPE_CHECKING` count: a cycle put off until run time is still one."""
    graph = import_graph()
    found = []
    for cycle in cycles(graph):
        found.append("import cycle between modules: " + " -> ".join(map(short, cycle)))
        found += [f"  {where(source, graph[source][target], target)}" for source, target in pairwise(cycle)]
    assert not found, "\n".join(found)


def test_every_stage_is_a_module():
    """A stage names a package or module that exists (one moved or removed is taken out of STAGES)."""
    named = [member for members in STAGES for member in members]
    assert len(named) == len(set(named)), "a package in two stages"
    missing = [member for member in named if member not in module_files()]
    assert not missing, f"stages naming no module under modules/: {missing}"


def test_the_check_finds_every_cycle_and_names_its_path():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}, "g": {"g"}}
    assert strongly_connected(graph) == [["a", "b", "c"], ["e", "f"]]
    assert cycles(graph) == [["a", "b", "c", "a"], ["e", "f", "e"]]
    assert cycles({"x": {"y"}, "y": {"z"}, "z": set()}) == []
    # the shortest way round: a -> c -> a, not a -> b -> c -> a
    assert cycles({"a": {"b", "c"}, "b": {"c"}, "c": {"a"}}) == [["a", "c", "a"]]


def test_the_check_sees_a_cycle_between_two_packages_of_one_stage(tmp_path):
    """`constructs.stack` importing from `synth.output` while `synth` imports `constructs`: a package cycle."""
    sources = {"tablewright.constructs.stack": "from tablewright.synth.output import local_state_path\n",
               "tablewright.synth.output": "def f():\n    from tablewright.constructs import stack\n"}
    graph: dict[str, dict[str, int]] = {}
    known = set(sources) | {"tablewright.constructs", "tablewright.synth"}
    for module, source in sources.items():
        for found in tablewright_imports(ast.parse(source), module.rpartition(".")[0]):
            graph.setdefault(module, {})[module_of(found.name, known)] = found.line
    assert graph == {"tablewright.constructs.stack": {"tablewright.synth.output": 1},
                     "tablewright.synth.output": {"tablewright.constructs.stack": 2}}
    assert cycles(graph) == [["tablewright.constructs.stack", "tablewright.synth.output",
                              "tablewright.constructs.stack"]]
    packages = {package(module): {package(target) for target in targets} for module, targets in graph.items()}
    assert cycles(packages) == [["tablewright.constructs", "tablewright.synth", "tablewright.constructs"]]


def test_the_check_sees_a_backward_import(tmp_path):
    """The check itself: a design module importing the review would be reported."""
    assert stage_of("tablewright.review.classify") > stage_of("tablewright.design.designer")
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tablewright.review.classify import classify\n")
    assert imports(probe) == [(2, "tablewright.review.classify.classify")]


def test_the_check_resolves_relative_imports(tmp_path):
    """`from ..review import classify` in modules/tablewright/design/x.py is tablewright.review: a backward import."""
    source = "from ..review import classify\nfrom . import designer\nfrom .design import TableDesign\n"
    probe = tmp_path / "probe.py"
    found = imports(probe, package="tablewright.design", source=source)
    assert found == [(1, "tablewright.review.classify"), (2, "tablewright.design.designer"),
                     (3, "tablewright.design.design.TableDesign")]
    backwards = [name for _, name in found if stage_of(name) > stage_of("tablewright.design.probe")]
    assert backwards == ["tablewright.review.classify"]
    known = {"tablewright.review", "tablewright.design", "tablewright.design.design"}
    assert [module_of(name, known) for _, name in found] == ["tablewright.review", "tablewright.design",
                                                             "tablewright.design.design"]


def test_typing_only_imports_are_marked(tmp_path):
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tablewright.stacks import Stack\n"
              "else:\n    import tablewright.errors\n")
    found = list(tablewright_imports(ast.parse(source), ""))
    assert found == [Import(3, "tablewright.stacks.Stack", True), Import(5, "tablewright.errors", False)]


def test_relative_imports_resolve_against_the_package(tmp_path):
    """An `__init__.py` is its own package; a plain module's package is its parent; too many dots is an error."""
    init = MODULES / "tablewright" / "design" / "__init__.py"
    assert package_of(init) == "tablewright.design"
    assert package_of(MODULES / "tablewright" / "design" / "designer.py") == "tablewright.design"
    assert package_of(MODULES / "tablewright" / "cli" / "project.py") == "tablewright.cli"
    probe = tmp_path / "probe.py"
    assert imports(probe, package="tablewright", source="from .review.gate import gate\n") == [
        (1, "tablewright.review.gate.gate")
    ]
    with pytest.raises(AssertionError, match="beyond the top-level package"):
        imports(probe, package="tablewright", source="from .. import x\n")


def test_every_stage_package_says_what_it_reads_and_produces():
    """Each package directly under modules/tablewright/ opens with a docstring (what the stage reads and produces)."""
    packages = sorted(path.parent for path in (MODULES / "tablewright").glob("*/__init__.py"))
    assert packages
    silent = [package.name for package in packages
              if not (ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or "").strip()]
    assert not silent, f"packages without a docstring: {silent}"


def reference_tool():
    """tools/reference.py, which writes docs/concepts/pipeline.md from these stages and imports."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("reference", ROOT / "tools" / "reference.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_the_pipeline_page_draws_the_direct_imports_and_follows_each_handler():
    tool = reference_tool()
    assert tool.reduced({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == {"a": {"b"}, "b": {"c"}, "c": set()}
    assert tool.reduced({"a": {"b"}, "b": {"a"}}) == {"a": {"b"}, "b": {"a"}}  # a cycle keeps its edges

    def reached(handler: str) -> set[str]:
        reach = tool.Reach()
        reach.function("tablewright.cli.commands", handler)
        return {package(module) for module in reach.modules}

    # a function of the CLI reaches what it uses, not everything its module imports
    assert {"tablewright.synth", "tablewright.constructs"} <= reached("command_synth")
    assert "tablewright.synth" not in reached("command_schema")
    assert "tablewright.report" not in reached("command_schema")


@pytest.mark.terraform
def test_mermaid_parses_the_pipeline_diagram():
    """docs/concepts/pipeline.md's diagram, through Mermaid's own parser as the reports' (slow tier: Node)."""
    from tests.report.test_diagrams import mermaid, parse

    diagrams = mermaid((ROOT / "docs" / "concepts" / "pipeline.md").read_text())
    assert len(diagrams) == 1 and diagrams[0].startswith("flowchart TB\n")
    code, results = parse(diagrams)
    assert code == 0 and results[0]["type"] == "flowchart-v2", results
