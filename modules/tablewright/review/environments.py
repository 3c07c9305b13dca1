"""The environments of one blueprint in a review: production is shown in full, every other environment only as
what differs from it (its table's name aside), so a comment does not repeat dev and prod line for line."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from tablewright.review.classified import CLASSES, Change
from tablewright.review.review import StackReview


def shown_in_full(stacks: list[StackReview]) -> StackReview:
    """The production stack (the first by name when several are), else the first by name."""
    ordered = sorted(stacks, key=lambda stack: stack.stack)
    return next((stack for stack in ordered if stack.production), ordered[0])


def in_order(stacks: list[StackReview]) -> list[StackReview]:
    """The stack shown in full first, then the others by name."""
    full = shown_in_full(stacks)
    return [full, *sorted((stack for stack in stacks if stack is not full), key=lambda stack: stack.stack)]


def as_in(text: str, stack: StackReview, full: StackReview) -> str:
    """`text` of `stack` with its table's names written as `full`'s: names alone are no difference."""
    mine, theirs = stack.tables, full.tables
    if len(mine) != len(theirs):  # renamed in one only: the names after the change stand for each other
        mine, theirs = mine[-1:], theirs[-1:]
    # The longer first: one name may hold another.
    for name, other in sorted(zip(mine, theirs, strict=True), key=lambda pair: -len(pair[0])):
        text = text.replace(name, other)
    return text


def same_lines(lines: list[str], stack: StackReview, full: list[str], full_stack: StackReview) -> bool:
    return [as_in(line, stack, full_stack) for line in lines] == full


def line_differences(lines: list[str], stack: StackReview, full: list[str], full_stack: StackReview) -> list[str]:
    """`- line` of `full` and `+ line` of `stack` where they differ (names aside), in order; empty when the same."""
    matcher = difflib.SequenceMatcher(None, full, [as_in(line, stack, full_stack) for line in lines], autojunk=False)
    found = []
    for tag, start, end, mine_start, mine_end in matcher.get_opcodes():
        if tag != "equal":
            found += [f"- {line}" for line in full[start:end]]
            found += [f"+ {line}" for line in lines[mine_start:mine_end]]
    return found


@dataclass(frozen=True)
class ChangeDifference:
    how: str  # "only here": `change` is this stack's alone; "not here": production's alone; "differs": this stack's
    change: Change


def _normal(change: Change, stack: StackReview, full: StackReview) -> tuple[str, ...]:
    return (change.address, as_in(change.subject, stack, full), change.cls, change.action, change.category,
            as_in(change.reason, stack, full))


def change_differences(stack: StackReview, full: StackReview) -> list[ChangeDifference]:
    """The changes of `stack` that production does not have alike, and production's that `stack` lacks; blocked
    first, then window, then safe."""
    mine = {_normal(change, stack, full): change for change in stack.changes}
    theirs = {_normal(change, full, full): change for change in full.changes}
    changed = {key[:2] for key in mine.keys() - theirs.keys()} & {key[:2] for key in theirs.keys() - mine.keys()}
    found = [ChangeDifference("differs" if key[:2] in changed else "only here", change)
             for key, change in mine.items() if key not in theirs]
    found += [ChangeDifference("not here", change) for key, change in theirs.items()
              if key not in mine and key[:2] not in changed]
    return sorted(found, key=lambda d: (CLASSES.index(d.change.cls), d.change.address, d.change.subject, d.how))


def monthly_totals(stacks: list[StackReview]) -> tuple[float, float]:
    """The month's priced total before and after, over `stacks` (a stack that is new, or goes, counts as 0 on the
    side it is missing from)."""
    before = sum(stack.cost_before.total for stack in stacks if stack.cost_before is not None)
    after = sum(stack.cost_after.total for stack in stacks if stack.cost_after is not None)
    return round(before, 2), round(after, 2)
