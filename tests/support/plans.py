"""Real Terraform plans for the review and gate tests, built the same way every time.

1. Synthesize the base blueprint and `terraform apply` it to a fresh emulator (tests/support/emulator.py):
   that is the prior state.
2. For each head: write its synthesis over the base's in the same directory (the state stays) and
   run `terraform plan -out`, then `terraform show -json`. Plans do not change the state, so every
   head is planned against the same prior state.

By hand: `python -m tests.support.plans BASE HEAD [--env ENV] --out plan.json` (Terraform and the provider
mirror as for the tests), then `tablewright gate --plan plan.json --blueprint HEAD`.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tablewright.blueprint.load import load_blueprint
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.support.emulator import Emulator
from tests.support.terraform_support import stack_workdir, terraform, terraform_environment


def synthesized(path: Path, environment: str | None, out: Path) -> tuple[str, Path]:
    """Synthesize one stack; returns its name and its cdk.tf.json."""
    [stack] = build_stacks([load_blueprint(path, environment)])
    [written] = synthesize([stack], out)
    return stack.name, written


class Plans(Mapping[str, dict[str, Any]]):
    """Plans by name, shared read-only: each lookup is a fresh copy, so no test sees another's edits."""

    def __init__(self, plans: dict[str, dict[str, Any]]) -> None:
        self._plans = plans

    def __getitem__(self, name: str) -> dict[str, Any]:
        return copy.deepcopy(self._plans[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._plans)

    def __len__(self) -> int:
        return len(self._plans)


class PlanBuilder:
    """The base applied to the emulator in `workdir`; `plan(head)` plans any head against it."""

    def __init__(self, emulator: Emulator, workdir: Path, base: Path, environment: str | None = None) -> None:
        self.workdir, self.environment = workdir, environment
        self.stack, config = synthesized(base, environment, workdir / "synth" / "base")
        self.stackdir = stack_workdir(workdir / "base", self.stack)
        shutil.copytree(config.parent, self.stackdir)
        (self.stackdir / "provider_override.tf.json").write_text(json.dumps(emulator.provider_override()))
        self.env = terraform_environment(workdir)
        terraform(["init", "-input=false"], self.stackdir, self.env)
        terraform(["apply", "-input=false", "-auto-approve"], self.stackdir, self.env)

    def prepare(self, head: Path, name: str) -> Path:
        """A copy of the applied base with `head`'s synthesis in place of the base's."""
        name_of_stack, config = synthesized(head, self.environment, self.workdir / "synth" / name)
        if name_of_stack != self.stack:
            raise ValueError(f"{head} synthesizes stack {name_of_stack}, the base {self.stack}: "
                             "plans compare one stack")
        planned = stack_workdir(self.workdir / "plans" / name, self.stack)
        shutil.copytree(self.stackdir, planned, symlinks=True)
        shutil.copytree(self.workdir / "base" / "terraform-state", self.workdir / "plans" / name / "terraform-state")
        shutil.copy(config, planned / "cdk.tf.json")
        return planned

    def show_plan(self, planned: Path) -> dict[str, Any]:
        terraform(["plan", "-input=false", "-lock=false", "-out=head.tfplan"], planned, self.env)
        return json.loads(terraform(["show", "-json", "head.tfplan"], planned, self.env).stdout)

    def plan(self, head: Path, name: str = "head") -> dict[str, Any]:
        return self.show_plan(self.prepare(head, name))

    def plan_all(self, heads: dict[str, Path]) -> Plans:
        """Plan every head; synthesis one at a time (cdktf is not thread-safe), Terraform two at a time."""
        prepared = {name: self.prepare(head, name) for name, head in heads.items()}
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {name: pool.submit(self.show_plan, planned) for name, planned in prepared.items()}
            return Plans({name: future.result() for name, future in futures.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("head", type=Path)
    parser.add_argument("--env")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    with Emulator() as emulator, tempfile.TemporaryDirectory(prefix="tablewright-plan-") as scratch:
        plan = PlanBuilder(emulator, Path(scratch), args.base, args.env).plan(args.head)
    args.out.write_text(json.dumps(plan, indent=2, sort_keys=True) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
