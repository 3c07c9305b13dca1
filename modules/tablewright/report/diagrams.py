"""Mermaid diagrams for `explain --format markdown` and the review comment, which GitHub and GitLab draw in place.

- The table layout (a `flowchart`): the table and each secondary index as a box, inside it one box per item
  collection (entities whose partition keys can take the same values, so one Query can read them together)
  holding the entities with their sort key; an arrow from an entity on the table to its entry on each index
  it is projected into, labelled with the patterns that read it there.
- For each hot key (over `lint.hot_key_warning` of a partition's limit: TW103 or TW104), an `xychart-beta`
  bar chart of the estimated load on the key now and after the sharding lint suggests (modules/tablewright/lint/hot.py
  computes both), with a line at the partition limit (1,000 WCU or 3,000 RCU per second).

Every value from the blueprint is written inside a quoted label with each character outside a small safe set
as a Mermaid entity code (`#35;`), so no value can end a label, open a directive (`%%{`), a comment, a
link or a KaTeX formula, and our own text holds no `:` or `;` that Mermaid's entity pre-pass could misread.
The diagrams contain no `<`, backtick or `![`, so the Markdown sanitizer (modules/tablewright/report/markdown.py)
leaves them byte for byte as written. Entities, item collections and patterns are sorted by name, indexes
in the design's order: the output is the same from run to run and whatever the order of the YAML.
"""

from __future__ import annotations

import math
import re
import string

from tablewright.capacity.estimate import presence
from tablewright.capacity.traffic import partition_families
from tablewright.design.design import TABLE, KeyNames, Shape, TableDesign
from tablewright.lint.hot import (
    PARTITION_RCU,
    PARTITION_WCU,
    KeyLoad,
    Sharding,
)
from tablewright.stacks.stack import Stack

# Characters a label may hold as they are; every other one becomes `#<code point>;`. `#` is safe as it is:
# Mermaid reads `#word;` as an entity code, and the only `;` in a label end codes of ours.
SAFE = frozenset(string.ascii_letters + string.digits + " _.,/()=+-{}#")
FENCE = "```"


def text(value: str) -> str:
    """A quoted Mermaid string showing `value` exactly (entity codes for anything outside SAFE)."""
    return '"' + "".join(c if c in SAFE else f"#{ord(c)};" for c in value) + '"'


def _id(box: str, entity: str) -> str:
    """A node id: the box's (`t`, `i1`...) and the entity's name (validated as [A-Z][A-Za-z0-9]*, so ids are
    distinct); the lowercase prefix keeps it from being a flowchart keyword (`end`, `graph`...)."""
    return f"{box}_{re.sub(r'[^A-Za-z0-9]', 'x', entity)}"


def fenced(diagram: list[str]) -> list[str]:
    return [f"{FENCE}mermaid", *diagram, FENCE]


# --- the table layout ---------------------------------------------------------------------------------


def _members(design: TableDesign, index: str) -> dict[str, Shape]:
    return {entity: shapes[index] for entity, shapes in sorted(design.shapes.items()) if index in shapes}


def _entity_label(entity: str, shape: Shape) -> str:
    shards = f", {shape.shards} shards" if shape.shards > 1 else ""
    return f"{entity}{shards}, {shape.keys.sk} = {shape.sk.text}" if shape.keys.sk else f"{entity}{shards}"


def _index_box(design: TableDesign, box: str, title: str, index: str, note: str | None = None) -> list[str]:
    members = _members(design, index)
    lines = [f"  subgraph {box} [{text(title)}]"]
    if note is not None:
        lines.append(f"    {box}_note([{text(note)}])")
    for number, family in enumerate(sorted(partition_families(design, members)), 1):
        keys: KeyNames = members[family[0]].keys
        templates = " or ".join(dict.fromkeys(members[entity].pk.text for entity in family))
        lines.append(f"    subgraph {box}_c{number} [{text(f'item collection {keys.pk} = {templates}')}]")
        lines += [f"      {_id(box, entity)}[{text(_entity_label(entity, members[entity]))}]" for entity in family]
        lines.append("    end")
    return [*lines, "  end"]


def _edge_label(design: TableDesign, index: str, entity: str) -> str:
    patterns = sorted(plan.pattern for plan in design.plans if plan.index == index and entity in plan.entities)
    label = ", ".join(patterns) if patterns else "read by no pattern"
    share = presence(design, entity, index)
    return label + (f", {share:.0%} of its items" if share < 1 else "")


def layout(design: TableDesign) -> list[str]:
    """The flowchart of the table and its indexes (the diagram's lines, without the fence)."""
    blueprint = design.blueprint
    lines = ["flowchart LR"]
    lines += _index_box(design, "t", f"table {blueprint.table.name}, keys {' / '.join(design.table_keys.names)}", TABLE)
    edges = []
    for number, index in enumerate(design.indexes, 1):
        box = f"i{number}"
        kind = "local index" if index.local else "global index"
        status = ", RETIRING" if index.retiring else ""
        title = f"{index.name} ({kind}{status}), keys {' / '.join(index.keys.names)}"
        lines += _index_box(design, box, title, index.name, f"projects {index.projection}")
        edges += [f"  {_id('t', entity)} -->|{text(_edge_label(design, index.name, entity))}| {_id(box, entity)}"
                  for entity in _members(design, index.name)]
    return lines + edges


# --- hot keys -------------------------------------------------------------------------------------------


def _axis_top(value: float) -> float:
    """A round number a little above `value`: the top of the y axis."""
    target = value * 1.1
    magnitude = 10.0 ** math.floor(math.log10(target))
    return next(step * magnitude for step in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10) if step * magnitude >= target)


def _number(value: float) -> str:
    return f"{value:.1f}"


def _index(load: KeyLoad) -> str:
    return "table" if load.index == TABLE else load.index


def _templates(load: KeyLoad) -> str:
    return " or ".join(dict.fromkeys(load.shapes[entity].pk.text for entity in load.entities))


def _where(load: KeyLoad) -> str:
    return f"{_index(load)} {load.shapes[load.entities[0]].keys.pk} = {_templates(load)}"


def _fix_label(fix: Sharding) -> str:
    return {"shard": f"{fix.shards} shards", "split": f"{fix.shards} items", "cache": "cached"}[fix.kind]


def _fix_words(fix: Sharding) -> str:
    if fix.kind == "cache":
        return "its reads cached"
    return f"`{fix.setting}: {fix.shards}`" + (" (split into counter items)" if fix.kind == "split" else "")


def hot_chart(load: KeyLoad, fix: Sharding, unit: str) -> list[str]:
    """Per-key load now and with the suggested shards, against the partition limit (`unit`: WCU or RCU)."""
    limit = PARTITION_WCU if unit == "WCU" else PARTITION_RCU
    now, after = (load.wcu, fix.wcu) if unit == "WCU" else (load.rcu, fix.rcu)
    kind = "writes" if unit == "WCU" else "reads"
    title = f"{_index(load)} {_templates(load)}, {kind} per key"
    axis = f"{unit} per second (line = partition limit)"
    return [
        "xychart-beta",
        f"  title {text(title)}",
        f"  x-axis [{text('now')}, {text(_fix_label(fix))}]",
        f"  y-axis {text(axis)} 0 --> {_number(_axis_top(max(now, after, limit)))}",
        f"  bar [{_number(now)}, {_number(after)}]",
        f"  line [{limit}, {limit}]",
    ]


def _caption(load: KeyLoad, fix: Sharding, unit: str) -> str:
    now, after = (load.wcu, fix.wcu) if unit == "WCU" else (load.rcu, fix.rcu)
    over = load.wcu > PARTITION_WCU or load.rcu > PARTITION_RCU
    code = "TW103, over a partition's limit" if over else "TW104, near a partition's limit"
    note = ("; sharding does not spread reads of single items: cache them"
            if unit == "RCU" and fix.single_reads else "")
    return (f"`{_where(load)}` ({code}): about {now:,.0f} {unit} per second per key now, "
            f"{after:,.0f} with {_fix_words(fix)}{note}.")


def hot_key_charts(stack: Stack) -> list[list[str]]:
    """One chart (caption and fenced diagram) per hot key and direction over the warning level."""
    warn = stack.design.blueprint.lint.hot_key_warning
    charts: list[list[str]] = []
    for load, fix in stack.lint.hot_keys:
        for unit, now, limit in (("WCU", load.wcu, PARTITION_WCU), ("RCU", load.rcu, PARTITION_RCU)):
            if now > limit * warn:
                charts.append([_caption(load, fix, unit), "", *fenced(hot_chart(load, fix, unit))])
    return charts


# --- Markdown ---------------------------------------------------------------------------------------------


def hot_key_section(stack: Stack) -> list[str]:
    """`#### Hot keys` with a chart per hot key (each line followed by a blank one), or nothing."""
    charts = hot_key_charts(stack)
    if not charts:
        return []
    lines = ["#### Hot keys", "", "Estimated load on the busiest key, now and with the shards lint suggests "
             "(the line: a partition's limit).", ""]
    for chart in charts:
        lines += [*chart, ""]
    return lines


def markdown(stack: Stack, hot: bool = True) -> list[str]:
    """The diagram sections of one stack's Markdown, each after a blank line (`hot`: with the hot-key charts)."""
    lines = ["", "#### Table layout", "", *fenced(layout(stack.design))]
    section = hot_key_section(stack) if hot else []
    return lines + (["", *section[:-1]] if section else [])

