"""The simulation as the commands show it: `capacity` and `simulate` agree on a month's cost (an event priced for its
minutes), `simulate --format json` follows its schema and its Markdown draws the chart (mermaid parses it in the slow
tier), scheduled minimums synthesize as scheduled actions Terraform validates, and `review` simulates both sides."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from tablewright.blueprint.traffic import SECONDS_PER_MONTH
from tablewright.capacity.cost import monthly_cost
from tablewright.simulate.stack import simulate_stack
from tests.conftest import ROOT
from tests.support.simulate_support import FLEET, ON_DEMAND_SALE, PROVISIONED, stack_of

SCHEMA = json.loads((ROOT / "schema" / "simulate.schema.json").read_text())


SALE_EVENT = """\
blueprint: shop
version: 1.0.0
region: us-east-1
table: {name: shop, warm_throughput: {read: 12000, write: 12000}}
terraform: {aws_provider: ">= 6.13"}
traffic: {peak_factor: 1}
entities:
  Order:
    attributes: {orderId: string}
    key: {pk: "ORDER#{orderId}", sk: "ORDER"}
    writes: {inserts: 10}
    item_count: 1000
    traffic:
      events: [{name: flash-sale, start: "18:00", duration: 10m, rate: 10000}]
access_patterns:
  order_by_id: {entity: Order, where: {orderId: "="}, rps: 0}
"""


def test_a_10_minute_event_is_priced_for_10_minutes_and_capacity_and_simulate_agree(write_blueprint):
    """One sale a month: 10 writes/s all month plus (10,000 - 10) x 600 s once, at $0.625 per million WRU."""
    stack = stack_of(write_blueprint, SALE_EVENT)
    price = float(stack.capacity.prices.table_class("us-east-1", "standard").on_demand_write_request_unit)
    units = 10 * SECONDS_PER_MONTH + (10_000 - 10) * 600
    line = monthly_cost(stack.design, stack.capacity).line("on-demand write requests")
    assert line.quantity == pytest.approx(units)
    result = simulate_stack(stack.design, stack.capacity)
    assert result.declared.monthly_usd == pytest.approx(units * price, abs=0.01)
    sale = result.declared.monthly_usd - 10 * SECONDS_PER_MONTH * price
    assert sale == pytest.approx(9_990 * 600 * price, abs=0.01)  # $3.75: the sale for its 10 minutes, not a month


def test_capacity_and_simulate_agree_on_steady_traffic(write_blueprint):
    steady = SALE_EVENT.replace("    traffic:\n      events: [{name: flash-sale, start: \"18:00\", duration: 10m, "
                                "rate: 10000}]\n", "")
    for billing in ("on_demand", "provisioned"):
        text = steady if billing == "on_demand" else steady.replace(
            "table: {name: shop, warm_throughput: {read: 12000, write: 12000}}", "table: {name: shop, billing: "
            "provisioned, capacity: {read: {min: 1, max: 100}, write: {min: 1, max: 100}}}")
        stack = stack_of(write_blueprint, text, f"{billing}.yaml")
        cost = monthly_cost(stack.design, stack.capacity)
        throughput = sum(line.monthly or 0 for line in cost.billed if "capacity" in line.item or "requests" in
                         line.item)
        assert simulate_stack(stack.design, stack.capacity).declared.monthly_usd == pytest.approx(throughput,
                                                                                                  abs=0.02)


def test_simulate_json_follows_its_schema_and_markdown_draws_the_chart(write_blueprint):
    path = write_blueprint(FLEET.format(extra=""))
    run = subprocess.run([sys.executable, "main.py", "simulate", str(path), "--format", "json"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    jsonschema.validate(document, SCHEMA)
    [stack] = document["stacks"]
    assert stack["throttled_requests"] > 0 and 0 < stack["throttled_seconds"] < 86_400  # around the peak
    assert {(t["target"], t["direction"]) for t in stack["targets"]} >= {("GSI1", "write"), ("table", "write")}
    markdown = subprocess.run([sys.executable, "main.py", "simulate", str(path), "--format", "markdown"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout
    assert "```mermaid\nxychart-beta" in markdown and "recommendation:" in markdown


SCHEDULED = ("write: {min: 140, max: 1000, scheduled: [{name: month-end, start: \"23:30\", end: \"01:00\", min: 900, "
             "days: [FRI, SAT]}]}")


def test_a_scheduled_minimum_synthesizes_two_scheduled_actions(write_blueprint, tmp_path):
    from tests.synth.test_synth import synth_one

    text = (ROOT / "blueprints" / "crm.yaml").read_text().replace("write: {min: 140, max: 1000}", SCHEDULED)
    config = synth_one(write_blueprint(text), tmp_path / "out")
    actions = config["resource"]["aws_appautoscaling_scheduled_action"]
    assert sorted(actions) == ["crm_write_month_end_raise", "crm_write_month_end_restore"]
    raise_, restore = actions["crm_write_month_end_raise"], actions["crm_write_month_end_restore"]
    # 23:30 to 01:00 runs past midnight: raised Friday and Saturday, restored the next mornings (Saturday, Sunday)
    assert raise_["schedule"] == "cron(30 23 ? * FRI,SAT *)" and restore["schedule"] == "cron(0 1 ? * SAT,SUN *)"
    assert raise_["scalable_target_action"] == {"min_capacity": 900, "max_capacity": 1000}
    assert restore["scalable_target_action"] == {"min_capacity": 140, "max_capacity": 1000}
    assert raise_["resource_id"] == "${aws_appautoscaling_target.crm_write.resource_id}"
    assert raise_["name"] == "prod-crm_main-write-month-end-raise" and raise_["timezone"] == "UTC"


@pytest.mark.terraform
def test_terraform_validate_accepts_scheduled_minimums(write_blueprint, tmp_path):
    from tests.support.terraform_support import terraform_environment, validate
    from tests.synth.test_synth import synth_one

    text = (ROOT / "blueprints" / "crm.yaml").read_text().replace("write: {min: 140, max: 1000}", SCHEDULED)
    synth_one(write_blueprint(text), tmp_path / "out")
    validate(tmp_path / "out" / "stacks" / "crm-prod", terraform_environment(tmp_path))


@pytest.mark.parametrize(("field", "error"), [
    ("min: 5000", "min 5,000 is above max (1,000)"),
    ('start: "01:00"', "`start` and `end` are the same time"),
])
def test_bad_scheduled_minimums_are_refused(write_blueprint, run_cli, field, error):
    text = (ROOT / "blueprints" / "crm.yaml").read_text().replace(
        "write: {min: 140, max: 1000}", SCHEDULED.replace("min: 900", field) if field.startswith("min")
        else SCHEDULED.replace('start: "23:30"', field))
    code, _, err = run_cli("lint", write_blueprint(text))
    assert code == 2 and error in err and "Traceback" not in err


def test_a_review_shows_both_sides_simulated_and_warns_when_a_change_introduces_throttling(write_blueprint):
    from tablewright.review.review import build_review

    base = write_blueprint(FLEET.format(extra="").replace("  devices_by_status:", "  device:\n    entity: Device\n"
                                                           "    where: {deviceId: \"=\"}\n  devices_by_status:")
                           .split("  devices_by_status:")[0], "base.yaml")
    head = write_blueprint(FLEET.format(extra=""), "head.yaml")
    [stack] = build_review(str(base), str(head)).stacks
    assert stack.simulated_before.throttled_requests == 0
    assert stack.simulated_after.throttled_requests > 0
    [warning] = [w for w in stack.warnings if "throttles requests under the declared traffic" in w]
    assert "(before: 0)" in warning
    [same] = build_review(str(head), str(head)).stacks
    assert not [w for w in same.warnings if "throttles requests" in w]


def test_the_review_markdown_shows_the_simulated_day_when_a_side_throttles(write_blueprint):
    from tablewright.report.review import render_markdown
    from tablewright.review.review import build_review

    head = write_blueprint(FLEET.format(extra=""), "head.yaml")
    markdown = render_markdown(build_review(str(head), str(head)))
    assert "Simulated day of the declared traffic: before " in markdown and "throttled requests in" in markdown


@pytest.mark.terraform
def test_mermaid_parses_the_simulation_charts(write_blueprint):
    from tablewright.report.simulate import render_markdown, simulated
    from tests.report.test_diagrams import mermaid, parse

    stacks = [stack_of(write_blueprint, FLEET.format(extra=""), "fleet.yaml"),
              stack_of(write_blueprint, ON_DEMAND_SALE.replace("table: {name: shop}", PROVISIONED), "sale.yaml")]
    charts = mermaid(render_markdown(simulated(stacks)))
    assert len(charts) == 2 and all(chart.startswith("xychart-beta") for chart in charts)
    code, results = parse(charts)
    assert code == 0, results
