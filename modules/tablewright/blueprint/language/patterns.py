"""Access patterns: the reads the application performs, with their conditions and rates."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language.base import (
    BATCH_GET_LIMIT,
    MAX_RATE,
    RANGE_OPERATORS,
    AttributeName,
    EntityName,
    Operator,
    Strict,
)
from tablewright.blueprint.language.jobs import MAX_JOB_CALLS, JobSchedule
from tablewright.blueprint.language.traffic import SECONDS_PER_DAY, TrafficShape
from tablewright.errors import ErrorCode


class AccessPattern(Strict):
    """A read the application performs, with its expected rate."""

    entity: EntityName | Annotated[list[EntityName], Field(min_length=1)] = Field(
        description="The entity read, or a list of entities read together as one item collection."
    )
    where: dict[AttributeName, Operator] = Field(
        default_factory=dict,
        description="Conditions on attributes: `=` binds key components, at most one range operator.",
        examples=[{"customerId": "=", "contactAt": "between"}],
    )
    order: Literal["asc", "desc"] = Field(default="asc", description="Direction of the sort key.")
    order_by: AttributeName | None = Field(
        default=None, description="The attribute results are ordered by (default: the range attribute, if any)."
    )
    limit: int | None = Field(default=None, ge=1, le=1_000_000, description="Return at most this many items.")
    rps: float = Field(default=1, ge=0, le=MAX_RATE,
                       description="Expected requests per second of this pattern (a job declares `schedule` instead).")
    returns: list[AttributeName] | None = Field(
        default=None,
        description="Attributes the application reads; drives GSI projections. Default: every attribute.",
    )
    count: bool = Field(
        default=False,
        description="The application needs only how many items match (at most `limit`): the request sends "
        "`Select: COUNT` and gets no items back. DynamoDB still charges every item it reads, so say with `items` "
        "how many a call typically finds.",
    )
    batch: int | None = Field(
        default=None, ge=2, le=BATCH_GET_LIMIT,
        description="The application reads this many items per call, each by its whole primary key, in one "
        f"BatchGetItem (at most {BATCH_GET_LIMIT} keys, DynamoDB's limit per request): every item is rounded up to "
        "4 KB on its own, where a Query of as many items rounds their total once.")
    expired: Literal["hidden", "returned"] = Field(
        default="hidden",
        description="Items past the table's TTL (`table.ttl_attribute`) that DynamoDB has not deleted yet (it "
        "takes up to a few days): `hidden` adds a filter on the TTL attribute against the current time to the "
        "request; `returned` reads them too.",
    )
    index: str | None = Field(
        default=None, description="Pin the pattern to `table` or to a named GSI instead of letting the planner choose."
    )
    consistent: bool = Field(default=False, description="Strongly consistent read (base table only; costs 2x).")
    follow_up: bool = Field(
        default=True,
        description=(
            "Allow a BatchGetItem on the base table when the index does not project every returned attribute."
        ),
    )
    filter: dict[AttributeName, Operator] = Field(
        default_factory=dict,
        description="Conditions applied after the key condition (a FilterExpression): they do not reduce cost.",
    )
    items: int | None = Field(
        default=None,
        ge=0,
        le=10_000_000,
        description="Items one call reads on average (default: `limit`, else 1 for a single item, else 10).",
    )
    traffic: TrafficShape | None = Field(
        default=None, description="How this pattern's reads arrive, when not as the blueprint's `traffic` says: "
        "its own daily curve or peak factor, and events (`rate`: requests per second).")
    scan: Literal["allowed"] | None = Field(
        default=None, description="Accept a full-table Scan when no key can serve the pattern (needs `reason`, and "
        "`rps` or `schedule`: a Scan reads the whole table on every call)."
    )
    schedule: JobSchedule | None = Field(
        default=None, description="The pattern is a job (a nightly export, a weekly report), not requests: each "
        "run makes `calls` calls (a Scan: one, the whole table), their reads spread evenly over `duration` from "
        "`start`, neither shaped by the daily curve nor by events, and nothing outside the window; no `rps`.",
        examples=[{"every": "day", "start": "02:00", "duration": "30m"},
                  {"every": "week", "on": "SUN", "start": "03:00", "duration": "2h"}])
    tenants: Literal["all"] | None = Field(
        default=None, description="Tenant blueprints (`tenant:`): the pattern reads across tenants (an operators' "
        "report), so its policy is not confined to the caller's tenant (needs `reason`). Every other pattern binds "
        "the tenant with `=`.")
    reason: str | None = Field(default=None, description="Why a Scan (or `tenants: all`) is acceptable for this "
                               "pattern.")
    description: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _job_rate(cls, data: object) -> object:
        # A job's rate is its schedule's: a daily run's calls a day, as an average over the day (what every
        # estimate multiplies by), its window shaping them; a job on other days is an event of its own, with no
        # calls on a normal day (capacity/jobs.py).
        if isinstance(data, dict) and isinstance(data.get("schedule"), dict):
            calls = data["schedule"].get("calls", 1)
            valid = isinstance(calls, int) and not isinstance(calls, bool) and 1 <= calls <= MAX_JOB_CALLS
            daily = data["schedule"].get("every", "day") == "day"
            rate = (calls if valid else 1) / SECONDS_PER_DAY if daily else 0.0  # an invalid `calls` is refused later
            if data.get("rps", rate) != rate:  # (a pattern dumped and validated again carries its own)
                raise Invalid("a job (`schedule`) runs at its schedule, so `rps` does not apply",
                              "remove `rps` (each run's calls are `schedule.calls`), or `schedule` for requests the "
                              "application makes all day", "rps", code=ErrorCode.CONTRADICTION)
            return {**data, "rps": rate}
        return data

    @model_validator(mode="after")
    def _job_or_rate(self) -> AccessPattern:
        if self.schedule is None:
            if self.scan is not None and "rps" not in self.model_fields_set:
                raise Invalid(
                    "a Scan reads the whole table on every call, and without `rps` it would run once a second",
                    'say when it runs: `schedule: {every: day, start: "02:00", duration: 30m}` for a job, or '
                    "`rps:` for the calls the application makes (e.g. `rps: 0.001`, about 86 a day)",
                    "scan", code=ErrorCode.MISSING_FIELD)
            return self
        if self.traffic is not None:
            raise Invalid("a job (`schedule`) runs in its window, so `traffic` (a curve, events) does not apply",
                          "remove `traffic`, or `schedule` for requests shaped by a curve", "traffic",
                          code=ErrorCode.CONTRADICTION)
        if self.scan is None and self.schedule.calls is None:
            raise Invalid("a job that is not a Scan needs `schedule.calls`: how many calls one run makes",
                          "add `calls:` to `schedule` (a Query per customer: the number of customers)", "schedule",
                          code=ErrorCode.MISSING_FIELD)
        return self

    @model_validator(mode="after")
    def _one_range(self) -> AccessPattern:
        ranges = [name for name, op in self.where.items() if op in RANGE_OPERATORS]
        if len(ranges) > 1:
            raise Invalid(
                f"more than one range condition ({', '.join(ranges)}); a key condition allows one",
                "keep one range condition and bind the others with `=`, or split the pattern",
                "where",
                code=ErrorCode.CONTRADICTION,
            )
        if ranges and self.order_by and self.order_by != ranges[0]:
            raise Invalid(
                f"`order_by: {self.order_by}` differs from the range attribute `{ranges[0]}`",
                f"results of a range query come ordered by `{ranges[0]}`; remove `order_by`",
                "order_by",
                code=ErrorCode.CONTRADICTION,
            )
        if self.returns is not None and len(set(self.returns)) != len(self.returns):
            raise Invalid("`returns` lists an attribute twice", "remove the duplicate", "returns",
                          code=ErrorCode.VALUE_NOT_ALLOWED)
        if self.count and self.returns:
            raise Invalid("`count: true` returns no attributes, only how many items match, and `returns` lists some",
                          "remove `returns` (a count needs none), or `count` to read the items",
                          "returns", code=ErrorCode.CONTRADICTION)
        both = sorted(set(self.where) & set(self.filter))
        if both:
            raise Invalid(f"`{both[0]}` appears in both `where` and `filter`", "keep it in one of them", "filter",
                          code=ErrorCode.CONTRADICTION)
        if self.batch is not None:
            self._check_batch()
        if self.scan is not None and not (self.reason or "").strip():
            raise Invalid("`scan: allowed` needs a `reason`", "say why reading the whole table is acceptable", "scan",
                          code=ErrorCode.MISSING_FIELD)
        if self.scan is not None and (self.limit is not None or self.order_by is not None or self.order != "asc"):
            raise Invalid(
                "a Scan returns items in no particular order, so `order`, `order_by` and `limit` do not apply",
                "remove them, or give the pattern a key that serves it",
                "scan",
                code=ErrorCode.CONTRADICTION,
            )
        return self

    def _check_batch(self) -> None:
        """A BatchGetItem reads items by key: no order, limit, range, filter, count or items to declare."""
        clashing = [name for name, set_ in (("count", self.count), ("limit", self.limit is not None),
                                            ("order_by", self.order_by is not None), ("filter", bool(self.filter)),
                                            ("items", self.items is not None), ("scan", self.scan is not None),
                                            ("range", self.range_condition is not None)) if set_]
        if clashing:
            field = clashing[0]
            what = "a range condition in `where`" if field == "range" else f"`{field}`"
            raise Invalid(f"`batch` reads items by their whole key, one BatchGetItem per call, and {what} does not "
                          "apply to it", f"remove {what}, or `batch` to read a range with a Query",
                          "where" if field == "range" else field, code=ErrorCode.CONTRADICTION)

    @property
    def conditions(self) -> dict[str, Operator]:
        """Every condition, key and filter alike."""
        return {**self.where, **self.filter}

    @property
    def expected_items(self) -> int:
        if self.items is not None:
            return self.items
        return self.limit if self.limit is not None else 10

    @property
    def entities(self) -> tuple[str, ...]:
        return (self.entity,) if isinstance(self.entity, str) else tuple(self.entity)

    @property
    def equalities(self) -> tuple[str, ...]:
        return tuple(sorted(name for name, op in self.where.items() if op == "="))

    @property
    def range_condition(self) -> tuple[str, str] | None:
        for name, op in self.where.items():
            if op in RANGE_OPERATORS:
                return name, op
        return None

    @property
    def ordering_attribute(self) -> str | None:
        found = self.range_condition
        return found[0] if found else self.order_by
