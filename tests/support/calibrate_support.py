"""CloudWatch `get-metric-data` pages and Contributor Insights reports in the exact shape the AWS CLI prints them, for
the calibrate tests (tests/calibrate/), about the prod table of the bundled orders blueprint. `as_declared`: traffic
exactly at its declared rates (worked out by hand in tests/calibrate/test_calibrate.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

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
