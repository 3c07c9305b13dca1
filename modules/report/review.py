"""The review as Markdown for a pull-request comment, as JSON with the same content, and as text.

Blocked and window changes are always listed in full; safe changes are grouped by category in a
collapsed section, so a review of fifty changes still reads in a minute."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from functools import partial
from typing import Any

from modules.blueprint.language import Migration
from modules.capacity.cost import CostReport
from modules.design.design import place
from modules.design.locked import KeyFacts
from modules.monitoring.window import describe
from modules.report import diagrams, explain
from modules.report.capacity import cost_data, price_line
from modules.report.markdown import one_line, sanitize
from modules.report.tables import markdown_table, text_table
from modules.review.classified import CLASSES, Change, counts
from modules.review.data import DataChange
from modules.review.gate import Decision
from modules.review.review import Review, StackReview

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


def _safe_section(changes: list[Change]) -> list[str]:
    safe = [c for c in changes if c.cls == "safe"]
    if not safe:
        return []
    groups = Counter(c.category for c in safe)
    label = ", ".join(f"{category} {count}" for category, count in sorted(groups.items()))
    rows = [[c.action, c.subject, f"`{c.address}`", c.reason]
            for c in sorted(safe, key=lambda c: (c.category, c.address, c.subject))]
    return ["<details>", f"<summary>{len(safe)} safe change(s): {label}</summary>", "",
            markdown_table(SAFE_HEADERS, rows), "", "</details>", ""]


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _billed(cost: CostReport, items: tuple[str, ...]) -> float | None:
    """The month's figure of the billed lines among `items`; None when one of them is not priced."""
    lines = [line for line in cost.billed if line.item in items]
    if any(line.monthly is None for line in lines):
        return None
    return round(sum(line.monthly or 0.0 for line in lines), 2)


THROUGHPUT = ("provisioned read capacity", "provisioned write capacity", "on-demand read requests",
              "on-demand write requests")


def _cost_rows(before: CostReport | None, after: CostReport | None,
               rows: list[tuple[str, Callable[[CostReport], float | None]]]) -> list[list[str]]:
    def cell(cost: CostReport | None, pick: Callable[[CostReport], float | None]) -> str:
        if cost is None:
            return "-"
        value = pick(cost)
        return "not priced" if value is None else _money(value)

    def delta(pick: Callable[[CostReport], float | None]) -> str:
        old, new = (pick(before), pick(after)) if before and after else (None, None)
        if old is None or new is None:
            return "-"
        change = new - old
        return f"{'+' if change >= 0 else '-'}{_money(abs(change))}"

    def billing(cost: CostReport | None) -> str:
        return f"{cost.billing}, {cost.table_class}" if cost else "-"

    return [["Billing", billing(before), billing(after), ""],
            *([label, cell(before, pick), cell(after, pick), delta(pick)] for label, pick in rows)]


def _summary_rows() -> list[tuple[str, Callable[[CostReport], float | None]]]:
    return [("Total per month (priced lines)", lambda cost: cost.total)]


def _item_rows(before: CostReport | None, after: CostReport | None) -> list[tuple[str, Callable[[CostReport],
                                                                                                 float | None]]]:
    items = list(dict.fromkeys(line.item for cost in (before, after) if cost for line in cost.billed))
    return [("Throughput", partial(_billed, items=THROUGHPUT)),
            *((f"{item[0].upper()}{item[1:]}", partial(_billed, items=(item,))) for item in items)]


def _facts(facts: KeyFacts | None) -> str:
    return facts.text if facts is not None else "(none)"


def _data_line(change: DataChange) -> str:
    """The lead of one data change in the review: what happens to the items already written."""
    where = place(change.index)
    if change.kind == "join":
        return (f"- **{change.entity} joins {where}** (`{_facts(change.after)}`): items written before carry no "
                f"{change.index} keys, so the index misses them until they are backfilled:")
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
            "The requests the application sends for its access patterns (the query cookbook, `python main.py "
            "explain --format json`) that this change adds, removes or changes:", "",
            *(f"- {change.text}" for change in stack.application), ""]


def application_headlines(stacks: list[StackReview]) -> list[str]:
    """One line per changed request, for the top of the review; a new stack in one line (its section has them)."""
    lines = []
    for stack in stacks:
        if stack.new and stack.application:
            lines.append(f"`{stack.stack}`: a new table, {len(stack.application)} pattern(s) to serve")
        elif not stack.new:
            lines += [f"`{stack.stack}`: {change.headline}" for change in stack.application]
    return lines


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
    return [f"`{stack.stack}`: {change.headline} ({_declared_how(change)})"
            for stack in stacks for change in stack.data if change.breaking]


def _declared_how(change: DataChange) -> str:
    if change.declared is None:
        return "NOT declared: blocked"
    return f"declared: {change.declared.method}"


def _lint_section(stack: StackReview) -> list[str]:
    if stack.lint is None:
        return []
    findings = stack.lint.findings
    if not findings:
        return ["#### Lint", "", "No findings.", ""]
    rows = [[f.finding.code, f.finding.severity, f"{f.location.file}:{f.location.line}", f.finding.message,
             f.finding.fix] for f in findings]
    summary = ", ".join(f"{stack.lint.count(s)} {s}" for s in ("error", "warning", "info") if stack.lint.count(s))
    return ["#### Lint", "", "<details>", f"<summary>{summary}</summary>", "",
            markdown_table(("Code", "Severity", "Where", "Finding", "Fix"), rows), "", "</details>", ""]


def render_stack_markdown(stack: StackReview) -> list[str]:
    title = f"### `{stack.stack}`{' (production)' if stack.production else ''}: {_summary(stack.changes)}"
    lines = [title, ""]
    if not stack.changes:
        lines += ["No Terraform changes.", ""]
    attention = _attention_rows(stack.changes)
    if attention:
        lines += [markdown_table(CHANGE_HEADERS, attention), ""]
    lines += _safe_section(stack.changes)
    lines += [f"> **Warning:** {one_line(warning)}" for warning in stack.warnings] + ([""] if stack.warnings else [])
    lines += _application_section(stack)
    lines += _data_section(stack)
    lines += _lock_section(stack)
    lines += _lint_section(stack)
    lines += diagrams.hot_key_section(stack.head) if stack.head is not None else []
    cost = stack.cost_after or stack.cost_before
    if cost:
        before, after = stack.cost_before, stack.cost_after
        headers = ("", "Before", "After", "Change")
        lines += ["#### Capacity and cost", "", markdown_table(headers, _cost_rows(before, after, _summary_rows())),
                  "", f"Estimated from the blueprint's rates ({price_line(cost)}; provisioned at the suggested "
                      "autoscaling minimums, within the configured bounds). `python main.py capacity` has every "
                      "line.",
                  *(f"> {note}" for note in cost.notes), "",
                  "<details>", "<summary>Monthly cost by item</summary>", "",
                  markdown_table(headers, _cost_rows(before, after, _item_rows(before, after))), "", "</details>",
                  ""]
    if stack.head is not None:
        lines += ["<details>", "<summary>Design: entities, access patterns and indexes</summary>", "",
                  explain.render_markdown(stack.head, hot_keys=False), "</details>", ""]
    return lines


def _window_line(stacks: list[StackReview]) -> str:
    windows = sorted({f"`{s.stack}` {describe(s.window)}" for s in stacks if s.window is not None})
    return "Maintenance window: " + ("; ".join(windows) if windows else "none declared") + "."


def render_markdown(review: Review) -> str:
    migrations = data_migrations(review.stacks)
    lines = [
        "## Tablewright review",
        "",
        f"**{VERDICT_TEXT[review.verdict]}** ({_summary(review.changes)}; `{one_line(review.base)}` -> "
        f"`{one_line(review.head)}`)",
        "",
        *(f"> **Data migration:** {line}" for line in migrations),
        *([""] if migrations else []),
        *application_lines(application_headlines(review.stacks)),
        _window_line(review.stacks),
        "",
    ]
    for stack in review.stacks:
        lines += render_stack_markdown(stack)
    return sanitize("\n".join(lines).rstrip() + "\n")


def _cost_data(cost: CostReport | None) -> dict[str, Any] | None:
    return None if cost is None else cost_data(cost)


def _declared_data(migration: Migration) -> dict[str, Any]:
    """A `migrations:` entry as the JSON shows it: the fields of its kind (schema/gate.schema.json)."""
    fields = {"keys": ("entity", "index", "from_", "to", "strategy", "reason"),
              "rename": ("entity", "renamed_from", "strategy", "reason"),
              "removal": ("entity", "removal", "reason")}[migration.kind]
    return migration.model_dump(by_alias=True, include=set(fields))


def stack_data(stack: StackReview) -> dict[str, Any]:
    return {
        "stack": stack.stack,
        "production": stack.production,
        "counts": counts(stack.changes),
        "changes": [asdict(change) for change in stack.changes],
        "warnings": stack.warnings,
        "maintenance_window": describe(stack.window) if stack.window else None,
        "data_changes": [{"entity": change.entity, "index": change.index, "steps": list(change.steps),
                          "kind": change.kind, "former": change.former,
                          "before": change.before.text if change.before else None,
                          "after": change.after.text if change.after else None, "breaking": change.breaking,
                          "declared": _declared_data(change.declared) if change.declared else None}
                         for change in stack.data],
        "lock_diff": stack.lock_diff,
        "application": [{"pattern": change.pattern, "kind": change.kind, "before": change.before,
                         "after": change.after, "action": change.action} for change in stack.application],
        "lint": None if stack.lint is None else [
            {"code": f.finding.code, "severity": f.finding.severity, "message": f.finding.message,
             "fix": f.finding.fix, "file": f.location.file, "line": f.location.line} for f in stack.lint.findings],
        "capacity": {"before": _cost_data(stack.cost_before), "after": _cost_data(stack.cost_after)},
        "design": explain.explain_data(stack.head) if stack.head is not None else None,
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
