"""`calibrate` on hostile and huge input: `--write` changes exactly the values the report names, in the node each
lives in (flow mappings, anchors and aliases refused, line ends and byte order mark kept), only values the
blueprint loads again, and a line of a blueprint only from that blueprint's own stacks (`extends:`); metrics are
read strictly (duplicate keys, absurd values and windows refused, throttles without consumed units reported).

Each test below failed before its fix (checked by running this file against the code before it): the flow
mapping's write changed `p_gsi`; the aliases were rewritten; the absurd values were written (or a traceback); the
years-long window was compared with every rate near 0; the base took the extender's rates; the throttles were
ignored with exit 0; the duplicate key was read.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.calibrate.calibration import Calibration
from tablewright.calibrate.compare import Change, compare
from tablewright.calibrate.metrics import read_metrics
from tablewright.calibrate.write import write_changes
from tablewright.errors import SourceLocation, TablewrightError
from tablewright.stacks.stack import build_stacks
from tests.support.calibrate_support import ORDERS, START, page, steady

# Declared (`tablewright capacity`): p_table reads the table at 0.5 RCU a call, p_gsi reads GSI1 at 0.5 RCU a call
# (10 items of 130 bytes): 50 units/s each.
SHOP = """\
blueprint: shop
version: 1.0.0
region: us-east-1
table: {name: shop, billing: on_demand}
traffic: {peak_factor: 1}
entities:
  Order:
    attributes: {orderId: string, customerId: string}
    key: {pk: "ORDER#{orderId}", sk: "ORDER"}
    writes_per_second: 1
"""
FLOW = SHOP + ('access_patterns: {p_table: {entity: Order, where: {orderId: "="}, rps: 100}, '
               'p_gsi: {entity: Order, where: {customerId: "="}, rps: 100}}\n')
BLOCK = SHOP + ('access_patterns:\n  p_table:\n    entity: Order\n    where: {orderId: "="}\n    rps: 100\n'
                '  p_gsi:\n    entity: Order\n    where: {customerId: "="}\n    rps: 100\n')


def series(table: str, index: str | None, metric: str, per_minute: dict[int, float], period: int = 60) -> dict:
    minutes = sorted(per_minute, reverse=True)
    return {"Id": "m1", "Label": f"{table}:{index or '-'}:{metric}:Sum:{period}", "StatusCode": "Complete",
            "Timestamps": [(START + timedelta(minutes=m)).isoformat() for m in minutes],
            "Values": [per_minute[m] for m in minutes]}


def shop_reads(tmp_path: Path, table_units: float, name: str = "m.json") -> Path:
    return page(tmp_path, name, [series("shop", None, "ConsumedReadCapacityUnits", steady(table_units)),
                                 series("shop", "GSI1", "ConsumedReadCapacityUnits", steady(50))])


def refused(code: int, err: str, *parts: str) -> None:
    """One error (exit 2) naming what `parts` say, with its fix, and no traceback."""
    assert code == 2, err
    assert err.count("error: ") == 1 and "fix: " in err and "Traceback" not in err, err
    for part in parts:
        assert part in err, err


def test_a_flow_mapping_changes_the_pattern_the_report_names(run_cli, write_blueprint, tmp_path):
    # Table reads at 10 x the declared 50 units/s: p_table 100 -> 1000; p_gsi's GSI1 as declared. Both `rps` are on
    # one line: the write changes p_table's, at its column, and no other byte.
    path = write_blueprint(FLOW, "shop.yaml")
    code, out, err = run_cli("calibrate", path, "--metrics", shop_reads(tmp_path, 500), "--write")
    assert code == 1, err
    assert "`access_patterns.p_table.rps` 100 -> 1000" in " ".join(out.split())
    assert "p_gsi.rps" not in out
    assert path.read_text() == FLOW.replace('{orderId: "="}, rps: 100}', '{orderId: "="}, rps: 1000}')
    assert load_blueprints(path)[0].blueprint.access_patterns["p_gsi"].rps == 100


def test_crlf_line_ends_a_byte_order_mark_and_comments_stay(run_cli, write_blueprint, tmp_path):
    text = "\ufeff" + (SHOP + "access_patterns:\n  p_table:  # the order page\n    entity: Order\n"
                       '    where: {orderId: "="}\n    rps: 100   # measured 2026-11\n'
                       '  p_gsi: {entity: Order, where: {customerId: "="}, rps: 100}\n').replace("\n", "\r\n")
    path = tmp_path / "shop.yaml"
    path.write_bytes(text.encode())
    code, _, err = run_cli("calibrate", path, "--metrics", shop_reads(tmp_path, 125), "--write")
    assert code == 1, err
    assert path.read_bytes().decode() == text.replace("rps: 100   #", "rps: 250   #")


ANCHORED = {  # the blueprint, and the table's reads: 10 times the declared
    "a pattern repeated by an alias": (SHOP + (
        "access_patterns:\n"
        '  p_a: &by_order {entity: Order, where: {orderId: "="}, rps: 100}  # checkout\n'
        "  p_b: *by_order\n"), 1000),
    "a rate repeated by an alias": (SHOP + (
        "access_patterns:\n"
        '  p_table: {entity: Order, where: {orderId: "="}, rps: &rate 100}  # checkout\n'
        '  p_gsi: {entity: Order, where: {customerId: "="}, rps: *rate}\n'), 500),
}


@pytest.mark.parametrize("name", sorted(ANCHORED))
def test_a_value_an_alias_repeats_is_refused_with_its_line(run_cli, write_blueprint, tmp_path, name):
    text, reads = ANCHORED[name]
    path = write_blueprint(text, "shop.yaml")
    gsi = [series("shop", "GSI1", "ConsumedReadCapacityUnits", steady(50))] if "p_gsi" in text else []
    metrics = page(tmp_path, "m.json", [series("shop", None, "ConsumedReadCapacityUnits", steady(reads)), *gsi])
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--write")
    refused(code, err, f"{path}:12:", "rps", "&", "line 13", "nothing was written")
    assert "-> 1000" in " ".join(out.split())  # the report still names the change
    assert path.read_text() == text


def test_a_rate_beyond_the_blueprints_bound_is_not_written(run_cli, write_blueprint, tmp_path):
    # 20 million units/s (under the metrics' bound) against the declared 50: p_table's rps would be 40 million,
    # above the 10 million a blueprint accepts.
    path = write_blueprint(BLOCK, "shop.yaml")
    code, _, err = run_cli("calibrate", path, "--metrics", shop_reads(tmp_path, 20_000_000), "--write")
    refused(code, err, f"{path}:15:", "access_patterns.p_table.rps", "100 -> 4e+07 would not load again",
            "nothing was written")
    assert path.read_text() == BLOCK


@pytest.mark.parametrize("value", ["1.7e308", "1" + "0" * 400, "4.1e9"])
def test_an_absurd_metric_value_is_refused(run_cli, write_blueprint, tmp_path, value):
    path = write_blueprint(BLOCK, "shop.yaml")
    metrics = shop_reads(tmp_path, 500)
    text = metrics.read_text()
    metrics.write_text(text.replace("30000", value, 1))
    code, _, err = run_cli("calibrate", path, "--metrics", metrics, "--write")
    refused(code, err, f"{metrics}:", "40,000,000", "ServiceQuotas")
    assert path.read_text() == BLOCK


def window(stamps: list[str], period: int = 60) -> dict:
    return {"Id": "m1", "Label": f"shop:-:ConsumedReadCapacityUnits:Sum:{period}", "StatusCode": "Complete",
            "Timestamps": stamps, "Values": [3000.0] * len(stamps)}


WINDOWS = {
    "years 0001 to 9999": (["9999-12-31T23:59:00+00:00", "0001-01-01T00:00:00+00:00"], "no CloudWatch datapoint is"),
    "year 0001": (["0001-01-01T00:00:00+01:00"], "before DynamoDB existed (18 January 2012)"),
    "ahead of the clock": ([(datetime.now(UTC) + timedelta(days=1)).isoformat()], "ahead of this computer's clock"),
    "one-minute datapoints over 20 days": ([(START - timedelta(days=20)).isoformat(), START.isoformat()],
                                           "CloudWatch keeps datapoints of 60 s for 15 days"),
}


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_a_window_cloudwatch_could_not_have_measured_is_refused(run_cli, write_blueprint, tmp_path, name):
    path = write_blueprint(BLOCK, "shop.yaml")
    stamps, said = WINDOWS[name]
    metrics = page(tmp_path, "m.json", [window(stamps)])
    code, _, err = run_cli("calibrate", path, "--metrics", metrics, "--write")
    refused(code, err, f"{metrics}:", said)
    assert path.read_text() == BLOCK


def test_series_of_distant_windows_are_refused(run_cli, write_blueprint, tmp_path):
    # Each series alone is one minute; together they span 400 days, which no one-minute query covers.
    path = write_blueprint(BLOCK, "shop.yaml")
    metrics = page(tmp_path, "m.json", [
        window([(START - timedelta(days=400)).isoformat()]),
        {**window([START.isoformat()]), "Label": "shop:GSI1:ConsumedReadCapacityUnits:Sum:60"}])
    code, _, err = run_cli("calibrate", path, "--metrics", metrics, "--write")
    refused(code, err, f"{metrics}:", "span 400 days")
    assert path.read_text() == BLOCK


EXTENDING = """\
extends: orders.yaml
blueprint: orders-eu
tags: {service: orders-eu}
table: {name: orders_eu}
"""


def orders_reads(table: str, units: float) -> list[dict]:
    return [series(table, None, "ConsumedReadCapacityUnits", steady(units)),
            series(table, None, "ConsumedWriteCapacityUnits", steady(124))]


def test_a_base_blueprint_takes_its_own_traffic_not_the_extending_tables(run_cli, write_blueprint, tmp_path):
    # orders.yaml is another team's service blueprint; orders-eu.yaml extends it. Table reads: orders at half the
    # declared 360 units/s (120 -> 60, 400 -> 200, 80 -> 40), orders-eu at 10 times (120 -> 1200 ...).
    base_text = Path(ORDERS).read_text()
    base = write_blueprint(base_text, "orders.yaml")
    extending = write_blueprint(EXTENDING, "orders-eu.yaml")
    metrics = page(tmp_path, "m.json", orders_reads("prod-orders_main", 180) + orders_reads("prod-orders_eu", 3600))
    code, out, err = run_cli("calibrate", base, extending, "--env", "prod", "--metrics", metrics, "--write")
    assert code == 1, err
    assert "120 -> 1200" in " ".join(out.split())  # reported for orders-eu ...
    assert base.read_text() == (base_text.replace("rps: 120", "rps: 60").replace("rps: 400", "rps: 200")
                                .replace("rps: 80", "rps: 40"))  # ... but orders.yaml gets its own traffic
    assert extending.read_text() == EXTENDING


def test_a_base_without_its_own_metrics_is_not_written(run_cli, write_blueprint, tmp_path):
    base_text = Path(ORDERS).read_text()
    base = write_blueprint(base_text, "orders.yaml")
    extending = write_blueprint(EXTENDING, "orders-eu.yaml")
    metrics = page(tmp_path, "m.json", orders_reads("prod-orders_eu", 3600))
    code, _, err = run_cli("calibrate", base, extending, "--env", "prod", "--metrics", metrics, "--write")
    assert code == 1, err
    assert base.read_text() == base_text and extending.read_text() == EXTENDING


def calibration(paths: list[Path], metrics: Path) -> Calibration:
    stacks = build_stacks(stack for path in paths for stack in load_blueprints(path) if stack.environment == "prod")
    return Calibration(compare(stacks, read_metrics([metrics]), 0.25), [], (), 0.25, [])


def test_the_note_lists_the_extending_tables_and_their_figures(write_blueprint, tmp_path):
    base = write_blueprint(Path(ORDERS).read_text(), "orders.yaml")
    eu = write_blueprint(EXTENDING, "orders-eu.yaml")
    us = write_blueprint(EXTENDING.replace("eu", "us"), "orders-us.yaml")
    traffic = orders_reads("prod-orders_eu", 3600) + orders_reads("prod-orders_us", 720)
    found = calibration([eu, us], page(tmp_path, "m.json", traffic))
    assert found.changes == []
    notes = found.write_notes
    assert len(notes) == 3
    rate = next(note for note in notes if "order_with_items" in note)
    assert "disagree with it and with each other: orders-eu-prod 1200, orders-us-prod 240" in rate, rate
    assert "orders.yaml:" in rate and "not written" in rate
    found = calibration([base, eu], page(tmp_path, "both.json", orders_reads("prod-orders_main", 180)
                                          + orders_reads("prod-orders_eu", 3600)))
    [rate] = [note for note in found.write_notes if "order_with_items" in note]
    assert "orders-eu-prod 1200" in rate and "written from its own stack orders-prod (120 -> 60)" in rate, rate
    assert {c.field: c.suggested for c in found.changes}["access_patterns.order_with_items.rps"] == 60


def test_throttles_without_consumed_units_are_reported_and_fail(run_cli, write_blueprint, tmp_path):
    path = write_blueprint(BLOCK, "shop.yaml")
    metrics = page(tmp_path, "m.json", [series("shop", None, "ReadThrottleEvents", {5: 40.0, 6: 2.0})])
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--format", "json")
    assert code == 1, err
    [row] = json.loads(out)["comparisons"]
    assert (row["target"], row["direction"], row["verdict"]) == ("table", "read", "consumed not measured")
    assert row["throttled_requests"] == 42 and row["fails"] and len(row["throttled_at"]) == 2
    assert row["changes"] == []


def test_a_key_given_twice_is_refused_with_its_line(run_cli, write_blueprint, tmp_path):
    path = write_blueprint(BLOCK, "shop.yaml")
    metrics = shop_reads(tmp_path, 50)
    lines = metrics.read_text().splitlines()
    at = next(number for number, line in enumerate(lines) if '"StatusCode"' in line)
    lines.insert(at + 1, '            "StatusCode": "PartialData",')
    metrics.write_text("\n".join(lines))
    code, _, err = run_cli("calibrate", path, "--metrics", metrics)
    refused(code, err, f"{metrics}:{at + 2}:", '"StatusCode" is given twice')


def test_a_hot_key_share_is_added_in_the_attributes_own_layout(write_blueprint):
    text = SHOP.replace("attributes: {orderId: string, customerId: string}",
                        "attributes:\n      orderId:\n        type: string  # the order\n"
                        "      customerId: {type: string}") + (
        'access_patterns: {p_table: {entity: Order, where: {orderId: "="}, rps: 100}}\n')
    path = write_blueprint(text, "shop.yaml")
    lines = text.splitlines()

    def change(attribute: str, share: float) -> Change:
        line = next(n for n, item in enumerate(lines, 1) if item.strip().startswith(f"{attribute}:"))
        column = lines[line - 1].index(attribute) + 1
        return Change(SourceLocation(str(path), line, column), f"entities.Order.attributes.{attribute}.hot_key_share",
                      0.0, share, "shop", str(path))

    [(written, after)], missed = write_changes([change("orderId", 0.4), change("customerId", 0.25)])
    assert written == path and missed == []
    assert after == text.replace("type: string  # the order\n", "type: string  # the order\n"
                                 "        hot_key_share: 0.4\n").replace("{type: string}",
                                                                         "{type: string, hot_key_share: 0.25}")
    with pytest.raises(TablewrightError, match="would not load again"):
        write_changes([change("orderId", 4.0)])
