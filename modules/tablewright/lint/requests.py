"""Requests the generated client sends beyond the write itself (capacity/requests.py), where the blueprint can
avoid them: an update that changes part of an index key reads the rest of that key first.
"""

from __future__ import annotations

from collections.abc import Iterator

from tablewright.capacity.estimate import change_shares, changed_attributes, key_attributes
from tablewright.capacity.requests import update_requests
from tablewright.capacity.size import read_units
from tablewright.design.design import TABLE
from tablewright.lint.findings import Context, Issue, rule


@rule("TW314", "Update reads the item before writing it",
      "Pass the rest of the index key with the update's changes, unchanged, and list it in `writes.passes`: the "
      "client then rewrites the key without reading the item first.",
      why="`update_<entity>` that changes part of an index key reads the rest of that key first: a strongly "
          "consistent GetItem (charged on the whole item) before the UpdateItem, twice the latency, and a "
          "condition that fails when the item changed in between",
      severity="warning")
def update_reads_first(ctx: Context) -> Iterator[Issue]:
    design = ctx.design
    for write in ctx.capacity.writes:
        if not any(kind.kind == "update" for kind in write.kinds):
            continue
        changes, _ = changed_attributes(design, write.entity)
        shares = change_shares(design, write.entity, changes)
        passes = frozenset(design.blueprint.entities[write.entity].write_rates.passes)
        sent = update_requests(design, write.entity, shares, write.item_bytes, passes)
        if not sent.reads_before:
            continue
        fixed = update_requests(design, write.entity, shares, write.item_bytes, passes | set(sent.reads_before))
        assert not fixed.reads_before and fixed.partial_reads == 0
        rate = design.blueprint.entities[write.entity].write_rates.updates  # a failing condition's too
        units = rate * sent.partial_reads * read_units(write.item_bytes, consistent=True)
        table_key = key_attributes(design.shapes[write.entity][TABLE])
        changing = ", ".join(a for a in changes if shares[a] > 0 and a not in table_key)
        rest = ", ".join(sent.reads_before)
        moves = fixed.read_units / read_units(write.item_bytes, consistent=True)
        remains = (f"; the {moves * 100:,.3g}% of updates that change the table key still read the whole item to "
                   "move it" if moves else ": the update then sends its UpdateItem alone")
        yield Issue(
            "warning",
            f"update_{write.entity} changes {changing}, part of an index key with {rest}: the client reads {rest} "
            f"first, a strongly consistent GetItem on {sent.partial_reads * 100:,.3g}% of updates "
            f"({rate * sent.partial_reads:,.6g} a second: {units:,.6g} RCU/s on the table, counted in the "
            "estimate)",
            f"pass {rest} with the changes, unchanged, when the caller has them, and declare `writes.passes: "
            f"[{rest}]`{remains}",
            ("entities", write.entity, "writes"),
        )
