"""`calibrate` splits what a table or GSI served among entities no target tells apart by the keys Contributor
Insights counted there (`modules/tablewright/calibrate/attribution.py`), and converges: declaring the rates it
suggests and calibrating again on the same metrics and reports is as declared.

An accessed-keys rule (PKC) sums ConsumedThroughputUnits per key: 3 x write units + read units
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/contributorinsights_HowItWorks.html). These
blueprints read nothing (`rps: 0`), so a share of the rule is a share of the table's write units.

The calibration runs as `tablewright calibrate --metrics ... --insights ... [--write]` does (the reports passed
to `compare` and `observe_keys`; the last test runs the command itself). Before the change `compare` took no
reports; with the reports' attribution left out, every test here but the two that expect none (no report, a sum
that is not finite) found the entities scaled alike.
"""

from __future__ import annotations

import json
from pathlib import Path

from tablewright.blueprint.load import load_blueprints
from tablewright.calibrate.calibration import Calibration
from tablewright.calibrate.compare import compare
from tablewright.calibrate.insights import read_insights
from tablewright.calibrate.keys import observe_keys
from tablewright.calibrate.metrics import read_metrics
from tablewright.cli.commands import write_calibration
from tablewright.report.calibrate import render_json, render_text
from tablewright.stacks.stack import build_stacks
from tests.calibrate.test_calibrate_converges import FLEET, series
from tests.calibrate.test_calibrate_converges import steady as fleet_steady
from tests.support.calibrate_support import insight_report, page, result, steady

# A and B only on the table (no GSI), each written 100 times a second, items under 1 KB (1 WCU a write): the table
# is declared at 200 WCU/s. Each declares its busiest key at half its traffic (`hot_key_share: 0.5`).
PAIR = """\
blueprint: pair
version: 1.0.0
region: us-east-1
table: {name: pair, billing: on_demand}
traffic: {peak_factor: 1}
entities:
  A:
    attributes: {aId: {type: string, hot_key_share: 0.5}}
    key: {pk: "A#{aId}", sk: "A"}
    writes_per_second: 100
  B:
    attributes: {bId: {type: string, hot_key_share: 0.5}}
    key: {pk: "B#{bId}", sk: "B"}
    writes_per_second: 100
access_patterns:
  a_by_id: {entity: A, where: {aId: "="}, rps: 0}
  b_by_id: {entity: B, where: {bId: "="}, rps: 0}
"""
RULE = "DynamoDBContributorInsights-PKC-pair-1764000000000"


def table_writes(tmp_path: Path, units: float) -> Path:
    series = result(None, "ConsumedWriteCapacityUnits", steady(units))
    return page(tmp_path, "m.json", [{**series, "Label": "pair:-:ConsumedWriteCapacityUnits:Sum:60"}])


def calibrate(path: Path, metrics: Path, reports: list[Path], write: bool = False) -> Calibration:
    stacks = build_stacks(load_blueprints(path))
    rules = read_insights(reports, stacks)
    comparisons = compare(stacks, read_metrics([metrics]), 0.25, rules)
    found = Calibration(comparisons, observe_keys(stacks, rules, 0.25, comparisons), (), 0.25, [])
    if write:
        write_calibration(found)
    return found


def suggested(found: Calibration) -> dict[str, tuple[float, float]]:
    return {change.field: (change.current, change.suggested) for change in found.changes}


def rates(found: Calibration) -> dict[str, tuple[float, float]]:
    """The rate changes (not a key's `hot_key_share`)."""
    return {field: values for field, values in suggested(found).items() if not field.endswith("hot_key_share")}


def fails(found: Calibration) -> bool:
    return any(item.fails for item in found.comparisons) or any(key.fails for key in found.keys)


def test_the_keys_split_the_table_between_entities_and_a_second_run_is_as_declared(write_blueprint, tmp_path):
    # Observed 400 WCU/s against 200 declared. The report: A's keys 750 of 1,000 throughput units (75 %), B's 250
    # (25 %), every key listed. A writes 400 x 0.75 = 300 a second (x 3), B 400 x 0.25 = 100 (as declared).
    path = write_blueprint(PAIR, "pair.yaml")
    metrics = table_writes(tmp_path, 400)
    report = insight_report(tmp_path / "insights", RULE, {"A#a-1": 250, "A#a-2": 250, "A#a-3": 250,
                                                          "B#b-1": 125, "B#b-2": 125}, 1000)
    found = calibrate(path, metrics, [report], write=True)
    assert fails(found) and suggested(found) == {"entities.A.writes_per_second": (100, 300)}
    assert path.read_text() == PAIR.replace("writes_per_second: 100", "writes_per_second: 300", 1)
    line = ("pair table: attributed by Contributor Insights: A 75.0%, B 25.0% of the table's accesses (3 x write "
            "units + read units; the top 5 keys cover 100.0%, 100.0% are keys of one entity, the rest is split by "
            "declared units)")
    assert line in render_text(found).replace("\n", " ").replace("  ", " ")
    [item] = json.loads(render_json(found))["comparisons"]
    assert item["attribution"]["shares"] == [["A", 0.75], ["B", 0.25]] and item["attribution"]["rule"] == RULE
    # Again, on the same metrics and report: the table's 400 = 300 + 100, and each key within its declared share
    # (A's busiest 25 % <= 0.5 x 300 / 400, B's 12.5 % <= 0.5 x 100 / 400).
    again = calibrate(path, metrics, [report])
    assert [item.verdict for item in again.comparisons] == ["as declared"] and not fails(again)
    assert again.changes == []


def test_without_a_report_the_entities_are_scaled_alike(write_blueprint, tmp_path):
    # Declared shares only: 400 / 200 = 2 for each, A 200 and B 200.
    path = write_blueprint(PAIR, "pair.yaml")
    found = calibrate(path, table_writes(tmp_path, 400), [])
    assert suggested(found) == {"entities.A.writes_per_second": (100, 200), "entities.B.writes_per_second": (100, 200)}
    assert found.comparisons[0].attribution is None


def test_keys_not_listed_are_split_by_declared_units(write_blueprint, tmp_path):
    # The top keys cover 600 of 1,000: A's 450 (45 %), B's 150 (15 %). The other 40 % is split by the declared
    # units, 100 : 100: A 45 + 20 = 65 %, B 15 + 20 = 35 %. A writes 0.65 x 400 = 260 a second, B 0.35 x 400 = 140.
    path = write_blueprint(PAIR, "pair.yaml")
    report = insight_report(tmp_path / "insights", RULE, {"A#a-1": 150, "A#a-2": 150, "A#a-3": 150, "B#b-1": 150},
                            1000)
    metrics = table_writes(tmp_path, 400)
    found = calibrate(path, metrics, [report], write=True)
    attribution = found.comparisons[0].attribution
    assert attribution is not None and (attribution.covered, attribution.attributed) == (0.6, 0.6)
    assert [(entity, round(share, 10)) for entity, share in attribution.shares] == [("A", 0.65), ("B", 0.35)]
    assert suggested(found) == {"entities.A.writes_per_second": (100, 260), "entities.B.writes_per_second": (100, 140)}
    # Again: 260 + 140 = 400, as declared. The rest now splits 260 : 140 (A 45 + 26 = 71 %), which changes no rate
    # while the table is as declared.
    again = calibrate(path, metrics, [report])
    assert [item.verdict for item in again.comparisons] == ["as declared"] and not fails(again)
    assert again.changes == []


# C and D share a partition-key template (an item collection `S#{sId}`, told apart by the sort key only): a key
# `S#...` is either's. A has keys of its own; B is not written.
COLLECTION = PAIR.replace("""access_patterns:""", """  C:
    attributes: {sId: string, cId: string}
    key: {pk: "S#{sId}", sk: "C#{cId}"}
    writes_per_second: 100
  D:
    attributes: {sId: string, dId: string}
    key: {pk: "S#{sId}", sk: "D#{dId}"}
    writes_per_second: 100
access_patterns:
  c_by_s: {entity: C, where: {sId: "="}, rps: 0}""").replace("""    key: {pk: "B#{bId}", sk: "B"}
    writes_per_second: 100""", """    key: {pk: "B#{bId}", sk: "B"}
    writes_per_second: 0""")


def test_a_key_of_an_item_collection_is_shared_by_its_entities(write_blueprint, tmp_path):
    # Declared: A 100 writes/s, B 0, C 100, D 100: 300 WCU/s; observed 600. The report: A's keys 50 %, `S#s-1` 50 %.
    # `S#s-1` is C's or D's (both templates make it), so it goes to neither alone: split by their declared units,
    # 25 % each. A writes 0.5 x 600 = 300 a second, C and D 0.25 x 600 = 150 each (declared shares alone: x 2).
    path = write_blueprint(COLLECTION, "pair.yaml")
    report = insight_report(tmp_path / "insights", RULE, {"A#a-1": 250, "A#a-2": 250, "S#s-1": 500}, 1000)
    found = calibrate(path, table_writes(tmp_path, 600), [report])
    attribution = found.comparisons[0].attribution
    assert attribution is not None and attribution.attributed == 0.5
    assert dict(attribution.shares) == {"A": 0.5, "B": 0.0, "C": 0.25, "D": 0.25}
    assert rates(found) == {"entities.A.writes_per_second": (100, 300), "entities.C.writes_per_second": (100, 150),
                            "entities.D.writes_per_second": (100, 150)}


def test_a_share_counts_a_write_unit_three_times(write_blueprint, tmp_path):
    # a_by_id: 100 GetItems a second of A's item (under 4 KB, eventually consistent: 0.5 RCU): 50 RCU/s on the
    # table, observed as declared. The rule counts 3 x write units + read units: with A writing 300 a second and B
    # 100, A's keys take 3 x 300 + 50 = 950 and B's 3 x 100 = 300 of 1,250 (76 %, 24 %). A's writes are then
    # (0.76 x (3 x 400 + 50) - 50) / 3 = 300 a second. (Units counted alike would give 0.76 x 450 - 50 = 292.)
    path = write_blueprint(PAIR.replace('{aId: "="}, rps: 0', '{aId: "="}, rps: 100'), "pair.yaml")
    reads = result(None, "ConsumedReadCapacityUnits", steady(50))
    metrics = page(tmp_path, "m.json", [json.loads(table_writes(tmp_path, 400).read_text())["MetricDataResults"][0],
                                        {**reads, "Label": "pair:-:ConsumedReadCapacityUnits:Sum:60"}])
    report = insight_report(tmp_path / "insights", RULE, {"A#a-1": 475, "A#a-2": 475, "B#b-1": 150, "B#b-2": 150},
                            1250)
    found = calibrate(path, metrics, [report])
    assert [(item.direction, item.declared_average, item.verdict) for item in found.comparisons] == [
        ("read", 50, "as declared"), ("write", 200, "under-declared")]
    assert rates(found) == {"entities.A.writes_per_second": (100, 300)}


# FLEET (test_calibrate_converges.py) with C beside B on the table only: GSI1 holds A alone.
FLEET_C = FLEET.replace("access_patterns:", """  C:
    attributes: {cId: string}
    key: {pk: "C#{cId}", sk: "C"}
    writes_per_second: 50
access_patterns:
  c_by_id: {entity: C, where: {cId: "="}, rps: 0}""").replace('b_by_id: {entity: B, where: {bId: "="}}',
                                                                'b_by_id: {entity: B, where: {bId: "="}, rps: 0}')


def test_the_targets_decide_what_they_tell_apart_and_the_keys_the_rest(write_blueprint, tmp_path):
    # Declared A 100 (table and GSI1), B 50 and C 50 (table): observed GSI1 300 and the table 500. GSI1 is A's
    # alone: A 300. The table's other 200 are B's and C's, which no GSI tells apart. The report gives A's keys 50 %
    # of the table's accesses (not the 3 x 300 / (3 x 500) = 60 % the GSI says: the GSI decides A), B's 37.5 % and
    # C's 12.5 %: B + C = 200 in the proportion 37.5 : 12.5, B 150 and C 50. (Declared shares alone: B and C 100
    # each; the shares taken as absolute, the GSI's 10 % split evenly, B 162.5 and C 37.5.)
    path = write_blueprint(FLEET_C, "fleet.yaml")
    metrics = page(tmp_path, "m.json", [series(None, "ConsumedWriteCapacityUnits", fleet_steady(500)),
                                        series("GSI1", "ConsumedWriteCapacityUnits", fleet_steady(300))])
    rule = "DynamoDBContributorInsights-PKC-fleet-1764000000000"
    report = insight_report(tmp_path / "insights", rule, {"A#a-1": 25, "A#a-2": 25, "B#b-1": 18.75,
                                                          "B#b-2": 18.75, "C#c-1": 12.5}, 100)
    found = calibrate(path, metrics, [report])
    assert rates(found) == {"entities.A.writes_per_second": (100, 300), "entities.B.writes_per_second": (50, 150)}


def test_a_sort_key_report_tells_an_item_collection_apart(write_blueprint, tmp_path):
    # COLLECTION, observed 600 WCU/s. The PKC report cannot tell C from D (`S#s-1` is both's); the SKC report
    # (partition and sort key) can: A's items 50 %, C's 30 %, D's 20 %, all by one entity's templates, so it is the
    # one used. A writes 0.5 x 600 = 300 a second, C 0.3 x 600 = 180, D 0.2 x 600 = 120.
    path = write_blueprint(COLLECTION, "pair.yaml")
    pkc = insight_report(tmp_path / "insights", RULE, {"A#a-1": 500, "S#s-1": 500}, 1000)
    skc = tmp_path / "insights" / f"{RULE.replace('PKC', 'SKC')}.json"
    skc.write_text(json.dumps({"KeyLabels": ["PK", "SK"], "AggregationStatistic": "Sum", "AggregateValue": 1000,
                               "Contributors": [{"Keys": keys, "ApproximateAggregateValue": value, "Datapoints": []}
                                                for keys, value in ((["A#a-1", "A"], 500), (["S#s-1", "C#c-1"], 300),
                                                                    (["S#s-1", "D#d-1"], 200))]}))
    found = calibrate(path, table_writes(tmp_path, 600), [pkc, skc])
    attribution = found.comparisons[0].attribution
    assert attribution is not None and attribution.rule == skc.stem and attribution.attributed == 1
    assert rates(found) == {"entities.A.writes_per_second": (100, 300), "entities.C.writes_per_second": (100, 180),
                            "entities.D.writes_per_second": (100, 120)}


def test_values_whose_sum_is_not_finite_attribute_nothing(write_blueprint, tmp_path):
    # Each value is a finite number, their sum is not (2 x 1e308 overflows): the report splits nothing, and the
    # table is scaled as without it (each x 2).
    path = write_blueprint(PAIR, "pair.yaml")
    report = insight_report(tmp_path / "insights", RULE, {"A#a-1": 1e308, "B#b-1": 1e308}, 1e308)
    found = calibrate(path, table_writes(tmp_path, 400), [report])
    assert found.comparisons[0].attribution is None
    assert rates(found) == {"entities.A.writes_per_second": (100, 200), "entities.B.writes_per_second": (100, 200)}


def test_reads_are_split_between_the_patterns_of_the_entities(write_blueprint, tmp_path):
    # Nothing written; a_by_id and b_by_id each 100 GetItems a second of 0.5 RCU (items under 4 KB, eventually
    # consistent): 100 RCU/s on the table, observed 200. The report: A's keys 75 % (read units count once). A's
    # pattern reads 0.75 x 200 = 150 RCU/s, 300 calls a second; B's 50, 100 calls (as declared).
    text = PAIR.replace("writes_per_second: 100", "writes_per_second: 0").replace("rps: 0", "rps: 100")
    path = write_blueprint(text, "pair.yaml")
    reads = result(None, "ConsumedReadCapacityUnits", steady(200))
    metrics = page(tmp_path, "m.json", [{**reads, "Label": "pair:-:ConsumedReadCapacityUnits:Sum:60"}])
    report = insight_report(tmp_path / "insights", RULE, {"A#a-1": 250, "A#a-2": 250, "A#a-3": 250, "B#b-1": 250},
                            1000)
    found = calibrate(path, metrics, [report])
    assert rates(found) == {"access_patterns.a_by_id.rps": (100, 300)}


def test_the_command_attributes_by_the_reports_it_is_given_and_converges(write_blueprint, tmp_path, run_cli,
                                                                         monkeypatch):
    # `tablewright calibrate --metrics ... --insights ... --write`, then the same run again: A 100 -> 300 (75 % of
    # the table's 400 WCU/s), B as declared; the second run is as declared, exit 0.
    path = write_blueprint(PAIR, "pair.yaml")
    monkeypatch.chdir(path.parent)
    metrics = table_writes(tmp_path, 400)
    report = insight_report(tmp_path / "insights", RULE, {"A#a-1": 250, "A#a-2": 250, "A#a-3": 250,
                                                          "B#b-1": 125, "B#b-2": 125}, 1000)
    arguments = ["calibrate", str(path), "--metrics", str(metrics), "--insights", str(report)]
    code, out, err = run_cli(*arguments, "--write")
    assert code == 1, err
    assert "attributed by Contributor Insights: A 75.0%, B 25.0%" in " ".join(out.split())
    assert path.read_text() == PAIR.replace("writes_per_second: 100", "writes_per_second: 300", 1)
    code, out, err = run_cli(*arguments)
    assert code == 0, out + err
