"""`calibrate`: files in the exact shape `aws cloudwatch get-metric-data` prints, against the bundled orders
blueprint's declared rates (prod: on demand, peak factor 3); the queries and the script it prints to fetch them.

Declared, by hand from blueprints/orders.yaml (units per call from the DynamoDB rules, as `capacity` prints):
table reads 120 x 1 + 400 x 0.5 + 80 x 0.5 = 360 units/s, busiest minute 3 x 360 = 1,080; GSI1 reads
10 x 1.5 + 150 x 2 = 315; table writes 30 + 90 + 1 x 2 + 2 = 124; GSI1 writes 30 + 90 = 120.

Contributor Insights: test_calibrate_insights.py; `--write` and the replay: test_calibrate_write_and_replay.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablewright.calibrate.queries import metric_queries
from tests.support.calibrate_support import (
    ORDERS,
    TABLE,
    as_declared,
    label,
    page,
    result,
    steady,
)


def test_traffic_as_declared_passes(run_cli, tmp_path):
    code, out, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *as_declared(tmp_path))
    assert code == 0, err
    assert " ".join(out.split()).count("as declared") == 4
    assert "4 table/GSI direction(s) and 0 key(s) of 1 stack(s) compared, 0 above" in err


def test_an_under_declared_rate_across_pages_with_missing_minutes(run_cli, tmp_path):
    # Table reads at 900 units/s, 5 minutes without a datapoint (no request), in three pages (newest first, as
    # CloudWatch returns them): the first two say PartialData and carry a NextToken. The window is the hour the
    # table's writes cover (3,600 s).
    reads = {m: 900 * 60 for m in range(60) if m not in (3, 17, 29, 41, 58)}
    first = {m: v for m, v in reads.items() if m >= 40}
    second = {m: v for m, v in reads.items() if 20 <= m < 40}
    third = {m: v for m, v in reads.items() if m < 20}
    files = [
        page(tmp_path, "page1.json", [result(None, "ConsumedReadCapacityUnits", first, "PartialData"),
                                      result(None, "ConsumedWriteCapacityUnits", steady(124)),
                                      result("GSI1", "ConsumedWriteCapacityUnits", steady(120))], "token-1"),
        page(tmp_path, "page2.json", [result(None, "ConsumedReadCapacityUnits", second, "PartialData")], "token-2"),
        page(tmp_path, "page3.json", [result(None, "ConsumedReadCapacityUnits", third)]),
    ]
    code, out, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *files, "--format", "json")
    assert code == 1, err
    report = json.loads(out)
    reads_row = next(c for c in report["comparisons"] if c["target"] == "table" and c["direction"] == "read")
    average = 55 * 900 * 60 / 3600  # 825 units/s
    assert reads_row["observed_average"] == pytest.approx(average)
    assert reads_row["declared_average"] == pytest.approx(360)
    assert reads_row["observed_busiest"] == pytest.approx(900)
    assert reads_row["declared_busiest"] == pytest.approx(1080)
    assert reads_row["verdict"] == "under-declared" and reads_row["fails"]
    ratio = average / 360
    suggested = {change["field"]: (change["current"], change["suggested"]) for change in reads_row["changes"]}
    assert suggested == {
        "access_patterns.order_with_items.rps": (120, round(120 * ratio, 2)),
        "access_patterns.product_details.rps": (400, round(400 * ratio, 2)),
        "access_patterns.user_profile.rps": (80, round(80 * ratio, 2)),
    }
    lines = Path(ORDERS).read_text().splitlines()
    for change in reads_row["changes"]:
        assert change["file"] == ORDERS and "rps:" in lines[change["line"] - 1]
    assert report["partial"] == []
    writes_row = next(c for c in report["comparisons"] if c["target"] == "table" and c["direction"] == "write")
    assert writes_row["verdict"] == "as declared" and not writes_row["fails"]
    # The text report names the line to change and both numbers.
    code, out, _ = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *files)
    text = " ".join(out.split())
    assert "`access_patterns.product_details.rps` 400 -> 916.67" in text and "360.00 / 825.00" in text


def test_a_busier_peak_than_declared(run_cli, tmp_path):
    # Average as declared (360), but one minute at 2,000 units/s: above the declared busiest minute (1,080) by
    # more than 25 %; the peak factor that would declare it is 3 x 2,000 / 1,080.
    reads = steady(360) | {30: 2000 * 60, 31: 0.0}
    files = [page(tmp_path, "m.json", [result(None, "ConsumedReadCapacityUnits", reads)])]
    code, out, _ = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *files, "--format", "json")
    row = json.loads(out)["comparisons"][0]
    assert code == 1 and row["verdict"] == "peak under-declared"
    assert row["changes"][0]["field"] == "traffic.peak_factor"
    assert row["changes"][0]["suggested"] == round(3 * 2000 / 1080, 2)


def test_a_throttle_fails_and_says_when(run_cli, tmp_path):
    files = [*as_declared(tmp_path), page(tmp_path, "throttles.json", [
        result("GSI1", "WriteThrottleEvents", {12: 30.0, 13: 4.0})])]
    code, out, _ = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *files)
    assert code == 1
    assert "GSI1 writes: 34 throttled requests in 2 period(s) of 60 s: 2026-11-30T10:12:00Z, 2026-11-30T10:13:00Z" \
        in " ".join(out.split())


def test_a_series_no_page_completed_is_reported_partial(run_cli, tmp_path):
    files = [page(tmp_path, "a.json", [result(None, "ConsumedReadCapacityUnits", steady(360), "PartialData")]),
             page(tmp_path, "b.json", [result(None, "ConsumedWriteCapacityUnits", steady(124))])]
    code, out, _ = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *files)
    assert code == 0
    assert f"partial: `{label(None, 'ConsumedReadCapacityUnits')}`" in out


def test_the_printed_queries_label_what_calibrate_reads():
    from tablewright.blueprint.load import load_blueprint
    from tablewright.calibrate.metrics import METRICS
    from tablewright.stacks.stack import build_stack

    stack = build_stack(load_blueprint(ORDERS, "prod"))
    queries = metric_queries(stack)
    # On demand: consumed and throttles (no provisioned capacity) for the table and GSI1.
    assert len(queries) == 2 * 4 and len({q["Id"] for q in queries}) == len(queries)
    for query in queries:
        _, index, metric, stat, period = query["Label"].split(":")
        stat_of = query["MetricStat"]
        assert metric == stat_of["Metric"]["MetricName"] and stat == stat_of["Stat"] == METRICS[metric][2]
        assert int(period) == stat_of["Period"] == 60
        dimensions = {d["Name"]: d["Value"] for d in stat_of["Metric"]["Dimensions"]}
        assert dimensions == ({"TableName": TABLE} if index == "-" else
                              {"TableName": TABLE, "GlobalSecondaryIndexName": index})


def test_print_queries_is_a_script_with_the_queries(run_cli):
    code, out, _ = run_cli("calibrate", ORDERS, "--env", "prod", "--print-queries")
    assert code == 0
    assert "aws cloudwatch get-metric-data --region=us-east-1 --metric-data-queries=file://queries-orders-prod.json" \
        in out
    body = out.split("<<'QUERIES'\n")[1].split("\nQUERIES\n")[0]
    assert [q["Label"] for q in json.loads(body)] == [q["Label"] for q in metric_queries(_stack())]


def _stack():
    from tablewright.blueprint.load import load_blueprint
    from tablewright.stacks.stack import build_stack

    return build_stack(load_blueprint(ORDERS, "prod"))


def test_the_output_is_deterministic(run_cli, tmp_path):
    files = as_declared(tmp_path)
    first = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *files, "--format", "json")
    assert first == run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *reversed(files), "--format", "json")


@pytest.mark.parametrize(("content", "expected"), [
    ('{"MetricDataResults": [{"Id": "m0", "Label": ', "not JSON"),  # truncated
    ('{"Tables": []}', "no `MetricDataResults`"),
    (json.dumps({"MetricDataResults": [{"Id": "m0", "Label": "ConsumedReadCapacityUnits", "Timestamps": [],
                                        "Values": [], "StatusCode": "Complete"}]}), "does not name a table"),
    (json.dumps({"MetricDataResults": [{"Id": "m0", "Label": "\u001b[31m:-:ConsumedReadCapacityUnits:Sum:60",
                                        "Timestamps": [], "Values": [], "StatusCode": "Complete"}]}),
     "does not name a table"),
    (json.dumps({"MetricDataResults": [{"Id": "m0", "Label": "other-table:-:ConsumedReadCapacityUnits:Sum:60",
                                        "Timestamps": [], "Values": [], "StatusCode": "Complete"}]}),
     "`other-table` is not a table of the blueprints named"),
    (json.dumps({"MetricDataResults": [{"Id": "m0", "Label": f"{TABLE}:GSI9:ConsumedReadCapacityUnits:Sum:60",
                                        "Timestamps": [], "Values": [], "StatusCode": "Complete"}]}),
     "has no GSI `GSI9`"),
    (json.dumps({"MetricDataResults": [{"Id": "m0", "Label": f"{TABLE}:-:ConsumedReadCapacityUnits:Sum:60",
                                        "Timestamps": ["2026-11-30T10:00:00+00:00"], "Values": [1, 2],
                                        "StatusCode": "Complete"}]}), "same length"),
    (json.dumps({"MetricDataResults": [{"Id": "m0", "Label": f"{TABLE}:-:ConsumedReadCapacityUnits:Sum:60",
                                        "Timestamps": ["yesterday"], "Values": [1], "StatusCode": "Complete"}]}),
     "not an ISO 8601 time"),
    (json.dumps({"MetricDataResults": [{"Id": "m0", "Label": f"{TABLE}:-:ConsumedReadCapacityUnits:Sum:60",
                                        "Timestamps": [], "Values": [], "StatusCode": "Forbidden"}]}),
     "cloudwatch:GetMetricData"),
    (json.dumps({"MetricDataResults": [], "NextToken": "more"}), "the last page is missing"),
])
def test_bad_metrics_exit_2_located_and_say_what_to_do(run_cli, tmp_path, content, expected):
    path = tmp_path / "metrics.json"
    path.write_text(content)
    code, out, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", path)
    assert code == 2 and out == ""
    assert expected in err and "Traceback" not in err
    assert f"{path}:" in err or expected == "the last page is missing"
    assert "fix:" in err


def test_the_error_points_at_the_line_of_the_bad_series(run_cli, tmp_path):
    results = [result(None, "ConsumedReadCapacityUnits", steady(1)),
               {**result(None, "ConsumedWriteCapacityUnits", steady(1)), "Label": "elsewhere:-:X:Sum:60"}]
    path = page(tmp_path, "m.json", results)
    code, _, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", path)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "elsewhere" in text)
    assert code == 2 and f"{path}:{line}:" in err


def test_calibrate_needs_metrics_or_print_queries(run_cli):
    code, _, err = run_cli("calibrate", ORDERS, "--env", "prod")
    assert code == 2 and "either --metrics" in err


def test_a_day_of_minutes_for_every_series_is_read(run_cli, tmp_path):
    # 8 series x 1,440 minutes: more values than the blueprint reader's node bound; the JSON reader takes it.
    day = range(24 * 60)
    files = [page(tmp_path, "day.json", [
        result(None, "ConsumedReadCapacityUnits", steady(360, day)),
        result(None, "ConsumedWriteCapacityUnits", steady(124, day)),
        result(None, "ReadThrottleEvents", {}), result(None, "WriteThrottleEvents", {}),
        result("GSI1", "ConsumedReadCapacityUnits", steady(315, day)),
        result("GSI1", "ConsumedWriteCapacityUnits", steady(120, day)),
        result("GSI1", "ReadThrottleEvents", {}), result("GSI1", "WriteThrottleEvents", {})])]
    code, out, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *files, "--format", "json")
    assert code == 0, err
    assert [c["observed_average"] for c in json.loads(out)["comparisons"]] == [360, 124, 315, 120]


FAKE_AWS = r'''#!PYTHON
"""Stands in for the AWS CLI: answers the three calls the printed script makes, as the CLI would print them."""
import json, sys
args = sys.argv[1:]
def option(name):  # names as `--name=value`, times as `--name value`
    if name in args:
        return args[args.index(name) + 1]
    return next(arg.removeprefix(name + "=") for arg in args if arg.startswith(name + "="))
if args[:2] == ["cloudwatch", "get-metric-data"]:
    queries = json.load(open(option("--metric-data-queries").removeprefix("file://")))
    start = option("--start-time")
    print(json.dumps({"MetricDataResults": [
        {"Id": q["Id"], "Label": q["Label"], "Timestamps": [start], "StatusCode": "Complete",
         "Values": [60.0 * (900 if q["Label"].endswith(":-:ConsumedReadCapacityUnits:Sum:60") else 1)]}
        for q in queries], "Messages": []}, indent=4))
elif args[:2] == ["dynamodb", "describe-contributor-insights"]:
    index = [arg.removeprefix("--index-name=") for arg in args if arg.startswith("--index-name=")]
    resource = option("--table-name") + "".join("-" + name for name in index)
    print(f"DynamoDBContributorInsights-PKC-{resource}-1764000000000\tDynamoDBContributorInsights-PKT-{resource}-1764000000000")
elif args[:2] == ["cloudwatch", "get-insight-rule-report"]:
    hot = "-GSI1-" in option("--rule-name") and "-PKC-" in option("--rule-name")
    print(json.dumps({"KeyLabels": ["PK"], "AggregateValue": 100.0 if hot else 0.0, "ApproximateUniqueCount": 1,
                      "Contributors": [{"Keys": ["ORDER_ITEM#p-42"], "ApproximateAggregateValue": 50.0,
                                        "Datapoints": []}] if hot else []}))
else:
    sys.exit(f"unexpected aws call: {args}")
'''


def test_the_printed_script_produces_what_calibrate_reads(run_cli, tmp_path):
    import os
    import subprocess
    import sys

    code, script, _ = run_cli("calibrate", ORDERS, "--env", "prod", "--print-queries")
    assert code == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "aws"
    fake.write_text(FAKE_AWS.replace("PYTHON", sys.executable))
    fake.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["bash", "-e", "-c", script], cwd=work, check=True,
                   env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    reports = sorted((work / "insights").glob("*.json"))
    assert len(reports) == 4  # PKC and PKT of the table and of GSI1
    code, out, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", work / "metrics-orders-prod.json",
                             "--insights", *reports, "--format", "json")
    report = json.loads(out)
    table_reads = next(c for c in report["comparisons"] if c["target"] == "table" and c["direction"] == "read")
    assert table_reads["observed_average"] == 900 and table_reads["verdict"] == "under-declared"
    assert [key["key"] for key in report["keys"]] == ["ORDER_ITEM#p-42"] and code == 1, err
