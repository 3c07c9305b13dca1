"""Resource changes from either source, in one shape: two syntheses compared, or `terraform show -json`
of a real plan. Classification (classify.py) reads only this shape, so both sources agree."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tablewright.errors import PlanError

UNKNOWN = "(known after apply)"

# Arguments whose change makes the AWS provider replace the resource (ForceNew), for the resource
# types Tablewright writes. A real plan says so itself (`replace_paths`); for aws_dynamodb_table
# tests/review/test_replacing_attributes.py checks this list (and `_table_replacing`) against the provider.
FORCES_REPLACEMENT: dict[str, tuple[str, ...]] = {
    "aws_dynamodb_table": ("name", "hash_key", "range_key", "restore_date_time", "restore_source_name",
                           "restore_source_table_arn", "restore_to_latest_time", "import_table"),
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

    def configured(match: re.Match[str]) -> str:
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


def _forcing_arguments(address: str) -> tuple[str, ...]:
    """The arguments of this resource's type whose change forces replacement."""
    return FORCES_REPLACEMENT.get(address.split(".")[0], ())


def nested_blocks(value: Any) -> list[dict[str, Any]]:
    """Nested blocks: a dict in a synthesis, a list of dicts in a plan."""
    if isinstance(value, dict):
        return [value]
    return [v for v in value or [] if isinstance(v, dict)]


def nested_block(value: Any) -> dict[str, Any]:
    """A block that appears at most once (its first, or an empty one)."""
    blocks = nested_blocks(value)
    return blocks[0] if blocks else {}


def warm_units(body: dict[str, Any]) -> tuple[Any, Any]:
    """The warm throughput (read, write units per second) of a table or GSI block."""
    warm = nested_block(body.get("warm_throughput"))
    return warm.get("read_units_per_second"), warm.get("write_units_per_second")


def lowered(old: tuple[Any, Any], new: tuple[Any, Any]) -> list[str]:
    """The directions (read, write) whose warm throughput goes down. The provider replaces a table for it ("For
    the base table, decreasing this value will force a new resource"; a GSI's changes in place:
    https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/dynamodb_table#warm_throughput)."""
    return [direction for direction, was, now in zip(("read", "write"), old, new, strict=True)
            if isinstance(was, int) and isinstance(now, int) and now < was]


def _local_index_names(body: dict[str, Any]) -> set[Any]:
    return {block.get("name") for block in nested_blocks(body.get("local_secondary_index"))}


def _table_replacing(was: dict[str, Any], now: dict[str, Any]) -> tuple[str, ...]:
    """What else makes the provider replace a table: its local indexes, which it tells apart by name only (a
    local index added, removed or renamed; any other change of one it never applies), and a lower warm
    throughput of the table (`lowered`)."""
    found = []
    if _local_index_names(was) != _local_index_names(now):
        found.append("local_secondary_index")
    if lowered(warm_units(was), warm_units(now)):
        found.append("warm_throughput")
    return tuple(found)


def _replacing(address: str, was: dict[str, Any], now: dict[str, Any]) -> tuple[str, ...]:
    """The arguments whose change between `was` and `now` makes the provider replace the resource."""
    forced = tuple(arg for arg in _forcing_arguments(address) if was.get(arg) != now.get(arg))
    return forced + (_table_replacing(was, now) if address.split(".")[0] == "aws_dynamodb_table" else ())


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
            forcing[address] = _replacing(address, was, now)
            actions[address] = "replace" if forcing[address] else "update"
    replaced: set[str] = set()
    while (now_replaced := {a for a, action in actions.items() if action == "replace"}) != replaced:
        replaced = now_replaced
        for address in sorted(old.keys() & new.keys()):
            if not _mentions(new[address], replaced):
                continue
            moved = tuple(arg for arg in _forcing_arguments(address) if _mentions(new[address].get(arg), replaced))
            if moved:
                forcing[address] = tuple(sorted(set(forcing.get(address, ())) | set(moved)))
                actions[address] = "replace"
            else:
                actions.setdefault(address, "update")
    return [ResourceChange(address, address.split(".")[0], actions[address], old.get(address), new.get(address),
                           forcing.get(address, ()))
            for address in sorted(actions)]


@dataclass(frozen=True)
class StackSettings:
    """What a synthesis says besides its resources: where Terraform looks for them and keeps their state."""

    region: str | None  # None: the pipeline's AWS_REGION
    backend: str  # the backend block, as sorted JSON
    provider: str | None  # the hashicorp/aws version constraint


def stack_settings(config: dict[str, Any]) -> StackSettings:
    providers = (config.get("provider") or {}).get("aws") or [{}]
    terraform = config.get("terraform") or {}
    return StackSettings(providers[0].get("region"), json.dumps(terraform.get("backend"), sort_keys=True),
                         ((terraform.get("required_providers") or {}).get("aws") or {}).get("version"))


def _fill_unknown(value: Any, unknown: Any) -> Any:
    """Put UNKNOWN wherever `after_unknown` marks a value Terraform learns only during apply."""
    if unknown is True:
        return UNKNOWN
    if isinstance(value, dict) and isinstance(unknown, dict):
        return {**value, **{k: _fill_unknown(value.get(k), u) for k, u in unknown.items() if u}}
    if isinstance(value, list) and isinstance(unknown, list):
        return [_fill_unknown(v, u) for v, u in zip(value, unknown, strict=False)] + value[len(unknown):]
    return value


PLAN_ACTIONS = {("create",): "create", ("update",): "update", ("delete",): "delete",
                ("delete", "create"): "replace", ("create", "delete"): "replace", ("no-op",): None, ("read",): None}
def plan_error(problem: str, hint: str = "pass the output of `terraform show -json PLAN` for this blueprint's "
                                        "stack, unedited") -> PlanError:
    return PlanError(f"the plan {problem}", hint=hint)


def _is_data_address(address: str) -> bool:
    """`data.TYPE.NAME` (after any `module.NAME.` steps; instance keys ignored), as Terraform writes data sources."""
    parts = re.sub(r"\[[^\]]*\]", "", address).split(".")
    while parts[:1] == ["module"]:
        parts = parts[2:]
    return len(parts) == 3 and parts[0] == "data"


def entry_change(where: str, entry: Any) -> ResourceChange | None:
    """One `resource_changes` (or `resource_drift`) entry, checked: None for data sources, no-ops and reads."""
    if not isinstance(entry, dict):
        raise plan_error(f"has {where} that is not an object")
    address, kind, mode, change = (entry.get(k) for k in ("address", "type", "mode", "change"))
    if not (isinstance(address, str) and isinstance(kind, str) and isinstance(mode, str)):
        raise plan_error(f"has {where} without a string address, type and mode")
    if not isinstance(change, dict):
        raise plan_error(f"has {where} ({address}) without a `change` object")
    actions = change.get("actions")
    if not isinstance(actions, list) or not actions or not all(isinstance(a, str) for a in actions):
        raise plan_error(f"has {where} ({address}) without a list of actions")
    before, after = change.get("before"), change.get("after")
    if mode not in ("managed", "data"):
        raise plan_error(f"has {where} ({address}) in mode `{mode}`, neither `managed` nor `data`")
    if (mode == "data") != _is_data_address(address):
        raise plan_error(f"has {where} ({address}) whose mode `{mode}` does not match its address")
    if mode != "managed":
        return None
    if not all(side is None or isinstance(side, dict) for side in (before, after)):
        raise plan_error(f"has {where} ({address}) whose before/after are not objects")
    replace_paths = change.get("replace_paths")
    if replace_paths is not None and not (isinstance(replace_paths, list) and all(isinstance(path, list)
                                                                               for path in replace_paths)):
        raise plan_error(f"has {where} ({address}) whose replace_paths is not a list of paths")
    action = PLAN_ACTIONS.get(tuple(actions), "+".join(actions))  # an unknown action is kept, by name
    if action is None:
        return None
    after = _fill_unknown(after, change.get("after_unknown"))
    paths = tuple(".".join(str(p) for p in path) for path in replace_paths or [])
    return ResourceChange(address, kind, action, before, after, paths)


def from_plan(plan: dict[str, Any]) -> list[ResourceChange]:
    """The managed resource changes of `terraform show -json PLAN` that do something."""
    entries = plan.get("resource_changes", [])
    if not isinstance(entries, list):
        raise plan_error("has `resource_changes` that is not a list")
    changes = [change for position, entry in enumerate(entries)
               if (change := entry_change(f"resource_changes[{position}]", entry))]
    return sorted(changes, key=lambda c: c.address)
