"""The review as Markdown for a pull-request comment, as JSON with the same content, and as text.

Blocked and window changes are always listed in full; safe changes are grouped by category in a
collapsed section, so a review of fifty changes still reads in a minute."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from datetime import datetime
from typing import Any

from tablewright.blueprint.language import Migration
from tablewright.capacity.cost import CostReport
from tablewright.design.design import place
from tablewright.design.locked import KeyFacts
from tablewright.monitoring.window import describe
from tablewright.report import diagrams, explain
from tablewright.report.capacity import cost_data
from tablewright.report.markdown import fence_for, one_line, sanitize
from tablewright.report.review_cost import cost_differences, cost_headline, cost_section
from tablewright.report.tables import markdown_table, text_table
from tablewright.review.classified import CLASSES, Change, counts
from tablewright.review.data import DataChange
from tablewright.review.environments import (
    ChangeDifference,
    as_in,
    change_differences,
    in_order,
    line_differences,
    same_lines,
)
from tablewright.review.gate import Decision
from tablewright.review.review import Review, StackReview

VERDICT_TEXT = {
    "blocked": "BLOCKED: a change would lose data or protection",
    "window": "WINDOW: apply only inside the maintenance window",
    "safe": "SAFE: apply at any time",
}
CHANGE_HEADERS = ("Class", "Action", "Change", "Resource", "Why")
SAFE_HEADERS = ("Action", "Change", "Resource", "What")


def _summary(changes: list[Change]) -> str:
    found = counts(changes)
    return f"{found['blocked']} blocked, {found['window']} window, {found['safe']} safe"


def _ordered(changes: list[Change]) -> list[Change]:
    """Blocked first, then window, then safe; by resource within a class."""
    return sorted(changes, key=lambda c: (CLASSES.index(c.cls), c.address, c.subject))


def _attention_rows(changes: list[Change]) -> list[list[str]]:
    chosen = _ordered([c for c in changes if c.cls != "safe"])
    return [[f"**{c.cls}**", c.action, c.subject, f"`{c.address}`", c.reason] for c in chosen]


def _subject(change: Change) -> str:
    """What changes, as a table cell beside its resource: `alarms` for `alarms: NAME` of the resource `TYPE.NAME`."""
    named = f"{change.category}: {change.address.rsplit('.', 1)[-1]}"
    return change.category if change.subject == named else change.subject


def _safe_section(changes: list[Change]) -> list[str]:
    safe = [c for c in changes if c.cls == "safe"]
    if not safe:
        return []
    groups = Counter(c.category for c in safe)
    label = ", ".join(f"{category} {count}" for category, count in sorted(groups.items()))
    rows = [[c.action, _subject(c), f"`{c.address}`", c.reason]
            for c in sorted(safe, key=lambda c: (c.category, c.address, c.subject))]
    return ["<details>", f"<summary>{len(safe)} safe change(s): {label}</summary>", "",
            markdown_table(SAFE_HEADERS, rows), "", "</details>", ""]


def _facts(facts: KeyFacts | None) -> str:
    return facts.text if facts is not None else "(none)"


def _data_line(change: DataChange) -> str:
    """The lead of one data change in the review: what happens to the items already written."""
    where = place(change.index)
    if change.kind == "join":
        return f"- **{change.entity} joins {where}** (`{_facts(change.after)}`), the backfill it needs:"
    if change.attribute is not None:
        declared = ("Declared:" if change.is_declared else "Not declared, so it is blocked:")
        return (f"- **Breaking for items already written: {change.attribute.subject}**: {change.attribute.seen}. "
                f"Terraform shows nothing for it. {declared}")
    if change.collision is not None:
        return (f"- **Blocked: {change.collision}.** Terraform shows nothing for it, and no declaration lifts it. "
                "The way through:")
    declared = (f"Declared migration ({change.declared.method}):" if change.declared
                else "Not declared under `migrations:`, so it is blocked. The migration it needs:")
    if change.kind == "rename":
        keys = ("its keys stay" if change.before == change.after
                else f"its keys change from `{_facts(change.before)}` to `{_facts(change.after)}`")
        return (f"- **Breaking for items already written: {change.former} is renamed {change.entity}**: every item "
                f"written before is marked `{change.former}`, and {keys}. Terraform shows nothing for it. {declared}")
    if change.kind == "removal":
        return (f"- **Breaking for items already written: {change.entity} is removed** from the blueprint; its items "
                f"(`{_facts(change.before)}`) stay in the table. Terraform shows nothing for it. {declared}")
    return (f"- **Breaking for items already written: {change.entity} on {where}** changes from "
            f"`{_facts(change.before)}` to `{_facts(change.after)}`. Terraform shows nothing for it; the items keep "
            f"their old keys. {declared}")


def _data_section(stack: StackReview) -> list[str]:
    if not stack.data:
        return []
    lines = ["#### Data already in the table", ""]
    for change in stack.data:
        lines.append(_data_line(change))
        lines += [f"  {number}. {step}" for number, step in enumerate(change.steps, 1)]
    return [*lines, ""]


def _application_section(stack: StackReview) -> list[str]:
    """Every request the application sends that this change adds, removes or changes: never folded."""
    if not stack.application:
        return []
    return ["#### What the application sees", "",
            "The requests this change adds, removes or changes (the query cookbook: `tablewright explain "
            "--format json`):", "",
            *(f"- {change.text}" for change in stack.application), ""]


def _by_stacks(pairs: list[tuple[str, str]]) -> list[str]:
    """(stack, line) pairs as lines, each line once with every stack it is said of: `a`, `b`: line."""
    stacks: dict[str, list[str]] = {}
    for stack, line in pairs:
        stacks.setdefault(line, []).append(f"`{stack}`")
    return [f"{', '.join(dict.fromkeys(names))}: {line}" for line, names in stacks.items()]


def application_headlines(stacks: list[StackReview]) -> list[str]:
    """One line per changed request, for the top of the review; a new stack in one line (its section has them)."""
    pairs = []
    for stack in stacks:
        if stack.new and stack.application:
            pairs.append((stack.stack, f"a new table, {len(stack.application)} pattern(s) to serve"))
        elif not stack.new:
            pairs += [(stack.stack, change.headline) for change in stack.application]
    return _by_stacks(pairs)


def application_lines(headlines: list[str]) -> list[str]:
    """The headlines as one quoted list at the top of a comment (with the blank line after it)."""
    if not headlines:
        return []
    return ["> **Application:** requests the application sends change:", ">",
            *(f"> - {line}" for line in headlines), ""]


def _lock_section(stack: StackReview) -> list[str]:
    if not stack.lock_diff:
        return []
    return ["#### Design lock", "", "What changes in the committed design (the `.lock.json` beside the blueprint):", "",
            *(f"- {line}" for line in stack.lock_diff), ""]


def data_migrations(stacks: list[StackReview]) -> list[str]:
    """One line per data migration, for the top of the review: the change reviewers must not miss."""
    return _by_stacks([(stack.stack, f"{change.headline} ({_declared_how(change)})")
                       for stack in stacks for change in stack.data if change.breaking])


def _declared_how(change: DataChange) -> str:
    if change.collision is not None:
        return "blocked: two entities' items would share keys"
    if not change.is_declared:
        return "NOT declared: blocked"
    return f"declared: {change.declared.method}" if change.declared else "declared: renamed_from"


def _lint_rows(stack: StackReview) -> list[list[str]]:
    return [[f.finding.code, f.finding.severity, f"{f.location.file}:{f.location.line}", f.finding.message,
             f.finding.fix] for f in (stack.lint.findings if stack.lint else ())]


def _lint_differences(stack: StackReview, full: StackReview) -> list[str]:
    """The findings of one stack's lint and not the other's (names aside), when both have some in common: this
    stack's own in full, the others by code and place (`full`'s table shows them)."""
    mine = [[as_in(cell, stack, full) for cell in row] for row in _lint_rows(stack)]
    theirs = _lint_rows(full)
    own = [row for row in mine if row not in theirs]
    missing = [f"{row[0]} ({row[1]}, {row[2]})" for row in theirs if row not in mine]
    if len(own) + len(missing) in (0, len(mine) + len(theirs)):
        return []
    lines = ["#### Lint", "", f"The same as `{full.stack}`" + (f", without {', '.join(missing)}" if missing else "")
             + (", and:" if own else "."), ""]
    return lines + ([markdown_table(("Code", "Severity", "Where", "Finding", "Fix"), own), ""] if own else [])


def _lint_section(stack: StackReview) -> list[str]:
    if stack.lint is None:
        return []
    findings = stack.lint.findings
    if not findings:
        return ["#### Lint", "", "No findings.", ""]
    rows = _lint_rows(stack)
    summary = ", ".join(f"{stack.lint.count(s)} {s}" for s in ("error", "warning", "info") if stack.lint.count(s))
    return ["#### Lint", "", "<details>", f"<summary>{summary}</summary>", "",
            markdown_table(("Code", "Severity", "Where", "Finding", "Fix"), rows), "", "</details>", ""]


def _sections(stack: StackReview) -> list[tuple[str, list[str]]]:
    """The sections of a stack's review between its changes and its cost, each with its name."""
    warnings = [f"> **Warning:** {one_line(warning)}" for warning in stack.warnings] + ([""] if stack.warnings else [])
    return [("warnings", warnings), ("what the application sees", _application_section(stack)),
            ("data already in the table", _data_section(stack)), ("design lock", _lock_section(stack)),
            ("lint", _lint_section(stack)),
            ("hot keys", diagrams.hot_key_section(stack.head) if stack.head is not None else [])]


def _design(stack: StackReview) -> list[str]:
    if stack.head is None:
        return []
    return [*explain.render_markdown(stack.head, hot_keys=False, notes=False).split("\n"),
            "Where the figures come from, and the change detection: `tablewright explain`.", ""]


def _design_section(stack: StackReview) -> list[str]:
    if stack.head is None:
        return []
    return ["<details>", "<summary>Design: entities, access patterns and indexes</summary>", "", *_design(stack),
            "</details>", ""]


def render_stack_markdown(stack: StackReview) -> list[str]:
    title = f"### `{stack.stack}`{' (production)' if stack.production else ''}: {_summary(stack.changes)}"
    lines = [title, ""]
    if not stack.changes:
        lines += ["No Terraform changes.", ""]
    attention = _attention_rows(stack.changes)
    if attention:
        lines += [markdown_table(CHANGE_HEADERS, attention), ""]
    lines += _safe_section(stack.changes)
    for _, section in _sections(stack):
        lines += section
    return lines + cost_section(stack) + _design_section(stack)


def _difference_rows(found: list[ChangeDifference], stack: StackReview, full: StackReview) -> list[list[str]]:
    how = {"only here": f"only in `{stack.stack}`", "not here": f"only in `{full.stack}`",
           "differs": f"differs in `{stack.stack}`"}
    return [[how[d.how], *([] if d.change.cls == "safe" else [f"**{d.change.cls}**"]), d.change.action,
             _subject(d.change), f"`{d.change.address}`", d.change.reason] for d in found]


def _changes_differences(stack: StackReview, full: StackReview) -> list[str]:
    found = change_differences(stack, full)
    if not found:
        return [f"Terraform changes: the same as `{full.stack}`.", ""]
    attention = [d for d in found if d.change.cls != "safe"]
    safe = [d for d in found if d.change.cls == "safe"]
    lines = [markdown_table(("Difference", *CHANGE_HEADERS), _difference_rows(attention, stack, full)), ""] \
        if attention else []
    if safe:
        groups = Counter(d.change.category for d in safe)
        label = ", ".join(f"{category} {count}" for category, count in sorted(groups.items()))
        lines += ["<details>", f"<summary>{len(safe)} safe change(s) differ: {label}</summary>", "",
                  markdown_table(("Difference", *SAFE_HEADERS), _difference_rows(safe, stack, full)), "",
                  "</details>", ""]
    return lines


def _sections_differences(stack: StackReview, full: StackReview) -> tuple[list[str], list[str]]:
    """The sections of `stack` that differ from `full`'s, in full, and the names of those that are the same."""
    lines, same = [], []
    for (name, mine), (_, theirs) in zip(_sections(stack), _sections(full), strict=True):
        if same_lines(mine, stack, theirs, full):
            same += [name] if mine else []
        else:
            lines += (name == "lint" and _lint_differences(stack, full)) or mine or \
                [f"{name[0].upper()}{name[1:]}: none in `{stack.stack}`.", ""]
    if full.head is None:
        return lines + _design_section(stack), same
    design = line_differences(_design(stack), stack, _design(full), full)
    if stack.head is not None and not design:
        same.append("design")
    elif stack.head is not None:
        fence = fence_for(design)
        lines += ["<details>", f"<summary>Design: {len(design)} line(s) differ from `{full.stack}`</summary>", "",
                  f"{fence}diff", *design, fence, "", "</details>", ""]
    return lines, same


def render_difference_markdown(stack: StackReview, full: StackReview) -> list[str]:
    """A stack other than the one shown in full: only what differs from it (its table's name aside)."""
    title = (f"### `{stack.stack}`{' (production)' if stack.production else ''}: {_summary(stack.changes)}; "
             f"differences from `{full.stack}`")
    changes = _changes_differences(stack, full)
    sections, same = _sections_differences(stack, full)
    cost = cost_differences(stack, full)
    if not change_differences(stack, full) and not sections and not cost:
        return [title, "", f"The same as `{full.stack}`.", ""]
    said = [f"The same as `{full.stack}`: {', '.join(same)}.", ""] if same else []
    return [title, "", *changes, *sections, *cost, *said]


def render_environments(stacks: list[StackReview]) -> list[str]:
    """The stacks of one blueprint: production (or the first) in full, each other one as its differences."""
    full, *others = in_order(stacks)
    lines = render_stack_markdown(full)
    for stack in others:
        lines += render_difference_markdown(stack, full)
    return lines


def window_line(stacks: list[StackReview]) -> str:
    """Each maintenance window once, with the stacks it governs."""
    groups: dict[str, list[str]] = {}
    for stack in stacks:
        groups.setdefault(describe(stack.window) if stack.window else "none declared", []).append(f"`{stack.stack}`")
    parts = [f"{window}: {', '.join(sorted(names))}" for window, names in sorted(groups.items())]
    return "Maintenance window" + ("s" if len(parts) > 1 else "") + ": " + "; ".join(parts) + "."


def render_markdown(review: Review) -> str:
    migrations = data_migrations(review.stacks)
    lines = [
        "## Tablewright review",
        "",
        f"**{VERDICT_TEXT[review.verdict]}** ({_summary(review.changes)}; `{one_line(review.base)}` -> "
        f"`{one_line(review.head)}`)",
        "",
        cost_headline(review.stacks),
        "",
        *(f"> **Data migration:** {line}" for line in migrations),
        *([""] if migrations else []),
        *application_lines(application_headlines(review.stacks)),
        window_line(review.stacks),
        "",
        *render_environments(review.stacks),
    ]
    return sanitize("\n".join(lines).rstrip() + "\n")


def _cost_data(cost: CostReport | None) -> dict[str, Any] | None:
    return None if cost is None else cost_data(cost)


def _declared_data(migration: Migration) -> dict[str, Any]:
    """A `migrations:` entry as the JSON shows it: the fields of its kind (schema/gate.schema.json)."""
    fields = {"keys": ("entity", "index", "from_", "to", "strategy", "reason"),
              "rename": ("entity", "renamed_from", "strategy", "reason"),
              "removal": ("entity", "removal", "reason"),
              "attribute": ("entity", "attribute", "removal", "default", "convert", "reason")}[migration.kind]
    return migration.model_dump(by_alias=True, include=set(fields))


def _attribute_data(change: DataChange) -> dict[str, Any] | None:
    attribute = change.attribute
    if attribute is None:
        return None
    return {"name": attribute.attribute, "change": attribute.change, "former": attribute.former,
            "before": attribute.before, "after": attribute.after, "declared": attribute.is_declared,
            "application_sees": attribute.seen}


def stack_data(stack: StackReview) -> dict[str, Any]:
    return {
        "stack": stack.stack,
        "production": stack.production,
        "counts": counts(stack.changes),
        "changes": [asdict(change) for change in stack.changes],
        "warnings": stack.warnings,
        "simulation": {side: None if day is None else asdict(day) for side, day in
                       (("before", stack.simulated_before), ("after", stack.simulated_after))},
        "maintenance_window": describe(stack.window) if stack.window else None,
        "data_changes": [{"entity": change.entity, "index": change.index, "steps": list(change.steps),
                          "kind": change.kind, "former": change.former,
                          "before": change.before.text if change.before else None,
                          "after": change.after.text if change.after else None, "breaking": change.breaking,
                          "attribute": _attribute_data(change), "collision": change.collision,
                          "declared": _declared_data(change.declared) if change.declared else None}
                         for change in stack.data],
        "lock_diff": stack.lock_diff,
        "application": [{"pattern": change.pattern, "kind": change.kind, "before": change.before,
                         "after": change.after, "action": change.action} for change in stack.application],
        "lint": None if stack.lint is None else [
            {"code": f.finding.code, "severity": f.finding.severity, "message": f.finding.message,
             "fix": f.finding.fix, "file": f.location.file, "line": f.location.line} for f in stack.lint.findings],
        "capacity": {"before": _cost_data(stack.cost_before), "after": _cost_data(stack.cost_after)},
        "design": explain.explain_data(stack.head, stack.alternatives) if stack.head is not None else None,
    }


def render_json(review: Review) -> str:
    data = {"base": review.base, "head": review.head, "verdict": review.verdict, "counts": counts(review.changes),
            "stacks": [stack_data(stack) for stack in review.stacks]}
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _text_changes(changes: list[Change]) -> str:
    rows = [[c.cls, c.action, c.subject, c.address, c.reason] for c in _ordered(changes)]
    return text_table(("class", "action", "change", "resource", "why"), rows) if rows else "no changes"


def render_text(review: Review) -> str:
    lines = [f"{VERDICT_TEXT[review.verdict]} ({_summary(review.changes)})"]
    lines += [f"data migration: {line}" for line in data_migrations(review.stacks)]
    for stack in review.stacks:
        lines += ["", f"{stack.stack}: {_summary(stack.changes)}", _text_changes(stack.changes)]
        lines += [f"warning: {w}" for w in stack.warnings]
        lines += [f"data: {c.subject}" + ("" if c.kind == "keys" else f" [{c.kind}]") for c in stack.data]
        lines += [f"lock: {line}" for line in stack.lock_diff]
        lines += [f"application: {change.text}" for change in stack.application]
    return "\n".join(lines) + "\n"


GATE_SCHEMA_VERSION = 1  # schema/gate.schema.json; raised when a field is removed or changes meaning


def gate_data(stack: StackReview, decision: Decision) -> dict[str, Any]:
    """`gate --format json`: the decision and the classified changes (schema/gate.schema.json)."""
    def moment(value: datetime | None) -> str | None:
        return value.isoformat() if value is not None else None

    return {"schema_version": GATE_SCHEMA_VERSION, "passed": decision.passed, "decision": decision.outcome,
            "verdict": decision.verdict, "reason": decision.reason, "decided_at": moment(decision.at),
            "window_open": decision.window_open, "window_opens": moment(decision.next_opening), **stack_data(stack)}


def render_gate(stack: StackReview, decision: Decision, output: str) -> str:
    if output == "json":
        return json.dumps(gate_data(stack, decision), indent=2, sort_keys=True) + "\n"
    if output == "markdown":
        return sanitize("\n".join([f"## Tablewright plan gate: {'pass' if decision.passed else 'FAIL'}", "",
                                   f"**{one_line(decision.reason)}**", "", *render_stack_markdown(stack)]).rstrip()
                        + "\n")
    lines = [f"gate {'PASS' if decision.passed else 'FAIL'} for {stack.stack}: {decision.reason}",
             _text_changes(stack.changes), *(f"warning: {w}" for w in stack.warnings)]
    return "\n".join(lines) + "\n"
