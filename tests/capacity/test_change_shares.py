"""`writes.changes` with the share of updates that change each attribute: capacity counts an index key change for
that share only. Before the field, a key attribute an update may change was counted as changed by every update.

The rule (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes):
an update that changes an indexed key attribute writes the index twice (a delete of the old entry, a put of the new);
one that changes only projected attributes writes it once; one that changes neither, not at all. With a share p of
updates changing the key: p x 2 + (1 - p) x (1 if the rest of the update changes a projected attribute, else 0).
"""

from __future__ import annotations

import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.stacks.stack import build_stacks

# 1,000 updates/s of a 176-byte Courier (1 WCU on the table and on GSI1, keyed by `cell`): every update sets
# lastSeenAt, 5% of them move the courier to another cell.
DISPATCH = """\
blueprint: dispatch
version: 1.0.0
region: us-east-1
table: {name: dispatch, billing: on_demand}
traffic: {peak_factor: 1}
entities:
  Courier:
    attributes: {courierId: string, cell: string, lastSeenAt: timestamp}
    key: {pk: "COURIER#{courierId}", sk: "COURIER"}
    writes: {updates: 1000, changes: CHANGES}
access_patterns:
  couriers_in_cell: {entity: Courier, where: {cell: "="}, returns: RETURNS, rps: 10}
"""


def write_units(write_blueprint, changes: str, returns: str = "[courierId]") -> dict[str, float]:
    path = write_blueprint(DISPATCH.replace("CHANGES", changes).replace("RETURNS", returns), "dispatch.yaml")
    [stack] = build_stacks(load_blueprints(path))
    return {load.index: load.write_units_per_second for load in stack.capacity.loads}


def test_a_key_changed_by_a_share_of_updates_is_counted_for_that_share(write_blueprint):
    # GSI1 projects courierId only (lastSeenAt is not on it): 1,000 x (0.05 x 2 + 0.95 x 0) = 100 WCU/s.
    assert write_units(write_blueprint, "{cell: 0.05, lastSeenAt: 1}") == pytest.approx(
        {"table": 1000, "GSI1": 1000 * (0.05 * 2)})
    # Every update changing the cell (the list form, or a share of 1): 2 entries each.
    assert write_units(write_blueprint, "[cell, lastSeenAt]") == pytest.approx({"table": 1000, "GSI1": 2000})
    assert write_units(write_blueprint, "{cell: 1, lastSeenAt: 1}") == pytest.approx({"table": 1000, "GSI1": 2000})


def test_the_rest_of_the_updates_write_the_entry_once_when_they_change_a_projected_attribute(write_blueprint):
    # GSI1 projects lastSeenAt too, which every update changes: 1,000 x (0.05 x 2 + 0.95 x 1) = 1,050 WCU/s.
    assert write_units(write_blueprint, "{cell: 0.05, lastSeenAt: 1}", "[courierId, lastSeenAt]") == pytest.approx(
        {"table": 1000, "GSI1": 1000 * (0.05 * 2 + 0.95 * 1)})


@pytest.mark.parametrize(("changes", "expected"), [
    ("{cell: 1.5}", ":10:39: entities.Courier.writes.changes.cell: `cell` must be at most 1.0, not 1.5 [E203]"),
    ("{cell: -0.1}", ":10:39: entities.Courier.writes.changes.cell: `cell` must be at least 0.0, not -0.1 [E203]"),
    ("{cel: 0.05}", "`writes.changes` names `cel`, which is not an attribute of this entity [E300]"),
])
def test_a_share_outside_0_to_1_or_of_no_attribute_is_one_located_error(run_cli, write_blueprint, changes, expected):
    path = write_blueprint(DISPATCH.replace("CHANGES", changes).replace("RETURNS", "[courierId]"), "dispatch.yaml")
    code, out, err = run_cli("capacity", path)
    assert code == 2 and out == "" and err.count("error: ") == 1 and "Traceback" not in err, err
    assert f"{path}:10:" in err and expected in err and "fix: " in err
