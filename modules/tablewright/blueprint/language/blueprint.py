"""The blueprint root: one stack's table, entities, access patterns, indexes and settings."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from tablewright.blueprint.language.base import (
    MAX_ENTITIES,
    MAX_INDEXES,
    MAX_PATTERNS,
    AttributeName,
    BlueprintName,
    ContributorInsightsMode,
    EntityName,
    IndexName,
    PatternName,
    Region,
    SemVer,
    Strict,
)
from tablewright.blueprint.language.entities import EntitySpec
from tablewright.blueprint.language.migrations import Migration
from tablewright.blueprint.language.observability import Alarms, ChangeRules, MaintenanceWindow
from tablewright.blueprint.language.patterns import AccessPattern
from tablewright.blueprint.language.settings import Adopted, LintSettings, Naming, Pricing, TerraformSettings
from tablewright.blueprint.language.tables import IndexSpec, TableSpec
from tablewright.blueprint.language.traffic import Simulation, Traffic


class Blueprint(Strict):
    extends: str | list[str] | None = Field(
        default=None,
        description="Blueprint(s) this one builds on, relative to this file; merged first, this file wins.",
        examples=["shared/platform-base.yaml"],
    )
    blueprint: BlueprintName = Field(description="Stack name: lowercase letters, digits and dashes.")
    version: SemVer = Field(description="Semantic version of this blueprint.", examples=["1.0.0"])
    description: str | None = Field(default=None, max_length=4096)
    owner: str | None = Field(default=None, max_length=256)
    region: Region | None = Field(
        default=None, examples=["eu-west-1"],
        description="AWS region of the stack: the provider's region, the region of every topic in `alarms.notify`, "
        "and the prices `capacity` uses. Unset: Terraform takes the region from its environment, `alarms.notify` "
        "cannot name topics and `capacity` prices nothing.")
    tags: dict[str, str] = Field(default_factory=dict, description="Tags for every taggable resource.")
    tenant: AttributeName | None = Field(
        default=None, examples=["tenantId"],
        description="The attribute naming the tenant an item belongs to (a string every entity has, its `pattern:` "
        "or `values:` admitting no `#`, `*` or `?`): every partition key of the table and its GSIs starts with it, "
        "lint reports patterns not scoped to one tenant (unless they say `tenants: all`), "
        "and `synth` outputs one IAM policy per pattern confined to the caller's tenant (`dynamodb:LeadingKeys` "
        "against the principal tag of that name).")
    table: TableSpec
    entities: dict[EntityName, EntitySpec] = Field(
        default_factory=dict, max_length=MAX_ENTITIES,
        description="The item types the table stores. Empty only while an adopted table is being described.")
    access_patterns: dict[PatternName, AccessPattern] = Field(default_factory=dict, max_length=MAX_PATTERNS)
    indexes: dict[IndexName, IndexSpec] = Field(default_factory=dict, max_length=MAX_INDEXES)
    lint: LintSettings = Field(default_factory=LintSettings)
    traffic: Traffic = Field(
        default_factory=Traffic,
        description="How the declared average rates arrive: the daily curve or peak factor, named events, and the "
        "share assumed for the busiest value of a key nobody described.")
    simulation: Simulation = Field(default_factory=Simulation,
                                   description="The assumptions `simulate` makes where AWS publishes no number.")
    production: bool = Field(default=False, description="This environment serves production traffic.")
    contributor_insights: ContributorInsightsMode | None = Field(
        default=None,
        description="Contributor Insights mode for the table and its GSIs. Default: throttled_keys in production "
        "when the AWS provider constraint allows it (>= 6.11), else accessed_and_throttled_keys.",
    )
    alarms: Alarms = Field(default_factory=Alarms)
    change_rules: ChangeRules = Field(default_factory=ChangeRules)
    pricing: Pricing = Field(default_factory=Pricing)
    maintenance_window: MaintenanceWindow | None = Field(
        default=None, description="When window-class changes (index builds, billing switches) may be applied."
    )
    required_tags: list[str] = Field(
        default_factory=list, max_length=50,
        description="Tag keys every blueprint must set (additive across `extends`).",
    )
    naming: Naming = Field(default_factory=Naming)
    terraform: TerraformSettings = Field(default_factory=TerraformSettings)
    adopted: Adopted | None = Field(
        default=None, description="Set by `adopt`: the table exists already and the stack imports it.")
    migrations: list[Migration] = Field(
        default_factory=list, max_length=50,
        description="Data migrations this change carries out: changed keys, renamed or removed entities (see "
        "`Migration`); remove them once done.",
    )
    environments: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="One stack per environment (`<blueprint>-<env>`): each overlay is merged over the blueprint.",
        examples=[{"dev": {"table": {"billing": "on_demand", "capacity": None}}, "prod": {"production": True}}],
    )
