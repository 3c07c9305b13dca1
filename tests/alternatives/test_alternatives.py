"""Alternatives to each GSI (`explain`): a filter on an index the design already has, an inverted index, and
copies in the table, each designed and costed as a blueprint of its own, and each shown to answer its patterns (verify).

The tracker below, by hand (DynamoDB's rules: a Query is charged the items it reads, filtered out or not,
rounded up to 4 KB per request and halved when eventually consistent; a write is charged 1 KB units per item):
- now: `mine` reads 20 entries of 388 B on GSI1 = 7,760 B -> 2 units, halved: 1 RCU x 50/s = 50 RCU/s; every
  insert writes GSI1: 10/s x 1 WCU = 10 WCU/s;
- a filter on the table: `mine` reads its project's 1,000 issues (100,000 over 100 projects) x 400 B =
  400,000 B -> 98 units, halved: 49 RCU x 50/s = 2,450 RCU/s, and GSI1 is written no more;
- copies in the table: `mine` reads 20 copies of 388 B (what a GSI1 entry holds) -> 1 RCU x 50/s = 50 RCU/s,
  and each insert writes a copy: 10 WCU/s on the table.
The bill is on-demand: (RCU/s x seconds a month x price per read request unit) + the same for writes.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap

import pytest

from tablewright.alternatives.alternatives import COPIES, FILTER, INVERTED, index_choices
from tablewright.blueprint.load import load_blueprint
from tablewright.blueprint.traffic import SECONDS_PER_MONTH
from tablewright.stacks.stack import build_stacks
from tablewright.verify.verify import verify_stacks
from tests.conftest import ROOT

TRACKER = """\
    blueprint: tracker
    version: 1.0.0
    region: us-east-1
    table: {name: tracker_main}
    entities:
      Issue:
        attributes:
          projectId: {type: string, cardinality: 100}
          issueId: string
          assignee: {type: string, cardinality: 10}
          status: {type: string, values: [OPEN, DONE]}
          title: string
        key: {pk: "PROJECT#{projectId}", sk: "ISSUE#{issueId}"}
        item_bytes: 400
        item_count: 100000
        writes: {inserts: 10}
    access_patterns:
      project_issues: {entity: Issue, where: {projectId: "="}, limit: 20}
      mine: {entity: Issue, where: {projectId: "=", assignee: "=", status: "="}, rps: 50, limit: 20}
"""


@pytest.fixture
def tracker(write_blueprint):
    loaded = load_blueprint(write_blueprint(textwrap.dedent(TRACKER)))
    stack = build_stacks([loaded])[0]
    [choice] = index_choices(stack.design, stack.capacity, stack.cost)
    return loaded, stack, choice


def _bill(stack, reads: float, writes: float) -> float:
    """On-demand throughput a month, each line rounded to the cent as the cost report rounds it."""
    read_price = stack.cost.line("on-demand read requests").price
    write_price = stack.cost.line("on-demand write requests").price
    return round(reads * SECONDS_PER_MONTH * read_price, 2) + round(writes * SECONDS_PER_MONTH * write_price, 2)


def test_each_alternative_is_costed_from_the_rules(tracker):
    _, stack, choice = tracker
    assert (choice.index, choice.patterns) == ("GSI1", ("mine",))
    assert (choice.current.read_units, choice.current.write_units) == (50.0, 10.0)
    # The whole table's bill: project_issues' 1 RCU/s and the table's own 10 WCU/s are in every figure.
    assert choice.current.monthly == pytest.approx(_bill(stack, 50 + 1, 10 + 10))
    filtered, inverted, copied = choice.alternatives
    assert inverted.figures is None and "does not bind the whole sort key of Issue (ISSUE#{issueId})" in inverted.how
    assert (filtered.kind, filtered.how) == (FILTER, "`mine` FILTER assignee =, status =")
    assert (filtered.figures.read_units, filtered.figures.write_units) == (2450.0, 0.0)
    assert filtered.figures.monthly == pytest.approx(_bill(stack, 2450 + 1, 10))
    assert copied.kind == COPIES and copied.how.startswith("IssueByGSI1 (a copy of each Issue keyed ISSUE#")
    assert (copied.figures.read_units, copied.figures.write_units) == (50.0, 10.0)
    assert copied.figures.monthly == pytest.approx(_bill(stack, 50 + 1, 10 + 10))


@pytest.mark.parametrize("kind", [FILTER, COPIES])  # the inverted index: below
def test_each_alternative_answers_its_patterns(kind, tracker):
    """The alternative blueprint, designed on its own and verified against the embedded DynamoDB: the oracle
    judges `mine` by its declaration, so the moved conditions must still select the same items."""
    loaded, _, choice = tracker
    [alternative] = [a for a in choice.alternatives if a.kind == kind]
    [stack] = build_stacks([dataclasses.replace(loaded, blueprint=alternative.blueprint, lock=alternative.lock)])
    assert not stack.design.global_indexes  # GSI1 is gone
    [result] = verify_stacks([stack])
    assert result.passed, result.failures
    assert any(r.pattern == "mine" and r.items > 0 for r in result.results)


def test_a_declared_index_has_the_same_alternatives(write_blueprint):
    declared = TRACKER.replace('        item_bytes: 400\n', '        item_bytes: 400\n        index_keys: {GSI1: {pk: '
                               '"ISSUE#{assignee}#{projectId}#{status}", sk: "{issueId}"}}\n')
    assert declared != TRACKER
    stack = build_stacks([load_blueprint(write_blueprint(textwrap.dedent(declared)))])[0]
    [choice] = index_choices(stack.design, stack.capacity, stack.cost)
    assert [a.figures.read_units for a in choice.alternatives if a.figures] == [2450.0, 50.0]


def test_explain_shows_the_alternatives(write_blueprint, run_cli):
    path = write_blueprint(textwrap.dedent(TRACKER))
    code, out, _ = run_cli("explain", path)
    assert code == 0
    assert "Alternatives to each GSI" in out
    assert "GSI1 for mine: 50 RCU/s, 10 WCU/s on GSI1; throughput $" in out
    assert "2,450 RCU/s, no GSI1 to write" in " ".join(out.split())
    code, out, _ = run_cli("explain", path, "--format", "json")
    [data] = json.loads(out)
    [choice] = data["alternatives"]
    assert [a["kind"] for a in choice["alternatives"]] == [FILTER, INVERTED, COPIES]


def test_alternatives_a_design_cannot_take_say_why():
    [stack] = build_stacks([load_blueprint(ROOT / "tests/data/blueprints/tenants.yaml")])
    by_index = {choice.index: choice for choice in index_choices(stack.design, stack.capacity, stack.cost)}
    filtered, _, copied = by_index["GSI1"].alternatives  # every_open_issue reads across tenants
    assert filtered.figures is None and "no other index of Issue has a key `every_open_issue` binds" in filtered.how
    assert copied.figures is None and "every key there starts with `tenantId`" in copied.how


GROUPS = """\
    blueprint: groups
    version: 1.0.0
    region: us-east-1
    table: {name: groups_main}
    entities:
      Member:
        attributes: {groupId: {type: string, cardinality: 1000}, userId: {type: string, cardinality: 100000},
                     role: string}
        key: {pk: "GROUP#{groupId}", sk: "USER#{userId}"}
        item_count: 1000000
        writes: {inserts: 1500}
    access_patterns:
      members: {entity: Member, where: {groupId: "="}}
      groups_of_user: {entity: Member, where: {userId: "="}, rps: 5}
"""


def test_an_inverted_index_saves_the_index_key_attributes_in_every_item(write_blueprint):
    """The planned GSI1 writes GSI1PK and GSI1SK into every item: 6 + 6 bytes of names and 23 + 16 of values
    (`MEMBER#` and a 16-character typical id, then the id), 51 bytes. An inverted index (SK / PK) writes none:
    a group's 1,000 members read 176,000 B -> 43 units, halved 21.5 RCU, against 125,000 B -> 31 units, 15.5
    RCU; 6 RCU/s less, a month on demand. The reverse lookup and the writes cost the same."""
    loaded = load_blueprint(write_blueprint(textwrap.dedent(GROUPS)))
    stack = build_stacks([loaded])[0]
    [choice] = index_choices(stack.design, stack.capacity, stack.cost)
    [inverted] = [a for a in choice.alternatives if a.kind == INVERTED]
    assert inverted.how == "`groups_of_user` on GSI1 keyed USER#{userId} / GROUP#{groupId}"
    assert (inverted.figures.read_units, inverted.figures.write_units) == (2.5, 1500.0)
    assert stack.capacity.read("members").units_per_call == 21.5
    [alternative] = build_stacks([dataclasses.replace(loaded, blueprint=inverted.blueprint, lock=inverted.lock)])
    assert alternative.capacity.read("members").units_per_call == 15.5
    assert alternative.design.index("GSI1").keys.names == ("SK", "PK")
    saved = round(6 * SECONDS_PER_MONTH * stack.cost.line("on-demand read requests").price, 2)
    assert choice.current.monthly - inverted.figures.monthly == pytest.approx(saved, abs=0.01)
    [result] = verify_stacks([alternative])
    assert result.passed, result.failures


EDGES = """\
    blueprint: edges
    version: 1.0.0
    region: us-east-1
    table: {name: edges_main, ttl_attribute: expiresAt}
    indexes:
      GSI1: {projection: keys_only}
    entities:
      Session:
        attributes: {userId: {type: string, cardinality: 10000}, sessionId: string, device: string,
                     expiresAt: {type: timestamp, format: epoch_seconds}}
        key: {pk: "USER#{userId}", sk: "SESSION#{sessionId}"}
        item_count: 1000000
        writes: {inserts: 50, expiries: 50}
      Thing:
        attributes: {thingId: string, email: {type: string, optional: true}}
        key: {pk: "THING#{thingId}", sk: "THING"}
        index_keys:
          email-index: {pk: "EMAIL#{email}", sk: "THING#{thingId}"}
        item_count: 1000
        writes: {inserts: 1}
    access_patterns:
      sessions: {entity: Session, where: {userId: "="}}
      by_device: {entity: Session, where: {device: "="}, returns: [sessionId], rps: 5}
      thing: {entity: Thing, where: {thingId: "="}}
      by_email: {entity: Thing, where: {email: "="}, index: email-index, rps: 5}
"""


def test_copies_keep_what_the_items_need_and_every_alternative_is_a_valid_blueprint(write_blueprint, run_cli):
    """Copies of expiring items carry the TTL attribute; a copy keyed by an optional attribute exists only for
    the items that have it (required in the copy); an index named `email-index` gives `ThingByemailindex`; a
    pattern pinned to the index is unpinned; a literal sort key cannot be inverted. Each alternative blueprint
    is re-read as a file's would be, and designs."""
    loaded = load_blueprint(write_blueprint(textwrap.dedent(EDGES)))
    stack = build_stacks([loaded])[0]
    choices = {choice.index: choice for choice in index_choices(stack.design, stack.capacity, stack.cost)}
    session_copy = next(a for a in choices["GSI1"].alternatives if a.kind == COPIES)
    assert "expiresAt" in session_copy.blueprint.entities["SessionByGSI1"].attributes
    by_email = choices["email-index"].alternatives
    _, inverted, copied = by_email
    assert "the sort key of Thing (THING) is a literal" in inverted.how and inverted.figures is None
    copy = copied.blueprint.entities["ThingByemailindex"]
    assert copy.attributes["email"].is_optional is False
    assert copied.blueprint.access_patterns["by_email"].index == "table"
    for alternative in [*choices["GSI1"].alternatives, *by_email]:
        if alternative.blueprint is not None:
            build_stacks([dataclasses.replace(loaded, blueprint=alternative.blueprint, lock=alternative.lock)])
    code, out, err = run_cli("explain", write_blueprint(textwrap.dedent(EDGES)))
    assert code == 0 and "Traceback" not in err and "ThingByemailindex" in out


def test_a_filter_that_would_read_many_pages_is_not_priced(write_blueprint):
    """100,000,000 issues over 100 projects: a project holds 1,000,000 x 400 B = 400 MB, far more than the 1 MB
    page a call reads, and `limit: 20` needs many pages: the filter alternative is named, not priced."""
    text = TRACKER.replace("item_count: 100000", "item_count: 100000000")
    stack = build_stacks([load_blueprint(write_blueprint(textwrap.dedent(text)))])[0]
    [choice] = index_choices(stack.design, stack.capacity, stack.cost)
    filtered = choice.alternatives[0]
    assert filtered.figures is None
    assert filtered.how.startswith("not priced: `mine` FILTER assignee =, status =: `mine` would read more than")
