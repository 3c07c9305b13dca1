"""One pull-request comment for every blueprint a change affects (`review --changed-since GITREF`).

It starts with a marker line (`<!-- tablewright-review -->`) so a pipeline can find its own comment
and edit it instead of adding one per push, then the verdict and a table of each stack's counts of
blocked, window and safe changes (and of its real plan, when given). Each stack's detail, the review
`review --base --head` writes, is folded, with Terraform's own plan summary folded inside it. GitHub
refuses comments over 65,536 characters: stacks that do not fit are named, not shown (`--format json`
has everything).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tablewright.report.markdown import fence_for, sanitize
from tablewright.report.review import (
    VERDICT_TEXT,
    _summary,
    application_headlines,
    application_lines,
    data_migrations,
    render_difference_markdown,
    render_stack_markdown,
    render_text,
    stack_data,
    window_line,
)
from tablewright.report.review_cost import cost_headline
from tablewright.report.tables import markdown_table
from tablewright.review.classified import CLASSES, counts
from tablewright.review.environments import in_order
from tablewright.review.pull import PlanSummary, PullReview
from tablewright.review.review import StackReview, verdict

MARKER = "<!-- tablewright-review -->"
MAX_COMMENT_CHARS = 60_000  # under GitHub's 65,536, with room for the note on what was left out
MAX_PLAN_LINES = 400
STACK_HEADERS = ("Stack", "Blueprint", "Verdict", "Blocked", "Window", "Safe", "Plan")


def _plan_cell(plan: PlanSummary | None) -> str:
    if plan is None:
        return "-"
    return f"+{plan.count('add')} ~{plan.count('change')} -{plan.count('destroy')}"


def _verdict_cell(stack: StackReview) -> str:
    found = counts(stack.changes)
    return "**blocked**" if found["blocked"] else "**window**" if found["window"] else "safe"


def ordered_stacks(pull: PullReview) -> list[tuple[str, StackReview]]:
    """(blueprint, stack) pairs, the stacks that need attention first: blocked, then window, then safe;
    by stack name within each."""
    pairs = [(entry.blueprint, stack) for entry in pull.blueprints for stack in entry.review.stacks]
    return sorted(pairs, key=lambda pair: (CLASSES.index(verdict(pair[1].changes)), pair[1].stack))


def _stack_rows(pull: PullReview) -> list[list[str]]:
    rows = []
    for blueprint, stack in ordered_stacks(pull):
        found = counts(stack.changes)
        rows.append([f"`{stack.stack}`" + (" (production)" if stack.production else ""), f"`{blueprint}`",
                     _verdict_cell(stack), str(found["blocked"]), str(found["window"]), str(found["safe"]),
                     _plan_cell(pull.plans.get(stack.stack))])
    return rows


def sanitized(markdown: str) -> str:
    """`sanitize` outside the plan's code blocks, each stretch of text as a whole (a diagram spans lines); inside
    the plan's blocks nothing renders, so the plan's text stays as Terraform wrote it (its lines hold no line
    break and no backtick run as long as the fence)."""
    result, text, fence = [], [], None
    for line in markdown.split("\n"):
        if fence is not None:
            result.append(line)
            fence = None if line == fence else fence
            continue
        text.append(line)
        opening = re.fullmatch(r"(`{3,})diff", line)
        if opening:
            result.append(sanitize("\n".join(text)))
            text, fence = [], opening.group(1)
    return "\n".join([*result, sanitize("\n".join(text))] if text else result)


def plan_block(plan: PlanSummary) -> list[str]:
    """Terraform's summary of the stack's plan, folded: one `+ create ADDRESS` line per resource."""
    lines = [f"{change.symbol} {change.action} {change.address}"
             + (f" (replace: {', '.join(change.replace_paths)})" if change.replace_paths else "")
             for change in plan.changes[:MAX_PLAN_LINES]]
    if len(plan.changes) > MAX_PLAN_LINES:
        lines.append(f"... and {len(plan.changes) - MAX_PLAN_LINES} more")
    fence = fence_for(lines)
    body = [f"{fence}diff", *lines, fence] if lines else ["No changes: the infrastructure matches the configuration."]
    return ["<details>", f"<summary>Terraform plan of {plan.stack}: {plan.headline}</summary>", "", *body, "",
            "</details>", ""]


def stack_section(stack: StackReview, plan: PlanSummary | None, full: StackReview | None = None) -> str:
    """One stack folded: in full, or (`full` given) as its differences from `full`; with its plan, when given."""
    summary = f"{stack.stack}{' (production)' if stack.production else ''}: {_summary(stack.changes)}"
    body = render_stack_markdown(stack) if full is None else render_difference_markdown(stack, full)
    lines = ["<details>", f"<summary>{summary}{'' if full is None else f'; differences from {full.stack}'}</summary>",
             "", *body]
    lines += plan_block(plan) if plan is not None else []
    return "\n".join([*lines, "</details>", "", ""])


def sections_in_order(pull: PullReview) -> list[tuple[StackReview, StackReview | None]]:
    """(stack, the stack it is shown against) pairs: the blueprints that need attention first, and within each
    production in full (against None), then its other environments."""
    entries = sorted(pull.blueprints, key=lambda entry: (CLASSES.index(entry.review.verdict), entry.blueprint))
    pairs: list[tuple[StackReview, StackReview | None]] = []
    for entry in entries:
        full, *others = in_order(entry.review.stacks)
        pairs += [(full, None), *((stack, full) for stack in others)]
    return pairs


def _reasons(pull: PullReview) -> list[str]:
    if not pull.blueprints:
        return []
    items = [f"- `{entry.blueprint}`: {'; '.join(entry.reasons)}" for entry in pull.blueprints]
    left_out = f", {pull.unaffected} unchanged left out" if pull.unaffected else ""
    return ["<details>", f"<summary>Why these {len(pull.blueprints)} blueprint(s){left_out}</summary>", "", *items,
            "", "</details>", ""]


def render_comment(pull: PullReview, limit: int = MAX_COMMENT_CHARS) -> str:
    stacks = pull.stacks
    since = f"`{pull.since}` (merge base `{pull.merge_base[:12]}`)"
    if not stacks:
        head = ["## Tablewright review", "", f"No blueprint changed since {since}"
                + (f" ({pull.unaffected} unchanged)" if pull.unaffected else "") + ": nothing to review.", ""]
        return MARKER + "\n" + sanitized("\n".join(head).rstrip() + "\n")
    migrations = data_migrations(stacks)
    head = [
        "## Tablewright review", "",
        f"**{VERDICT_TEXT[pull.verdict]}** ({_summary(pull.changes)} in {len(stacks)} stack(s) of "
        f"{len(pull.blueprints)} blueprint(s) changed since {since})", "",
        cost_headline(stacks), "",
        markdown_table(STACK_HEADERS, _stack_rows(pull)), "",
        *(f"> **Data migration:** {line}" for line in migrations), *([""] if migrations else []),
        *application_lines(application_headlines(stacks)),
        window_line(stacks), "",
        *_reasons(pull),
    ]
    text = "\n".join(head) + "\n"
    left_out: list[str] = []
    for stack, full in sections_in_order(pull):
        section = stack_section(stack, pull.plans.get(stack.stack), full)
        if left_out or len(text) + len(section) > limit:
            left_out.append(stack.stack)
        else:
            text += section
    if left_out:
        text += (f"> **{len(left_out)} stack(s) not detailed here** to keep the comment under GitHub's limit of "
                 f"65,536 characters: {', '.join(f'`{name}`' for name in left_out)}. `review --format json` (or "
                 "`--format text`) has them all.\n")
    return MARKER + "\n" + sanitized(text.rstrip() + "\n")


def _plan_data(plan: PlanSummary) -> dict[str, Any]:
    return {"add": plan.count("add"), "change": plan.count("change"), "destroy": plan.count("destroy"),
            "changes": [{"symbol": c.symbol, "action": c.action, "address": c.address,
                         "replace_paths": list(c.replace_paths)} for c in plan.changes]}


def render_pull_json(pull: PullReview) -> str:
    data = {
        "since": pull.since, "merge_base": pull.merge_base, "verdict": pull.verdict, "counts": counts(pull.changes),
        "unaffected": pull.unaffected,
        "blueprints": [{"blueprint": entry.blueprint, "reasons": list(entry.reasons), "base": entry.review.base,
                        "stacks": [stack_data(stack) for stack in entry.review.stacks]} for entry in pull.blueprints],
        "plans": {stack: _plan_data(plan) for stack, plan in sorted(pull.plans.items())},
    }
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def render_pull_text(pull: PullReview) -> str:
    lines = [f"{VERDICT_TEXT[pull.verdict]} ({_summary(pull.changes)}): {len(pull.blueprints)} blueprint(s) changed "
             f"since {pull.since} (merge base {pull.merge_base[:12]}), {pull.unaffected} unchanged"]
    for entry in pull.blueprints:
        lines += ["", f"== {entry.blueprint}: {'; '.join(entry.reasons)}", render_text(entry.review).rstrip()]
        for stack in entry.review.stacks:
            plan = pull.plans.get(stack.stack)
            if plan is not None:
                lines += [f"plan of {stack.stack}: {plan.headline}",
                          *(f"  {c.symbol} {c.action} {c.address}" for c in plan.changes)]
    return "\n".join(lines) + "\n"
