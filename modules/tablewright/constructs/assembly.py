"""Everything that belongs to one table, as Terraform blocks: the table (and its key), autoscaling,
Contributor Insights, the change calendar, and, with alarms on, the change rule (and the trail it
needs, when the stack creates one), the alarm topic and the alarms. Plain data: no cdktf here (see
`construct.py` for the construct that emits it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from tablewright.capacity.loads import CapacityReport
from tablewright.constructs.access import access_policies
from tablewright.constructs.alarms import alarms
from tablewright.constructs.autoscaling import autoscaling
from tablewright.constructs.change_rules import calendar_ref, change_calendar, change_rule, rule_targets, trail
from tablewright.constructs.insights import contributor_insights
from tablewright.constructs.notifications import alarm_topic, topic_arn
from tablewright.constructs.table import table, table_ref
from tablewright.constructs.terraform import Block, fragment
from tablewright.design.design import TableDesign
from tablewright.errors import ErrorCode, TablewrightError

if TYPE_CHECKING:
    from tablewright.stacks.stack import Stack


@dataclass(frozen=True)
class TableReferences:
    """Terraform references to what a table's blocks create (`None`: the design creates no such thing)."""

    table_name: str
    table_arn: str
    stream_arn: str | None
    change_calendar: str | None  # the SSM Change Calendar's name
    alarm_topic_arn: str | None  # the alarm topic the stack creates (`alarms.notify: create`)


def stack_tags(design: TableDesign) -> dict[str, str]:
    return {"tablewright:blueprint": design.blueprint.blueprint, **design.blueprint.tags}


def table_blocks(design: TableDesign, capacity: CapacityReport) -> list[Block]:
    """The table's blocks; `capacity` (its estimate) resolves `max_throughput: suggested`."""
    tags = stack_tags(design)
    table_name = table_ref(design, "name")
    maxima = capacity.on_demand_maxima
    # An adopted table and its scalable targets keep the tags they have, so importing them changes nothing
    # (the blueprint's `tags` are the table's live tags; describe-scalable-targets reports none).
    adopted = design.blueprint.adopted is not None
    blocks = table(design, design.blueprint.tags if adopted else tags, maxima)
    blocks += autoscaling(design, table_name, {} if adopted else tags)
    blocks += contributor_insights(design, table_name)
    blocks += observability(design, table_name, tags, maxima) + change_calendar(design, tags)
    return blocks + access_policies(design)


def observability(design: TableDesign, table_name: str, tags: dict[str, str],
                  maxima: Mapping[str, tuple[int, int]]) -> list[Block]:
    """Alarms, and the rule that reports out-of-band changes (with its trail, if the stack creates one), both
    delivered to the alarm topic(s)."""
    settings = design.blueprint.alarms
    if not settings.enabled:
        return []
    rule = change_rule(design, tags)
    blocks = [rule]
    if settings.notify == "create":
        blocks += alarm_topic(design, rule.ref("arn"), tags)
        topics = [topic_arn(design)]
    else:
        topics = list(settings.notify)
    blocks += rule_targets(design, rule, topics) + trail(design, tags)
    return blocks + alarms(design, table_name, topics, tags, maxima)


def table_references(design: TableDesign) -> TableReferences:
    blueprint = design.blueprint
    return TableReferences(
        table_name=table_ref(design, "name"),
        table_arn=table_ref(design, "arn"),
        stream_arn=table_ref(design, "stream_arn") if blueprint.table.stream != "off" else None,
        change_calendar=calendar_ref(design, "name") if blueprint.maintenance_window is not None else None,
        alarm_topic_arn=topic_arn(design) if blueprint.alarms.enabled and blueprint.alarms.notify == "create" else None,
    )


def table_terraform(plan: Stack, scope_path: str) -> dict[str, Any]:
    """The Terraform JSON of the table's blocks, an argument AWS would refuse located in the blueprint."""
    try:
        return fragment(table_blocks(plan.design, plan.capacity), scope_path)
    except ValidationError as error:  # an argument derived from the blueprint's names
        raise plan.source.locate(_derived(error)) from None


def _derived(error: ValidationError) -> TablewrightError:
    detail = error.errors()[0]
    value = str(detail.get("input"))
    shown = value if len(value) <= 60 else f"{value[:40]}...{value[-15:]}"
    argument = ".".join(str(step) for step in detail["loc"])
    return TablewrightError(
        f"the {error.title} `{argument}` Tablewright derives from the blueprint's names would be {shown!r} "
        f"({len(value)} characters), which AWS refuses: {detail['msg']}", path=("table", "name"), code=ErrorCode.NAMING,
        hint="shorten `table.name` (or the index names): alarm, topic, calendar and rule names are made from them")
