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

Read strictly: a key given twice in one object, `NaN` or `Infinity`, a value above `MAX_UNITS_PER_SECOND`, a time
before DynamoDB existed or ahead of the clock, and a window longer than CloudWatch keeps datapoints of its period
are refused (each names its file and line): what is compared must be what CloudWatch could have measured.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
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
# A datapoint above this many units (or throttled requests) a second is not a measurement: 1,000 times DynamoDB's
# default per-table throughput quota of 40,000 read and 40,000 write request units a second (raised on request).
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
TABLE_QUOTA = 40_000
MAX_UNITS_PER_SECOND = 1_000 * TABLE_QUOTA
# DynamoDB was launched on 18 January 2012: no datapoint of it is older. CloudWatch takes datapoints up to two hours
# ahead of its clock (PutMetricData), so nothing it holds lies further ahead than that.
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricData.html
EARLIEST = int(datetime(2012, 1, 18, tzinfo=UTC).timestamp())
AHEAD_SECONDS = 2 * 3600
DAY = 86_400
# How long CloudWatch keeps datapoints of a period (periods below the first bound, then below the next ...): a
# series of one-minute datapoints spans at most 15 days, and a calibration's window at most what its coarsest
# period allows. Longer is not what CloudWatch returns, and an average over it says nothing about a normal day.
# https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_concepts.html#Metric
RETENTION = ((60, 3 * 3600), (300, 15 * DAY), (3600, 63 * DAY))
LONGEST_RETENTION = 455 * DAY


def retention(period: int) -> int:
    """The seconds CloudWatch keeps datapoints of `period` seconds."""
    return next((kept for below, kept in RETENTION if period < below), LONGEST_RETENTION)


def _days(seconds: int) -> str:
    return f"{seconds / 3600:.4g} hours" if seconds < DAY else f"{seconds / DAY:.4g} days"


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
        return json.loads(text, object_pairs_hook=_unique, parse_constant=_no_constant), Source(str(path), text)
    except _Duplicate as error:
        raise BlueprintError(f"the key {json.dumps(error.key)} is given twice in one object", hint="pass the AWS "
                             "CLI's output unedited: JSON readers differ on which of two values they keep",
                             location=_at(str(path), text, _duplicate_at(text)),
                             code=ErrorCode.CALIBRATE_INPUT) from None
    except _Constant as error:
        raise BlueprintError(f"not JSON: `{error.name}` is not a JSON number", hint="pass the AWS CLI's output "
                             "unedited (it writes every value as a finite number)",
                             location=_at(str(path), text, text.find(error.name)),
                             code=ErrorCode.CALIBRATE_INPUT) from None
    except (json.JSONDecodeError, RecursionError) as error:
        line, column = (error.lineno, error.colno) if isinstance(error, json.JSONDecodeError) else (1, 1)
        raise BlueprintError(f"not JSON: {error.msg if isinstance(error, json.JSONDecodeError) else 'too deep'}",
                             location=SourceLocation(str(path), line, column), code=ErrorCode.CALIBRATE_INPUT,
                             hint="pass what the AWS CLI prints (`--output json`), whole") from None


class _Duplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _Constant(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return found


def _no_constant(name: str) -> Any:
    raise _Constant(name)


# A JSON string (quotes and escapes included), a colon after it (a key), or a bracket: enough to follow objects.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"(?:\s*:)?|[{}\[\]]')


def _duplicate_at(text: str) -> int:
    """Where the first key given twice in one object is (a scan of the text, only once one is known to be there)."""
    objects: list[set[str] | None] = []  # the keys of each open object; None: an open list
    for token in _TOKEN.finditer(text):
        found = token.group()
        if found in "{[":
            objects.append(set() if found == "{" else None)
        elif found in "}]":
            if objects:
                objects.pop()
        elif found.endswith(":") and objects and objects[-1] is not None:
            key = json.loads(found[:-1].rstrip())
            if key in objects[-1]:
                return token.start()
            objects[-1].add(key)
    return 0


def _at(file: str, text: str, index: int) -> SourceLocation:
    index = max(0, index)
    return SourceLocation(file, text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index))


def _timestamp(text: Any, source: Source, path: FieldPath) -> int:
    try:
        moment = datetime.fromisoformat(text) if isinstance(text, str) else None
        stamp = int(moment.timestamp()) if moment is not None and moment.tzinfo is not None else None
    except (ValueError, OverflowError):
        stamp = None
    if stamp is None:
        raise metrics_error(f"`{ascii(text)[1:-1][:60]}` is not an ISO 8601 time with its offset", "pass the AWS "
                            "CLI's JSON output unedited (`--output json`)", source, path)
    if not EARLIEST <= stamp <= time.time() + AHEAD_SECONDS:
        when = "before DynamoDB existed (18 January 2012)" if stamp < EARLIEST else "ahead of this computer's clock"
        raise metrics_error(f"`{text}` is {when}: no CloudWatch datapoint is", "pass the AWS CLI's output "
                            "unedited, of a window that has passed (check the clock where it ran)", source, path)
    return stamp


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


def _check_value(value: Any, series: Series, source: Source, path: FieldPath) -> None:
    """A count or a number of units, finite, at most `MAX_UNITS_PER_SECOND` a second (a `Sum` over its period)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (isinstance(value, float)
                                                                        and not math.isfinite(value)) or value < 0:
        raise metrics_error(f"{ascii(value)[:40]} is not a count or a number of units", "pass the AWS CLI's output "
                            "unedited", source, path)
    summed = METRICS[series.metric][2] == "Sum"
    if value > MAX_UNITS_PER_SECOND * (series.period if summed else 1):
        shown = f"{value:.3g}" if isinstance(value, float) or value.bit_length() < 1000 else "a number this large"
        raise metrics_error(
            f"{shown} {'in ' + str(series.period) + ' s ' if summed else ''}is more than {MAX_UNITS_PER_SECOND:,} "
            f"{'units' if series.kind != 'throttled' else 'requests'} a second: 1,000 times DynamoDB's default table "
            f"quota ({TABLE_QUOTA:,} a second), not a measurement", "pass the AWS CLI's output unedited, of this "
            "table's queries (quotas: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
            "ServiceQuotas.html)", source, path)


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
            _check_value(value, series, source, (*path, "Values", position))
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
    _check_window(list(found.values()))
    partial = tuple(label for label, series in sorted(found.items()) if not series.complete)
    return Metrics(tuple(found[label] for label in sorted(found)), partial)


def _check_window(series: Sequence[Series]) -> None:
    """Each series spans at most what CloudWatch keeps of its period, and all of them together at most what it
    keeps of the coarsest: a window compared as one."""
    spans = [(min(s.points), max(s.points) + s.period, s) for s in series if s.points]
    for start, end, one in spans:
        if end - one.period - start > retention(one.period):
            raise BlueprintError(
                f"`{_name(one)}` spans {_days(end - start)}: "
                f"CloudWatch keeps datapoints of {one.period} s for {_days(retention(one.period))}",
                hint="query one window CloudWatch holds, such as the last day (`calibrate --print-queries`)",
                location=one.where, code=ErrorCode.CALIBRATE_INPUT)
    if not spans:
        return
    first = min(spans, key=lambda item: item[0])
    last = max(spans, key=lambda item: item[1])
    longest = max(retention(one.period) for _, _, one in spans)
    if last[1] - first[0] > longest + max(one.period for _, _, one in spans):
        raise BlueprintError(
            f"the series span {_days(last[1] - first[0])}, from `{_name(first[2])}` at {_iso(first[0])} to "
            f"`{_name(last[2])}` at {_iso(last[1])}: CloudWatch keeps their periods' datapoints for "
            f"{_days(longest)}", hint="pass the pages of one query over one window (`calibrate --print-queries`)",
            location=last[2].where, code=ErrorCode.CALIBRATE_INPUT)


def _name(series: Series) -> str:
    return metric_label(series.table, series.index, series.metric, series.period)


def _iso(moment: int) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
