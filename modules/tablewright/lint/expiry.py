"""Data the table itself deletes: TTL on an attribute that does not hold when the item expires.

DynamoDB's TTL deletes every item whose TTL attribute holds a time in the past, within days, and the
deletions are not undone by turning TTL off again. Pointed at a creation or update time, it empties the
table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tablewright.blueprint.traits import expiry
from tablewright.lint.findings import Check, Context, Issue, rule


def _when_ttl_is_on(check: Callable[[Context, str], Iterator[Issue]]) -> Check:
    """A check of a table with TTL on, given the TTL attribute's name; nothing to check with TTL off."""

    def checked(ctx: Context) -> Iterator[Issue]:
        name = ctx.design.blueprint.table.ttl_attribute
        if name is not None:
            yield from check(ctx, name)

    return checked


@rule("TW501", "TTL on an attribute that is not an expiry",
      "Point `ttl_attribute` at an attribute that holds when the item expires (`expiresAt`, epoch seconds), or "
      "declare `expiry: true` on the attribute if it does.",
      why="TTL on an attribute that is not an expiry (`expiry: false`, or a name that does not say so: `createdAt`); "
          "TTL deletes every item whose value is in the past",
      severity="error")
@_when_ttl_is_on
def ttl_on_a_non_expiry(ctx: Context, name: str) -> Iterator[Issue]:
    blueprint = ctx.design.blueprint
    for entity_name, entity in sorted(blueprint.entities.items()):
        spec = entity.attributes.get(name)
        if spec is None or expiry(name, spec):
            continue
        why = "declared `expiry: false`" if spec.expiry is False else "its name does not say it is an expiry"
        yield Issue(
            "error",
            f"TTL deletes every item whose `{name}` holds a time in the past, and `{name}` of {entity_name} is not "
            f"when the item expires ({why}): if it is a creation or update time, nearly every {entity_name} is "
            "deleted within days, and turning TTL off again does not bring them back",
            f"store the expiry in an attribute of its own (e.g. `expiresAt: {{type: timestamp, format: "
            f"epoch_seconds}}`) and name it in `ttl_attribute`; if `{name}` does hold when the item expires, "
            "declare `expiry: true` on it",
            ("table", "ttl_attribute"),
        )


@rule("TW502", "Expired items read without a filter",
      "Check the TTL attribute against the current time after the GetItem, or declare `expired: returned` on "
      "the pattern if expired items are fine.",
      why="A GetItem takes no filter, and an index that does not project the TTL attribute cannot filter on it, so "
          "an item past its TTL is returned until DynamoDB deletes it, typically within a few days; other Query "
          "and Scan patterns hide such items with a filter",
      severity="warning")
@_when_ttl_is_on
def expired_items_read_by_key(ctx: Context, name: str) -> Iterator[Issue]:
    blueprint = ctx.design.blueprint
    for plan in ctx.design.plans:
        pattern = blueprint.access_patterns[plan.pattern]
        expiring = [e for e in plan.entities if name in blueprint.entities[e].attributes]
        if plan.hides_expired is not None or pattern.expired == "returned" or not expiring:
            continue
        why = (f"by its key ({plan.sent_operation}, which takes no filter)" if plan.operation == "GetItem"
               else f"on {plan.index}, which does not project `{name}` (a filter there would keep every item)")
        yield Issue(
            "warning",
            f"`{plan.pattern}` reads {expiring[0]} {why}: a {expiring[0]} past its `{name}` is still returned "
            "until DynamoDB deletes it, typically within a few days",
            (f"return `{name}` and compare it with the current time after reading" if plan.operation == "GetItem"
             else f"project `{name}` on the index") + ", or declare `expired: returned` if expired items are fine",
            ("access_patterns", plan.pattern),
        )
