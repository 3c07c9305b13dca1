"""Verification against an embedded DynamoDB: bundled blueprints pass, every trap fails with its cause."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import textwrap

import pytest

from tablewright.blueprint.load import load_blueprint, load_blueprints
from tablewright.stacks.stack import build_stacks
from tablewright.verify.verify import verify_stacks
from tests.conftest import BUNDLED, ROOT

HEADER = """\
blueprint: traps
version: 1.0.0
table:
  name: traps_main
"""


def verify_text(write_blueprint, body: str):
    path = write_blueprint(HEADER + textwrap.dedent(body))
    [result] = verify_stacks(build_stacks([load_blueprint(path)]))
    return result


def lint_errors(write_blueprint, body: str) -> list[str]:
    """Lint refuses these traps before verification, with the clearer message."""
    from tablewright.capacity.loads import estimate
    from tablewright.design.designer import design
    from tablewright.lint.engine import apply_ignore, lint_design

    table = design(load_blueprint(write_blueprint(HEADER + textwrap.dedent(body))).blueprint)
    found, _ = apply_ignore(lint_design(table, estimate(table)), table.blueprint.lint.ignore)
    return [f"{f.code}: {f.message}" for f in found if f.severity == "error"]


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_every_bundled_pattern_passes(path):
    stacks = load_blueprints(path)
    results = verify_stacks(build_stacks(stacks))
    assert [r.table for r in results] == [s.blueprint.table.name for s in stacks]
    for result, loaded in zip(results, stacks, strict=True):
        assert result.passed, [r.failure for r in result.results if r.failure]
        assert len(result.results) == len(loaded.blueprint.access_patterns)
        assert all(r.probes >= 2 and r.items > 0 for r in result.results)


def test_verify_command_reports_and_exits_zero(run_cli):
    code, out, _ = run_cli("verify", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [b["table"] for b in data] == ["dev-crm_main", "prod-crm_main", "dev-orders_main", "prod-orders_main"]
    crm = next(b for b in data if b["table"] == "prod-crm_main")
    recent = next(p for p in crm["patterns"] if p["pattern"] == "recent_contacts")
    assert recent["result"] == "PASS" and recent["items"] == 3
    assert recent["capacity_per_call"]["source"] == "model"


def test_unpadded_numbers_in_a_sort_key_fail_with_the_cause(write_blueprint, run_cli):
    body = """\
    entities:
      Score:
        attributes: {gameId: string, points: number, player: string}
        key: {pk: "GAME#{gameId}", sk: "SCORE#{points}#{player}"}
    access_patterns:
      top_scores:
        entity: Score
        where: {gameId: "=", points: ">="}
        order: desc
        limit: 5
    """
    result = verify_text(write_blueprint, body)
    [failed] = result.results
    assert not failed.passed
    assert failed.failure.startswith("top_scores: with gameId=gameId-01")
    assert "cause: `points` is a number without `width`" in failed.failure
    padded = verify_text(write_blueprint, body.replace("points: number", "points: {type: number, width: 6}"))
    assert padded.passed
    assert lint_errors(write_blueprint, body) == [
        "TW202: the table: Score's sort key SCORE#{points}#{player}: `points` is a number without `width`: inside "
        "keys it compares as text, so 10 sorts before 9; wrong order or range for top_scores"
    ]


def test_timestamps_that_do_not_sort_chronologically_fail_with_the_cause(write_blueprint):
    body = """\
    entities:
      Reading:
        attributes: {sensorId: string, at: {type: timestamp, format: "%d/%m/%Y %H:%M"}, value: number}
        key: {pk: "SENSOR#{sensorId}", sk: "AT#{at}"}
    access_patterns:
      readings_in_window:
        entity: Reading
        where: {sensorId: "=", at: between}
    """
    result = verify_text(write_blueprint, body)
    [failed] = result.results
    assert failed.failure.startswith("readings_in_window: with sensorId=sensorId-01")
    assert "does not sort chronologically" in failed.failure
    fixed = verify_text(write_blueprint, body.replace('format: "%d/%m/%Y %H:%M"', 'format: "%Y-%m-%d %H:%M"'))
    assert fixed.passed
    [error] = lint_errors(write_blueprint, body)
    assert error.startswith("TW202:") and "does not sort chronologically" in error


def test_limit_with_descending_order_returning_the_oldest_items_fails(write_blueprint):
    body = """\
    entities:
      Message:
        attributes: {threadId: string, sequence: number, text: string}
        key: {pk: "THREAD#{threadId}", sk: "MSG#{sequence}"}
    access_patterns:
      latest_messages:
        entity: Message
        where: {threadId: "="}
        order: desc
        order_by: sequence
        limit: 3
    """
    result = verify_text(write_blueprint, body)
    [failed] = result.results
    assert failed.failure.startswith("latest_messages: with threadId=")
    # Only the attributes that differ, each value shortened (a long `text` would be cut to 40 characters).
    assert re.search(r": item \d differs: (.*; )?sequence expected \{\"N\": \"\d+\"\}, got \{\"N\": \"\d+\"\}",
                     failed.failure), failed.failure
    assert "cause: `sequence` is a number without `width`" in failed.failure
    [error] = lint_errors(write_blueprint, body)
    assert error.startswith("TW202: the table: Message's sort key MSG#{sequence}")


@pytest.mark.parametrize("seed", ["1", "2", "3", "4", "5"])
def test_prefix_collision_fails_verify_on_every_seed_naming_the_pattern(seed, write_blueprint, run_cli):
    """Values cannot hold the separator (the encoding refuses them), so the only prefix collision is
    one entity's sort key extending another's: refused before any data, whatever the seed."""
    path = write_blueprint(HEADER + textwrap.dedent("""\
    entities:
      Order:
        attributes: {userId: string, orderId: string}
        key: {pk: "USER#{userId}", sk: "ORDER#{orderId}"}
      OrderItem:
        attributes: {userId: string, orderId: string, sku: string}
        key: {pk: "USER#{userId}", sk: "ORDER#{orderId}#ITEM#{sku}"}
    access_patterns:
      orders_of_user:
        entity: Order
        where: {userId: "="}
    """))
    code, _, stderr = run_cli("verify", path, "--allow-lint-errors", "--seed", seed)
    assert code == 2
    assert "access_patterns.orders_of_user: sort-key prefix collision" in stderr
    assert "also matches OrderItem items (ORDER#{orderId}#ITEM#{sku})" in stderr


def test_projection_missing_a_returned_attribute_without_follow_up_is_refused(write_blueprint, run_cli):
    path = write_blueprint(HEADER + textwrap.dedent("""\
    entities:
      Ticket:
        attributes: {ticketId: string, status: {type: string, values: [OPEN, CLOSED]}, subject: string}
        key: {pk: "TICKET#{ticketId}", sk: TICKET}
    access_patterns:
      open_tickets:
        entity: Ticket
        where: {status: "="}
        returns: [ticketId, subject]
        follow_up: false
    indexes:
      GSI1: {projection: [ticketId]}
    """))
    code, _, stderr = run_cli("verify", path)
    assert code == 2
    assert "access_patterns.open_tickets.returns: GSI1 does not project subject" in stderr


def test_keys_only_index_reads_the_rest_with_batch_get_item(write_blueprint):
    result = verify_text(write_blueprint, """\
    entities:
      Ticket:
        attributes: {ticketId: string, status: {type: string, values: [OPEN, CLOSED]}, subject: string}
        key: {pk: "TICKET#{ticketId}", sk: TICKET}
    access_patterns:
      open_tickets:
        entity: Ticket
        where: {status: "="}
        returns: [ticketId, subject]
    indexes:
      GSI1: {projection: keys_only}
    """)
    [ticket] = result.results
    assert ticket.passed, ticket.failure
    assert ticket.operations_per_call == "2"
    assert ticket.requests > ticket.probes  # every non-empty probe made a BatchGetItem too


def test_every_range_operator_in_shared_and_private_partitions(write_blueprint):
    """Key conditions for each operator, on a middle component and on the last one, with and without
    neighbours in the partition, give exactly the oracle's items on DynamoDB."""
    cases = {
        "Note": ["<", "<=", ">", ">=", "between", "begins_with"],  # middle component, shared partition
        "Memo": ["<=", ">=", "between", "begins_with"],  # last component, shared partition
        "Event": ["<", "<=", ">", ">=", "between", "begins_with"],  # last component, partition of its own
    }
    owner = {"Note": "ownerId", "Memo": "ownerId", "Event": "deviceId"}
    lines = [
        f"  {entity.lower()}_{number}:\n    entity: {entity}\n    where: {{{owner[entity]}: \"=\", tag: \"{op}\"}}"
        for entity, ops in cases.items() for number, op in enumerate(ops)
    ]
    result = verify_text(write_blueprint, textwrap.dedent("""\
    entities:
      Owner:
        attributes: {ownerId: string}
        key: {pk: "OWNER#{ownerId}", sk: "A"}
      Note:
        attributes: {ownerId: string, tag: string, seq: {type: number, width: 4}}
        key: {pk: "OWNER#{ownerId}", sk: "NOTE#{tag}#{seq}"}
      Memo:
        attributes: {ownerId: string, tag: string}
        key: {pk: "OWNER#{ownerId}", sk: "MEMO#{tag}"}
      Zeta:
        attributes: {ownerId: string}
        key: {pk: "OWNER#{ownerId}", sk: "ZETA"}
      Event:
        attributes: {deviceId: string, tag: string}
        key: {pk: "DEVICE#{deviceId}", sk: "{tag}"}
    access_patterns:
    """) + "\n".join(lines) + "\n")
    failures = [r.failure for r in result.results if not r.passed]
    assert not failures, failures
    assert len(result.results) == 16


def test_examples_are_written_and_found(write_blueprint, run_cli):
    path = write_blueprint(HEADER + textwrap.dedent("""\
    entities:
      User:
        attributes: {userId: string, joinedAt: timestamp}
        key: {pk: "USER#{userId}", sk: PROFILE}
        examples:
          - {userId: alice, joinedAt: "2023-05-01T10:00:00Z"}
    access_patterns:
      user: {entity: User, where: {userId: "="}}
    """))
    from tablewright.design.designer import design
    from tablewright.verify.samples import generate_samples

    samples = generate_samples(design(load_blueprint(path).blueprint))
    alice = [s for s in samples if s.values["userId"] == "alice"]
    assert alice and alice[0].item["PK"] == {"S": "USER#alice"}
    assert alice[0].item["joinedAt"] == {"S": "2023-05-01T10:00:00Z"}


def test_example_with_a_wrong_type_is_a_located_error(write_blueprint, run_cli):
    path = write_blueprint(HEADER + textwrap.dedent("""\
    entities:
      User:
        attributes: {userId: string, joinedAt: timestamp}
        key: {pk: "USER#{userId}", sk: PROFILE}
        examples:
          - {userId: alice, joinedAt: yesterday}
    access_patterns:
      user: {entity: User, where: {userId: "="}}
    """))
    code, _, stderr = run_cli("verify", path)
    assert code == 2
    assert ":10:" in stderr and "entities.User.examples[0].joinedAt: expected an ISO 8601 timestamp" in stderr


def test_the_oracle_catches_a_plan_that_reads_the_wrong_direction(monkeypatch):
    """Flip one plan's direction after design: verification must notice, so the oracle is independent."""
    import tablewright.design.designer as designer

    original = designer.query_plan

    def flipped(blueprint, name, route, projections, members, *rest):
        plan = original(blueprint, name, route, projections, members, *rest)
        if name == "recent_contacts":
            plan = dataclasses.replace(plan, scan_index_forward=not plan.scan_index_forward)
        return plan

    monkeypatch.setattr(designer, "query_plan", flipped)
    [result] = verify_stacks(build_stacks([load_blueprint(BUNDLED[0], "prod")]))
    failed = {r.pattern: r.failure for r in result.results if not r.passed}
    assert list(failed) == ["recent_contacts"]
    assert "item 1 differs" in failed["recent_contacts"]


def test_samples_are_deterministic_and_cover_both_sides_of_ranges():
    from tablewright.design.designer import design
    from tablewright.verify.samples import generate_samples

    blueprint = design(load_blueprint(BUNDLED[0], "prod").blueprint)
    first, second = generate_samples(blueprint), generate_samples(blueprint)
    assert [s.item for s in first] == [s.item for s in second]
    assert generate_samples(blueprint, seed=8) != first
    contacts = [s for s in first if s.entity == "Contact" and s.values["customerId"] == "customerId-01"]
    assert len(contacts) == 8 and len({s.values["contactAt"] for s in contacts}) == 8


def test_verify_command_exits_one_on_failure(write_blueprint, run_cli):
    path = write_blueprint(HEADER + textwrap.dedent("""\
    entities:
      Message:
        attributes: {threadId: string, sequence: number}
        key: {pk: "THREAD#{threadId}", sk: "MSG#{sequence}"}
    access_patterns:
      latest_messages: {entity: Message, where: {threadId: "="}, order: desc, order_by: sequence, limit: 3}
    """))
    code, _, stderr = run_cli("verify", path)
    assert code == 2 and "lint TW202: the table: Message's sort key MSG#{sequence}" in stderr
    code, out, _ = run_cli("verify", path, "--format", "markdown", "--allow-lint-errors")
    assert code == 1
    assert "| latest_messages | table | 1 |" in out and "| FAIL |" in out
    assert "- **FAIL** latest_messages: with threadId=" in out


KEYS_ONLY = """\
entities:
  Message:
    attributes: {roomId: string, sentAt: timestamp, body: string, tags: string_set}
    key: {pk: "ROOM#{roomId}", sk: "MSG#{sentAt}"}
access_patterns:
  message_keys: {entity: Message, where: {roomId: "="}, returns: [], limit: 100}
  newest: {entity: Message, where: {roomId: "="}, order: desc, limit: 30, returns: [body, tags]}
"""


def test_a_keys_only_pattern_reads_the_table_keys_and_is_walked_in_pages(write_blueprint):
    from tablewright.design.cookbook import next_page_request, request

    result = verify_text(write_blueprint, KEYS_ONLY)
    assert result.passed, result.failures
    design = build_stacks([load_blueprint(write_blueprint(HEADER + textwrap.dedent(KEYS_ONLY)))])[0].design
    keys_only = request(design.plan("message_keys"), "t")
    assert keys_only["ProjectionExpression"] == "#PK, #SK"
    assert next_page_request(design.plan("message_keys")) == {
        "ExclusiveStartKey": "{LastEvaluatedKey of the previous page}"}


def test_a_request_that_reads_whole_items_for_a_keys_only_pattern_fails(write_blueprint, monkeypatch):
    import tablewright.design.cookbook as cookbook

    projected = cookbook.read_attributes
    monkeypatch.setattr(cookbook, "read_attributes", lambda plan: plan.projected if not plan.returns
                        else projected(plan))  # the request before the fix: no projection, whole items
    failed = {r.pattern: r.failure for r in verify_text(write_blueprint, KEYS_ONLY).results}
    assert "a returned item holds _entity, body, roomId, sentAt, tags" in failed["message_keys"]
    assert "which the pattern does not return (returns: [] (keys only))" in failed["message_keys"]
    assert failed["newest"] is None


def test_paging_that_repeats_the_boundary_item_fails(write_blueprint, monkeypatch):
    """A cursor that starts on the previous page's last item (`>=` instead of ExclusiveStartKey) repeats it."""
    import tablewright.verify.runner as runner

    original = runner._read_pages

    def repeating(client, operation, body, wanted):
        return original(_Repeating(client) if "Limit" in body and wanted is None else client, operation, body,
                        wanted)

    monkeypatch.setattr(runner, "_read_pages", repeating)
    failed = {r.pattern: r.failure for r in verify_text(write_blueprint, KEYS_ONLY).results}
    assert "read in pages of" in failed["newest"] and "(Limit, then ExclusiveStartKey)" in failed["newest"]
    assert "expected 30 items, got" in failed["newest"] or "differs" in failed["newest"]


class _Repeating:
    """A client whose every page after the first starts with the previous page's last item again."""

    def __init__(self, client):
        self.client, self.last = client, None

    def query(self, **body):
        answer = self.client.query(**body)
        items = ([self.last] if "ExclusiveStartKey" in body and self.last else []) + answer["Items"]
        self.last = answer["Items"][-1] if answer["Items"] else None
        return {**answer, "Items": items}


def test_a_failure_names_only_the_differing_attributes_shortened(write_blueprint):
    body = """\
    entities:
      Note:
        attributes: {bookId: string, page: number, text: string}
        key: {pk: "BOOK#{bookId}", sk: "PAGE#{page}"}
        item_bytes: 1000
    access_patterns:
      first_pages: {entity: Note, where: {bookId: "="}, order_by: page, limit: 3}
    """
    [failed] = verify_text(write_blueprint, body).results
    difference = failed.failure.split(" differs: ", 1)[1].split(" (cause:")[0]
    assert difference.startswith('page expected {"N": ') and "; text expected " in difference
    assert "bookId" not in difference  # the same in both items
    assert all(len(part) < 140 for part in difference.split("; ")), difference  # 1,000-character texts cut


@pytest.mark.terraform  # four verify runs in subprocesses: 4 s, the slow tier's
def test_verify_prints_the_same_bytes_on_every_run_and_hash_seed(write_blueprint, tmp_path):
    import subprocess
    import sys

    path = write_blueprint(HEADER + textwrap.dedent("""\
        entities:
          Note:
            attributes: {bookId: string, page: number, tags: string_set, votes: number_set}
            key: {pk: "BOOK#{bookId}", sk: "PAGE#{page}"}
        access_patterns:
          first_pages: {entity: Note, where: {bookId: "="}, order_by: page, limit: 3}
          notes: {entity: Note, where: {bookId: "="}}
    """))
    outputs = set()
    for seed in ("0", "1", "4242"):
        done = subprocess.run([sys.executable, str(ROOT / "main.py"), "verify", str(path), "--seed", "3",
                               "--allow-lint-errors"], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        assert done.returncode == 1, done.stderr  # the unpadded page number fails first_pages
        outputs.add(done.stdout)
    assert len(outputs) == 1
