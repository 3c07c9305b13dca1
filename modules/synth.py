"""Synthesis: designs -> cdktf stacks -> cdktf.out, replacing the output directory only on success."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from modules.blueprint.load import LoadedBlueprint
from modules.design.model import TableDesign
from modules.design.plan import design
from modules.errors import BlueprintError, TablewrightError
from modules.output import replace_output


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
        build_stack(app, stack)
    app.synth()


def synthesize(stacks: list[StackPlan], outdir: Path) -> list[Path]:
    """Synthesize into a fresh directory, then swap it in for `outdir` (only ever replacing an earlier
    synthesis: modules/output.py). Returns the cdk.tf.json files."""
    target = replace_output(outdir, lambda staging: synthesize_into(stacks, str(staging)))
    return [target / "stacks" / stack.name / "cdk.tf.json" for stack in stacks]
