"""One house: each figure is computed once, by the stage that owns it, and read by every later one.

The traffic model is built by the capacity estimate (and nowhere else); a stack is simulated by the stack value
(`Stack.simulate`); alternatives are their own stage; `report/` renders what the stages computed and calls
none of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT, TEST_BLUEPRINTS

MODULES = ROOT / "modules" / "tablewright"

# Each computing entry point -> the only modules that may call it.
OWNERS = {
    "traffic_model": {"capacity/loads.py"},
    "simulate_stack": {"stacks/stack.py"},
    "monthly_cost": {"stacks/stack.py", "alternatives/alternatives.py"},  # an alternative is a design of its own
    "estimate": {"stacks/stack.py", "alternatives/alternatives.py"},
    "index_choices": {"alternatives/alternatives.py"},  # through `stack_choices`: once per design
    "stack_choices": {"cli/commands.py", "review/review.py"},
    "lint_design": {"lint/engine.py"},
    "key_loads": {"lint/hot.py", "lint/engine.py"},
    "suggested_sharding": {"lint/hot.py", "lint/engine.py"},
}


def calls(path: Path) -> set[str]:
    """The names of the functions a module calls (`f(...)` and `module.f(...)`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name):
                found.add(function.id)
            elif isinstance(function, ast.Attribute):
                found.add(function.attr)
    return found


def callers() -> dict[str, set[str]]:
    """Computing entry point -> the modules (relative to modules/tablewright) that call it."""
    found: dict[str, set[str]] = {name: set() for name in OWNERS}
    for path in sorted(MODULES.rglob("*.py")):
        for name in calls(path) & set(OWNERS):
            found[name].add(path.relative_to(MODULES).as_posix())
    return found


def test_each_figure_is_computed_by_its_own_stage_only():
    strays = {name: sorted(where - OWNERS[name]) for name, where in callers().items() if where - OWNERS[name]}
    assert not strays, f"computed outside the stage that owns it (read it from the stack instead): {strays}"


def test_the_reports_call_no_computing_function():
    reports = {path.relative_to(MODULES).as_posix(): calls(path) & set(OWNERS)
               for path in sorted((MODULES / "report").rglob("*.py"))}
    assert not {name: found for name, found in reports.items() if found}


def test_the_check_sees_a_report_that_computes(tmp_path):
    stray = tmp_path / "stray.py"
    stray.write_text("from tablewright.capacity.loads import estimate\n\ndef render(d):\n    return estimate(d)\n")
    assert calls(stray) & set(OWNERS) == {"estimate"}


def test_the_traffic_model_is_built_once_per_stack_whatever_the_commands_read(run_cli, monkeypatch):
    """lint (hot keys, surges), simulate, capacity and explain's charts read the stack's one model."""
    from tablewright.capacity import loads

    built = []
    original = loads.traffic_model

    def counting(*args, **kwargs):
        built.append(args[0].blueprint.blueprint)
        return original(*args, **kwargs)

    monkeypatch.setattr(loads, "traffic_model", counting)
    blueprint = ROOT / "blueprints" / "orders.yaml"
    for command in (["lint"], ["simulate"], ["capacity"], ["explain", "--format", "markdown"]):
        built.clear()
        code, _, err = run_cli(*command, blueprint, "--env", "prod")
        assert code == 0, err
        assert built == ["orders"], command


def _declared_units(stack, target: str) -> tuple[float, float]:
    """(read, write) units a second on a target, summed from the estimate's reads and writes themselves (a local
    index's units are the table's), not from the traffic model."""
    design, capacity = stack.design, stack.capacity

    def on_target(index: str) -> bool:
        return index == target or (target == "table" and design.index_is_local(index))

    reads = sum(read.units_per_second for read in capacity.reads if on_target(read.index))
    if target == "table":  # a follow-up's reads, and those the client makes before it writes (capacity/requests.py)
        reads += sum(read.table_units_per_second for read in capacity.reads)
        reads += sum(kind.rate * kind.read_units for write in capacity.writes for kind in write.kinds)
    writes = sum(units for write in capacity.writes for index, units in write.units_per_second.items()
                 if on_target(index))
    return reads, writes


@pytest.mark.parametrize("name", ["orders", "crm", "features", "client", "hot"])
def test_each_load_is_what_the_estimates_reads_and_writes_add_up_to(name):
    """The model the loads are summed from drops no read or write the estimate priced, and counts none twice."""
    from tablewright.blueprint.load import load_blueprints
    from tablewright.stacks.stack import build_stacks

    path = ROOT / "blueprints" / f"{name}.yaml"
    for stack in build_stacks(load_blueprints(path if path.exists() else TEST_BLUEPRINTS / f"{name}.yaml")):
        for load in stack.capacity.loads:
            reads, writes = _declared_units(stack, load.index)
            assert (load.read_units_per_second, load.write_units_per_second) == (
                pytest.approx(reads, abs=1e-9), pytest.approx(writes, abs=1e-9)), (stack.name, load.index)
            assert isinstance(load.write_units_per_second, float)  # JSON keeps printing 0.0, not 0
