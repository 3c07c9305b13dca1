"""The output of `aws cloudwatch get-metric-data`, as `calibrate --print-queries` asks for it: one series per
table or GSI, metric and direction, pages joined.

The CLI prints `MetricDataResults` (`Id`, `Label`, `Timestamps`, `Values`, `StatusCode`) and, when the answer has
more pages, `NextToken`. The queries Tablewright prints label each series `<table>:<index>:<metric>:<stat>:<period>`
(`-` for the table itself: a GSI name has at least 3 characters), which is how a series is traced back to its
table or index: the output carries no dimensions.
https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_GetMetricData.html
https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricDataResult.html

DynamoDB publishes consumed capacity and throttle events only for periods with requests: a missing datapoint of
those is 0. ConsumedRead/WriteCapacityUnits are read with the Sum statistic, divided by the period for units per
second; the throttle events count throttled requests (every attempt, so SDK retries too).
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/metrics-dimensions.html
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from tablewright.errors import BlueprintError, ErrorCode, FieldPath, SourceLocation

Direction = Literal["read", "write"]
TABLE_LABEL = "-"
MAX_FILES = 100
# A day of one-minute datapoints for a table with 20 GSIs is about 10 MB; one call returns at most 100,800.
MAX_FILE_BYTES = 64 * 1024 * 1024
_LABEL = re.compile(r'"Label"\s*:')
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,255}")  # a DynamoDB table or index name
# metric -> (what it measures, direction, the statistic the queries ask for)
METRICS: dict[str, tuple[str, Direction, str]] = {
    "ConsumedReadCapacityUnits": ("consumed", "read", "Sum"),
    "ConsumedWriteCapacityUnits": ("consumed", "write", "Sum"),
    "ReadThrottleEvents": ("throttled", "read", "Sum"),
    "WriteThrottleEvents": ("throttled", "write", "Sum"),
    "ProvisionedReadCapacityUnits": ("provisioned", "read", "Average"),
    "ProvisionedWriteCapacityUnits": ("provisioned", "write", "Average"),
}
STATUSES = ("Complete", "PartialData", "InternalError", "Forbidden")


def metric_label(table: str, index: str | None, metric: str, period: int) -> str:
    return f"{table}:{index or TABLE_LABEL}:{metric}:{METRICS[metric][2]}:{period}"


@dataclass
class Series:
    table: str
    index: str | None  # None: the table
    metric: str
    period: int  # seconds
    points: dict[int, float] = field(default_factory=dict)  # epoch second -> value
    where: SourceLocation | None = None  # where its first page is
    complete: bool = False  # a page said Complete: every datapoint of the range was returned

    @property
    def kind(self) -> str:
        return METRICS[self.metric][0]

    @property
    def direction(self) -> Direction:
        return METRICS[self.metric][1]


@dataclass(frozen=True)
class Metrics:
    series: tuple[Series, ...]
    partial: tuple[str, ...]  # labels no page completed (more pages were not passed)


@dataclass(frozen=True)
class Source:
    """A metrics file's text, to say where a result is: the line of its `Label` (the series' identity). The file
    is read with the JSON parser, not the located YAML reader: a day of datapoints is far more than a blueprint."""

    file: str
    text: str

    def locate(self, path: FieldPath) -> SourceLocation:
        if len(path) < 2 or path[0] != "MetricDataResults" or not isinstance(path[1], int):
            return SourceLocation(self.file, 1, 1)
        for number, found in enumerate(_LABEL.finditer(self.text)):
            if number == path[1]:
                return SourceLocation(self.file, self.text.count("\n", 0, found.start()) + 1, 1)
        return SourceLocation(self.file, 1, 1)


def metrics_error(message: str, hint: str, source: Source, path: FieldPath = ()) -> BlueprintError:
    return BlueprintError(message, hint=hint, location=source.locate(path), code=ErrorCode.CALIBRATE_INPUT)


def read_json(path: Path) -> tuple[Any, Source]:
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            raise BlueprintError(f"{path} is not a file of at most {MAX_FILE_BYTES // 2**20} MB",
                                 hint="pass the file the AWS CLI wrote; split a larger answer into pages "
                                      "(`--max-items`)", code=ErrorCode.CALIBRATE_INPUT)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise BlueprintError(f"{path} cannot be read ({error})", hint="pass the JSON file the AWS CLI wrote",
                             code=ErrorCode.CALIBRATE_INPUT) from None
    try:
        return json.loads(text), Source(str(path), text)
    except (json.JSONDecodeError, RecursionError) as error:
        line, column = (error.lineno, error.colno) if isinstance(error, json.JSONDecodeError) else (1, 1)
        raise BlueprintError(f"not JSON: {error.msg if isinstance(error, json.JSONDecodeError) else 'too deep'}",
                             location=SourceLocation(str(path), line, column), code=ErrorCode.CALIBRATE_INPUT,
                             hint="pass what the AWS CLI prints (`--output json`), whole") from None


def _timestamp(text: Any, source: Source, path: FieldPath) -> int:
    try:
        moment = datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise metrics_error(f"`{text}` is not an ISO 8601 time with its offset", "pass the AWS CLI's JSON output "
                            "unedited (`--output json`)", source, path)
    return int(moment.timestamp())


def _label(result: dict[str, Any], source: Source, path: FieldPath) -> tuple[str, str | None, str, int]:
    label = result.get("Label")
    parts = label.split(":") if isinstance(label, str) else []
    example = metric_label("orders-prod", None, "ConsumedReadCapacityUnits", 60)
    if (len(parts) != 5 or not _NAME.fullmatch(parts[0]) or not (parts[1] == TABLE_LABEL or _NAME.fullmatch(parts[1]))
            or parts[2] not in METRICS or not parts[4].isdigit()):
        raise metrics_error(f"the label {ascii(label)[:200]} does not name a table, index, DynamoDB metric and period",
                            f"run the queries `calibrate --print-queries` prints: they label each series as "
                            f"`{example}`", source, (*path, "Label"))
    table, index, metric, stat, period = parts
    if stat != METRICS[metric][2] or not 1 <= int(period) <= 86_400 * 30:
        raise metrics_error(f"`{label}`: {metric} is read as its {METRICS[metric][2]} over a period of 1 s to 30 "
                            "days", f"query the {METRICS[metric][2]} statistic (as `--print-queries` does)", source,
                            (*path, "Label"))
    return table, None if index == TABLE_LABEL else index, metric, int(period)


def _page(data: Any, source: Source, found: dict[str, Series], file: str) -> bool:
    """Adds one page's datapoints to `found`; whether the page says more pages follow."""
    if not isinstance(data, dict) or not isinstance(data.get("MetricDataResults"), list):
        raise metrics_error(f"{file} is not the output of `aws cloudwatch get-metric-data` (no `MetricDataResults`)",
                            "pass what `aws cloudwatch get-metric-data` prints, as JSON", source)
    for number, result in enumerate(data["MetricDataResults"]):
        path: FieldPath = ("MetricDataResults", number)
        if not isinstance(result, dict):
            raise metrics_error("a result is not an object", "pass the AWS CLI's output unedited", source, path)
        status = result.get("StatusCode")
        if status not in STATUSES:
            raise metrics_error(f"`StatusCode: {status}` is not one CloudWatch returns",
                                f"one of {', '.join(STATUSES)}", source, (*path, "StatusCode"))
        if status == "Forbidden":
            raise metrics_error(f"CloudWatch refused `{result.get('Label')}` (Forbidden)", "allow "
                                "cloudwatch:GetMetricData on the role that runs the query, and run it again", source,
                                (*path, "StatusCode"))
        if status == "InternalError":
            raise metrics_error(f"CloudWatch failed on `{result.get('Label')}` (InternalError)", "run the query "
                                "again; its values are not complete", source, (*path, "StatusCode"))
        table, index, metric, period = _label(result, source, path)
        stamps, values = result.get("Timestamps"), result.get("Values")
        if not isinstance(stamps, list) or not isinstance(values, list) or len(stamps) != len(values):
            raise metrics_error("`Timestamps` and `Values` are not two lists of the same length", "pass the AWS CLI's "
                                "output unedited", source, (*path, "Values"))
        key = str(result["Label"])
        series = found.setdefault(key, Series(table, index, metric, period, where=source.locate(path)))
        for position, (stamp, value) in enumerate(zip(stamps, values, strict=True)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise metrics_error(f"{value!r} is not a count or a number of units", "pass the AWS CLI's output "
                                    "unedited", source, (*path, "Values", position))
            moment = _timestamp(stamp, source, (*path, "Timestamps", position))
            before = series.points.get(moment)
            if before is not None and before != value:
                raise metrics_error(f"`{key}` has two values at {stamp} ({before} and {value})", "pass each page "
                                    "once, and pages of one query only", source, (*path, "Values", position))
            series.points[moment] = float(value)
        series.complete = series.complete or status == "Complete"
    return bool(data.get("NextToken"))


def read_metrics(paths: Sequence[Path]) -> Metrics:
    """Every file's series, pages joined by label. Every page but the last of a query carries `NextToken`: when
    each file does, the last page is missing."""
    if len(paths) > MAX_FILES:
        raise BlueprintError(f"{len(paths)} metric files; calibrate reads at most {MAX_FILES}",
                             hint="ask for a longer period per datapoint, so fewer pages", code=ErrorCode.USAGE)
    found: dict[str, Series] = {}
    continued = []
    for path in paths:
        data, source = read_json(path)
        if _page(data, source, found, str(path)):
            continued.append(str(path))
    if paths and len(continued) == len(paths):
        raise BlueprintError(f"every metric file ends with a `NextToken`: the last page is missing ({continued[-1]})",
                             hint="run the query again with `--starting-token TOKEN` (or without `--no-paginate`) "
                                  "and pass that page too", code=ErrorCode.CALIBRATE_INPUT)
    partial = tuple(label for label, series in sorted(found.items()) if not series.complete)
    return Metrics(tuple(found[label] for label in sorted(found)), partial)
