"""Dropping a global secondary index is a contract step: blocked while a migration of an entity the index holds is
not verified.

An index retires when a successor replaces it (after a renamed key attribute, a larger projection) or when the
keys of its entities move; `indexes.<name>.remove: true` then drops it. DynamoDB deletes a GSI in place, with an
UpdateTable, and the only way back is to create it again, which backfills it from every item (Developer Guide,
"Managing global secondary indexes":
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.OnlineOps.html). So, like removing a
migration's declaration, the drop waits for the lock's record of `tablewright migrate verify`: every declaration
(of the later blueprint, or leaving it in this change) that concerns an entity the index holds must be recorded.
The review and the gate read the dropped indexes from the Terraform changes (two syntheses, or a real plan), the
entities on them from the earlier keys (the design lock, or the `tablewright` record of the plan's prior state).
"""

from __future__ import annotations

from collections.abc import Mapping

from tablewright.blueprint.lock import StackLock
from tablewright.design.locked import Keys
from tablewright.review.changes import ResourceChange
from tablewright.review.classified import Change
from tablewright.review.data import CONTRACT, verified_declarations
from tablewright.review.table_facets import table_facets


def dropped_indexes(changes: list[ResourceChange]) -> list[tuple[str, str]]:
    """The global secondary indexes a table update deletes: (the table's address, the index's name). A rebuilt
    index keeps its name, and a replaced table is blocked on its own."""
    found = set()
    for change in changes:
        if change.type == "aws_dynamodb_table" and change.action == "update":
            before = table_facets(change.before or {}).global_indexes
            after = table_facets(change.after or {}).global_indexes
            found |= {(change.address, name) for name in before.keys() - after.keys()}
    return sorted(found)


def index_contract(dropped: list[tuple[str, str]], held: Keys, declared: Mapping[str, tuple[str, ...]],
                   lock: StackLock | None, production: bool = False) -> list[Change]:
    """A blocked change for each dropped index (`dropped_indexes`) that holds an entity (`held`: the keys before the
    change) a migration concerns (`declared`: each declaration, of either side, with its entities) that the lock's
    records (`verified_declarations`) do not hold. An index whose entities no pending migration concerns is left as
    the Terraform change classifies it."""
    verified = verified_declarations(lock, production)
    pending = {text: entities for text, entities in declared.items() if text not in verified}
    changes = []
    for address, index in dropped:
        on_it = {entity for entity, on in held if on == index}
        entities = on_it | {name for names in declared.values() if on_it & set(names) for name in names}  # renamed
        waiting = sorted(text for text, names in pending.items() if entities & set(names))
        if not waiting:
            continue
        concerned = {name for text in waiting for name in pending[text]}
        whose = _listed(sorted(on_it & concerned or entities & concerned))
        what, it = ("migration", "it") if len(waiting) == 1 else ("migrations", "them")
        changes.append(Change(
            address=address, action="delete", category="data", subject=f"{CONTRACT}drop index {index}",
            cls="blocked", reason=f"{index} holds {whose}, whose {what} no `tablewright migrate verify` recorded in "
            f"the design lock: {'; '.join(waiting)}. Dropping the index is the contract step: run {it} (`tablewright "
            f"migrate run`), verify {it} (`tablewright migrate verify` writes the record into <blueprint>.lock.json; "
            f"commit it), then drop {index}; no flag lets it through"))
    return changes


def _listed(names: list[str]) -> str:
    return " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"
