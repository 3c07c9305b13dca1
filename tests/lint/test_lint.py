"""Lint: each rule fires on a blueprint that has the problem and stays silent on one that does not. Here hot partitions
(TW1xx), key traps (TW2xx), data the table deletes itself (TW501) and placeholder tags (TW601); limits and costs
(TW3xx) are in test_lint_limits.py, the command, its formats and the engine in test_lint_command.py."""

from __future__ import annotations

import json
import textwrap

import pytest

from tablewright.blueprint import regex
from tablewright.blueprint.load import load_blueprint
from tablewright.design.designer import design
from tablewright.stacks.stack import build_stacks
from tablewright.verify.verify import verify_stacks
from tests.support.lint_support import BY_STATUS, GET_USER, USER, codes, findings, lint, order

# --- hot partitions ---------------------------------------------------------------------------------


def test_tw101_low_cardinality_partition_key():
    industry = {"attributes": {"industry": {"type": "string", "values": ["A", "B", "C"]}, "label": "string"},
                "key": {"pk": "INDUSTRY#{industry}", "sk": "PROFILE"}, "writes_per_second": 1}
    found = findings({"Industry": industry}, {"get": {"entity": "Industry", "where": {"industry": "="}}})
    [note] = [f for f in found if f.code == "TW101"]
    assert note.severity == "info" and "takes about 3 value(s)" in note.message and "x today's rates" in note.message
    assert "TW101" not in codes({"User": USER}, GET_USER)


def test_tw102_gsi_partitioned_by_a_status():
    found = findings({"Order": order()}, BY_STATUS)
    [funnel] = [f for f in found if f.code == "TW102"]
    assert "GSI1: Order is partitioned by status (ORDER#{status})" in funnel.message
    assert "traffic funnel" in funnel.message
    per_customer = {"by_status": {**BY_STATUS["by_status"], "where": {"customerId": "=", "status": "="}}}
    assert "TW102" not in codes({"Order": order()}, per_customer)


def test_tw103_the_issue_scenario_and_its_computed_fix(write_blueprint):
    """GSI by a 3-value status, 2,000 status updates/s of 2 KB: an error naming the GSI, the attribute, the
    WCU per key and the shard count; applying that count clears it, and verify still passes."""
    status = {"type": "string", "values": ["PLACED", "PAID", "SHIPPED"]}
    updates = {"updates": 2000, "changes": ["status"]}
    found = findings({"Order": {**order(writes=0, size=2048, status=status), "writes": updates}}, BY_STATUS)
    [error] = [f for f in found if f.code == "TW103"]
    assert error.severity == "error"
    assert error.message.startswith("GSI1: partition key ORDER#{status} = the busiest value ({status}: 3 declared "
                                    "values, none weighted: the busiest assumed to take 80%")
    # 2,000 writes/s x 1 WCU per index entry, doubled because a status change is a delete and a put, x 0.8 for
    # the busiest status (no weights declared), x 3 at the default peak factor.
    assert "gets an estimated 9,600 WCU per key" in error.message
    # ceil(9,600 / (1,000 x 0.5 warning level)) = 20 (the most the 5-20 range allows): 480 WCU per shard.
    assert "shard it into 20: set `indexes.GSI1.shards: 20` (about 480 WCU" in error.fix
    assert "by_status sends 20 queries per call" in error.fix and "removes all" in error.fix

    body = textwrap.dedent("""\
        blueprint: hot
        version: 1.0.0
        table: {name: hot_main}
        entities:
          Order:
            attributes:
              orderId: string
              customerId: string
              placedAt: timestamp
              status: {type: string, values: [PLACED, PAID, SHIPPED]}
            key: {pk: "ORDER#{orderId}", sk: DETAILS}
            writes: {updates: 2000, changes: [status]}
            item_bytes: 2048
        access_patterns:
          by_status: {entity: Order, where: {status: "="}, order_by: placedAt, order: desc, limit: 20,
                      returns: [orderId, placedAt]}
        """)
    sharded = load_blueprint(write_blueprint(body + "indexes:\n  GSI1: {shards: 20}\n", "sharded.yaml"))
    after, _ = lint(design(sharded.blueprint))
    assert not [f for f in after if f.severity == "error"], after
    [result] = verify_stacks(build_stacks([sharded]))
    assert result.passed, [r.failure for r in result.results]
    assert design(sharded.blueprint).plan("by_status").fan_out.shards == 20


def test_tw104_near_the_limit_is_a_warning():
    colour = {"type": "string", "values": ["RED", "GREEN", "BLUE"]}
    entity = {"attributes": {"id": "string", "colour": colour, "at": "timestamp"},
              "key": {"pk": "THING#{id}", "sk": "T"}, "writes_per_second": 300, "item_bytes": 300}
    pattern = {"by_colour": {"entity": "Thing", "where": {"colour": "="}, "order_by": "at", "returns": ["id"]}}
    found = codes({"Thing": entity}, pattern)  # 300 x 0.8 (the busiest colour) x 3 (peak) = 720 WCU: over 500
    assert found.get("TW104") == "warning" and "TW103" not in found
    entity["writes_per_second"] = 150  # 360 WCU at peak
    found = codes({"Thing": entity}, pattern)
    assert "TW104" not in found and found.get("TW101") == "info"


def test_hot_key_share_concentrates_load():
    tenant = {"attributes": {"tenantId": {"type": "string", "hot_key_share": 0.5}, "at": "timestamp"},
              "key": {"pk": "TENANT#{tenantId}", "sk": "{at}"}, "writes_per_second": 3000, "item_bytes": 900}
    pattern = {"events": {"entity": "Event", "where": {"tenantId": "="}, "order": "desc", "limit": 10}}
    found = [f for f in findings({"Event": tenant}, pattern) if f.code == "TW103"]
    assert found and "4,500 WCU per key" in found[0].message  # 3,000 x 0.5 x 3 at the peak
    # A time bucket spreads nothing a burst writes at once (the current bucket takes every write): not offered.
    assert "bucket" not in found[0].fix
    # The fan-out the fix costs: ceil(4,500 / 500) = 9 shards, each query carrying `Limit: 10`, so a call reads
    # 9 x ceil(10 x 900 / 4,096) / 2 = 13.5 RCU instead of ceil(9,000 / 4,096) / 2 = 1.5: +12 RCU x 100 calls/s.
    pattern["events"]["rps"] = 100
    [hot] = [f for f in findings({"Event": tenant}, pattern) if f.code == "TW103"]
    assert "events sends 9 queries per call (+1,200.0 RCU/s)" in hot.fix


# --- key traps --------------------------------------------------------------------------------------


def test_tw201_mutable_attribute_in_the_table_key():
    ticket = {"attributes": {"customerId": "string", "status": {"type": "string", "values": ["OPEN", "DONE"]}},
              "key": {"pk": "CUSTOMER#{customerId}", "sk": "TICKET#{status}"}}
    assert codes({"Ticket": ticket}, {}).get("TW201") == "warning"
    assert "TW201" not in codes({"User": USER}, GET_USER)


def test_tw202_sort_key_that_does_not_sort():
    score = {"attributes": {"gameId": "string", "points": "number"}, "key": {"pk": "GAME#{gameId}", "sk": "S#{points}"}}
    top = {"top": {"entity": "Score", "where": {"gameId": "="}, "order": "desc", "limit": 3}}
    assert codes({"Score": score}, top)["TW202"] == "error"
    score["attributes"]["points"] = {"type": "number", "width": 8}
    assert "TW202" not in codes({"Score": score}, top)
    reading = {"attributes": {"id": "string", "at": {"type": "timestamp", "format": "%d/%m/%Y"}},
               "key": {"pk": "R#{id}", "sk": "{at}"}}
    assert codes({"Reading": reading}, {})["TW202"] == "warning"


def test_tw203_separator_inside_a_key_value():
    post = {"attributes": {"title": "string", "lang": {"type": "string", "values": ["en", "fr"]},
                           "at": "timestamp"}, "key": {"pk": "POST#{title}#{lang}", "sk": "{at}"}}
    assert codes({"Post": post}, {})["TW203"] == "warning"  # `title` is followed by `lang`: a '#' shifts it
    post["attributes"]["title"] = {"type": "string", "pattern": "^[^#]+$"}
    assert "TW203" not in codes({"Post": post}, {})


@pytest.mark.parametrize("name", ["title", "session_id", "customer_id", "AccountId"])
def test_tw203_judges_the_position_in_the_key_not_the_name(name):
    last = {"attributes": {name: "string", "at": "timestamp"}, "key": {"pk": f"S#{{{name}}}", "sk": "{at}"}}
    assert "TW203" not in codes({"Session": last}, {})  # the last component: a '#' shifts nothing
    first = {**last, "key": {"pk": "S", "sk": f"{{{name}}}#{{at}}"}}
    assert codes({"Session": first}, {})["TW203"] == "warning"  # an id or not, it is followed by `at`


def test_patterns_match_whole_values_in_linear_time():
    assert regex.fullmatch("[a-z]+", "abc") and not regex.fullmatch("[a-z]+", "a#b")
    assert not regex.fullmatch("a|b", "ab")  # the alternation stays inside the anchors
    assert not regex.fullmatch("(?:.?){3000}X", "a#b")  # hours in Python's `re`; here a linear scan
    with pytest.raises(regex.PatternError, match="look-around"):
        regex.check("(?=a)b")
    with pytest.raises(regex.PatternError, match="at most 256"):
        regex.check("a" * 257)


def test_tw204_overlapping_sort_keys():
    order_ = {"attributes": {"userId": "string", "orderId": "string"},
              "key": {"pk": "USER#{userId}", "sk": "ORDER#{orderId}"}}
    item = {"attributes": {"userId": "string", "orderId": "string", "sku": "string"},
            "key": {"pk": "USER#{userId}", "sk": "ORDER#{orderId}#ITEM#{sku}"}}
    assert codes({"Order": order_, "OrderItem": item}, {})["TW204"] == "warning"
    clash = {"attributes": {"userId": "string"}, "key": {"pk": "USER#{userId}", "sk": "PROFILE"}}
    assert codes({"User": USER, "Clash": clash}, {})["TW204"] == "error"
    item["key"]["sk"] = "ITEM#{orderId}#{sku}"
    assert "TW204" not in codes({"Order": order_, "OrderItem": item}, {})


def test_tw205_key_over_the_size_limit():
    doc = {"attributes": {"path": {"type": "string", "max_length": 3000, "pattern": "^[^#]+$"}},
           "key": {"pk": "DOC#{path}", "sk": "D"}}
    found = [f for f in findings({"Doc": doc}, {}) if f.code == "TW205"]
    assert found and "can reach 3,004 bytes (its literals, encoded values and declared max_length)" in \
        found[0].message
    doc["attributes"]["path"]["max_length"] = 200
    assert "TW205" not in codes({"Doc": doc}, {})


# --- data the table deletes itself ------------------------------------------------------------------


def _session(**created: object) -> dict:
    return {"attributes": {"sessionId": "string", "createdAt": {"type": "timestamp", "format": "epoch_seconds",
                                                                 **created},
                           "expiresAt": {"type": "number"}},
            "key": {"pk": "SESSION#{sessionId}", "sk": "SESSION"}}


@pytest.mark.parametrize("ttl, created, expected", [
    ("createdAt", {}, "error"),  # a creation time: TTL would delete nearly every item
    ("createdAt", {"expiry": True}, None),  # declared: it does hold when the item expires
    ("expiresAt", {}, None),  # the name says so
])
def test_tw501_ttl_on_an_attribute_that_is_not_an_expiry(ttl, created, expected):
    found = codes({"Session": _session(**created)}, {}, table={"name": "test_table", "ttl_attribute": ttl})
    assert found.get("TW501") == expected


def test_tw501_an_expiry_name_declared_otherwise_is_not_an_expiry():
    session = _session()
    session["attributes"]["expiresAt"] = {"type": "number", "expiry": False}
    [finding] = [f for f in findings({"Session": session}, {}, table={"name": "test_table",
                                                                      "ttl_attribute": "expiresAt"})
                 if f.code == "TW501"]
    assert "declared `expiry: false`" in finding.message and finding.path == ("table", "ttl_attribute")


# --- tags ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["set-me", "TODO", "tbd", "ChangeMe", "xxx", "", "Set_Me"])
def test_tw601_a_placeholder_tag_is_an_error_in_production_only(value, write_blueprint, run_cli):
    path = write_blueprint(f"""\
        blueprint: tagged
        version: 1.0.0
        tags: {{owner: team-a, cost-center: "{value}"}}
        table: {{name: tagged_main}}
        entities:
          User:
            attributes: {{userId: string}}
            key: {{pk: "USER#{{userId}}", sk: PROFILE}}
        access_patterns:
          user: {{entity: User, where: {{userId: "="}}}}
        environments: {{dev: {{}}, prod: {{production: true}}}}
        """)
    code, out, _ = run_cli("lint", path, "--env", "dev")
    assert code == 0 and "TW601" not in out
    code, out, _ = run_cli("lint", path, "--env", "prod", "--format", "json")
    assert code == 1
    [finding] = [f for f in json.loads(out)[0]["findings"] if f["code"] == "TW601"]
    assert finding["severity"] == "error" and finding["line"] == 3 and finding["field"] == "tags.cost-center"
    assert finding["message"].startswith(f"tag `cost-center` is {value!r}, a placeholder, in a production")


def test_tw601_a_real_tag_set_in_the_production_overlay_passes(write_blueprint, run_cli):
    path = write_blueprint("""\
        blueprint: tagged
        version: 1.0.0
        tags: {cost-center: set-me}
        table: {name: tagged_main}
        entities:
          User:
            attributes: {userId: string}
            key: {pk: "USER#{userId}", sk: PROFILE}
        access_patterns:
          user: {entity: User, where: {userId: "="}}
        environments: {dev: {}, prod: {production: true, tags: {cost-center: cc-4711}}}
        """)
    code, out, _ = run_cli("lint", path)
    assert code == 0 and "TW601" not in out, out
