"""The table and its indexes: keys, billing, capacity, throughput and table settings."""

from __future__ import annotations

import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language.attributes import KeyAttributes
from tablewright.blueprint.language.base import (
    KMS_KEY_ARN,
    MAX_CAPACITY,
    MAX_COOLDOWN,
    MAX_RATE,
    AttributeName,
    KeyAttributeName,
    Strict,
    TableName,
)
from tablewright.blueprint.language.traffic import EventName, TimeOfDay
from tablewright.errors import ErrorCode

Weekday = Literal["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]
WEEKDAYS: tuple[Weekday, ...] = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
MAX_SCHEDULED = 10


class ScheduledMinimum(Strict):
    """A higher minimum for a known surge: Application Auto Scaling raises the capacity at `start` and lowers the
    minimum back at `end` (two scheduled actions, `aws_appautoscaling_scheduled_action`)."""

    name: EventName = Field(description="Names the two scheduled actions (`<table>-<direction>-<name>-raise`).",
                            examples=["flash-sale"])
    start: TimeOfDay = Field(description="When the minimum is raised, UTC `HH:MM`: before the surge, leaving "
                             "time for the capacity to arrive.", examples=["17:45"])
    end: TimeOfDay = Field(description="When the configured minimum returns, UTC `HH:MM`.", examples=["18:30"])
    min: int = Field(ge=1, le=MAX_CAPACITY, description="The minimum capacity units while it lasts.")
    days: list[Weekday] | None = Field(default=None, min_length=1, max_length=7,
                                       description="The weekdays it runs on (UTC, `cron(...)`); default every day.")
    day_of_month: int | None = Field(default=None, ge=1, le=28,
                                     description="The day of the month it runs on (UTC, `cron(...)`): a monthly "
                                     "event's.")
    date: Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")] | None = Field(
        default=None, description="Runs once, on this date (UTC, `at(...)` one-time scheduled actions): an `every: "
        "once` event's. A window past midnight is restored the next day.", examples=["2027-11-26"])

    @model_validator(mode="after")
    def _lasts(self) -> ScheduledMinimum:
        if self.start == self.end:
            raise Invalid("`start` and `end` are the same time", "end it after the surge", "end",
                          code=ErrorCode.CONTRADICTION)
        given = [name for name in ("days", "day_of_month", "date") if getattr(self, name) is not None]
        if len(given) > 1:
            raise Invalid(f"`{given[0]}` and `{given[1]}` both say when it runs", "keep one: `days` (weekly), "
                          "`day_of_month` (monthly) or `date` (once)", given[1], code=ErrorCode.CONTRADICTION)
        if self.day_of_month == 28 and self.end < self.start:
            raise Invalid("a window past midnight from the 28th is restored on the 29th, which February lacks",
                          "run it on day 27 at the latest, or end it by midnight", "day_of_month",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        if self.date is not None:
            try:
                datetime.date.fromisoformat(self.date)
            except ValueError:
                raise Invalid(f"`date` {self.date!r} is not a calendar date", "write `YYYY-MM-DD`, e.g. "
                              "`2027-11-26`", "date", code=ErrorCode.VALUE_NOT_ALLOWED) from None
        return self

    @property
    def recurrence(self) -> Literal["once", "day", "week", "month"]:
        """How often it runs: once (`date`), on weekdays (`days`), monthly (`day_of_month`), else daily."""
        if self.date is not None:
            return "once"
        if self.day_of_month is not None:
            return "month"
        return "week" if self.days is not None and len(set(self.days)) < 7 else "day"


class CapacityRange(Strict):
    min: int = Field(ge=1, le=MAX_CAPACITY, description="Lowest provisioned capacity units the autoscaler may set.")
    max: int = Field(ge=1, le=MAX_CAPACITY, description="Highest provisioned capacity units the autoscaler may set.")
    target_utilization: int | None = Field(
        default=None, ge=20, le=90, description="This direction's autoscaling target (default: the capacity's).")
    scale_in_cooldown: int | None = Field(
        default=None, ge=0, le=MAX_COOLDOWN,
        description="Seconds after a scale-in before the next one (Application Auto Scaling's default when unset).")
    scale_out_cooldown: int | None = Field(
        default=None, ge=0, le=MAX_COOLDOWN,
        description="Seconds after a scale-out before the next one (Application Auto Scaling's default when unset).")
    disable_scale_in: bool = Field(default=False, description="Never lower the capacity automatically.")
    scheduled: list[ScheduledMinimum] = Field(
        default_factory=list, max_length=MAX_SCHEDULED,
        description="Higher minimums at known times (before an event): scheduled scaling actions.")

    @model_validator(mode="after")
    def _ordered(self) -> CapacityRange:
        if self.max < self.min:
            raise Invalid(f"max ({self.max}) is below min ({self.min})", "make max at least min", "max",
                          code=ErrorCode.CONTRADICTION)
        for scheduled in self.scheduled:
            if scheduled.min > self.max:
                raise Invalid(f"scheduled {scheduled.name!r}: min {scheduled.min:,} is above max ({self.max:,})",
                              f"raise `max` to at least {scheduled.min} or lower the scheduled minimum", "scheduled",
                              code=ErrorCode.CONTRADICTION)
        names = [s.name for s in self.scheduled]
        if len(set(names)) != len(names):
            raise Invalid("two scheduled minimums share a name", "give each its own name", "scheduled",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        return self


class Capacity(Strict):
    read: CapacityRange
    write: CapacityRange
    target_utilization: int = Field(
        default=70,
        ge=20,
        le=90,
        description="Autoscaling target, percent of provisioned capacity in use (AWS allows 20-90).",
    )


class Throughput(Strict):
    """Request units per second, read and write (an on-demand maximum); a direction left out has none."""

    read: int | None = Field(default=None, ge=1, le=MAX_RATE,
                             description="Read request units per second (left out: no read maximum).")
    write: int | None = Field(default=None, ge=1, le=MAX_RATE,
                              description="Write request units per second (left out: no write maximum).")

    @model_validator(mode="after")
    def _one_direction_at_least(self) -> Throughput:
        if self.read is None and self.write is None:
            raise Invalid("a maximum names `read`, `write` or both", "write `{read: N, write: N}`, or `unlimited`",
                          code=ErrorCode.MISSING_FIELD)
        return self


# What `max_throughput` takes besides numbers: `suggested` (from the declared rates) or `unlimited`.
MaxThroughput = Throughput | Literal["suggested", "unlimited"]
MAX_THROUGHPUT_DESCRIPTION = (
    "On-demand billing only: the most request units per second DynamoDB serves (`on_demand_throughput`, a cost "
    "guard; requests above it are throttled and counted in Read/WriteMaxOnDemandThroughputThrottleEvents). "
    "`{read: N, write: N}` (a direction left out has no maximum); `suggested`: the declared peak at the target "
    "utilization (what `capacity` suggests as "
    "the autoscaling maximum), at least 100 per direction; `unlimited`: remove a maximum set before. Unset: no "
    "maximum is written, and one set before stays."
)


class WarmThroughput(Strict):
    """Throughput DynamoDB keeps ready without scaling up first (hashicorp/aws >= 6.13)."""

    read: int = Field(ge=12_000, le=MAX_RATE, description="Read units per second, at least 12,000.")
    write: int = Field(ge=4_000, le=MAX_RATE, description="Write units per second, at least 4,000.")


WARM_THROUGHPUT_DESCRIPTION = (
    "Pre-warmed read and write units per second (`warm_throughput`; needs hashicorp/aws >= 6.13). It can only be "
    "raised on the table: the provider replaces the table to lower it (a GSI's changes in place either way)."
)


class TableSpec(Strict):
    name: TableName
    keys: KeyAttributes | None = Field(
        default=None, description="The table's key attributes when they are not `PK`/`SK` (an adopted table).",
        examples=[{"pk": "tenantId", "sk": {"name": "createdAt", "type": "number"}}])
    billing: Literal["provisioned", "on_demand"] = "on_demand"
    capacity: Capacity | None = Field(default=None, description="Required for provisioned billing.")
    ttl_attribute: KeyAttributeName | None = Field(
        default=None, description="A number or epoch_seconds timestamp attribute holding the expiry time."
    )
    point_in_time_recovery: bool = True
    point_in_time_recovery_days: int | None = Field(
        default=None, ge=1, le=35,
        description="Days of restore points point-in-time recovery keeps, 1-35 (unset: AWS's default, 35).")
    deletion_protection: bool = True
    encryption: Literal["aws_owned", "aws_managed", "customer_managed"] = Field(
        default="aws_owned",
        description="`customer_managed` creates a KMS key with rotation unless `kms_key_arn` names one.",
    )
    kms_key_arn: Annotated[str, StringConstraints(pattern=KMS_KEY_ARN)] | None = Field(
        default=None, description="An existing KMS key (or alias) ARN for `customer_managed` encryption.",
        examples=["arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"])
    stream: Literal["off", "keys_only", "new_image", "old_image", "new_and_old_images"] = "off"
    table_class: Literal["standard", "standard_infrequent_access"] = Field(
        default="standard",
        description="`standard_infrequent_access`: cheaper storage, dearer reads and writes (priced by `capacity`).")
    max_throughput: MaxThroughput | None = Field(default=None, description=MAX_THROUGHPUT_DESCRIPTION,
                                                 examples=[{"read": 4000, "write": 1000}])
    warm_throughput: WarmThroughput | None = Field(default=None, description=WARM_THROUGHPUT_DESCRIPTION)

    @model_validator(mode="after")
    def _consistent(self) -> TableSpec:
        if self.billing == "provisioned" and self.capacity is None:
            raise Invalid(
                "provisioned billing needs `capacity`",
                "add `capacity: {read: {min: 5, max: 100}, write: {min: 5, max: 100}}` or use `billing: on_demand`",
                code=ErrorCode.MISSING_FIELD,
            )
        if self.billing == "on_demand" and self.capacity is not None:
            raise Invalid(
                "`capacity` applies to provisioned billing only",
                "remove `capacity` or set `billing: provisioned`",
                "capacity",
                code=ErrorCode.CONTRADICTION,
            )
        if self.point_in_time_recovery_days is not None and not self.point_in_time_recovery:
            raise Invalid("`point_in_time_recovery_days` needs `point_in_time_recovery: true`",
                          "remove `point_in_time_recovery_days`, or turn point-in-time recovery on",
                          "point_in_time_recovery_days",
                          code=ErrorCode.CONTRADICTION)
        if self.kms_key_arn is not None and self.encryption != "customer_managed":
            raise Invalid(
                "`kms_key_arn` needs `encryption: customer_managed`", "set `encryption: customer_managed`",
                "kms_key_arn",
                code=ErrorCode.CONTRADICTION,
            )
        if self.billing == "provisioned" and self.max_throughput is not None:
            raise Invalid(
                "`max_throughput` applies to on-demand billing only; a provisioned table is bounded by its capacity",
                "remove `max_throughput` (the autoscaler stops at `capacity.read.max` / `capacity.write.max`)",
                "max_throughput",
                code=ErrorCode.CONTRADICTION,
            )
        return self


class IndexSpec(Strict):
    """Settings of one GSI. Everything is optional: GSIs are planned from the access patterns."""

    projection: Literal["keys_only", "all"] | list[KeyAttributeName] | None = Field(
        default=None,
        description="Override the planned projection: `keys_only`, `all`, or the attributes to include.",
    )
    capacity: Capacity | None = Field(default=None, description="Autoscaling bounds (default: the table's).")
    type: Literal["global", "local"] = Field(
        default="global",
        description="`local`: a local secondary index (same partition key as the table, created with it).",
    )
    shards: int | None = Field(
        default=None, ge=2, le=100, description="Write sharding for every entity's partition key on this index."
    )
    shard_by: list[AttributeName] | None = Field(
        default=None, description="Attributes hashed into the shard number (default: each entity's primary key)."
    )
    rebuild: Literal["successor", "in_place"] = Field(
        default="successor",
        description="When the patterns on this (locked) index need a larger projection: `successor` builds a new "
        "index with the same keys beside it and retires this one once nothing reads it; `in_place` rebuilds this "
        "index (queries on it fail until it is ACTIVE again).",
    )
    remove: bool = Field(
        default=False,
        description="Remove this index from the design and its lock (a retiring index nothing reads any more).",
    )
    keys: KeyAttributes | None = Field(
        default=None,
        description="The index's key attributes when they are not `<index>PK`/`<index>SK` (an adopted index; a "
        "local index's `pk` is the table's). Declaring them keeps the index even when no pattern reads it.",
    )
    max_throughput: MaxThroughput | None = Field(
        default=None, description="On-demand maximum of this GSI (see `table.max_throughput`); default: the table's.")
    warm_throughput: WarmThroughput | None = Field(
        default=None, description="Warm throughput of this GSI (see `table.warm_throughput`; hashicorp/aws >= 6.13).")

    @model_validator(mode="after")
    def _local(self) -> IndexSpec:
        if self.type == "local":
            for field in ("capacity", "shards", "max_throughput", "warm_throughput"):
                if getattr(self, field) is not None:
                    raise Invalid(
                        "a local index shares the table's partition key and throughput",
                        f"remove `{field}` from it (set it on the table)",
                        field,
                        code=ErrorCode.CONTRADICTION,
                    )
        return self
