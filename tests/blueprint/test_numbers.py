"""Numbers you can trust: one resolved capacity policy read by every stage, the blueprint language for
what the figures need (writes by kind, optional attributes, document types, an order's attribute), and
the lint rules built on them. Hand arithmetic for the figures themselves is in tests/capacity/test_capacity.py."""

from __future__ import annotations

import json
import textwrap

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.stacks.stack import build_stack
from tablewright.synth.synth import synthesize
from tests.support.terraform_support import terraform_environment, validate

ORDERS = textwrap.dedent("""\
    blueprint: shop
    version: 1.0.0
    table:
      name: shop_main
      billing: provisioned
      capacity: {read: {min: 50, max: 1000}, write: {min: 50, max: 1000}, target_utilization: 70}
    entities:
      Order:
        attributes:
          orderId: string
          status: {type: string, values: [NEW, PAID, SHIPPED]}
          placedAt: timestamp
        key: {pk: "ORDER#{orderId}", sk: ORDER}
        item_bytes: 500
        writes: {inserts: 100}
    access_patterns:
      order: {entity: Order, where: {orderId: "="}, rps: 10}
      by_status: {entity: Order, where: {status: "="}, order_by: placedAt, limit: 10, rps: 10,
                  returns: [orderId]}
    indexes:
      GSI1:
        capacity: {read: {min: 10, max: 100}, write: {min: 10, max: 200}, target_utilization: 25}
    """)


def stack_of(write_blueprint, text: str, name: str = "blueprint.yaml"):
    return build_stack(load_blueprint(write_blueprint(text, name)))


def test_a_per_index_target_is_read_by_autoscaling_capacity_lint_and_alarms(write_blueprint, tmp_path):
    stack = stack_of(write_blueprint, ORDERS)
    assert (stack.design.capacity["table"].target, stack.design.capacity["GSI1"].target) == (70, 25)
    # GSI1 writes: 100 inserts/s x 1 WCU = 100 WCU/s; at a 25% target the minimum is 400 and the peak (x3) 1,200.
    assert stack.capacity.load("GSI1").suggested_write == (400, 1200)
    [too_low] = [f.finding for f in stack.lint.findings if f.finding.code == "TW308"]
    assert "GSI1: write capacity max 200 is below the estimated peak 1,200" in too_low.message
    assert "at 25% target" in too_low.message
    [written] = synthesize([stack], tmp_path / "out")
    config = json.loads(written.read_text())["resource"]
    policies = config["aws_appautoscaling_policy"]
    targets = {name: p["target_tracking_scaling_policy_configuration"]["target_value"] for name, p in policies.items()}
    assert targets == {"shop_read": 70, "shop_write": 70, "shop_gsi1_read": 25, "shop_gsi1_write": 25}
    alarm = config["aws_cloudwatch_metric_alarm"]["shop_gsi1_write_utilization"]["alarm_description"]
    assert "while autoscaling targets 25%" in alarm


def test_an_index_without_its_own_target_keeps_the_tables(write_blueprint):
    text = ORDERS.replace(", target_utilization: 25}", "}")
    text = text.replace("target_utilization: 70}", "target_utilization: 40}")
    stack = stack_of(write_blueprint, text)
    assert stack.design.capacity["GSI1"].target == 40 and stack.design.capacity["GSI1"].read == (10, 100)


@pytest.mark.terraform
def test_the_per_index_target_passes_terraform_validate(write_blueprint, tmp_path):
    [written] = synthesize([stack_of(write_blueprint, ORDERS)], tmp_path / "out")
    validate(written.parent, terraform_environment(tmp_path))


def test_tw310_flags_an_autoscaling_minimum_under_the_average_load(write_blueprint):
    text = ORDERS.replace("write: {min: 10, max: 200}, target_utilization: 25",
                          "write: {min: 60, max: 2000}, target_utilization: 25")
    [finding] = [f.finding for f in stack_of(write_blueprint, text).lint.findings
                 if f.finding.code == "TW310" and f.finding.message.startswith("GSI1")]
    assert finding.message.startswith("GSI1: write capacity min 60 is below the average load of 100 units/s")
    assert "back-pressures the table's writes" in finding.message and "min: 400" in finding.fix
    assert finding.path == ("indexes", "GSI1", "capacity", "write", "min")


def test_tw311_flags_a_query_that_reads_whole_large_collections(write_blueprint):
    text = ORDERS.replace("    item_bytes: 500", "    item_bytes: 500\n    item_count: 3000000").replace(
        "by_status: {entity: Order, where: {status: \"=\"}, order_by: placedAt, limit: 10,",
        "by_status: {entity: Order, where: {status: \"=\"}, order_by: placedAt,")
    [finding] = [f.finding for f in stack_of(write_blueprint, text).lint.findings if f.finding.code == "TW311"]
    # 3,000,000 orders over 3 statuses = 1,000,000 per call, far over one 1 MB page.
    assert finding.message.startswith("by_status reads whole collections of about 1,000,000 items")


def test_tw101_counts_every_shard_of_a_sharded_key():
    from tablewright.design.designer import design
    from tests.support.design_helpers import blueprint
    from tests.support.lint_support import lint

    events = {"attributes": {"kind": {"type": "string", "values": ["A", "B", "C"]}, "at": "timestamp"},
              "key": {"pk": "EVENT#{kind}", "sk": "{at}", "shards": 5}, "writes_per_second": 1}
    found, _ = lint(design(blueprint({"Event": events}, {})))
    [note] = [f for f in found if f.code == "TW101"]
    assert "takes about 15 value(s)" in note.message and "x 5 shards" in note.message


# --- the blueprint language the figures need -------------------------------------------------------


def test_order_without_an_attribute_takes_the_only_timestamp_or_asks(write_blueprint, run_cli):
    one = ORDERS.replace("by_status: {entity: Order, where: {status: \"=\"}, order_by: placedAt,",
                         "by_status: {entity: Order, where: {status: \"=\"}, order: desc,")
    stack = stack_of(write_blueprint, one)
    assert stack.design.blueprint.access_patterns["by_status"].order_by == "placedAt"
    assert stack.design.plan("by_status").order_attributes[0] == "placedAt"
    two = one.replace("placedAt: timestamp", "placedAt: timestamp\n      paidAt: timestamp")
    code, _, stderr = run_cli("lint", write_blueprint(two, "two.yaml"))
    assert code == 2 and "several timestamps (paidAt, placedAt)" in stderr
    assert "fix: add `order_by:` with one of paidAt, placedAt" in stderr


@pytest.mark.parametrize("kind", ["map", "list", "string_set", "number_set", "binary"])
def test_document_types_are_stored_and_returned_but_never_keys_or_conditions(kind, write_blueprint, run_cli):
    text = ORDERS.replace("placedAt: timestamp", f"placedAt: timestamp\n      extra: {kind}")
    stack = stack_of(write_blueprint, text.replace("returns: [orderId]", "returns: [orderId, extra]"))
    assert "extra" in stack.design.index("GSI1").projection.attributes
    keyed = text.replace('key: {pk: "ORDER#{orderId}", sk: ORDER}', 'key: {pk: "ORDER#{orderId}", sk: "{extra}"}')
    code, _, stderr = run_cli("lint", write_blueprint(keyed, "keyed.yaml"))
    assert code == 2 and f"a {kind}: keys hold strings, numbers, timestamps, dates and booleans" in stderr
    filtered = text.replace("returns: [orderId]}", "returns: [orderId], filter: {extra: \"=\"}}")
    assert filtered != text
    code, _, stderr = run_cli("lint", write_blueprint(filtered, "filtered.yaml"))
    assert code == 2 and f"`extra` is a {kind}: conditions compare" in stderr


def test_an_optional_attribute_cannot_be_in_the_table_key(write_blueprint, run_cli):
    text = ORDERS.replace("orderId: string", "orderId: {type: string, optional: true}")
    code, _, stderr = run_cli("lint", write_blueprint(text))
    assert code == 2 and "which is optional, but every item has a table key" in stderr and "[E301]" in stderr


def test_an_optional_attribute_makes_a_sparse_index_with_its_share(write_blueprint):
    text = ORDERS.replace("status: {type: string, values: [NEW, PAID, SHIPPED]}",
                          "status: {type: string, values: [NEW, PAID, SHIPPED], present: 0.1}")
    stack = stack_of(write_blueprint, text)
    # 100 inserts/s, but only 10% of the orders carry `status`: 10 WCU/s on GSI1.
    assert stack.capacity.load("GSI1").write_units_per_second == 10.0
    from tablewright.report.explain import render_text

    assert "sparse: 10% of Order items (those that carry its key)" in render_text(stack, [])


def test_writes_and_writes_per_second_are_one_or_the_other(write_blueprint, run_cli):
    text = ORDERS.replace("    writes: {inserts: 100}", "    writes: {inserts: 100}\n    writes_per_second: 5")
    code, _, stderr = run_cli("lint", write_blueprint(text))
    assert code == 2 and "both `writes_per_second` and `writes` are set" in stderr
    unknown = ORDERS.replace("writes: {inserts: 100}", "writes: {updates: 5, changes: [colour]}")
    code, _, stderr = run_cli("lint", write_blueprint(unknown, "unknown.yaml"))
    assert code == 2 and "`writes.changes` names `colour`" in stderr


def test_lint_json_and_sarif_stay_machine_readable_for_a_broken_blueprint(write_blueprint, run_cli):
    path = write_blueprint(ORDERS.replace("billing: provisioned", "billing: reserved"))
    code, out, stderr = run_cli("lint", path, "--format", "json")
    assert code == 2 and "error: " in stderr
    [result] = json.loads(out)
    [finding] = result["findings"]
    assert (finding["code"], finding["severity"], finding["line"], finding["field"]) == (
        "E203", "error", 5, "table.billing")
    code, out, _ = run_cli("lint", path, "--format", "sarif")
    run = json.loads(out)["runs"][0]
    [sarif] = run["results"]
    assert sarif["ruleId"] == "E203" and run["tool"]["driver"]["rules"][sarif["ruleIndex"]]["id"] == "E203"
