"""What the application sees of a change: every access pattern added, removed or served by another request.

Terraform shows indexes; the application sends requests. Each pattern's request is the one the query cookbook
writes (`explain --format json`), so two designs are compared request by request: an operation (GetItem, Query,
Scan), an index, a key condition, a fan-out over shards or time buckets, a follow-up BatchGetItem. A pattern
whose request changes needs new application code, and when it moves to an index this change builds, that code
works only once the index is ACTIVE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tablewright.design.cookbook import follow_up_request, request
from tablewright.design.design import TABLE, QueryPlan, TableDesign, place

Kind = Literal["added", "removed", "changed"]
_TABLE_NAME = "TABLE"  # both sides' requests name the same table: a renamed table is a change of its own


@dataclass(frozen=True)
class PatternChange:
    pattern: str
    kind: Kind
    before: str | None  # the request, in words
    after: str | None
    action: str  # what the application must change

    @property
    def headline(self) -> str:
        """The change in one line, without what to do about it."""
        if self.kind == "added":
            return f"`{self.pattern}` added: {self.after}"
        if self.kind == "removed":
            return f"`{self.pattern}` removed (was {self.before})"
        return f"`{self.pattern}`: {self.before} -> {self.after}"

    @property
    def text(self) -> str:
        return f"{self.headline}. {self.action}"


def describe(plan: QueryPlan) -> str:
    """A pattern's request in a few words: `Query x4 on GSI1 (GSI1PK = :pk AND GSI1SK > :sk) + BatchGetItem`."""
    times = ""
    if plan.fan_out is not None:
        times = f" x{plan.fan_out.shards}" if plan.fan_out.kind == "shards" else f" per {plan.fan_out.bucket}"
    condition = f" ({_condition(plan)})" if plan.key_condition else ""
    follow = f" + {plan.follow_up.operation}" if plan.follow_up else ""
    return f"{plan.sent_operation}{times} on {place(plan.index)}{condition}{follow}"


def _condition(plan: QueryPlan) -> str:
    """The key condition with the key attributes and the values' templates in place of the placeholders:
    `PK = CUSTOMER#{customerId} AND begins_with(SK, ORDER#)`."""
    text = plan.key_condition.replace("#pk", plan.keys.pk).replace("#sk", plan.keys.sk or "#sk")
    for placeholder, template in sorted(plan.values, key=lambda pair: -len(pair[0])):  # `:sk_to` before `:sk`
        text = text.replace(placeholder, template)
    return text


def _requests(plan: QueryPlan) -> tuple[object, ...]:
    return request(plan, _TABLE_NAME), follow_up_request(plan, _TABLE_NAME)


def _indexes(design: TableDesign) -> set[str]:
    return {index.name for index in design.indexes}


def _built(index: str, before: TableDesign, after: TableDesign) -> bool:
    """Whether DynamoDB builds `index` after the apply: new, or rebuilt with other keys or projection."""
    old = {i.name: (i.keys, i.projection) for i in before.indexes}
    now = {i.name: (i.keys, i.projection) for i in after.indexes}
    return index != TABLE and index in now and old.get(index) != now[index]


def _ready(index: str, before: TableDesign, after: TableDesign) -> str:
    """When a request on `index` works: when the change is applied, or once DynamoDB has built the index."""
    if _built(index, before, after):
        return f"once {index} is ACTIVE (DynamoDB builds it after the apply)"
    return "when this change is applied"


def _changed_action(old: QueryPlan, new: QueryPlan, before: TableDesign, after: TableDesign) -> str:
    action = (f"Deploy the new request (the query cookbook: `tablewright explain --format json`) "
              f"{_ready(new.index, before, after)}")
    if old.index != TABLE and old.index not in _indexes(after):
        return f"{action}; the old request fails once {old.index} is deleted."
    return f"{action}; the old request keeps working until then." if old.index != new.index else f"{action}."


def pattern_changes(before: TableDesign | None, after: TableDesign) -> list[PatternChange]:
    """Every pattern whose request differs between the two designs, by pattern name (`before` None: a new
    blueprint, every pattern added)."""
    if before is None:
        return [PatternChange(plan.pattern, "added", None, describe(plan),
                              "Deploy code that sends it once the table is created (the query cookbook has the "
                              "request).") for plan in sorted(after.plans, key=lambda plan: plan.pattern)]
    old = {plan.pattern: plan for plan in before.plans}
    new = {plan.pattern: plan for plan in after.plans}
    changes = []
    for name in sorted(old.keys() | new.keys()):
        was, now = old.get(name), new.get(name)
        if was is None and now is not None:
            changes.append(PatternChange(name, "added", None, describe(now),
                                         f"Deploy code that sends it {_ready(now.index, before, after)} (the query "
                                         "cookbook has the request)."))
        elif now is None and was is not None:
            changes.append(PatternChange(name, "removed", describe(was), None,
                                         "Remove the application's calls: nothing plans for it any more, and an "
                                         "index only it read retires."))
        elif was is not None and now is not None and _requests(was) != _requests(now):
            changes.append(PatternChange(name, "changed", describe(was), describe(now),
                                         _changed_action(was, now, before, after)))
    return changes
