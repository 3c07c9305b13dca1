"""Synthesis: stacks -> cdktf -> cdktf.out, replacing the output directory only on success."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from modules.output import replace_output
from modules.stack import Stack


def synthesize_into(stacks: Sequence[Stack], outdir: str | None) -> None:
    """Run cdktf synthesis into `outdir` (None: wherever the cdktf CLI asked for)."""
    from modules.constructs.cdk import App
    from modules.constructs.stack import build_stack

    app = App(outdir=outdir, stack_traces=False)
    for stack in stacks:
        build_stack(app, stack)
    app.synth()


def synthesize(stacks: Sequence[Stack], outdir: Path) -> list[Path]:
    """Synthesize into a fresh directory, then swap it in for `outdir` (only ever replacing an earlier
    synthesis: modules/output.py). Returns the cdk.tf.json files."""
    target = replace_output(outdir, lambda staging: synthesize_into(stacks, str(staging)))
    return [target / "stacks" / stack.name / "cdk.tf.json" for stack in stacks]
