"""Counts (`count: true`): a `Select: COUNT` request that returns no items, costed on the items it reads.

DynamoDB's rule (Developer Guide, "Query" and "Read consumption"): a Query charges the items it reads,
whatever it returns; `Select: COUNT` returns only how many matched. So a count costs what reading its
typical items costs, rounded up to 4 KB per request and halved when eventually consistent.
"""

from __future__ import annotations

import textwrap

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.capacity.loads import estimate
from tablewright.design.cookbook import request
from tablewright.stacks.stack import build_stacks
from tablewright.verify.verify import verify_stacks

CHAT = """\
    blueprint: chat
    version: 1.0.0
    table: {name: chat_main}
    entities:
      Message:
        attributes: {roomId: string, messageId: string, sentAt: timestamp, body: string}
        key: {pk: "ROOM#{roomId}", sk: "MSG#{sentAt}#{messageId}"}
        item_bytes: 600
        writes_per_second: 50
    access_patterns:
      unread_count: {entity: Message, where: {roomId: "=", sentAt: ">"}, count: true, limit: 100, items: 3, rps: 200}
"""


def _stack(write_blueprint, text: str):
    return build_stacks([load_blueprint(write_blueprint(textwrap.dedent(text)))])[0]


def test_a_count_is_charged_the_items_it_typically_reads(write_blueprint):
    design = _stack(write_blueprint, CHAT).design
    read = estimate(design).read("unread_count")
    # 3 items x 600 B = 1,800 B -> one 4 KB unit, halved (eventually consistent): 0.5 RCU; x 200/s = 100 RCU/s.
    assert (read.items_per_call, read.units_per_call, read.units_per_second) == (3, 0.5, 100.0)
    # Costed on its limit instead: 100 x 600 B = 60,000 B -> 15 units of 4 KB, halved: 7.5 RCU, 15 times more.
    at_limit = _stack(write_blueprint, CHAT.replace(", items: 3", "")).design
    assert estimate(at_limit).read("unread_count").units_per_call == 7.5


def test_a_count_request_selects_count_and_projects_nothing(write_blueprint):
    body = request(_stack(write_blueprint, CHAT).design.plan("unread_count"), "chat_main")
    assert body["Select"] == "COUNT"
    assert "ProjectionExpression" not in body  # with one, Select may only be SPECIFIC_ATTRIBUTES
    assert body["Limit"] == 100


def test_counts_pass_verify_sharded_bucketed_and_filtered(verified_features):
    counted = {r.pattern: r.failure for r in verified_features.results if r.pattern.endswith("_counted")}
    assert counted == dict.fromkeys(
        ["big_orders_counted", "events_counted", "orders_by_status_counted", "readings_counted"])


def test_a_count_request_that_returns_the_items_fails(write_blueprint, monkeypatch):
    import tablewright.verify.runner as runner

    def without_select(plan, table):
        body = request(plan, table)
        body.pop("Select", None)
        return body

    monkeypatch.setattr(runner, "request", without_select)
    [result] = verify_stacks([_stack(write_blueprint, CHAT)])
    [failed] = [r.failure for r in result.results]
    assert "a count needs only how many match (Select: COUNT): it reads more than it needs" in failed


def test_a_count_of_the_wrong_items_fails(write_blueprint, monkeypatch):
    import tablewright.verify.runner as runner

    def whole_partition(plan, table):  # drops the range condition: counts every message of the room
        body = request(plan, table)
        body["KeyConditionExpression"] = "#pk = :pk"
        del body["ExpressionAttributeNames"]["#sk"]
        del body["ExpressionAttributeValues"][":sk"]
        return body

    monkeypatch.setattr(runner, "request", whole_partition)
    [result] = verify_stacks([_stack(write_blueprint, CHAT)])
    [failed] = [r.failure for r in result.results]
    assert "counted" in failed and "expected" in failed


@pytest.mark.parametrize("old, new, words", [
    (", items: 3", ", items: 3, returns: [body]", "`count: true` returns no attributes"),
    ('sentAt: ">"}', 'sentAt: "=", messageId: "="}', "`count: true` on a pattern that reads one item by its whole key"),
])
def test_contradictory_counts_are_refused(old, new, words, write_blueprint, run_cli):
    text = textwrap.dedent(CHAT)
    assert old in text
    code, out, err = run_cli("explain", write_blueprint(text.replace(old, new)))
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.count("error:") == 1 and words in err
