"""Stack settings: lint, naming, Terraform, pricing and adopted tables."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator, model_validator

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language.base import MAX_INDEXES, S3_BUCKET, IndexName, Region, Strict, TableName
from tablewright.errors import ErrorCode


class LintSettings(Strict):
    hot_key_warning: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Warn when a key's estimated load exceeds this share of a partition's limit.",
    )
    ignore: dict[str, str] = Field(
        default_factory=dict,
        description="Finding codes to silence, each with the reason (kept in reviews).",
        examples=[{"TW101": "three industries, read by a nightly job only"}],
    )


class Naming(Strict):
    table: str | None = Field(
        default=None,
        description="Physical table name: {table}, {blueprint} and {env} placeholders. Default: `{table}`, or "
        "`{table}-{env}` in an environment.",
        examples=["{env}-{blueprint}-{table}"],
    )


class Backend(Strict):
    type: Literal["local", "s3"] = Field(default="local", description="Where Terraform keeps the state.")
    bucket: Annotated[str, StringConstraints(pattern=S3_BUCKET)] | None = Field(
        default=None, description="S3 bucket (s3 backend).")
    key: str = Field(
        default="tablewright/{blueprint}/{env}/terraform.tfstate",
        max_length=1024,
        description="State object key (s3) with {blueprint}, {env} and {stack} placeholders.",
    )
    region: Region | None = Field(default=None, description="Region of the state bucket (s3).")
    dynamodb_table: TableName | None = Field(default=None, description="Lock table (s3, optional; deprecated by "
                                                                        "Terraform for `use_lockfile`).")
    # https://developer.hashicorp.com/terraform/language/backend/s3 (`use_lockfile`, Terraform 1.10 and newer).
    use_lockfile: bool = Field(default=False, description="Lock the state with a lock file in the bucket (s3; "
                                                          "Terraform 1.10 and newer): no lock table needed.")

    @model_validator(mode="after")
    def _s3(self) -> Backend:
        if self.type == "s3" and not self.bucket:
            raise Invalid("the s3 backend needs `bucket`", "name the state bucket", "bucket",
                          code=ErrorCode.MISSING_FIELD)
        if self.type == "local" and self.use_lockfile:
            raise Invalid("`use_lockfile` is a setting of the s3 backend", "leave it out of the local backend "
                          "(Terraform locks a local state file itself)", "use_lockfile",
                          code=ErrorCode.CONTRADICTION)
        return self


class TerraformSettings(Strict):
    aws_provider: str = Field(
        default="~> 5.100", description="Version constraint for the hashicorp/aws provider.", examples=[">= 6.11"]
    )
    backend: Backend = Field(default_factory=Backend)


Direction = Literal["read", "write"]
# Application Auto Scaling allows any printable text; these characters could start a Terraform expression.
POLICY_NAME = re.compile(r'[ !#%&\'()*+,\-./0-9:;<=>?@A-Z\[\]^_`a-z|~]{1,256}')


class Adopted(Strict):
    """A table that existed before this blueprint (written by `adopt`): the synthesized stack imports it,
    and the scalable targets and target-tracking policies listed here, instead of creating them."""

    scaling: dict[IndexName, dict[Direction, str | None]] = Field(
        default_factory=dict, max_length=MAX_INDEXES + 1,
        description="`table` or an index -> direction -> the name of its live target-tracking policy (imported "
        "under that name), or null when the scalable target has no policy yet. A direction listed here has a live "
        "scalable target, which is imported.",
        examples=[{"table": {"read": "DynamoDBReadCapacityUtilization:table/orders", "write": None}}])

    @field_validator("scaling")
    @classmethod
    def _policy_names(cls, value: dict[str, dict[str, str | None]]) -> dict[str, dict[str, str | None]]:
        for directions in value.values():
            for name in directions.values():
                if name is not None and not POLICY_NAME.fullmatch(name):
                    raise Invalid(f"policy name {name!r} holds characters Tablewright does not write into "
                                  "Terraform", "1-256 printable ASCII characters, none of \" \\ { } $",
                                  code=ErrorCode.VALUE_NOT_ALLOWED)
        return value

    def policy(self, index: str, direction: Direction) -> str | None:
        return self.scaling.get(index, {}).get(direction)

    def imports_target(self, index: str, direction: Direction) -> bool:
        return direction in self.scaling.get(index, {})


PRICE_FILE = r"^[A-Za-z0-9_.][A-Za-z0-9_./-]{0,1023}$"


class Pricing(Strict):
    """Where `capacity` and `review` take prices from."""

    file: Annotated[str, StringConstraints(pattern=PRICE_FILE)] | None = Field(
        default=None,
        description="A price file (JSON or YAML, the format of modules/tablewright/capacity/prices.json), relative "
        "to the blueprint that names it and inside the repository. Default: the built-in prices.",
        examples=["prices/acme-2026.json"],
    )
