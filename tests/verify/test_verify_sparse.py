"""Sparse indexes: verify writes items with and without each optional attribute and checks that an
index keyed by it holds exactly the items that carry it."""

from __future__ import annotations

import json

import pytest

import tablewright.verify.samples as samples_module
from tablewright.blueprint.load import load_blueprint
from tablewright.design.designer import design
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tablewright.verify.samples import carriers, generate_samples
from tablewright.verify.verify import _isolated_credentials, embedded_client, verify_stacks, verify_table

TICKETS = """\
blueprint: support
version: 1.0.0
table:
  name: support_main
entities:
  Ticket:
    attributes:
      customerId: string
      ticketId: string
      openedAt: timestamp
      escalatedTo: {type: string, present: 0.05}
      note: {type: string, optional: true}
      subject: string
    key: {pk: "CUSTOMER#{customerId}", sk: "TICKET#{ticketId}"}
access_patterns:
  escalated_to:
    entity: Ticket
    where: {escalatedTo: "="}
    order_by: openedAt
    order: desc
  customer_tickets:
    entity: Ticket
    where: {customerId: "="}
  customer_escalations:
    entity: Ticket
    where: {customerId: "="}
    filter: {escalatedTo: "="}
  notes_search:
    entity: Ticket
    where: {note: begins_with}
    scan: allowed
    reason: an admin search
    rps: 0.01
"""


@pytest.fixture
def tickets(write_blueprint):
    return load_blueprint(write_blueprint(TICKETS))


def test_items_without_the_attribute_are_written_and_left_out_of_the_index(tickets, tmp_path):
    """Run verify on our own embedded DynamoDB, then look at what it left there."""
    from moto import mock_aws

    stacks = build_stacks([tickets])
    [written] = synthesize(stacks, tmp_path / "out")
    with _isolated_credentials(), mock_aws():
        client = embedded_client()
        result = verify_table(client, stacks[0].design, json.loads(written.read_text()), seed=3)
        table = client.scan(TableName="support_main")["Items"]
        index = client.scan(TableName="support_main", IndexName="GSI1")["Items"]
    assert result.passed, result.failures
    assert design(tickets.blueprint).plan("escalated_to").index == "GSI1"
    with_it = [item for item in table if "escalatedTo" in item]
    without = [item for item in table if "escalatedTo" not in item]
    assert len(table) == 32 and len(with_it) == 3 and len(without) == 29  # 5% of 32, but at least 3
    assert sorted(item["SK"]["S"] for item in index) == sorted(item["SK"]["S"] for item in with_it)
    assert all("escalatedTo" in item for item in index)
    [check] = result.indexes
    assert (check.index, check.sparse, check.expected, check.found) == ("GSI1", ("escalatedTo",), 3, 3)
    by_pattern = {r.pattern: r for r in result.results}
    assert by_pattern["customer_tickets"].items == 8  # items without escalatedTo come back too
    assert 1 <= by_pattern["customer_escalations"].items <= 3  # the filter matches only items that have it
    notes = [item for item in table if "note" in item]
    assert len(notes) == 16 and by_pattern["notes_search"].items == 16  # `optional: true`: half of them


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_samples_carry_an_optional_attribute_sometimes_and_never_all(tickets, seed):
    made = [s for s in generate_samples(design(tickets.blueprint), seed) if s.entity == "Ticket"]
    carried = [s for s in made if "escalatedTo" in s.values]
    assert len(carried) == 3 and len(made) == 32
    assert all("GSI1PK" in s.item for s in carried)
    assert not any("GSI1PK" in s.item or "escalatedTo" in s.item for s in made if s not in carried)


@pytest.mark.parametrize(("count", "presence", "wanted"), [
    (32, 0.5, 16), (32, 0.05, 3), (12, 0.05, 3), (100, 0.05, 5), (32, 0.99, 31), (2, 0.5, 1), (1, 0.5, 1), (0, 0.5, 0),
])
def test_about_present_of_the_items_carry_it_at_least_three_never_all(count, presence, wanted):
    import random

    chosen = carriers(count, presence, random.Random(1))
    assert len(chosen) == wanted and chosen <= set(range(count))
    assert chosen == carriers(count, presence, random.Random(1))


def test_an_item_written_into_the_index_without_the_attribute_fails(tickets, monkeypatch):
    """An application that writes the GSI key whatever the item holds: only the index check sees it."""
    original = samples_module.build_item

    def writes_the_key_anyway(table, entity, values):
        if values.get("escalatedTo") is not None:
            return original(table, entity, values)
        item = original(table, entity, {**values, "escalatedTo": "nobody"})
        del item["escalatedTo"]
        return item

    monkeypatch.setattr(samples_module, "build_item", writes_the_key_anyway)
    [result] = verify_stacks(build_stacks([tickets]))
    assert not result.passed
    assert all(r.passed for r in result.results)  # every pattern still reads the right items
    [check] = result.indexes
    assert (check.expected, check.found) == (3, 32)
    assert check.failure.startswith(
        "GSI1 holds 32 items, expected 3 (the items that carry its key attributes); "
        "a Ticket item without escalatedTo is in it: CUSTOMER#customerId-01 / TICKET#ticketId-")
    assert result.failures == [check.failure]


def test_the_report_names_the_failing_index(tickets, monkeypatch, run_cli, write_blueprint):
    original = samples_module.build_item
    monkeypatch.setattr(samples_module, "build_item", lambda table, entity, values: original(
        table, entity, {**values, "escalatedTo": values.get("escalatedTo", "nobody")}))
    code, out, _ = run_cli("verify", write_blueprint(TICKETS))
    assert code == 1
    assert "4/4 patterns pass, 0/1 indexes hold exactly their items" in " ".join(out.split())  # wrapped at 100
    assert "GSI1   escalatedTo  32 of 3 expected  FAIL" in out
    assert "FAIL GSI1 holds 32 items, expected 3" in out
    code, out, _ = run_cli("verify", write_blueprint(TICKETS), "--format", "json")
    [report] = json.loads(out)
    assert report["passed"] is False
    assert report["indexes"] == [{"index": "GSI1", "sparse_by": ["escalatedTo"], "items": 32, "expected": 3,
                                  "result": "FAIL", "failure": report["indexes"][0]["failure"]}]
    assert report["indexes"][0]["failure"].startswith("GSI1 holds 32 items, expected 3")
