"""The only module that imports cdktf (and jsii/constructs).

We build on cdktf's core classes instead of the prebuilt AWS provider bindings, which cost about
16 s and 1.5 GB per synth just to import. Keeping every import here means moving to the maintained
fork, CDK Terrain (`cdktn`), is a change to this one file.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

# jsii prints a large banner on Node versions it no longer supports; the runtime works regardless.
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
os.environ.setdefault("JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION", "1")

import jsii  # noqa: E402
from cdktf import (  # noqa: E402
    App,
    LocalBackend,
    S3Backend,
    TerraformDataSource,
    TerraformLocal,
    TerraformOutput,
    TerraformProvider,
    TerraformProviderGeneratorMetadata,
    TerraformResource,
    TerraformResourceLifecycle,
    TerraformStack,
    Token,
)
from constructs import Construct  # noqa: E402

__all__ = [
    "App",
    "Construct",
    "DataSource",
    "Local",
    "LocalBackend",
    "Provider",
    "Resource",
    "S3Backend",
    "TerraformOutput",
    "TerraformStack",
    "lifecycle",
]


class Resource(TerraformResource):
    """A Terraform resource whose arguments come from one of our typed config models."""

    def __init__(
        self,
        scope: Construct,
        logical_id: str,
        terraform_type: str,
        arguments: Mapping[str, Any],
        lifecycle: TerraformResourceLifecycle | None = None,
    ) -> None:
        # Construct ids must be unique per scope; Terraform names only per type, so names repeat across types.
        super().__init__(scope, f"{terraform_type}.{logical_id}", terraform_resource_type=terraform_type, lifecycle=lifecycle)
        self.override_logical_id(logical_id)
        self._terraform_type = terraform_type
        self._logical_id = logical_id
        self._arguments = dict(arguments)

    @jsii.member(jsii_name="synthesizeAttributes")
    def _synthesize_attributes(self) -> Mapping[str, Any]:
        # jsii calls this override back from Node.js during synthesis (about 1 ms per resource).
        return self._arguments

    def ref(self, attribute: str) -> str:
        """A Terraform reference, `${type.name.attribute}`; Terraform orders the resources by it."""
        return f"${{{self._terraform_type}.{self._logical_id}.{attribute}}}"


class DataSource(TerraformDataSource):
    def __init__(
        self,
        scope: Construct,
        logical_id: str,
        terraform_type: str,
        arguments: Mapping[str, Any],
        count: str | None = None,
    ) -> None:
        super().__init__(scope, f"data.{terraform_type}.{logical_id}", terraform_resource_type=terraform_type)
        self.override_logical_id(logical_id)
        if count is not None:
            self.count = Token.as_number(count)
        self._arguments = dict(arguments)

    @jsii.member(jsii_name="synthesizeAttributes")
    def _synthesize_attributes(self) -> Mapping[str, Any]:
        return self._arguments


class Provider(TerraformProvider):
    def __init__(
        self, scope: Construct, name: str, source: str, version_constraint: str, arguments: Mapping[str, Any]
    ) -> None:
        super().__init__(
            scope,
            name,
            terraform_resource_type=name,
            terraform_provider_source=source,
            terraform_generator_metadata=TerraformProviderGeneratorMetadata(
                provider_name=name, provider_version_constraint=version_constraint
            ),
        )
        self._arguments = dict(arguments)

    @jsii.member(jsii_name="synthesizeAttributes")
    def _synthesize_attributes(self) -> Mapping[str, Any]:
        return self._arguments


def Local(scope: Construct, logical_id: str, expression: str) -> TerraformLocal:
    return TerraformLocal(scope, logical_id, expression)


def lifecycle(ignore_changes: list[str] | None = None, prevent_destroy: bool | None = None) -> TerraformResourceLifecycle:
    return TerraformResourceLifecycle(ignore_changes=ignore_changes, prevent_destroy=prevent_destroy)
