"""The only module that imports cdktf (and jsii/constructs).

We build on cdktf's core classes instead of the prebuilt AWS provider bindings, which cost about
16 s and 1.5 GB per synth just to import. A table's resources are plain data (`terraform.py`) handed
to cdktf as one `TerraformFragment`: one jsii callback per table instead of one per resource. Keeping
every import here means moving to the maintained fork, CDK Terrain (`cdktn`), is a change to this
one file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

# jsii prints a large banner on Node versions it no longer supports; the runtime works regardless.
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
os.environ.setdefault("JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION", "1")

import jsii
from cdktf import (
    App,
    LocalBackend,
    S3Backend,
    TerraformElement,
    TerraformOutput,
    TerraformProvider,
    TerraformProviderGeneratorMetadata,
    TerraformStack,
)
from constructs import Construct

__all__ = [
    "App",
    "Construct",
    "FragmentStack",
    "LocalBackend",
    "Provider",
    "S3Backend",
    "TerraformFragment",
    "TerraformOutput",
    "TerraformStack",
]


class TerraformFragment(TerraformElement):
    """An element whose Terraform JSON is computed in Python: `render()` returns the `resource`, `data`
    and `locals` of a whole table (with the `//` metadata cdktf writes), merged into the stack by cdktf.

    One jsii callback per synthesis instead of one per resource. The JSON holds no cdktf tokens (it is
    built from blueprint values), so a `FragmentStack` may skip it while cdktf prepares the stack.
    """

    def __init__(self, scope: Construct, construct_id: str, render: Callable[[], Mapping[str, Any]]) -> None:
        super().__init__(scope, construct_id)
        self._render = render

    @jsii.member(jsii_name="toTerraform")
    def to_terraform(self) -> Any:
        return {} if FragmentStack.preparing else self._render()


class FragmentStack(TerraformStack):
    """A stack that spares its fragments cdktf's preparation pass.

    `prepareStack` resolves every element's Terraform once before synthesis, only to find tokens that
    refer to other stacks; fragments contain none, so they answer `{}` there instead of sending the
    whole table across jsii twice. Everything else in the stack is prepared as usual.
    """

    preparing = False  # true while some FragmentStack prepares (preparation is synchronous, one stack at a time)

    @jsii.member(jsii_name="prepareStack")
    def prepare_stack(self) -> None:
        FragmentStack.preparing = True
        try:
            super().prepare_stack()
        finally:
            FragmentStack.preparing = False


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
