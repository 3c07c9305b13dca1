"""Batch gets (`batch:`): one BatchGetItem of whole keys per call, costed as DynamoDB charges it.

DynamoDB's rule (Developer Guide, "Read consumption" for BatchGetItem): each item of a BatchGetItem is read
on its own, its size rounded up to the next 4 KB, where a Query rounds the total of the items it reads once;
an eventually consistent read costs half. So 25 items of 1,500 B cost 25 x 1 x 0.5 = 12.5 RCU by key, and
ceil(25 x 1,500 / 4,096) x 0.5 = 10 x 0.5 = 5 RCU read together by a Query.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.capacity.loads import estimate
from tablewright.design.cookbook import request
from tablewright.stacks.stack import build_stacks
from tablewright.verify import batch
from tablewright.verify.verify import verify_stacks
from tests.conftest import ROOT

FEATURES = ROOT / "tests/data/blueprints/features.yaml"
PROFILES = """\
    blueprint: profiles
    version: 1.0.0
    table: {name: profiles_main}
    entities:
      Profile:
        attributes: {orgId: string, userId: string, name: string}
        key: {pk: "ORG#{orgId}", sk: "USER#{userId}"}
        item_bytes: 1500
    access_patterns:
      profiles: {entity: Profile, where: {orgId: "=", userId: "="}, batch: 25, rps: 10}
      org_profiles: {entity: Profile, where: {orgId: "="}, limit: 25, rps: 10}
"""


def _design(write_blueprint, text: str = PROFILES):
    return build_stacks([load_blueprint(write_blueprint(textwrap.dedent(text)))])[0].design


def test_every_item_of_a_batch_is_rounded_up_on_its_own(write_blueprint):
    report = estimate(_design(write_blueprint))
    by_key, together = report.read("profiles"), report.read("org_profiles")
    assert (by_key.items_per_call, by_key.units_per_call, by_key.units_per_second) == (25, 12.5, 125.0)
    assert (together.items_per_call, together.units_per_call) == (25, 5.0)


@pytest.mark.parametrize("old, new, units", [
    ("batch: 25, rps: 10}", "batch: 25, rps: 10, consistent: true}", 25.0),  # strongly consistent: a unit each
    ("item_bytes: 1500", "item_bytes: 5000", 25.0),  # 5,000 B items: two units of 4 KB each, halved
])
def test_consistency_and_item_size_scale_each_item(old, new, units, write_blueprint):
    assert old in PROFILES
    assert estimate(_design(write_blueprint, PROFILES.replace(old, new))).read("profiles").units_per_call == units


def test_the_request_is_one_batch_get_item_with_a_key_per_item(write_blueprint):
    design = _design(write_blueprint)
    plan = design.plan("profiles")
    assert (plan.sent_operation, plan.operation) == ("BatchGetItem", "GetItem")
    body = request(plan, "profiles_main")
    assert list(body) == ["RequestItems"]
    assert body["RequestItems"]["profiles_main"]["Keys"] == [
        {"PK": {"S": "ORG#{orgId}"}, "SK": {"S": "USER#{userId}"}}]
    assert "UnprocessedKeys" in " ".join(plan.notes)


@pytest.mark.parametrize("change, replacement, words", [
    ("batch: 25, rps: 10}", "limit: 3, batch: 25, rps: 10}", "`limit` does not apply"),
    ("batch: 25, rps: 10}", "count: true, batch: 25, rps: 10}", "`count` does not apply"),
    ("batch: 25, rps: 10}", "filter: {name: \"=\"}, batch: 25, rps: 10}", "`filter` does not apply"),
    ("batch: 25, rps: 10}", "items: 3, batch: 25, rps: 10}", "`items` does not apply"),
    ('where: {orgId: "=", userId: "="}, batch', 'where: {orgId: "=", userId: ">"}, batch',
     "a range condition in `where` does not apply"),
    ('where: {orgId: "=", userId: "="}, batch', 'where: {orgId: "="}, batch',
     "`batch: 25` reads items by their whole primary key on the table (GetItem), and this pattern is a Query on the "
     "table"),
    ("batch: 25,", "batch: 101,", "access_patterns.profiles.batch"),
    ("batch: 25,", "batch: 1,", "access_patterns.profiles.batch"),
], ids=["limit", "count", "filter", "items", "range", "part-of-the-key", "over-100", "one"])
def test_what_a_batch_cannot_be_is_refused(change, replacement, words, write_blueprint, run_cli):
    assert change in PROFILES
    code, out, err = run_cli("explain", write_blueprint(textwrap.dedent(PROFILES.replace(change, replacement))))
    assert code == 2 and out == "" and "Traceback" not in err
    assert words in err, err


def test_batches_pass_verify_and_a_wrong_projection_fails_it(verified_features, monkeypatch):
    [read] = [r for r in verified_features.results if r.pattern == "orders_batch"]
    # 24 orders in the data and one key without an item: 25 keys, each read for half a unit.
    assert (read.passed, read.items, read.capacity, read.operation) == (True, 24, 12.5, "BatchGetItem")

    def whole_items(plan, table):
        body = request(plan, table)
        entry = body["RequestItems"][table]
        for name in ("ProjectionExpression", "ExpressionAttributeNames"):
            entry.pop(name)
        return body
    monkeypatch.setattr(batch, "request", whole_items)
    [result] = verify_stacks(build_stacks([load_blueprint(FEATURES)]))
    [read] = [r for r in result.results if r.pattern == "orders_batch"]
    assert "which the pattern does not return" in (read.failure or "")


SINGLE = """\
    blueprint: projects
    version: 1.0.0
    table: {name: projects_main}
    entities:
      Project:
        attributes: {projectId: string, name: string}
        key: {pk: "P#{projectId}", sk: PROJECT}
      Slot:
        attributes: {slot: {type: number}, day: date, label: string}
        key: {pk: "SLOT#{slot}", sk: "{day}"}
    access_patterns:
      projects: {entity: Project, where: {projectId: "="}, batch: 3}
      slots: {entity: Slot, where: {slot: "=", day: "="}, batch: 30, returns: [label]}
"""


def test_the_python_client_batches_keys_of_one_attribute_and_of_numbers(write_blueprint, run_cli):
    """A one-attribute key (a generated `projectId = _key[...]`, no tuple unpacking) and a key without free
    text, whose absent key is a number no item has."""
    code, out, err = run_cli("verify", write_blueprint(textwrap.dedent(SINGLE)), "--client")
    assert code == 0, out + err
    assert re.search(r"^projects\(\)\s+PASS$", out, re.M) and re.search(r"^slots\(\)\s+PASS$", out, re.M)
    [result] = verify_stacks(build_stacks([load_blueprint(write_blueprint(textwrap.dedent(SINGLE)))]))
    slots = next(r for r in result.results if r.pattern == "slots")
    # 29 keys of items and one without: 30 reads of half a unit each.
    assert (slots.items, slots.capacity) == (29, 15.0)


def test_a_batch_larger_than_a_response_takes_more_requests(write_blueprint):
    # 100 items of 300,000 B = 30,000,000 B, more than the 16 MB (16,777,216 B) a response holds: 2 requests;
    # each item ceil(300,000 / 4,096) = 74 units, halved: 100 x 37 = 3,700 RCU.
    text = PROFILES.replace("item_bytes: 1500", "item_bytes: 300000").replace("batch: 25", "batch: 100")
    read = estimate(_design(write_blueprint, text)).read("profiles")
    assert (read.requests_per_call, read.units_per_call) == (2, 3700.0)
    assert "more than a response holds (16 MB): 2 requests" in read.basis
