"""Resource changes from either source, in one shape: two syntheses compared, or `terraform show -json`
of a real plan. Classification (classify.py) reads only this shape, so both sources agree."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from modules.errors import TablewrightError

UNKNOWN = "(known after apply)"

# Arguments whose change makes the AWS provider replace the resource (ForceNew), for the resource
# types Tablewright writes. A real plan says so itself (`replace_paths`).
FORCES_REPLACEMENT: dict[str, tuple[str, ...]] = {
    "aws_dynamodb_table": ("name", "hash_key", "range_key", "local_secondary_index"),
    "aws_dynamodb_contributor_insights": ("table_name", "index_name"),
    "aws_appautoscaling_target": ("resource_id", "scalable_dimension", "service_namespace"),
    "aws_appautoscaling_policy": ("name", "resource_id", "scalable_dimension", "service_namespace"),
    "aws_cloudwatch_metric_alarm": ("alarm_name",),
    "aws_cloudwatch_event_rule": ("name",),
    "aws_cloudwatch_event_target": ("rule", "target_id"),
    "aws_sns_topic": ("name",),
    "aws_sns_topic_policy": ("arn",),
    "aws_ssm_document": ("name",),
    "aws_kms_alias": ("name",),
}
# Synthesis bookkeeping that is not part of the resource's state.
META_ARGUMENTS = {"//", "lifecycle", "depends_on", "count", "for_each", "provider"}


@dataclass(frozen=True)
class ResourceChange:
    address: str  # type.name
    type: str
    action: str  # create | update | delete | replace
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    replace_paths: tuple[str, ...] = ()


def _without_meta(body: dict[str, Any]) -> dict[str, Any]:
    """The arguments Terraform reconciles: no bookkeeping, nothing `lifecycle.ignore_changes` names."""
    ignored = set((body.get("lifecycle") or {}).get("ignore_changes") or [])
    return {key: value for key, value in body.items() if key not in META_ARGUMENTS and key not in ignored}


REFERENCE = re.compile(r"\$\{(aws_[a-z0-9_]+\.[A-Za-z0-9_-]+)\.([a-z_]+)\}")


def _resolve(value: Any, resources: dict[str, dict[str, Any]]) -> Any:
    """Replace `${type.name.attr}` by the configured value of `attr` when the configuration sets it
    (a table's name); references to computed values (an ARN) stay as they are."""
    if isinstance(value, dict):
        return {key: _resolve(item, resources) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve(item, resources) for item in value]
    if not isinstance(value, str):
        return value

    def configured(match: re.Match) -> str:
        known = resources.get(match.group(1), {}).get(match.group(2))
        return str(known) if isinstance(known, (str, int)) and not isinstance(known, bool) else match.group(0)

    return REFERENCE.sub(configured, value)


def _mentions(value: Any, addresses: set[str]) -> bool:
    text = json.dumps(value)
    return any(f"${{{address}." in text for address in addresses)


def _resources(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every resource of a synthesis by address, its references resolved as far as configuration goes."""
    resolved = {f"{kind}.{name}": _without_meta(body)
                for kind, bodies in config.get("resource", {}).items() for name, body in bodies.items()}
    while True:  # references to references: a policy names its target's resource_id, which names the table
        again = {address: _resolve(body, resolved) for address, body in resolved.items()}
        if again == resolved:
            return resolved
        resolved = again


def _forcing(address: str, changed: Callable[[str], bool]) -> tuple[str, ...]:
    return tuple(arg for arg in FORCES_REPLACEMENT.get(address.split(".")[0], ()) if changed(arg))


def from_configs(before: dict[str, Any], after: dict[str, Any]) -> list[ResourceChange]:
    """What Terraform would do to go from synthesis `before` to synthesis `after` (cdk.tf.json).

    References are resolved to configured values. A resource that still refers to a replaced
    resource (to a value known only after apply, like its ARN) changes too, and is replaced itself
    when the reference sits in an argument that forces replacement."""
    old, new = _resources(before), _resources(after)
    actions: dict[str, str] = {}
    forcing: dict[str, tuple[str, ...]] = {}
    for address in old.keys() | new.keys():
        was, now = old.get(address), new.get(address)
        if was is None or now is None:
            actions[address] = "create" if was is None else "delete"
        elif was != now:
            forcing[address] = _forcing(address, lambda arg: was.get(arg) != now.get(arg))
            actions[address] = "replace" if forcing[address] else "update"
    replaced: set[str] = set()
    while (now_replaced := {a for a, action in actions.items() if action == "replace"}) != replaced:
        replaced = now_replaced
        for address in sorted(old.keys() & new.keys()):
            if not _mentions(new[address], replaced):
                continue
            moved = _forcing(address, lambda arg: _mentions(new[address].get(arg), replaced))
            if moved:
                forcing[address] = tuple(sorted(set(forcing.get(address, ())) | set(moved)))
                actions[address] = "replace"
            else:
                actions.setdefault(address, "update")
    return [ResourceChange(address, address.split(".")[0], actions[address], old.get(address), new.get(address),
                           forcing.get(address, ()))
            for address in sorted(actions)]


def _fill_unknown(value: Any, unknown: Any) -> Any:
    """Put UNKNOWN wherever `after_unknown` marks a value Terraform learns only during apply."""
    if unknown is True:
        return UNKNOWN
    if isinstance(value, dict) and isinstance(unknown, dict):
        return {**value, **{k: _fill_unknown(value.get(k), u) for k, u in unknown.items() if u}}
    if isinstance(value, list) and isinstance(unknown, list):
        return [_fill_unknown(v, u) for v, u in zip(value, unknown)] + value[len(unknown):]
    return value


PLAN_ACTIONS = {("create",): "create", ("update",): "update", ("delete",): "delete",
                ("delete", "create"): "replace", ("create", "delete"): "replace"}


def from_plan(plan: dict[str, Any]) -> list[ResourceChange]:
    """The managed resource changes of `terraform show -json PLAN` that do something."""
    changes = []
    for entry in plan.get("resource_changes", []):
        if entry.get("mode") != "managed":
            continue
        change = entry["change"]
        action = PLAN_ACTIONS.get(tuple(change["actions"]))
        if action is None:  # no-op, read
            continue
        after = _fill_unknown(change.get("after"), change.get("after_unknown"))
        paths = tuple(".".join(str(p) for p in path) for path in change.get("replace_paths") or [])
        changes.append(ResourceChange(entry["address"], entry["type"], action, change.get("before"), after, paths))
    return sorted(changes, key=lambda c: c.address)


def read_plan(path: Path) -> dict[str, Any]:
    """`terraform show -json PLAN` output, checked enough to give a clear error."""
    try:
        plan = json.loads(path.read_text())
    except FileNotFoundError:
        raise TablewrightError(f"{path}: no such file", hint="write it with `terraform show -json PLAN > PLAN.json`")
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TablewrightError(f"{path}: not JSON ({error})",
                               hint="pass the output of `terraform show -json PLAN`, not the binary plan file")
    if not isinstance(plan, dict) or "format_version" not in plan or "planned_values" not in plan:
        raise TablewrightError(f"{path}: not a Terraform plan in JSON (no format_version/planned_values)",
                               hint="pass the output of `terraform show -json PLAN` (a plan, not a state)")
    return plan
