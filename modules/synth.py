"""Synthesis: designs -> cdktf stacks -> cdktf.out, replacing the output directory only on success."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from modules.blueprint.load import LoadedBlueprint
from modules.design.model import TableDesign
from modules.design.plan import design
from modules.errors import BlueprintError, TablewrightError


@dataclass(frozen=True)
class StackPlan:
    name: str
    design: TableDesign
    source: LoadedBlueprint


def plan_stacks(blueprints: list[LoadedBlueprint]) -> list[StackPlan]:
    """Design every blueprint (pure; raises the first error, located in its file)."""
    stacks: list[StackPlan] = []
    seen: dict[str, LoadedBlueprint] = {}
    for loaded in blueprints:
        name = loaded.stack_name
        if name in seen:
            raise BlueprintError(
                f"stack `{name}` is also produced by {seen[name].path}",
                path=("blueprint",),
                hint="stack names must be unique: rename one blueprint",
            ).located(loaded.source.locate(("blueprint",)))
        seen[name] = loaded
        try:
            stacks.append(StackPlan(name, design(loaded.model), loaded))
        except TablewrightError as error:
            raise loaded.locate(error) from None
    return stacks


def synthesize_into(stacks: list[StackPlan], outdir: str | None) -> None:
    """Run cdktf synthesis into `outdir` (None: wherever the cdktf CLI asked for)."""
    from modules.constructs.cdk import App
    from modules.constructs.stack import build_stack

    app = App(outdir=outdir, stack_traces=False)
    for stack in stacks:
        build_stack(app, stack.design, stack.name, stack.source.environment)
    app.synth()


def synthesize(stacks: list[StackPlan], outdir: Path) -> list[Path]:
    """Synthesize into a fresh directory next to `outdir`, then swap it in. Returns the cdk.tf.json files."""
    outdir = outdir.resolve()
    outdir.parent.mkdir(parents=True, exist_ok=True)
    staging = outdir.with_name(f".{outdir.name}.staging-{os.getpid()}")
    retired = outdir.with_name(f".{outdir.name}.retired-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        synthesize_into(stacks, str(staging))
        if outdir.exists():
            outdir.rename(retired)
        staging.rename(outdir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(retired, ignore_errors=True)
    return [outdir / "stacks" / stack.name / "cdk.tf.json" for stack in stacks]
