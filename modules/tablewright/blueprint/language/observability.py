"""Observability: alarms, the maintenance window and the change rules."""

from __future__ import annotations

import re
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator, model_validator

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language.base import MAX_NOTIFY_TARGETS, PUBLISHED_EVERY, PUBLISHED_METRICS, Strict
from tablewright.errors import ErrorCode

Operation = Literal["GetItem", "BatchGetItem", "Query", "Scan", "PutItem", "UpdateItem", "DeleteItem",
                    "TransactWriteItems"]


class AlarmRule(Strict):
    """Overrides for one kind of alarm; unset values keep Tablewright's defaults (see the README)."""

    enabled: bool | None = None
    threshold: float | None = Field(default=None, ge=0, le=10**12)
    period: int | None = Field(default=None, ge=60, le=86400, multiple_of=60, description="Seconds, a multiple of 60.")
    evaluation_periods: int | None = Field(default=None, ge=1, le=100)
    datapoints: int | None = Field(default=None, ge=1, le=100, description="Datapoints that must breach (M of N).")

    @model_validator(mode="after")
    def _m_of_n(self) -> AlarmRule:
        if self.datapoints and self.evaluation_periods and self.datapoints > self.evaluation_periods:
            raise Invalid("`datapoints` exceeds `evaluation_periods`", "use M of N with M <= N", "datapoints",
                          code=ErrorCode.CONTRADICTION)
        return self


class LatencyRule(AlarmRule):
    operations: dict[Operation, Annotated[float, Field(gt=0, le=60_000)]] = Field(
        default_factory=dict, description="p99 thresholds in milliseconds per operation, over the default one."
    )


class Alarms(Strict):
    enabled: bool = Field(default=True, description="Create the CloudWatch alarms at all.")
    notify: Literal["create"] | list[str] = Field(
        default="create",
        description="`create`: an encrypted SNS topic in this stack; or the SNS topic ARNs alarms notify.",
        examples=[["arn:aws:sns:eu-west-1:123456789012:oncall"]],
    )
    account_level: bool = Field(
        default=False,
        description="Also alarm on UserErrors and AccountProvisioned*CapacityUtilization (enable in one stack per "
        "account and region).",
    )
    throttles: AlarmRule = Field(default_factory=AlarmRule)
    key_range_throttles: AlarmRule = Field(default_factory=AlarmRule)
    utilization: AlarmRule = Field(default_factory=AlarmRule)
    latency: LatencyRule = Field(default_factory=LatencyRule)
    system_errors: AlarmRule = Field(default_factory=AlarmRule)
    conditional_checks: AlarmRule = Field(default_factory=AlarmRule)
    online_index_throttles: AlarmRule = Field(default_factory=AlarmRule)
    max_throughput_throttles: AlarmRule = Field(default_factory=AlarmRule)
    user_errors: AlarmRule = Field(default_factory=AlarmRule)
    account_utilization: AlarmRule = Field(default_factory=AlarmRule)

    @model_validator(mode="after")
    def _periods(self) -> Alarms:
        for kind, seconds in PUBLISHED_EVERY.items():
            period = getattr(self, kind).period
            if period is not None and period % seconds:
                raise Invalid(
                    f"`{kind}.period: {period}`: DynamoDB publishes {PUBLISHED_METRICS[kind]} every {seconds} "
                    "seconds, so a shorter or unaligned period sees no data in most periods",
                    f"use a multiple of {seconds}", kind, code=ErrorCode.VALUE_NOT_ALLOWED)
        return self

    @field_validator("notify")
    @classmethod
    def _arns(cls, value: object) -> object:
        if isinstance(value, list):
            if not value:
                raise Invalid("`notify` lists no topic", "list SNS topic ARNs, or write `notify: create`",
                              code=ErrorCode.VALUE_NOT_ALLOWED)
            if len(value) > MAX_NOTIFY_TARGETS:
                raise Invalid(f"`notify` lists {len(value)} topics; alarms and rules notify at most "
                              f"{MAX_NOTIFY_TARGETS}", "fan out from one topic (SNS subscriptions)",
                                                                                code=ErrorCode.VALUE_NOT_ALLOWED)
            for arn in value:
                if not re.fullmatch(r"arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}", arn):
                    raise Invalid(f"{arn!r} is not an SNS topic ARN", "arn:aws:sns:<region>:<account>:<topic>",
                                  code=ErrorCode.VALUE_NOT_ALLOWED)
        return value


WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")


def _duration_minutes(text: str) -> int:
    """The minutes of a duration written `2h`, `90m` or `1h30m`; 0 for any other text."""
    match = re.fullmatch(r"(?:([0-9]+)h)?(?:([0-9]+)m)?", text)
    return int(match.group(1) or 0) * 60 + int(match.group(2) or 0) if match and text else 0


class MaintenanceWindow(Strict):
    """When changes that rebuild indexes or touch the table may be applied."""

    days: Literal["daily"] | Annotated[list[Literal["MO", "TU", "WE", "TH", "FR", "SA", "SU"]],
                                       Field(min_length=1, max_length=7)] = Field(
        default="daily", description="`daily`, or weekdays as MO TU WE TH FR SA SU (at least one).",
        examples=[["SA", "SU"]]
    )
    start: str = Field(description="Local start time, HH:MM (24 h).", examples=["02:00"])
    duration: str = Field(description="How long the window stays open: `2h`, `90m`, `1h30m` (at most 24h).",
                          examples=["2h"])
    timezone: str = Field(description="IANA time zone of `start`.", examples=["Asia/Shanghai"])

    @field_validator("start")
    @classmethod
    def _start(cls, value: str) -> str:
        if not re.fullmatch(r"([01][0-9]|2[0-3]):[0-5][0-9]", value):
            raise Invalid(f"start {value!r} is not a time of day", "write HH:MM on a 24-hour clock, e.g. \"02:00\"",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        return value

    @field_validator("duration")
    @classmethod
    def _duration(cls, value: str) -> str:
        if not 0 < _duration_minutes(value) <= 24 * 60:
            raise Invalid(f"duration {value!r} is not between 1m and 24h", "write e.g. `2h`, `90m` or `1h30m`",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_+\-/]{0,63}", value):
                raise ValueError(value)
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise Invalid(f"unknown time zone {value!r}",
                          "use an IANA name such as Europe/Berlin or Asia/Shanghai",
                          code=ErrorCode.VALUE_NOT_ALLOWED) from None
        return value

    @property
    def minutes(self) -> int:
        return _duration_minutes(self.duration)

    @property
    def weekdays(self) -> tuple[str, ...]:
        return WEEKDAYS if self.days == "daily" else tuple(d for d in WEEKDAYS if d in self.days)


class ChangeRules(Strict):
    """How out-of-band changes to the table are seen (the EventBridge rule on CloudTrail events)."""

    trail: Literal["existing", "create"] = Field(
        default="existing",
        description="EventBridge sees CloudTrail API calls only while a trail logs management events in the "
        "region. `existing`: the account has one (an organization trail, say); Terraform cannot check it. "
        "`create`: this stack creates a single-region trail with its own S3 bucket.",
    )
