"""`calibrate`: files in the exact shape `aws cloudwatch get-metric-data` prints, against the bundled orders
blueprint's declared rates (prod: on demand, peak factor 3).

Declared, by hand from blueprints/orders.yaml (units per call from the DynamoDB rules, as `capacity` prints):
table reads 120 x 1 + 400 x 0.5 + 80 x 0.5 = 360 units/s, busiest minute 3 x 360 = 1,080; GSI1 reads
10 x 1.5 + 150 x 2 = 315; table writes 30 + 90 + 1 x 2 + 2 = 124; GSI1 writes 30 + 90 = 120.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tablewright.calibrate.queries import metric_queries

ORDERS = "blueprints/orders.yaml"
TABLE = "prod-orders_main"
START = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def label(index: str | None, metric: str) -> str:
    stat = "Average" if metric.startswith("Provisioned") else "Sum"
    return f"{TABLE}:{index or '-'}:{metric}:{stat}:60"


def result(index: str | None, metric: str, per_minute: dict[int, float], status: str = "Complete") -> dict:
    """One `MetricDataResults` entry as CloudWatch returns it: newest first, minutes without data left out."""
    minutes = sorted(per_minute, reverse=True)
    return {"Id": f"m{abs(hash((index, metric))) % 1000}", "Label": label(index, metric),
            "Timestamps": [(START + timedelta(minutes=m)).isoformat() for m in minutes],
            "Values": [per_minute[m] for m in minutes], "StatusCode": status}


def page(tmp_path: Path, name: str, results: list[dict], next_token: str | None = None) -> Path:
    document: dict = {"MetricDataResults": results, "Messages": []}
    if next_token:
        document["NextToken"] = next_token
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=4))
    return path


def steady(units_per_second: float, minutes: range = range(60)) -> dict[int, float]:
    return {m: units_per_second * 60 for m in minutes}


def as_declared(tmp_path: Path) -> list[Path]:
    return [page(tmp_path, "metrics.json", [
        result(None, "ConsumedReadCapacityUnits", steady(360)),
        result(None, "ConsumedWriteCapacityUnits", steady(124)),
        result("GSI1", "ConsumedReadCapacityUnits", steady(315)),
        result("GSI1", "ConsumedWriteCapacityUnits", steady(120)),
    ])]


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
    assert "aws cloudwatch get-metric-data --region us-east-1 --metric-data-queries file://queries-orders-prod.json" \
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


def insight_report(directory: Path, rule: str, contributors: dict[str, float], aggregate: float) -> Path:
    """A report as `aws cloudwatch get-insight-rule-report` prints it, in a file named after its rule."""
    directory.mkdir(exist_ok=True)
    path = directory / f"{rule}.json"
    path.write_text(json.dumps({
        "KeyLabels": ["PK"], "AggregationStatistic": "Sum", "AggregateValue": aggregate,
        "ApproximateUniqueCount": len(contributors) + 40,
        "Contributors": [{"Keys": [key], "ApproximateAggregateValue": value,
                          "Datapoints": [{"Timestamp": START.isoformat(), "ApproximateValue": value}]}
                         for key, value in contributors.items()],
        "MetricDatapoints": [{"Timestamp": START.isoformat(), "UniqueContributors": 44.0, "Sum": aggregate}]},
        indent=4))
    return path


def test_a_hot_key_found_by_contributor_insights(run_cli, tmp_path):
    # GSI1 serves 435 units/s: reads 10 x 1.5 (orders_with_product, OrderItem) + 150 x 2 (user_orders_by_date,
    # Order), writes 30 (Order) + 90 (OrderItem). `ORDER_ITEM#{productId}` (OrderItem) takes 105 of them, spread
    # over productIds as declared (an identifier). Observed: one product takes 15 % of GSI1's accesses; the
    # hot_key_share that declares it is 0.15 / (105 / 435).
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
    assert hot["change"]["suggested"] == round(0.15 / (105 / 435), 2) == 0.62
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


FAKE_AWS = r'''#!PYTHON
"""Stands in for the AWS CLI: answers the three calls the printed script makes, as the CLI would print them."""
import json, sys
args = sys.argv[1:]
def option(name):
    return args[args.index(name) + 1]
if args[:2] == ["cloudwatch", "get-metric-data"]:
    queries = json.load(open(option("--metric-data-queries").removeprefix("file://")))
    start = option("--start-time")
    print(json.dumps({"MetricDataResults": [
        {"Id": q["Id"], "Label": q["Label"], "Timestamps": [start], "StatusCode": "Complete",
         "Values": [60.0 * (900 if q["Label"].endswith(":-:ConsumedReadCapacityUnits:Sum:60") else 1)]}
        for q in queries], "Messages": []}, indent=4))
elif args[:2] == ["dynamodb", "describe-contributor-insights"]:
    resource = option("--table-name") + ("-" + option("--index-name") if "--index-name" in args else "")
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


def test_a_key_value_cannot_write_to_the_terminal(run_cli, tmp_path):
    path = insight_report(tmp_path / "insights", f"DynamoDBContributorInsights-PKT-{TABLE}-1764000000000",
                          {"ORDER#\x1b]0;owned\x07" + "x" * 500: 9}, 9)
    code, out, _ = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *as_declared(tmp_path),
                           "--insights", path)
    assert code == 1 and "\x1b" not in out and "\x07" not in out and "x" * 200 not in out


def test_write_declares_the_observed_hot_key_and_lint_then_sees_it(run_cli, write_blueprint, tmp_path):
    # orders.yaml with OrderItem written 900 times a second (a comment added). GSI1 then serves reads 15 + 300
    # and writes 30 + 900 = 1,245 units/s, OrderItem's template 915 of them. One product takes 60 % of GSI1's
    # accesses: hot_key_share 0.6 / (915 / 1,245) = 0.82 on productId, so at the peak (x3) that product's key
    # takes 900 x 3 x 0.82 = 2,214 WCU: more than a partition's 1,000, a lint error.
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
                                 "      productId: {type: string, hot_key_share: 0.82}\n      orderedAt", 1)
    assert "+      productId: {type: string, hot_key_share: 0.82}" in err and "1 blueprint file(s) written" in err
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


def test_a_window_of_years_is_compared_but_not_replayed(run_cli, tmp_path):
    # Two datapoints ten years apart: replaying them second by second would take gigabytes.
    reads = {0: 360 * 60, 10 * 365 * 24 * 60: 360 * 60}
    files = [page(tmp_path, "m.json", [result(None, "ConsumedReadCapacityUnits", reads)])]
    code, out, err = run_cli("calibrate", ORDERS, "--env", "prod", "--metrics", *files, "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["replay"] == [] and report["comparisons"][0]["verdict"] == "over-declared", err


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
