"""`calibrate --insights`: Contributor Insights reports (`aws cloudwatch get-insight-rule-report`) matched to the key
templates of the bundled orders blueprint: a key hotter than declared, with the `hot_key_share` that would declare
it; a throttled key; a key no template matches. Bad reports are refused, and a key value reaches the terminal without
its control characters. The declared rates: tests/calibrate/test_calibrate.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.calibrate_support import (
    ORDERS,
    TABLE,
    as_declared,
    insight_report,
)


def test_a_hot_key_found_by_contributor_insights(run_cli, tmp_path):
    # GSI1 serves reads 10 x 1.5 (orders_with_product, OrderItem) + 150 x 2 (user_orders_by_date, Order) units/s
    # and writes 30 (Order) + 90 (OrderItem). An accessed-keys rule counts 3 x write units + read units
    # (contributorinsights_HowItWorks.html): 315 + 3 x 120 = 675, of which `ORDER_ITEM#{productId}` (OrderItem)
    # takes 15 + 3 x 90 = 285, spread over productIds as declared (an identifier). Observed: one product takes 15 %
    # of GSI1's accesses; the hot_key_share that declares it is 0.15 / (285 / 675). (Units counted alike, 105 of
    # 435, gave 0.62.)
    insights = tmp_path / "insights"
    files = [
        insight_report(insights, f"DynamoDBContributorInsights-PKC-{TABLE}-GSI1-1764000000000",
                       {"ORDER_ITEM#p-42": 15_000, "ORDER_ITEM#p-7": 2_000, "ORDER#u-1": 500, "GARBAGE": 100},
                       100_000),
        insight_report(insights, f"DynamoDBContributorInsights-PKT-{TABLE}-1764000000000", {"ORDER#o-1": 120}, 120),
    ]
    code, out, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *as_declared(tmp_path),
                             "--insights", *files, "--format", "json")
    assert code == 1, err
    keys = {key["key"]: key for key in json.loads(out)["keys"]}
    hot = keys["ORDER_ITEM#p-42"]
    assert (hot["template"], hot["entities"], hot["verdict"]) == ("ORDER_ITEM#{productId}", ["OrderItem"],
                                                                    "hotter than declared")
    assert hot["observed_share"] == 0.15 and hot["declared_share"] == 0
    assert hot["change"]["field"] == "entities.OrderItem.attributes.productId.hot_key_share"
    assert hot["change"]["suggested"] == round(0.15 / (285 / 675), 2) == 0.36
    line = Path(ORDERS).read_text().splitlines()[hot["change"]["line"] - 1]
    assert "productId" in line
    assert "ORDER_ITEM#p-7" not in keys  # the template's busiest value only
    assert keys["ORDER#u-1"]["verdict"] == "as declared"  # 0.5 %: under 1 % of the index is not a hot key
    assert keys["GARBAGE"]["verdict"] == "matches no key template"
    throttled = keys["ORDER#o-1"]
    assert (throttled["verdict"], throttled["throttled"], throttled["template"]) == ("throttled", 120,
                                                                                    "ORDER#{orderId}")
    assert throttled["entities"] == ["Order", "OrderItem"]
    code, out, _ = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *as_declared(tmp_path),
                           "--insights", *files)
    assert "`ORDER#o-1` (ORDER#{orderId}) throttled: 120 throttle events" in " ".join(out.split())


@pytest.mark.parametrize(("name", "content", "expected"), [
    ("DynamoDBContributorInsights-PKC-other-table-1764000000000", "{}", "no table or GSI of the blueprints"),
    (f"DynamoDBContributorInsights-PKC-{TABLE}-GSI9-1764000000000", "{}", "no table or GSI of the blueprints"),
    ("report", "{}", "is not the name of a Contributor Insights rule"),
    (f"DynamoDBContributorInsights-PKC-{TABLE}-1764000000000", '{"KeyLabels": [', "not JSON"),
    (f"DynamoDBContributorInsights-PKC-{TABLE}-1764000000000", '{"MetricDataResults": []}',
     "not the output of `aws cloudwatch get-insight-rule-report`"),
    (f"DynamoDBContributorInsights-PKC-{TABLE}-1764000000000",
     json.dumps({"KeyLabels": ["PK"], "AggregateValue": 10, "Contributors": [{"Keys": []}]}), "contributor 1 lacks"),
    (f"DynamoDBContributorInsights-PKC-{TABLE}-1764000000000",
     json.dumps({"KeyLabels": ["PK"], "AggregateValue": 10, "Contributors": [
         {"Keys": [f"K{n}"], "ApproximateAggregateValue": 1} for n in range(101)]}), "at most 100"),
])

def test_bad_rule_reports_exit_2(run_cli, tmp_path, name, content, expected):
    path = tmp_path / f"{name}.json"
    path.write_text(content)
    code, out, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *as_declared(tmp_path),
                             "--insights", path)
    assert code == 2 and out == "" and expected in err and "fix:" in err and str(path) in err


def test_a_key_value_cannot_write_to_the_terminal(run_cli, tmp_path):
    path = insight_report(tmp_path / "insights", f"DynamoDBContributorInsights-PKT-{TABLE}-1764000000000",
                          {"ORDER#\x1b]0;owned\x07" + "x" * 500: 9}, 9)
    code, out, _ = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *as_declared(tmp_path),
                           "--insights", path)
    assert code == 1 and "\x1b" not in out and "\x07" not in out and "x" * 200 not in out
