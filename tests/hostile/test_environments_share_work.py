"""Work grows with designs, not environments: the environments of one blueprint that share a design are designed,
estimated, linted and simulated once, and each still reports its own names and locations (its output is the one it
would have alone). A 20-environment blueprint used to take minutes in every command (bench/environments.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tablewright.alternatives.alternatives as alternatives
import tablewright.simulate.stack as simulation
import tablewright.stacks.stack as stacks_module
from tablewright.alternatives.alternatives import stack_choices
from tablewright.blueprint.load import load_blueprints
from tablewright.report.explain import explain_data
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize

ENVIRONMENTS = 20
FLEET = """\
blueprint: fleet
version: 1.0.0
table:
  name: fleet_main
  billing: provisioned
  capacity: {{read: {{min: 5, max: 400}}, write: {{min: 5, max: 200}}}}
environments: {{{environments}}}
traffic:
  daily: {{"03:00": 0.2, "19:00": 2.5}}
  events: [{{name: launch, start: "18:00", duration: 10m, factor: 40}}]
entities:
  Thing:
    attributes: {{ownerId: string, thingId: string, status: string, at: timestamp}}
    key: {{pk: "OWNER#{{ownerId}}", sk: "THING#{{thingId}}"}}
    writes: {{inserts: 20, updates: 20}}
access_patterns:
  thing: {{entity: Thing, where: {{ownerId: "=", thingId: "="}}, rps: 50}}
  by_status: {{entity: Thing, where: {{status: "="}}, order_by: at, rps: 5}}
"""


def fleet(directory: Path, **overrides: str) -> Path:
    environments = ", ".join(f"e{n}: {overrides.get(f'e{n}', '{}')}" for n in range(ENVIRONMENTS))
    path = directory / "fleet.yaml"
    path.write_text(FLEET.format(environments=environments))
    return path


def counted(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    calls: list[int] = []
    original = getattr(module, name)

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return original(*args, **kwargs)
    monkeypatch.setattr(module, name, counting)
    return calls


def test_environments_of_one_design_are_designed_linted_and_simulated_once(tmp_path, monkeypatch):
    designs = counted(monkeypatch, stacks_module, "design")
    lints = counted(monkeypatch, stacks_module, "lint_loaded")
    runs = counted(monkeypatch, simulation, "_run_mode")
    stacks = build_stacks(load_blueprints(fleet(tmp_path)))
    assert len(stacks) == ENVIRONMENTS and len(designs) == 1 and len(lints) == 1
    assert {stack.design.blueprint.table.name for stack in stacks} == {f"fleet_main-e{n}" for n in range(20)}
    assert [stack.lint.blueprint for stack in stacks] == [stack.name for stack in stacks]
    assert {stack.name for stack in stacks} == {f"fleet-e{n}" for n in range(ENVIRONMENTS)}
    after_lint = len(runs)
    days = {stack.simulated_day for stack in stacks}
    assert len(days) == 1 and len(runs) - after_lint <= 2  # both billing modes of one design, at most once each
    weighed = counted(monkeypatch, alternatives, "index_choices")
    choices = [stack_choices(stack) for stack in stacks]  # `explain` and the review's alternatives to each GSI
    assert len(weighed) == 1
    monkeypatch.undo()
    (alone,) = build_stacks([stacks[11].source])  # its findings, located in its own environment's entry
    assert stacks[11].lint == alone.lint and stacks[11].lint.findings != stacks[12].lint.findings
    assert stacks[11].simulated_day == alone.simulated_day and stacks[11].cost == alone.cost
    # what `explain` and the review show of them is the environment's own (their blueprints are the first's)
    assert explain_data(stacks[11], choices[11]) == explain_data(alone, alternatives.index_choices(
        alone.design, alone.capacity, alone.cost))


def test_an_environment_that_changes_the_design_gets_its_own(tmp_path, monkeypatch):
    designs = counted(monkeypatch, stacks_module, "design")
    path = fleet(tmp_path, e7="{table: {capacity: {write: {min: 5, max: 900}}}}")
    stacks = {stack.name: stack for stack in build_stacks(load_blueprints(path))}
    assert len(designs) == 2
    assert stacks["fleet-e7"].design.blueprint.table.capacity != stacks["fleet-e6"].design.blueprint.table.capacity
    assert stacks["fleet-e7"].same_as is None and stacks["fleet-e8"].same_as is stacks["fleet-e0"]


def test_each_environment_synthesizes_what_it_would_alone(tmp_path):
    path = fleet(tmp_path)
    shared = synthesize(build_stacks(load_blueprints(path)), tmp_path / "all")
    alone = synthesize(build_stacks([next(s for s in load_blueprints(path) if s.environment == "e13")]),
                       tmp_path / "alone")
    (thirteenth,) = [written for written in shared if written.parent.name == "fleet-e13"]
    assert json.loads(thirteenth.read_text()) == json.loads(alone[0].read_text())
    assert "fleet_main-e13" in alone[0].read_text()
