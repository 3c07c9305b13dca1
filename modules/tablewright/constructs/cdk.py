"""The only module that imports the CDK library: cdktf (the default) or its maintained fork, CDK Terrain
(`cdktn`), chosen by `TABLEWRIGHT_CDK` (and jsii/constructs).

We build on the core classes instead of the prebuilt AWS provider bindings, which cost about
16 s and 1.5 GB per synth just to import. A table's resources are plain data (`terraform.py`) handed
to the library as one `TerraformFragment`: no jsii traffic per resource; and when `synth` below
synthesizes (`tablewright synth`, `cdktf synth`), none per table either, as it merges the fragments into
each stack's file itself. In a user's own app, cdktf merges them.

`TABLEWRIGHT_CDK=cdktf` or `cdktn` picks the library; unset, cdktf when it is installed, else cdktn.
cdktn is a fork of cdktf 0.21 with the same classes, so everything below is written once, typed
against cdktf. `synth` writes cdktn's `cdk.tf.json` in cdktf's layout (`stablejson.py`) and with the
version of the format it shares with cdktf 0.21 in the stack's `//` metadata, so both libraries write
the same bytes; `manifest.json` keeps the version of the library that wrote it (README: "cdktf or CDK
Terrain").
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# jsii prints a large banner on Node versions it no longer supports; the runtime works regardless.
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
os.environ.setdefault("JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION", "1")

import jsii
from constructs import Construct

from tablewright.constructs.halves import for_each
from tablewright.constructs.stablejson import stable_json
from tablewright.errors import ErrorCode, TablewrightError

BACKEND_ENV = "TABLEWRIGHT_CDK"
BACKENDS = ("cdktf", "cdktn")  # the CDK libraries Tablewright runs on; unset, the first one installed


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def choose_backend(requested: str | None, installed: Callable[[str], bool] = _installed) -> str:
    """The CDK library to synthesize with: the one `TABLEWRIGHT_CDK` names, else cdktf, else cdktn."""
    if requested:
        if requested not in BACKENDS:
            raise TablewrightError(f"{BACKEND_ENV}={requested!r} is not a CDK library Tablewright runs on",
                                   code=ErrorCode.CDK_LIBRARY,
                                   hint=f"set {BACKEND_ENV} to cdktf or cdktn, or unset it (cdktf)")
        if not installed(requested):
            raise TablewrightError(f"{BACKEND_ENV}={requested} but the `{requested}` package is not installed in "
                                   "this Python environment", code=ErrorCode.CDK_LIBRARY,
                                   hint=_install_hint(requested))
        return requested
    for name in BACKENDS:
        if installed(name):
            return name
    raise TablewrightError("neither cdktf nor cdktn is installed in this Python environment",
                           code=ErrorCode.CDK_LIBRARY,
                           hint=_install_hint("cdktf"))


def _install_hint(name: str) -> str:
    extra = "" if name == "cdktf" else "[cdktn]"
    return (f"install it: `pip install -e '.{extra}'` (from the Tablewright checkout)"
            + ("" if name == "cdktf" else f", or unset {BACKEND_ENV} to use cdktf"))


BACKEND = choose_backend(os.environ.get(BACKEND_ENV))

if TYPE_CHECKING:  # cdktn has cdktf's classes and signatures: type-check against cdktf
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
else:
    _library = importlib.import_module(BACKEND)
    App = _library.App
    LocalBackend = _library.LocalBackend
    S3Backend = _library.S3Backend
    TerraformElement = _library.TerraformElement
    TerraformOutput = _library.TerraformOutput
    TerraformProvider = _library.TerraformProvider
    TerraformProviderGeneratorMetadata = _library.TerraformProviderGeneratorMetadata
    TerraformStack = _library.TerraformStack

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
    "add_fragment",
    "path_of",
    "stack_of",
    "synth",
]


# cdktn 0.22 renamed cdktf 0.21 and changed nothing of the Terraform JSON: the stacks it writes name this format.
CDKTF_FORMAT_VERSION = "0.21.0"


def synth(app: App, stacks: Sequence[FragmentStack] = ()) -> None:
    """`app.synth()`, every JSON file written in cdktf's layout whichever library wrote it.

    The fragments of `stacks` never cross jsii: cdktf writes each stack's file without them, and it is
    completed here with their JSON, merged as cdktf merges elements (`deep_merge`) and written in its
    layout (`stable_json`): the same bytes, without sending every table to Node.js and back. Those stacks
    take no raw overrides (cdktf would apply them after the fragments, this merge comes later)."""
    strangers = [stack for stack in stacks if not isinstance(stack, FragmentStack)]
    if strangers:
        raise TypeError(f"{strangers[0]} is not a FragmentStack: synthesize it with app.synth()")
    app.synth()
    outdir = Path(app.outdir)
    ours = {outdir / "stacks" / stack.name / "cdk.tf.json": stack.fragments for stack in stacks}
    missing = [str(path) for path in ours if not path.is_file()]
    if missing:
        raise RuntimeError(f"cdktf wrote no {', '.join(missing)}: the fragments of those stacks are not in it")
    def complete(path: Path) -> None:
        document = json.loads(path.read_text())
        for render in ours.get(path, ()):
            deep_merge(document, render())
        document["//"]["metadata"]["version"] = CDKTF_FORMAT_VERSION
        path.write_text(stable_json(document))

    # cdktf's own files are already in its layout
    pending = [path for path in sorted(outdir.glob("stacks/*/cdk.tf.json")) if path in ours or BACKEND != "cdktf"]
    for_each(pending, complete)  # the renders are plain Python: half of them may run in a forked child
    manifest = outdir / "manifest.json"
    if BACKEND != "cdktf" and manifest.is_file():
        manifest.write_text(stable_json(json.loads(manifest.read_text())))


def deep_merge(target: dict[str, Any], source: Mapping[str, Any]) -> None:
    """cdktf 0.21's `deepMerge` of an element's JSON into its stack's: objects merged key by key (an empty
    one kept), a list appended to a list already there, anything else replacing what was there."""
    for key, value in source.items():
        if isinstance(value, Mapping):
            if not isinstance(target.get(key), dict):
                target[key] = {}
            deep_merge(target[key], value)
        elif isinstance(value, list) and isinstance(target.get(key), list):
            target[key] = [*target[key], *value]
        else:
            target[key] = value


Render = Callable[[], Mapping[str, Any]]


class TerraformFragment(TerraformElement):
    """An element whose Terraform JSON is computed in Python: `render()` returns it (a whole table's
    `resource`, `data`, `locals` and `import`, with the `//` metadata cdktf writes; or a stack's
    outputs), merged into the stack by cdktf: one jsii callback per synthesis instead of one per resource.
    `add_fragment` below spares a `FragmentStack` even that."""

    def __init__(self, scope: Construct, construct_id: str, render: Render) -> None:
        super().__init__(scope, construct_id)
        self.render = render

    @jsii.member(jsii_name="toTerraform")
    def to_terraform(self) -> Any:
        return self.render()


class FragmentStack(TerraformStack):
    """A stack whose fragments (`add_fragment`) stay in Python: `synth` above merges them into the file cdktf
    writes for it, so a whole table crosses jsii neither way. Synthesize it with `synth`: `app.synth()`
    alone writes the stack without them."""

    def __init__(self, scope: Construct, name: str) -> None:
        super().__init__(scope, name)
        self.name = name
        # Its construct path, known without asking Node.js when it is a child of the app (the root, path "").
        self.path = name if isinstance(scope, App) else f"{scope.node.path}/{name}"
        self.fragments: list[Render] = []


def add_fragment(scope: Construct, construct_id: str, render: Render, stack: TerraformStack | None = None) -> None:
    """Add Terraform JSON computed in Python to `scope`'s stack (`stack`, when the caller knows it: finding it
    is a trip to Node.js): kept for `synth` in a `FragmentStack`, a `TerraformFragment` in any other. `render`
    returns a fresh plain-data JSON value and must not call into the CDK library: `synth` may run it in a
    forked process (`halves.py`)."""
    stack = stack or stack_of(scope)
    if isinstance(stack, FragmentStack):
        stack.fragments.append(render)
    else:
        TerraformFragment(scope, construct_id, render)


def stack_of(scope: Construct) -> TerraformStack:
    """`TerraformStack.of(scope)`, without asking Node.js when `scope` is the stack itself."""
    return scope if isinstance(scope, TerraformStack) else TerraformStack.of(scope)


def path_of(scope: Construct) -> str:
    """`scope.node.path`, without asking Node.js for a `FragmentStack`'s."""
    return scope.path if isinstance(scope, FragmentStack) else scope.node.path


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
