"""`explain`: the entity chart, the access-pattern chart, the GSIs and the query cookbook."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tablewright.alternatives.alternatives import COPIES, INVERTED, Figures, IndexChoice
from tablewright.alternatives.split import Split
from tablewright.capacity.estimate import ReadCost, attribute_bytes, entry_bytes, item_bytes, presence
from tablewright.capacity.loads import CapacityReport
from tablewright.design.cookbook import follow_up_request, next_page_request, request
from tablewright.design.design import TABLE, IndexDesign, QueryPlan, TableDesign
from tablewright.monitoring.changes import event_pattern, watched
from tablewright.report import diagrams
from tablewright.report.capacity import assumption_lines
from tablewright.report.markdown import sanitize
from tablewright.report.tables import markdown_table, text_table
from tablewright.stacks.stack import Stack

OPERATION_METHOD = {"GetItem": "get_item", "BatchGetItem": "batch_get_item", "Query": "query", "Scan": "scan"}
PATTERN_HEADERS = ("Pattern", "Index", "Key condition", "Operation", "Order / limit", "RCU/call", "RCU/s")


def entity_headers(design: TableDesign) -> tuple[str, ...]:
    keys = design.table_keys
    return ("Entity", keys.pk, keys.sk or "(no sort key)", "Index keys")


def entity_rows(design: TableDesign) -> list[list[str]]:
    rows = []
    for entity in sorted(design.blueprint.entities):
        shapes = design.shapes[entity]
        table = shapes[TABLE]
        gsis = "; ".join(f"{index}: {shape}" for index, shape in sorted(shapes.items()) if index != TABLE)
        rows.append([entity, table.pk.text, table.sk.text or "-", gsis or "-"])
    return rows


def size_lines(design: TableDesign) -> list[str]:
    """`Issue: item 2,300 B; GSI1 entry 230 B`: each entity's average item and its entry on each index (keys
    and projected attributes), from the attributes' `bytes:` where declared."""
    lines = []
    for entity in sorted(design.blueprint.entities):
        entries = [f"{index} entry {entry_bytes(design, entity, index):,} B" for index in sorted(design.shapes[entity])
                   if index != TABLE]
        declared = sorted(a for a, spec in design.blueprint.entities[entity].attributes.items() if spec.bytes)
        sized = f" ({', '.join(declared)}: as declared)" if declared else ""
        lines.append(f"{entity}: " + "; ".join([f"item {item_bytes(design, entity):,} B", *entries]) + sized)
    return lines


def operation_label(plan: QueryPlan, read: ReadCost) -> str:
    """The requests a call sends, as the request model counts them (`5 Query + 1 BatchGetItem`)."""
    label = " + ".join(f"{request.count:g} {request.operation}" for request in read.requests)
    return label + (f" (per {plan.fan_out.bucket} the range spans)" if plan.fan_out and plan.fan_out.kind == "buckets"
                    else "")


def order_label(plan: QueryPlan) -> str:
    if plan.batch:
        return f"{plan.batch} items by key"
    if plan.operation == "GetItem":
        return "single item"
    if plan.operation == "Scan":
        return "unordered"
    direction = "asc" if plan.scan_index_forward else "desc"
    by = f" by {plan.order_attributes[0]}" if plan.order_attributes else ""
    limit = f", limit {plan.limit}" if plan.limit else ""
    return f"{direction}{by}{limit}"


def pattern_rows(design: TableDesign, capacity: CapacityReport) -> list[list[str]]:
    rows = []
    for plan in design.plans:
        read = capacity.read(plan.pattern)
        index = f"{plan.index} (until ACTIVE: {plan.until_ready})" if plan.until_ready else plan.index
        rows.append([plan.pattern, index, plan.summary, operation_label(plan, read), order_label(plan),
                     f"{read.units_per_call + read.table_units_per_call:g}",
                     f"{read.units_per_second + read.table_units_per_second:,.1f}"])
    return rows


def index_status(index: IndexDesign) -> str:
    if index.retiring:
        why = f"replaced by {index.successor}" if index.successor else "no pattern reads it"
        return f"; RETIRING: {why}; remove it with `indexes.{index.name}.remove: true` once nothing reads it"
    return f"; replaces {index.predecessor}, which serves until this one is ACTIVE" if index.predecessor else ""


def sparseness(design: TableDesign, index: IndexDesign) -> str:
    """Which members only some items take part in (an optional key attribute), and how many."""
    shares = [(entity, presence(design, entity, index.name)) for entity, _ in index.members]
    sparse = [f"{share:.0%} of {entity} items" for entity, share in shares if share < 1]
    return f"; sparse: {', '.join(sparse)} (those that carry its key)" if sparse else ""


def index_lines(design: TableDesign) -> list[str]:
    lines = [f"{index.name} ({'local, ' if index.local else ''}{'/'.join(index.keys.names)}, "
             f"projection {index.projection}): {index.reason}{sparseness(design, index)}{index_status(index)}"
             for index in design.indexes]
    return lines + list(design.notes)


def _figures(figures: Figures, writes: str) -> str:
    bill = "not priced (no region)" if figures.monthly is None else f"${figures.monthly:,.2f} a month"
    return f"{figures.read_units:,g} RCU/s, {writes}; throughput {bill}"


def alternative_lines(choices: list[IndexChoice]) -> list[str]:
    """Each GSI against what it was chosen over: reads, writes and the table's throughput bill of each."""
    lines = []
    for choice in choices:
        current = choice.current
        lines.append(f"{choice.index} for {', '.join(choice.patterns)}: "
                     + _figures(current, f"{current.write_units:,g} WCU/s on {choice.index}"))
        for alternative in choice.alternatives:
            figures = alternative.figures
            if figures is None:
                lines.append(f"  - {alternative.kind}: {alternative.how}")
                continue
            writes = {COPIES: f"{figures.write_units:,g} WCU/s of copies on the table",
                      INVERTED: f"{figures.write_units:,g} WCU/s on the inverted {choice.index}"}.get(
                alternative.kind, f"no {choice.index} to write")
            lines.append(f"  - {alternative.kind}: {alternative.how}: {_figures(figures, writes)}")
        if choice.split is not None:
            lines.append(f"  - split {choice.index}: {_split_text(choice.split)}")
    return lines


def _split_text(split: Split | str) -> str:
    """The shared GSI split: what moves, each entity's throttled writes before and after, the bill."""
    if isinstance(split, str):
        return split
    throttled = ", ".join(f"{entity} {split.before[entity]:,.0f} -> {split.after[entity]:,.0f}"
                          for entity in sorted(split.before))
    delta = split.monthly_delta
    bill = ("not priced (no region)" if delta is None or split.monthly_after is None
            else f"${split.monthly_after:,.2f} a month ({'-' if delta < 0 else '+'}${abs(delta):,.2f})")
    return (f"{split.how}: while {split.index} is short of write capacity every entity's writes to it throttle "
            f"(GSI back-pressure); write units throttled on its index over a simulated day: {throttled}; "
            f"throughput {bill}")


def render_text(stack: Stack, choices: list[IndexChoice]) -> str:
    """`choices`: the stack's alternatives to each GSI (`alternatives.index_choices`)."""
    design = stack.design
    blueprint = design.blueprint
    parts = [
        f"{blueprint.blueprint} {blueprint.version}: table {blueprint.table.name} ({blueprint.table.billing})",
        "",
        "Entities",
        text_table(entity_headers(design), entity_rows(design)),
        "",
        "Access patterns",
        text_table(PATTERN_HEADERS, pattern_rows(design, stack.capacity)),
    ]
    if design.indexes:
        parts += ["", "Secondary indexes", *(f"  {line}" for line in index_lines(design))]
    if choices:
        parts += ["", "Alternatives to each GSI (each designed and costed as a blueprint of its own)",
                  *(f"  {line}" for line in alternative_lines(choices))]
    parts += ["", "Sizes", *(f"  {line}" for line in size_lines(design))]
    parts += ["", "Where the figures come from", *(f"  {line}" for line in assumption_lines(stack.capacity))]
    if blueprint.alarms.enabled:
        parts += ["", "Change detection (EventBridge rule on CloudTrail)",
                  *(f"  {line}" for line in watched(blueprint))]
    return "\n".join(parts) + "\n"


def render_markdown(stack: Stack, hot_keys: bool = True, notes: bool = True) -> str:
    """The design as Markdown, with Mermaid diagrams (`hot_keys`: with the hot-key charts, which the review
    shows beside its lint findings instead; `notes`: with where the figures come from and the change detection,
    which the review leaves to `explain`)."""
    design = stack.design
    blueprint = design.blueprint
    parts = [
        f"### `{blueprint.blueprint}` {blueprint.version}: table `{blueprint.table.name}` ({blueprint.table.billing})",
        "",
        "#### Entities",
        "",
        markdown_table(entity_headers(design), entity_rows(design)),
        "",
        "#### Access patterns",
        "",
        markdown_table(PATTERN_HEADERS, pattern_rows(design, stack.capacity)),
    ]
    if design.indexes:
        parts += ["", "#### Secondary indexes", "", *(f"- {line}" for line in index_lines(design))]
    parts += diagrams.markdown(stack, hot=hot_keys)
    if notes:
        parts += ["", "#### Where the figures come from", "", *assumption_lines(stack.capacity)]
    if notes and blueprint.alarms.enabled:
        parts += ["", "#### Change detection", "", *(f"- {line}" for line in watched(blueprint))]
    return sanitize("\n".join(parts) + "\n")


def explain_data(stack: Stack, choices: list[IndexChoice]) -> dict[str, Any]:
    design, capacity = stack.design, stack.capacity
    blueprint = design.blueprint
    table_name = blueprint.table.name
    return {
        "blueprint": blueprint.blueprint,
        "version": blueprint.version,
        "table": table_name,
        "entities": [
            {
                "name": entity,
                "keys": {index: {"pk": shape.pk.text, "sk": shape.sk.text}
                         for index, shape in sorted(design.shapes[entity].items())},
                "bytes": {
                    "item": item_bytes(design, entity),
                    "entries": {index: entry_bytes(design, entity, index)
                                for index in sorted(design.shapes[entity]) if index != TABLE},
                    "attributes": {name: round(size, 1)
                                   for name, size in sorted(attribute_bytes(design, entity).items())},
                    "declared": sorted(name for name, spec in blueprint.entities[entity].attributes.items()
                                       if spec.bytes),
                },
            }
            for entity in sorted(blueprint.entities)
        ],
        "indexes": [
            {
                "name": index.name,
                "local": index.local,
                "partition_key": index.keys.pk,
                "sort_key": index.keys.sk,
                "projection": {"type": index.projection.type, "attributes": list(index.projection.attributes)},
                "patterns": list(index.patterns),
                "members": {entity: {"pk": shape.pk.text, "sk": shape.sk.text} for entity, shape in index.members},
                "reason": index.reason,
            }
            for index in design.indexes
        ],
        "patterns": [
            {
                "name": plan.pattern,
                "entities": list(plan.entities),
                "index": plan.index,
                "until_ready": plan.until_ready,
                "operation": plan.sent_operation,
                "key_condition": plan.summary,
                "order": None if plan.operation == "GetItem" else "asc" if plan.scan_index_forward else "desc",
                "limit": plan.limit,
                "parameters": [
                    {"name": p.name, "attribute": p.attribute, "encoding": p.encoding, "role": p.role}
                    for p in plan.parameters
                ],
                "request": {OPERATION_METHOD[plan.sent_operation]: request(plan, table_name)},
                "fan_out": plan.fan_out.describe() if plan.fan_out else None,
                "follow_up": follow_up_request(plan, table_name),
                "next_page": next_page_request(plan),
                "notes": list(plan.notes),
                "capacity": {
                    "items_per_call": capacity.read(plan.pattern).items_per_call,
                    "read_units_per_call": capacity.read(plan.pattern).units_per_call
                    + capacity.read(plan.pattern).table_units_per_call,
                    "read_units_per_second": capacity.read(plan.pattern).units_per_second
                    + capacity.read(plan.pattern).table_units_per_second,
                    "items_basis": capacity.read(plan.pattern).basis,
                    "requests_per_call": [vars(request) for request in capacity.read(plan.pattern).requests],
                },
            }
            for plan in design.plans
        ],
        "alternatives": [
            {"index": choice.index, "patterns": list(choice.patterns), "current": vars(choice.current),
             "alternatives": [{"kind": a.kind, "how": a.how, "figures": vars(a.figures) if a.figures else None}
                              for a in choice.alternatives],
             "split": _split_data(choice.split)}
            for choice in choices
        ],
        "notes": list(design.notes),
        "change_detection": {"watches": watched(blueprint), "event_pattern": event_pattern(table_name)}
        if blueprint.alarms.enabled else None,
    }


def _split_data(split: Split | str | None) -> dict[str, Any] | None:
    if split is None:
        return None
    if isinstance(split, str):
        return {"how": split}
    return {"index": split.index, "entity": split.entity, "new_index": split.new_index, "how": split.how,
            "throttled_write_units": {"before": split.before, "after": split.after},
            "monthly": {"before": split.monthly_before, "after": split.monthly_after, "delta": split.monthly_delta}}


def render_json(explained: Sequence[tuple[Stack, list[IndexChoice]]]) -> str:
    """Each stack with its alternatives to each GSI."""
    return json.dumps([explain_data(stack, choices) for stack, choices in explained], indent=2,
                      sort_keys=True) + "\n"
