"""Service quotas as first-class limits (issue 39, item 3): a fix that sets a capacity above the table-level quota
(`simulation.table_quota`, 40,000 units/s by default) or, with the table's GSIs, above the account-level one
(`simulation.account_quota`, 80,000) says so, names the figure to request, and offers splitting the workload or a
queue; the simulator serves no more than the quota, so such a fix is never "removes the throttling"."""

from __future__ import annotations

import math

from tablewright.blueprint.load import load_blueprint
from tablewright.lint.engine import lint_design
from tablewright.stacks.stack import build_stack

SURGE = """\
blueprint: sale
version: 1.0.0
region: us-east-1
table:
  name: sale
  billing: provisioned
  capacity: {{read: {{min: 5, max: 100}}, write: {{min: 5, max: 100000}}}}
traffic: {{peak_factor: 1}}
{simulation}entities:
  Order:
    attributes: {{orderId: string}}
    key: {{pk: "ORDER#{{orderId}}", sk: "ORDER"}}
    writes: {{inserts: 10}}
    traffic:
      events: [{{name: drop, start: "18:00", duration: 30m, rate: 60000, every: day}}]
access_patterns:
  order_by_id: {{entity: Order, where: {{orderId: "="}}, rps: 1}}
"""
STEADY = """\
blueprint: feed
version: 1.0.0
region: us-east-1
table:
  name: feed
{billing}traffic: {{peak_factor: 2}}
entities:
  Post:
    attributes: {{postId: string, author: string}}
    key: {{pk: "POST#{{postId}}", sk: "POST"}}
    writes: {{inserts: {writes}}}
access_patterns:
  post_by_id: {{entity: Post, where: {{postId: "="}}, rps: 1}}
  posts_of_author: {{entity: Post, where: {{author: "="}}, rps: 1, limit: 10}}
"""
PROVISIONED = "  billing: provisioned\n  capacity: {read: {min: 5, max: 100}, write: {min: 5, max: 40000}}\n"
ALTERNATIVES = ("request a quota increase", "split the workload across tables", "through a queue")


def _findings(write_blueprint, text: str, code: str):
    stack = build_stack(load_blueprint(write_blueprint(text)))
    return [f for f in lint_design(stack.design, stack.capacity) if f.code == code]


def test_an_event_beyond_the_table_quota_names_the_increase_and_the_alternatives(write_blueprint):
    [finding] = _findings(write_blueprint, SURGE.format(simulation=""), "TW105")
    needed = math.ceil(60_000 / 0.7)  # the surge at the 70% target: 85,715
    assert f"min: {needed}}}` to `table.capacity.write.scheduled`" in finding.fix
    # the simulator serves the 40,000 quota: 20,000 writes/s over for 1,800 s, less the 300 s of burst capacity
    # the raised minimum banked before the event (300 x 40,000)
    leaves = 20_000 * 1_800 - 300 * 40_000
    assert f"leaves {leaves:,} of" in finding.fix and "removes the throttling" not in finding.fix
    assert "85,715 is above the 40,000 units/s table-level quota" in finding.fix
    assert "table-level write throughput to at least 85,715" in finding.fix
    # the table alone needs more than the account's 80,000 in the region
    assert "account-level write throughput to at least 85,715 plus what the region's other tables hold" in finding.fix
    assert all(words in finding.fix for words in ALTERNATIVES)


def test_with_the_increase_declared_the_same_fix_simulated_removes_the_throttling(write_blueprint):
    raised = SURGE.format(simulation="simulation: {table_quota: 100000, account_quota: 200000}\n")
    [finding] = _findings(write_blueprint, raised, "TW105")
    scheduled = finding.fix.split("; or ")[0]
    assert "min: 85715}" in scheduled and "removes the throttling" in scheduled
    assert "quota" not in finding.fix


def test_autoscaling_maxima_beyond_the_quotas_say_which_and_how_much(write_blueprint):
    text = STEADY.format(billing=PROVISIONED, writes=20_000)
    findings = _findings(write_blueprint, text, "TW308")
    peak = math.ceil(20_000 * 2 / 0.7)  # 20,000 writes/s at a peak factor of 2, at the 70% target
    assert peak == 57_143 and {f.path[:2] for f in findings} == {("table", "capacity")}
    assert len(findings) == 2  # the table and GSI1 (sharing the table's capacity), each at 57,143
    for finding in findings:
        assert f"max: {peak}}}" in finding.fix
        assert f"table-level write throughput to at least {peak:,}" in finding.fix
        assert f"account-level write throughput to at least {2 * peak:,}" in finding.fix  # 114,286 > 80,000
        assert all(words in finding.fix for words in ALTERNATIVES)


def test_within_the_quotas_nothing_is_added(write_blueprint):
    [finding, *_] = _findings(write_blueprint, STEADY.format(billing=PROVISIONED.replace("40000", "100"),
                                                             writes=1_000), "TW308")
    assert "quota" not in finding.fix


def test_an_on_demand_maximum_beyond_the_table_quota_says_so(write_blueprint):
    text = STEADY.format(billing="  max_throughput: {read: 1000, write: 1000}\n", writes=30_000)
    findings = _findings(write_blueprint, text, "TW313")
    assert findings
    for finding in findings:
        assert "set `max_throughput: {write: 60000}`" in finding.fix  # 30,000 x 2
        assert "table-level write throughput to at least 60,000" in finding.fix
        assert "account-level" not in finding.fix  # it counts provisioned capacity only
        assert all(words in finding.fix for words in ALTERNATIVES)


def test_simulate_says_when_no_capacity_within_the_quota_serves_the_busiest_second(write_blueprint, run_cli):
    _, out, _ = run_cli("simulate", write_blueprint(SURGE.format(simulation="")))
    text = " ".join(out.split())
    # 60,000 writes of 1 WCU a second, over the 40,000 a table serves in either mode
    assert ("both modes throttle" in text and "the table asks 60,000 write units/s, above the 40,000 table-level "
            "quota (simulation.table_quota): request a quota increase" in text)


def test_capacity_names_the_suggested_maxima_above_the_quota(write_blueprint, run_cli):
    _, out, _ = run_cli("capacity", write_blueprint(STEADY.format(billing=PROVISIONED, writes=20_000)))
    text = " ".join(out.split())
    # ceil(20,000 x 2 / 0.7) = 57,143 on the table and on GSI1; reads stay far below
    assert ("Above the table-level throughput quota of 40,000 units/s (`simulation.table_quota`): table write 57,143, "
            "GSI1 write 57,143: request a quota increase" in text)


def test_autoscaling_minima_beyond_the_account_quota_together_say_so(write_blueprint):
    # 30,000 inserts/s of 1 WCU, on the table and on GSI1 (its entry, 1 WCU): each averages 30,000 WCU/s, each
    # suggested minimum ceil(30,000 / 0.7) = 42,858; together 85,716, above the account's 80,000.
    findings = _findings(write_blueprint, STEADY.format(billing=PROVISIONED, writes=30_000), "TW310")
    writes = [f for f in findings if "write capacity min" in f.message]
    assert len(writes) == 2
    for finding in writes:
        assert "set `write: {min: 42858, ...}`" in finding.fix
        assert f"account-level write throughput to at least {2 * math.ceil(30_000 / 0.7):,}" in finding.fix
