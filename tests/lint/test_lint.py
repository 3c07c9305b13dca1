"""Lint: each rule fires on a blueprint that has the problem and stays silent on one that does not."""

from __future__ import annotations

import json
import textwrap

import pytest

from tablewright import cli
from tablewright.blueprint import regex
from tablewright.blueprint.load import load_blueprint, load_blueprints
from tablewright.capacity.estimate import estimate
from tablewright.design.designer import design
from tablewright.lint.engine import apply_ignore, lint_design
from tablewright.lint.findings import RULES
from tablewright.stacks.stack import build_stacks
from tablewright.verify.verify import verify_stacks
from tests.conftest import BUNDLED
from tests.support.design_helpers import OVERSIZED_ITEM, blueprint


def lint(table):
    """Findings of a design, `lint.ignore` applied, and what it silenced."""
    return apply_ignore(lint_design(table, estimate(table)), table.blueprint.lint.ignore)


def findings(entities, patterns, **extra):
    found, _ = lint(design(blueprint(entities, patterns, **extra)))
    return found


def codes(entities, patterns, **extra) -> dict[str, str]:
    """code -> severity of the most severe finding with that code."""
    result: dict[str, str] = {}
    for f in findings(entities, patterns, **extra):
        if f.code not in result or f.severity == "error" or (f.severity == "warning" and result[f.code] == "info"):
            result[f.code] = f.severity
    return result


USER = {"attributes": {"userId": "string", "name": "string"}, "key": {"pk": "USER#{userId}", "sk": "PROFILE"}}
GET_USER = {"user": {"entity": "User", "where": {"userId": "="}}}


def order(writes: float = 10, size: int = 500, status: dict | None = None, **extra) -> dict:
    attributes = {"orderId": "string", "customerId": "string", "placedAt": "timestamp",
                  "status": status or {"type": "string", "values": ["PLACED", "PAID", "SHIPPED"]}}
    return {"attributes": attributes, "key": {"pk": "ORDER#{orderId}", "sk": "DETAILS"},
            "writes_per_second": writes, "item_bytes": size, **extra}


BY_STATUS = {"by_status": {"entity": "Order", "where": {"status": "="}, "order_by": "placedAt", "order": "desc",
                           "limit": 20, "returns": ["orderId", "placedAt"]}}


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


# --- limits and costs --------------------------------------------------------------------------------


def test_tw301_more_than_20_gsis():
    attributes = {f"a{n}": "string" for n in range(21)} | {"id": "string"}
    thing = {"attributes": attributes, "key": {"pk": "THING#{id}", "sk": "T"}}
    patterns = {f"by_a{n}": {"entity": "Thing", "where": {f"a{n}": "="}, "returns": ["id"]} for n in range(21)}
    assert codes({"Thing": thing}, patterns)["TW301"] == "error"
    del patterns["by_a20"]
    assert "TW301" not in codes({"Thing": thing}, patterns)


def test_tw302_more_than_100_projected_attributes():
    attributes = {f"f{n}": "string" for n in range(101)} | {"id": "string", "kindOf": "string"}
    thing = {"attributes": attributes, "key": {"pk": "THING#{id}", "sk": "T"}}
    pattern = {"by_kind": {"entity": "Thing", "where": {"kindOf": "="}}}
    assert codes({"Thing": thing}, pattern)["TW302"] == "error"
    pattern["by_kind"]["returns"] = ["f1", "f2"]
    assert "TW302" not in codes({"Thing": thing}, pattern)


def test_tw303_item_over_400_kb():
    assert codes({"User": {**USER, "item_bytes": 500_000}}, GET_USER)["TW303"] == "error"
    assert "TW303" not in codes({"User": {**USER, "item_bytes": 400 * 1024}}, GET_USER)


def test_tw304_all_projection_with_its_cost():
    found = [f for f in findings({"Order": order(writes=100, size=3000)}, BY_STATUS, region="us-east-1",
                                 indexes={"GSI1": {"projection": "all"}}) if f.code == "TW304"]
    # An on-demand table (the default) pays per write request unit.
    assert found and "write request units/s more" in found[0].message
    assert "/month on demand in us-east-1" in found[0].message
    assert "TW304" not in codes({"Order": order()}, BY_STATUS)
    # Without prices for the region (or without a region) the finding stays, its cost is not guessed.
    for region, words in ((None, "no prices for a blueprint without `region`"),
                          ("eu-west-1", "no prices for eu-west-1")):
        extra = {"region": region} if region else {}
        [unpriced] = [f for f in findings({"Order": order(writes=100, size=3000)}, BY_STATUS, **extra,
                                          indexes={"GSI1": {"projection": "all"}}) if f.code == "TW304"]
        assert words in unpriced.message and "$" not in unpriced.message


PROVISIONED = {"billing": "provisioned",
               "capacity": {"target_utilization": 70, "read": {"min": 5, "max": 100}, "write": {"min": 5, "max": 100}}}


def _tw304_dollars(index: dict) -> tuple[float, str]:
    [found] = [f for f in findings({"Order": order(writes=100, size=3000)}, BY_STATUS, region="us-east-1",
                                   table={"name": "test_table", **PROVISIONED},
                                   indexes={"GSI1": {"projection": "all", **index}}) if f.code == "TW304"]
    return float(found.message.split("~$")[1].split("/month")[0].replace(",", "")), found.message


def test_tw304_prices_the_index_at_its_own_write_target():
    """The index's resolved policy (its own capacity and target, a direction's own target first), not the
    table's `target_utilization`: half the target, twice the provisioned capacity to pay for."""
    at_table, message = _tw304_dollars({})
    assert "WCU/s more" in message and "provisioned at its 70% write target in us-east-1" in message
    own = {"capacity": {"target_utilization": 35, "read": {"min": 5, "max": 100}, "write": {"min": 5, "max": 100}}}
    at_index, message = _tw304_dollars(own)
    assert "at its 35% write target" in message and at_index == pytest.approx(2 * at_table, rel=0.01)
    writes_only = {"capacity": {"read": {"min": 5, "max": 100},
                                "write": {"min": 5, "max": 100, "target_utilization": 50}}}
    at_write_target, message = _tw304_dollars(writes_only)
    assert "at its 50% write target" in message and at_write_target == pytest.approx(1.4 * at_table, rel=0.01)


def test_tw308_names_the_target_the_suggestion_uses():
    """The index's capacity sets no target, so it inherits the table's (60%); its writes set their own (50%)."""
    table = {"name": "test_table", "billing": "provisioned", "capacity": {
        "target_utilization": 60, "read": {"min": 5, "max": 100}, "write": {"min": 5, "max": 100}}}
    index = {"capacity": {"read": {"min": 1, "max": 2}, "write": {"min": 1, "max": 2, "target_utilization": 50}}}
    found = {f.path[3]: f.message for f in findings({"Order": order(writes=100, size=3000)}, BY_STATUS, table=table,
                                                    indexes={"GSI1": index})
             if f.code == "TW308" and f.path[:3] == ("indexes", "GSI1", "capacity")}
    assert "at 60% target" in found["read"] and "at 50% target" in found["write"], found


def test_tw305_accepted_scan_with_its_cost():
    scan = {"export": {"entity": "User", "where": {"name": "begins_with"}, "scan": "allowed", "reason": "nightly"}}
    found = [f for f in findings({"User": {**USER, "item_count": 1_000_000, "item_bytes": 1000}}, scan)
             if f.code == "TW305"]
    assert found and "1,000,000 items" in found[0].message and "accepted because: nightly" in found[0].message
    assert "TW305" not in codes({"User": USER}, GET_USER)


def test_tw306_filter_does_not_reduce_cost():
    pattern = {"named": {"entity": "User", "where": {"userId": "="}, "filter": {"name": "begins_with"}}}
    assert codes({"User": USER}, pattern)["TW306"] == "warning"
    assert "TW306" not in codes({"User": USER}, GET_USER)


def test_tw307_item_collection_limit_with_a_local_index():
    log = {"attributes": {"app": {"type": "string", "values": ["A", "B"]}, "at": "timestamp", "level": "string"},
           "key": {"pk": "APP#{app}", "sk": "{at}"}, "item_count": 50_000_000, "item_bytes": 1000,
           "index_keys": {"LSI1": {"pk": "APP#{app}", "sk": "{level}"}}}
    patterns = {"by_level": {"entity": "Log", "where": {"app": "=", "level": "="}, "index": "LSI1"}}
    assert codes({"Log": log}, patterns, indexes={"LSI1": {"type": "local"}})["TW307"] == "error"
    log["item_count"] = 1000
    assert "TW307" not in codes({"Log": log}, patterns, indexes={"LSI1": {"type": "local"}})


def test_tw308_autoscaling_max_below_the_peak():
    busy = {**USER, "writes_per_second": 500}
    table = {"name": "t_table", "billing": "provisioned",
             "capacity": {"read": {"min": 1, "max": 100}, "write": {"min": 1, "max": 100}}}
    found = [f for f in findings({"User": busy}, GET_USER, table=table) if f.code == "TW308"]
    assert found and "write capacity max 100 is below the estimated peak 2,143" in found[0].message
    table["capacity"]["write"]["max"] = 3000
    assert "TW308" not in codes({"User": busy}, GET_USER, table=table)


# --- engine, CLI, formats ---------------------------------------------------------------------------


def test_ignored_codes_are_counted_not_shown():
    ticket = {"attributes": {"customerId": "string", "status": {"type": "string", "values": ["OPEN", "DONE"]}},
              "key": {"pk": "CUSTOMER#{customerId}", "sk": "TICKET#{status}"}}
    found, suppressed = lint(design(blueprint({"Ticket": ticket}, {}, lint={"ignore": {"TW201": "legacy"}})))
    assert "TW201" not in {f.code for f in found}
    assert suppressed == (("TW201", "legacy", 1),)


def test_bundled_blueprints_have_no_errors_or_warnings(run_cli):
    code, out, _ = run_cli("lint", "--strict")
    assert code == 0, out
    for stack in ("crm-dev", "crm-prod", "orders-dev", "orders-prod"):
        assert f"{stack}: 0 error(s), 0 warning(s)" in out


def test_cli_exit_codes_and_strict(write_blueprint, run_cli):
    path = write_blueprint(textwrap.dedent("""\
        blueprint: traps
        version: 1.0.0
        table: {name: traps_main}
        entities:
          Post:
            attributes: {title: string, at: timestamp}
            key: {pk: "POST", sk: "{title}#{at}"}
        """))
    code, out, _ = run_cli("lint", path)
    assert code == 0 and "warning TW203" in out and f"{path}:6:" in out
    code, _, _ = run_cli("lint", path, "--strict")
    assert code == 1


def test_sarif_output(run_cli, write_blueprint):
    path = write_blueprint(textwrap.dedent("""\
        blueprint: traps
        version: 1.0.0
        table: {name: traps_main}
        entities:
          Score:
            attributes: {gameId: string, points: number}
            key: {pk: "GAME#{gameId}", sk: "S#{points}"}
        access_patterns:
          top: {entity: Score, where: {gameId: "="}, order: desc, order_by: points, limit: 3}
        """))
    code, out, _ = run_cli("lint", path, "--format", "sarif")
    assert code == 1
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    run = sarif["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == set(RULES)
    [result] = [r for r in run["results"] if r["ruleId"] == "TW202"]
    assert result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 6  # the attribute `points`, which needs `width:`
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "TW202"


def test_synth_refuses_lint_errors_unless_allowed(write_blueprint, run_cli, tmp_path, monkeypatch):
    path = write_blueprint(OVERSIZED_ITEM)
    code, _, stderr = run_cli("synth", path, "--out", tmp_path / "out")
    assert code == 2 and "lint TW303" in stderr and ":8:" in stderr
    assert not (tmp_path / "out").exists()
    code, _, _ = run_cli("synth", path, "--out", tmp_path / "out", "--allow-lint-errors")
    assert code == 0
    # `cdktf synth` (no arguments: the blueprints cdktf.json lists) refuses them as `synth` does.
    config = tmp_path / "cdktf.json"
    config.write_text(json.dumps({"context": {"blueprints": [str(path)]}}))
    monkeypatch.setattr(cli.project, "CDKTF_JSON", config)
    monkeypatch.setenv("CDKTF_OUTDIR", str(tmp_path / "app-out"))
    code, _, stderr = run_cli()
    assert code == 2 and "lint TW303" in stderr and not (tmp_path / "app-out").exists()


@pytest.mark.parametrize("config", ['{"context": {"blueprints": "blueprints/orders.yaml"}}',
                                    '{"context": {"blueprints": []}}', '{"context": {"blueprints": [7]}}'])
def test_a_broken_cdktf_json_is_one_error_with_the_fix(config, tmp_path, monkeypatch, run_cli):
    (tmp_path / "cdktf.json").write_text(config)
    monkeypatch.setattr(cli.project, "CDKTF_JSON", tmp_path / "cdktf.json")
    code, _, stderr = run_cli()
    assert code == 2 and "cdktf.json: `context.blueprints` must list the blueprint files" in stderr, stderr
    assert "[E605]" in stderr and "fix: " in stderr


def test_cdktf_json_that_is_not_json_is_one_error(tmp_path, monkeypatch, run_cli):
    (tmp_path / "cdktf.json").write_text('{"context": {"blueprints": ["a.yaml",]}}')
    monkeypatch.setattr(cli.project, "CDKTF_JSON", tmp_path / "cdktf.json")
    code, _, stderr = run_cli()
    assert code == 2 and "cdktf.json is not valid JSON" in stderr and "[E605]" in stderr, stderr


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_bundled_findings_are_the_expected_notes(path):
    for loaded in load_blueprints(path):
        found, _ = lint(design(loaded.blueprint))
        assert all(f.severity == "info" for f in found)


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


def test_patterns_match_whole_values_in_linear_time():
    assert regex.fullmatch("[a-z]+", "abc") and not regex.fullmatch("[a-z]+", "a#b")
    assert not regex.fullmatch("a|b", "ab")  # the alternation stays inside the anchors
    assert not regex.fullmatch("(?:.?){3000}X", "a#b")  # hours in Python's `re`; here a linear scan
    with pytest.raises(regex.PatternError, match="look-around"):
        regex.check("(?=a)b")
    with pytest.raises(regex.PatternError, match="at most 256"):
        regex.check("a" * 257)


ON_DEMAND = """\
blueprint: meters
version: 1.0.0
region: us-east-1
table: {{name: meters, billing: on_demand, max_throughput: {table_max}}}
traffic: {{peak_factor: 2}}
entities:
  Meter:
    attributes: {{meterId: string, reading: number}}
    key: {{pk: "METER#{{meterId}}", sk: LATEST}}
    item_bytes: 1000
    writes_per_second: 40
access_patterns:
  meter: {{entity: Meter, where: {{meterId: "="}}, rps: 100}}
"""


@pytest.mark.parametrize("table_max, fired", [
    # GetItem of 1,000 bytes, eventually consistent: 0.5 read units x 100/s = 50, peak x2 = 100.
    # A put of 1,000 bytes: 1 write unit x 40/s = 40, peak x2 = 80.
    ("{read: 99, write: 80}",
     ["the table: on-demand read maximum 99 request units/s is below the estimated peak 100"]),
    ("{read: 100, write: 79}",
     ["the table: on-demand write maximum 79 request units/s is below the estimated peak 80"]),
    ("{read: 100, write: 80}", []),
    ("suggested", []),
    ("unlimited", []),
])
def test_tw313_an_on_demand_maximum_below_the_peak(table_max, fired, write_blueprint):
    [stack] = build_stacks(load_blueprints(write_blueprint(ON_DEMAND.format(table_max=table_max))))
    found = [f"{f.finding.message}" for f in stack.lint.findings if f.finding.code == "TW313"]
    assert [message.split(" (average")[0] for message in found] == fired
    assert all(f.location is not None and f.location.line == 4 for f in stack.lint.findings
               if f.finding.code == "TW313")


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
