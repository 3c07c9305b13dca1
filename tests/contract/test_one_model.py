"""One house: each figure is computed once, by the stage that owns it, and read by every later one.

The traffic model is built by the capacity estimate (and nowhere else); a stack is simulated by the stack value
(`Stack.simulate`); alternatives are their own stage; `report/` renders what the stages computed and calls
none of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

MODULES = ROOT / "modules" / "tablewright"

# Each computing entry point -> the only modules that may call it.
OWNERS = {
    "traffic_model": {"capacity/loads.py"},
    "simulate_stack": {"stacks/stack.py"},
    "monthly_cost": {"stacks/stack.py", "alternatives/alternatives.py"},  # an alternative is a design of its own
    "estimate": {"stacks/stack.py", "alternatives/alternatives.py"},
    "index_choices": {"cli/commands.py", "review/review.py"},
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


@pytest.mark.parametrize("name", ["orders", "crm"])
def test_each_load_is_the_sum_of_the_models_flows_on_its_target(name):
    from tablewright.blueprint.load import load_blueprints
    from tablewright.stacks.stack import build_stacks

    for stack in build_stacks(load_blueprints(ROOT / "blueprints" / f"{name}.yaml")):
        model = stack.capacity.traffic
        for load in stack.capacity.loads:
            reads = [model.flows[i] for i in model.on(load.index, "read")]
            writes = [model.flows[i] for i in model.on(load.index, "write")]
            assert load.read_units_per_second == pytest.approx(sum(f.units for f in reads))
            assert load.write_units_per_second == pytest.approx(sum(f.units for f in writes))
            assert load.peak_write == pytest.approx(sum(f.peak for f in writes))
