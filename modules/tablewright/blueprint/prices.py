"""The price file language: DynamoDB and CloudWatch prices per region, as dated data.

The built-in prices are `modules/tablewright/capacity/prices.json`; a platform base may name its own file with
`pricing: {file: ...}` (read and validated when the blueprint loads, so errors point at the file and
line). Every region says when its prices took effect (`effective`) and when someone last checked
them against their source (`checked`); every group of figures names its source and says whether it
was confirmed on an AWS page (`confirmed: false` marks a third-party figure, which `capacity` shows).
A figure a region lacks is not priced: `capacity` says so, it never borrows another region's.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language import Region, Strict
from tablewright.errors import ErrorCode

Price = Annotated[float, Field(ge=0, le=1_000_000)]
Source = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
TableClassName = Literal["standard", "standard_infrequent_access"]


class Sourced(Strict):
    source: Source = Field(description="Where the figures come from (a page, a price-list export, a contract).")
    confirmed: bool = Field(default=True, description="false: not confirmed on an AWS page (shown with the figure).")


class ClassPrices(Sourced):
    """Throughput and storage of one table class, in USD."""

    provisioned_rcu_hour: Price
    provisioned_wcu_hour: Price
    on_demand_read_request_unit: Price
    on_demand_write_request_unit: Price
    storage_gb_month: Price = Field(description="Per GB-month; the free tier is not deducted.")


class PitrPrices(Sourced):
    gb_month: Price = Field(description="Continuous backups (point-in-time recovery), per GB-month of table size.")


class ExportPrices(Sourced):
    gb: Price = Field(description="A full export to S3 (ExportTableToPointInTime), per GB of the table's size (its "
                      "items and local index entries) at the export time; it reads no table capacity.")


class InsightsPrices(Sourced):
    rule_month: Price = Field(description="Per Contributor Insights rule and month (CloudWatch).")
    million_events: Price = Field(description="Per million DynamoDB events the rules process.")


class AlarmPrices(Sourced):
    metric_month: Price = Field(description="Per standard-resolution alarm metric and month (CloudWatch).")


class RegionPrices(Strict):
    effective: str = Field(description="The date these prices took effect (YYYY-MM-DD).", examples=["2024-11-01"])
    checked: str = Field(description="The date they were last checked against their sources (YYYY-MM-DD).")
    table_classes: dict[TableClassName, ClassPrices] = Field(
        default_factory=dict, description="Per table class; a class not listed is not priced.")
    pitr: PitrPrices | None = None
    export: ExportPrices | None = None
    contributor_insights: InsightsPrices | None = None
    alarms: AlarmPrices | None = None

    @field_validator("effective", "checked")
    @classmethod
    def _date(cls, value: str) -> str:
        try:
            date.fromisoformat(value)
        except ValueError:
            raise Invalid(f"{value!r} is not a date", "write YYYY-MM-DD, e.g. 2024-11-01",
                          code=ErrorCode.VALUE_NOT_ALLOWED) from None
        if len(value) != 10:
            raise Invalid(f"{value!r} is not a date", "write YYYY-MM-DD, e.g. 2024-11-01",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        return value


class PriceBook(Strict):
    """Prices per region; `currency` is USD (the only currency AWS lists)."""

    currency: Literal["USD"] = "USD"
    notes: str | None = Field(default=None, max_length=4096)
    regions: dict[Region, RegionPrices] = Field(min_length=1, max_length=64)
