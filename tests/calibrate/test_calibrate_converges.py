"""`calibrate` attributes what it observed to each entity and pattern, and converges: `--write` then calibrating
again on the same metrics reports every table and GSI as declared (exit 0).

Each test failed before its fix (run against the code before it): the table's writes scaled A and B alike (B 50 ->
116.67); a pattern without `rps` was not written ("not found"); the peak factor scaled by observed / declared
busiest (2 -> 7.33, 2 -> 4) asked to be raised again on the second run; the hot-key share was taken with the rates
as declared (0.35, hotter again after the rates were written); a weighted value got a `hot_key_share` the blueprint
refuses beside `weights` (E204, nothing written); a peak factor left at the default was not written.
"""

from __future__ import annotations

import json
from datetime import timedelta

from tests.support.calibrate_support import START, page

# A is on GSI1 (its `a_by_cell` pattern), B only on the table; items under 1 KB: 1 WCU per write on each.
FLEET = """\
blueprint: fleet
version: 1.0.0
region: us-east-1
table: {name: fleet, billing: on_demand}
traffic: {peak_factor: 1}
entities:
  A:
    attributes: {aId: string, cell: string}
    key: {pk: "A#{aId}", sk: "A"}
    writes_per_second: 100
  B:
    attributes: {bId: string}
    key: {pk: "B#{bId}", sk: "B"}
    writes_per_second: 50
access_patterns:
  a_by_cell: {entity: A, where: {cell: "="}, rps: 10}
  b_by_id: {entity: B, where: {bId: "="}}
"""


def series(index: str | None, metric: str, per_minute: dict[int, float]) -> dict:
    minutes = sorted(per_minute, reverse=True)
    return {"Id": f"m{len(metric)}{index or ''}", "Label": f"fleet:{index or '-'}:{metric}:Sum:60",
            "StatusCode": "Complete", "Timestamps": [(START + timedelta(minutes=m)).isoformat() for m in minutes],
            "Values": [per_minute[m] for m in minutes]}


def steady(units: float) -> dict[int, float]:
    return {m: units * 60 for m in range(60)}


def changes(out: str) -> dict[str, tuple[float, float]]:
    return {c["field"]: (c["current"], c["suggested"]) for item in json.loads(out)["comparisons"]
            for c in item["changes"]}


def test_writes_are_attributed_per_entity_and_a_second_run_is_as_declared(run_cli, write_blueprint, tmp_path):
    # Declared: A 100 writes/s (table and GSI1), B 50 (table): table 150 WCU/s, GSI1 100. Observed: GSI1 300, which
    # only A writes: A writes 300/s (x 3); the table's 350 is A's 300 and B's 50: B as declared.
    path = write_blueprint(FLEET, "fleet.yaml")
    metrics = page(tmp_path, "m.json", [series(None, "ConsumedWriteCapacityUnits", steady(350)),
                                        series("GSI1", "ConsumedWriteCapacityUnits", steady(300))])
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--format", "json", "--write")
    assert code == 1, err
    assert changes(out) == {"entities.A.writes_per_second": (100, 300)}
    assert path.read_text() == FLEET.replace("writes_per_second: 100", "writes_per_second: 300")
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--format", "json")
    assert code == 0, err
    assert {c["verdict"] for c in json.loads(out)["comparisons"]} == {"as declared"} and changes(out) == {}


def test_a_pattern_without_rps_gets_one_written(run_cli, write_blueprint, tmp_path):
    # b_by_id declares no rps (1 call/s of 0.5 RCU, eventually consistent, an item of 50 bytes); a_by_cell 10 calls/s
    # of 10 items of 108 bytes (one 4 KB unit, halved): 5 RCU/s on GSI1. The table is read at 20 RCU/s: 40 calls/s.
    path = write_blueprint(FLEET, "fleet.yaml")
    metrics = page(tmp_path, "m.json", [series(None, "ConsumedReadCapacityUnits", steady(20)),
                                        series("GSI1", "ConsumedReadCapacityUnits", steady(5))])
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--format", "json", "--write")
    assert code == 1 and changes(out) == {"access_patterns.b_by_id.rps": (1, 40)}, err
    assert path.read_text() == FLEET.replace('{bId: "="}}', '{bId: "="}, rps: 40}')
    assert run_cli("calibrate", path, "--metrics", metrics)[0] == 0


# `steady` has a flat curve of its own; `evening` follows the blueprint's peak factor 2. Each call is 0.5 RCU (one
# item of 50 bytes, eventually consistent): 100 RCU/s each on average.
PEAKS = FLEET.replace("traffic: {peak_factor: 1}", "traffic: {peak_factor: 2}").replace(
    '  b_by_id: {entity: B, where: {bId: "="}}\n',
    '  steady: {entity: B, where: {bId: "="}, rps: 200, traffic: {peak_factor: 1}}\n'
    '  evening: {entity: B, where: {bId: "="}, rps: 200}\n')


def test_the_peak_factor_declares_the_busiest_minute_in_one_step(run_cli, write_blueprint, tmp_path):
    # Declared busiest minute: 100 (steady) + 2 x 100 (evening's peak) = 300 RCU/s. Observed: 185 a second for 59
    # minutes and 1,100 in one: average (59 x 185 + 1,100) / 60 = 200.25, as declared; busiest 1,100, above
    # 300 x 1.25. Only evening's curve moves with the factor: 100 + f x 100 = 1,100, f = 10 (scaling the factor by
    # 1,100 / 300 gave 7.33: 100 + 733 = 833, and 1,100 > 833 x 1.25 asked again).
    path = write_blueprint(PEAKS, "fleet.yaml")
    reads = {m: 185 * 60.0 for m in range(60)} | {30: 1100 * 60.0}
    metrics = page(tmp_path, "m.json", [series(None, "ConsumedReadCapacityUnits", reads)])
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--format", "json", "--write")
    assert code == 1, err
    row = json.loads(out)["comparisons"][0]
    assert (row["verdict"], row["declared_busiest"], row["observed_busiest"]) == ("peak under-declared", 300, 1100)
    assert changes(out) == {"traffic.peak_factor": (2, 10)}
    assert "traffic: {peak_factor: 10}" in path.read_text()
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--format", "json")
    assert code == 0, err
    row = json.loads(out)["comparisons"][0]
    assert (row["verdict"], row["declared_busiest"]) == ("as declared", 1100)


def test_a_hot_key_share_is_suggested_with_the_rates_it_is_written_with(run_cli, write_blueprint, tmp_path):
    # Declared A 300 writes/s, observed 100 (GSI1, only A's) and B 50 (the table's 150 less A's). Contributor
    # Insights: `A#a-1` is 30% of the table's accesses. The table serves A's writes, B's and b_by_id's reads (1 call
    # a second, 0.5 RCU), counted as 3 x write units + read units: with A at 100, A's template is 300 of 450.5, so
    # hot_key_share 0.3 / (300 / 450.5) = 0.45. Taken with A at the declared 300 (0.3 / (900 / 1,050.5) = 0.35),
    # the second run found the key at 0.35 x 300 / 450.5 = 23% of the table, under the observed 30% by more than
    # the tolerance: hotter again.
    path = write_blueprint(FLEET.replace("writes_per_second: 100", "writes_per_second: 300"), "fleet.yaml")
    metrics = page(tmp_path, "m.json", [series(None, "ConsumedWriteCapacityUnits", steady(150)),
                                        series("GSI1", "ConsumedWriteCapacityUnits", steady(100))])
    insights = tmp_path / "insights"
    insights.mkdir()
    rule = insights / "DynamoDBContributorInsights-PKC-fleet-1764000000000.json"
    rule.write_text(json.dumps({"KeyLabels": ["PK"], "AggregationStatistic": "Sum", "AggregateValue": 100.0,
                                "ApproximateUniqueCount": 41, "Contributors": [
                                    {"Keys": ["A#a-1"], "ApproximateAggregateValue": 30.0, "Datapoints": []}]}))
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--insights", rule, "--format", "json",
                             "--write")
    assert code == 1, err
    [key] = json.loads(out)["keys"]
    assert key["change"]["field"] == "entities.A.attributes.aId.hot_key_share"
    assert key["change"]["suggested"] == round(0.3 / (300 / 450.5), 2) == 0.45
    assert changes(out) == {"entities.A.writes_per_second": (300, 100)}
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--insights", rule, "--format", "json")
    assert code == 0, err
    assert [key["verdict"] for key in json.loads(out)["keys"]] == ["as declared"]


WEIGHTED = """\
blueprint: wts
version: 1.0.0
region: us-east-1
table: {name: wts, billing: on_demand}
traffic: {peak_factor: 1}
entities:
  Order:
    attributes:
      orderId: string
      status: {type: string, weights: {PLACED: 50, PAID: 30, SHIPPED: 20}}
    key: {pk: "ORDER#{orderId}", sk: "ORDER"}
    writes_per_second: 10
access_patterns:
  by_status: {entity: Order, where: {status: "="}, returns: [orderId], rps: 10}
"""


def test_a_weighted_value_hotter_than_declared_gets_its_weight(run_cli, write_blueprint, tmp_path):
    # GSI1 (ORDER#{status}) holds Order alone, and `weights` give PLACED 50 / 100 of it. Contributor Insights:
    # ORDER#PLACED is 80% of GSI1's accesses. `weights` take no `hot_key_share` (the language refuses both, so the
    # reload refused the suggestion): PLACED's weight w with w / (w + 30 + 20) = 0.8 is 0.8 x 50 / 0.2 = 200.
    path = write_blueprint(WEIGHTED, "wts.yaml")
    label = "wts:GSI1:ConsumedWriteCapacityUnits:Sum:60"
    metrics = page(tmp_path, "m.json", [{**series("GSI1", "ConsumedWriteCapacityUnits", steady(10)), "Label": label}])
    insights = tmp_path / "insights"
    insights.mkdir()
    rule = insights / "DynamoDBContributorInsights-PKC-wts-GSI1-1764000000000.json"
    rule.write_text(json.dumps({"KeyLabels": ["PK"], "AggregationStatistic": "Sum", "AggregateValue": 100.0,
                                "ApproximateUniqueCount": 3, "Contributors": [
                                    {"Keys": ["ORDER#PLACED"], "ApproximateAggregateValue": 80.0, "Datapoints": []}]}))
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--insights", rule, "--write")
    assert code == 1 and "`entities.Order.attributes.status.weights.PLACED` 50 -> 200" in " ".join(out.split()), err
    assert path.read_text() == WEIGHTED.replace("PLACED: 50", "PLACED: 200")
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--insights", rule)
    assert code == 0 and "80.0% of the accesses, 80.0% declared: as declared" in " ".join(out.split()), err


def test_a_peak_factor_left_at_the_default_is_written_in_a_traffic_section(run_cli, write_blueprint, tmp_path):
    # No `traffic:` (and no base): the language's peak factor 3. The table's reads are b_by_id's, 1 call/s of 0.5
    # RCU (a_by_cell reads GSI1): declared busiest minute 3 x 0.5 = 1.5. Observed: 0.5 a second and one minute at
    # 2.5 (average 0.53, as declared; 2.5 > 1.5 x 1.25): the factor that declares it is 2.5 / 0.5 = 5.
    text = FLEET.replace("traffic: {peak_factor: 1}\n", "")
    path = write_blueprint(text, "fleet.yaml")
    reads = {m: 0.5 * 60 for m in range(60)} | {30: 2.5 * 60}
    metrics = page(tmp_path, "m.json", [series(None, "ConsumedReadCapacityUnits", reads)])
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--format", "json", "--write")
    assert code == 1 and changes(out) == {"traffic.peak_factor": (3, 5)}, err
    assert path.read_text() == text + "traffic:\n  peak_factor: 5\n"
    assert run_cli("calibrate", path, "--metrics", metrics)[0] == 0


def test_a_busiest_minute_held_by_an_event_rate_does_not_scale_the_factor(run_cli, write_blueprint, tmp_path):
    # b_by_id: 200 calls/s of 0.5 RCU (100 RCU/s) at the blueprint's peak factor 2, and a weekly sale at a fixed
    # 1,000 calls/s: the declared busiest minute is the sale's 500 RCU/s (the curve's peak is 2 x 100 = 200).
    # Observed: 100 a second and one minute at 1,000. Scaling the factor by 1,000 / 500 gave 4, whose peak (400)
    # is still under the sale's 500: the next run asked for 4 x 1,000 / 500 = 8 (the 5.15 -> 8.74), and the
    # one after for 8 x 1,000 / 800 = 10. The factor whose peak reaches 1,000 is 1,000 / 100 = 10, at once.
    text = FLEET.replace("traffic: {peak_factor: 1}", "traffic: {peak_factor: 2}").replace(
        '  b_by_id: {entity: B, where: {bId: "="}}\n',
        '  b_by_id:\n    entity: B\n    where: {bId: "="}\n    rps: 200\n'
        '    traffic: {events: [{name: sale, start: "03:00", duration: 30m, every: week, rate: 1000}]}\n')
    path = write_blueprint(text, "fleet.yaml")
    reads = {m: 100 * 60.0 for m in range(60)} | {30: 1000 * 60.0}
    metrics = page(tmp_path, "m.json", [series(None, "ConsumedReadCapacityUnits", reads)])
    code, out, err = run_cli("calibrate", path, "--metrics", metrics, "--format", "json", "--write")
    row = json.loads(out)["comparisons"][0]
    assert code == 1 and (row["declared_busiest"], row["verdict"]) == (500, "peak under-declared"), err
    assert changes(out) == {"traffic.peak_factor": (2, 10)}
    assert run_cli("calibrate", path, "--metrics", metrics)[0] == 0
