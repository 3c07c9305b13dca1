"""Plans in the shape of `terraform show -json`, built from two syntheses without Terraform (fast tier).

`plan_between(before, after)` plans what Terraform would do to go from the applied synthesis `before` to
`after`: one `resource_changes` entry per resource that changes (the classification the review computes
from the two syntheses), and the stack's `tablewright` output before and after. The slow tier's real plans
(tests/support/plans.py) are classified the same way (tests/review/test_review.py); these serve tests of what reads a
plan's shape (the gate's JSON, the plan summary), not of Terraform itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tablewright.blueprint.load import load_blueprint
from tablewright.review.changes import from_configs
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize

ACTIONS = {"create": ["create"], "update": ["update"], "delete": ["delete"], "replace": ["delete", "create"]}


def synthesis(blueprint: Path, environment: str | None, out: Path) -> dict[str, Any]:
    [written] = synthesize(build_stacks([load_blueprint(blueprint, environment)]), out)
    return json.loads(written.read_text())


def _record(config: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if config is None else config["output"]["tablewright"]["value"]


def plan_between(before: dict[str, Any] | None, after: dict[str, Any]) -> dict[str, Any]:
    """Every resource of `after` (`no-op` when unchanged, as `terraform show -json` lists them) and every one
    the change deletes."""
    changes = from_configs(before or {}, after)
    changed = {change.address for change in changes}
    entries = [{"address": change.address, "mode": "managed", "type": change.type,
                "name": change.address.split(".", 1)[1],
                "change": {"actions": ACTIONS[change.action], "before": change.before, "after": change.after,
                           "after_unknown": {}, "replace_paths": [[path] for path in change.replace_paths]}}
               for change in changes]
    entries += [{"address": f"{kind}.{name}", "mode": "managed", "type": kind, "name": name,
                 "change": {"actions": ["no-op"], "before": body, "after": body, "after_unknown": {}}}
                for kind, bodies in after.get("resource", {}).items() for name, body in bodies.items()
                if f"{kind}.{name}" not in changed]
    entries.sort(key=lambda entry: entry["address"])
    return {"format_version": "1.2", "terraform_version": "1.11.4", "planned_values": {"root_module": {}},
            "resource_changes": entries,
            "output_changes": {"tablewright": {"actions": ["update"], "before": _record(before),
                                               "after": _record(after)}}}


def write_plan(plan: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(plan))
    return path
