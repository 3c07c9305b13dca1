"""`calibrate --write` changes the rates and hot-key shares it names, each on its own line, in no other file, and lint
then judges the observed traffic; bad input writes nothing. The replay: the minutes CloudWatch counted throttles in,
compared with the simulator's on the same traffic; a window too long to replay is compared only."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from tests.support.calibrate_support import (
    ORDERS,
    START,
    TABLE,
    insight_report,
    page,
    result,
    steady,
)


def test_write_declares_the_observed_hot_key_and_lint_then_sees_it(run_cli, write_blueprint, tmp_path):
    # orders.yaml with OrderItem written 900 times a second (a comment added). GSI1 then serves reads 15 + 300
    # and writes 30 + 900 units/s: Contributor Insights counts 3 x write units + read units, 315 + 3 x 930 =
    # 3,105, OrderItem's template 15 + 3 x 900 = 2,715 of them. One product takes 60 % of GSI1's accesses:
    # hot_key_share 0.6 / (2,715 / 3,105) = 0.69 on productId, so at the peak (x3) that product's key takes
    # 900 x 3 x 0.69 = 1,863 WCU: more than a partition's 1,000, a lint error.
    text = Path(ORDERS).read_text().replace("    writes_per_second: 90\n",
                                            "    writes_per_second: 900  # checkout writes every line\n")
    text = text.replace("max_throughput: {read: 1600, write: 600}", "max_throughput: {read: 1600, write: 4000}")
    path = write_blueprint(text, "orders.yaml")
    assert run_cli("lint", path)[0] == 0
    metrics = [page(tmp_path, "metrics.json", [
        result(None, "ConsumedReadCapacityUnits", steady(360)), result(None, "ConsumedWriteCapacityUnits", steady(934)),
        result("GSI1", "ConsumedReadCapacityUnits", steady(315)),
        result("GSI1", "ConsumedWriteCapacityUnits", steady(930))])]
    insights = [insight_report(tmp_path / "insights", f"DynamoDBContributorInsights-PKC-{TABLE}-GSI1-1764000000000",
                               {"ORDER_ITEM#p-42": 60.0}, 100.0)]
    code, _, err = run_cli("calibrate", path, "--env", "prod", "--metrics", *metrics, "--insights", *insights,
                           "--write")
    assert code == 1
    after = path.read_text()
    assert after == text.replace("      productId: string\n      orderedAt",
                                 "      productId: {type: string, hot_key_share: 0.69}\n      orderedAt", 1)
    assert "+      productId: {type: string, hot_key_share: 0.69}" in err and "1 blueprint file(s) written" in err
    assert "# checkout writes every line" in after
    code, out, _ = run_cli("lint", path, "--env", "prod")
    errors = [line for line in out.splitlines() if " error TW" in line]
    assert code == 1 and errors and all("ORDER_ITEM#{productId}" in line for line in errors), out


def test_write_changes_the_rates_it_names_and_no_other_file(run_cli, write_blueprint, tmp_path):
    path = write_blueprint(Path(ORDERS).read_text(), "orders.yaml")
    base = (tmp_path / "shared" / "platform-base.yaml").read_text()
    reads = [page(tmp_path, "m.json", [result(None, "ConsumedReadCapacityUnits", steady(720)),
                                       result(None, "ConsumedWriteCapacityUnits", steady(124))])]
    code, _, err = run_cli("calibrate", path, "--env", "prod", "--metrics", *reads, "--write")
    assert code == 1, err
    after = path.read_text()
    # Table reads observed at twice the declared 360: each pattern's rps doubled, on its own line, nothing else.
    changed = [(a, b) for a, b in zip(Path(ORDERS).read_text().splitlines(), after.splitlines(), strict=True)
               if a != b]
    assert len(changed) == 3 and all("rps: " in a and "rps: " in b for a, b in changed)
    assert {b.split("rps: ")[1].split(",")[0].split("}")[0].strip() for _, b in changed} == {"240", "800", "160"}
    assert (tmp_path / "shared" / "platform-base.yaml").read_text() == base
    # Lint now judges the observed reads: the table's peak, 3 x 720, is above its on-demand read maximum (1,600).
    code, out, _ = run_cli("lint", path, "--env", "prod")
    assert code == 1 and "TW313" in out and "read maximum 1600" in out.replace(",", "")


def test_bad_input_with_write_writes_nothing(run_cli, write_blueprint, tmp_path):
    path = write_blueprint(Path(ORDERS).read_text(), "orders.yaml")
    before = path.read_text()
    reads = [page(tmp_path, "m.json", [result(None, "ConsumedReadCapacityUnits", steady(720))])]
    unknown = insight_report(tmp_path / "insights", "DynamoDBContributorInsights-PKC-elsewhere-1764000000000",
                             {"X": 1}, 1)
    code, out, err = run_cli("calibrate", path, "--env", "prod", "--metrics", *reads, "--insights", unknown, "--write")
    assert code == 2 and out == "" and "elsewhere" in err
    assert path.read_text() == before and sorted(p.name for p in path.parent.iterdir()) == sorted(
        ["orders.yaml", "shared", "m.json", "insights"])


FIXED_WRITES = """\
blueprint: shop
version: 1.0.0
region: us-east-1
table: {name: shop, billing: provisioned, capacity: {read: {min: 5, max: 100}, write: {min: 100, max: 100}}}
traffic: {peak_factor: 1}
entities:
  Order:
    attributes: {orderId: string}
    key: {pk: "ORDER#{orderId}", sk: "ORDER"}
    writes: {inserts: 50}
access_patterns:
  order_by_id: {entity: Order, where: {orderId: "="}, rps: 1}
"""


def shop_result(metric: str, per_minute: dict[int, float]) -> dict:
    return {**result(None, metric, per_minute), "Label": f"shop:-:{metric}:Sum:60"}


def test_a_replayed_burst_throttles_in_the_minutes_it_throttled(run_cli, write_blueprint, tmp_path):
    # 100 WCU provisioned (min = max), 50 writes/s of 1 WCU, then 300/s for minutes 10-19. Burst capacity holds 300 s
    # of unused capacity, 30,000 units, full after the quiet minutes: 300/s drains it at 200/s for 150 s, so minutes
    # 10 and 11 are served whole, minute 12 for 30 s (12,000 consumed, 6,000 throttled), minutes 13-19 at the
    # capacity (6,000 consumed, 12,000 throttled). CloudWatch, by that rule: throttle events in minutes 12-19.
    path = write_blueprint(FIXED_WRITES, "shop.yaml")
    consumed = {m: 50 * 60 for m in range(30)} | {10: 18_000, 11: 18_000, 12: 12_000} | {
        m: 6_000 for m in range(13, 20)}
    throttles = {12: 6_000} | {m: 12_000 for m in range(13, 20)}
    files = [page(tmp_path, "shop.json", [shop_result("ConsumedWriteCapacityUnits", consumed),
                                          shop_result("WriteThrottleEvents", throttles)])]
    code, out, err = run_cli("calibrate", path, "--metrics", *files, "--format", "json")
    assert code == 1, err  # throttled
    [replayed] = json.loads(out)["replay"]
    minutes = [f"2026-11-30T10:{m:02d}:00Z" for m in range(12, 20)]
    assert replayed["observed_throttled"] == minutes
    assert replayed["predicted_throttled"] == minutes
    assert (replayed["matched"], replayed["false_alarms"], replayed["served_error"]) == (8, 0, 0)


def test_a_replay_that_misses_says_by_how_much(run_cli, write_blueprint, tmp_path):
    # The same minutes, but CloudWatch counted throttles from minute 10: the model's burst capacity lets 150 s
    # through that the real table did not (it had less burst saved). Minutes 10 and 11 are matched within the
    # stated 2 periods by minute 12's prediction; the served units differ in minutes 10-12 by 12,000 + 12,000 +
    # 6,000 out of the window's consumed units.
    path = write_blueprint(FIXED_WRITES, "shop.yaml")
    consumed = {m: 50 * 60 for m in range(30)} | {m: 6_000 for m in range(10, 20)}
    throttles = {m: 12_000 for m in range(10, 20)}
    files = [page(tmp_path, "shop.json", [shop_result("ConsumedWriteCapacityUnits", consumed),
                                          shop_result("WriteThrottleEvents", throttles)])]
    _, out, _ = run_cli("calibrate", path, "--metrics", *files, "--format", "json")
    [replayed] = json.loads(out)["replay"]
    assert len(replayed["observed_throttled"]) == 10 and len(replayed["predicted_throttled"]) == 8
    assert (replayed["matched"], replayed["false_alarms"]) == (10, 0)
    total = 20 * 3000 + 10 * 6000
    assert replayed["served_error"] == round((12_000 + 12_000 + 6_000) / 30 / (total / 30), 4)


def test_a_window_of_weeks_is_compared_but_not_replayed(run_cli, tmp_path):
    # Hourly datapoints over 40 days (CloudWatch keeps hourly data 455 days): replaying them second by second would
    # take gigabytes. A window of years is refused (tests/calibrate/test_calibrate_hostile.py).
    stamps = [(START - timedelta(days=day)).isoformat() for day in range(40)]
    files = [page(tmp_path, "m.json", [{"Id": "m1", "Label": f"{TABLE}:-:ConsumedReadCapacityUnits:Sum:3600",
                                        "StatusCode": "Complete", "Timestamps": stamps,
                                        "Values": [360 * 3600.0] * 40}])]
    code, out, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *files, "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["replay"] == [] and report["comparisons"][0]["verdict"] == "over-declared", err
