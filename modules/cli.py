"""Command line: `python main.py synth|explain ...`; with no arguments, the cdktf app entry point."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from modules.blueprint.load import LoadedBlueprint, load_blueprint
from modules.errors import TablewrightError
from modules.report import explain
from modules.synth import StackPlan, plan_stacks, synthesize, synthesize_into

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CDKTF_JSON = PROJECT_ROOT / "cdktf.json"


def default_blueprints() -> list[Path]:
    """The blueprints `cdktf.json` names (context `blueprints`), relative to the project root."""
    config = json.loads(CDKTF_JSON.read_text())
    return [Path(os.path.relpath(PROJECT_ROOT / path)) for path in config["context"]["blueprints"]]


def load_all(paths: Sequence[str]) -> list[LoadedBlueprint]:
    return [load_blueprint(path) for path in (paths or default_blueprints())]


def refuse_lint_errors(stacks: list[StackPlan], allowed: bool) -> None:
    """`synth` and `verify` stop at lint errors unless told otherwise."""
    if allowed:
        return
    from modules.lint.engine import lint_loaded

    for stack in stacks:
        result = lint_loaded(stack.source, stack.design)
        errors = [x for x in result.findings if x.finding.severity == "error"]
        if errors:
            first = errors[0]
            more = f" (and {len(errors) - 1} more: `python main.py lint`)" if len(errors) > 1 else ""
            raise TablewrightError(
                f"lint {first.finding.code}: {first.finding.message}{more}",
                path=first.finding.path,
                hint=f"{first.finding.fix}; or pass --allow-lint-errors",
                location=first.location,
            )


def command_synth(args: argparse.Namespace) -> int:
    stacks = plan_stacks(load_all(args.blueprints))
    refuse_lint_errors(stacks, args.allow_lint_errors)
    # An inherited CDKTF_OUTDIR must not redirect an explicit synth away from --out.
    os.environ.pop("CDKTF_OUTDIR", None)
    for path in synthesize(stacks, Path(args.out)):
        print(f"wrote {os.path.relpath(path)}")
    return 0


def command_explain(args: argparse.Namespace) -> int:
    designs = [stack.design for stack in plan_stacks(load_all(args.blueprints))]
    if args.format == "json":
        sys.stdout.write(explain.render_json(designs))
    else:
        render: Callable = explain.render_markdown if args.format == "markdown" else explain.render_text
        sys.stdout.write("\n".join(render(design) for design in designs))
    return 0


def command_verify(args: argparse.Namespace) -> int:
    from modules.verify import report
    from modules.verify.verify import verify_stacks

    stacks = plan_stacks(load_all(args.blueprints))
    refuse_lint_errors(stacks, args.allow_lint_errors)
    results = verify_stacks(stacks, seed=args.seed)
    render = {"text": report.render_text, "markdown": report.render_markdown, "json": report.render_json}[args.format]
    sys.stdout.write(render(results))
    return 0 if all(result.passed for result in results) else 1


def command_lint(args: argparse.Namespace) -> int:
    from modules.lint import engine

    results = [engine.lint_loaded(stack.source, stack.design) for stack in plan_stacks(load_all(args.blueprints))]
    render = {"text": engine.render_text, "json": engine.render_json, "sarif": engine.render_sarif}[args.format]
    sys.stdout.write(render(results))
    return 1 if engine.failed(results, args.strict) else 0


def command_capacity(args: argparse.Namespace) -> int:
    from modules.capacity import report
    from modules.capacity.model import estimate

    designs = [stack.design for stack in plan_stacks(load_all(args.blueprints))]
    reports = [estimate(design) for design in designs]
    render = report.render_json if args.format == "json" else report.render_text
    sys.stdout.write(render(designs, reports))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablewright", description="DynamoDB single-table blueprints -> reviewed, tested Terraform (cdktf)."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    synth = commands.add_parser("synth", help="write cdktf.out/stacks/<blueprint>/cdk.tf.json")
    synth.add_argument("blueprints", nargs="*", help="blueprint files (default: those cdktf.json names)")
    synth.add_argument("--out", default="cdktf.out", help="output directory (default: cdktf.out)")
    synth.add_argument("--allow-lint-errors", action="store_true", help="synthesize despite lint errors")
    synth.set_defaults(handler=command_synth)
    explain_parser = commands.add_parser("explain", help="entity and access-pattern charts, GSIs, query cookbook")
    explain_parser.add_argument("blueprints", nargs="*", help="blueprint files (default: those cdktf.json names)")
    explain_parser.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    explain_parser.set_defaults(handler=command_explain)
    verify = commands.add_parser("verify", help="run every access pattern against an embedded DynamoDB")
    verify.add_argument("blueprints", nargs="*", help="blueprint files (default: those cdktf.json names)")
    verify.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    verify.add_argument("--seed", type=int, default=7, help="sample data seed (default 7)")
    verify.add_argument("--allow-lint-errors", action="store_true", help="verify despite lint errors")
    verify.set_defaults(handler=command_verify)
    lint = commands.add_parser("lint", help="hot partitions, key traps, limits and costs, with numbers")
    lint.add_argument("blueprints", nargs="*", help="blueprint files (default: those cdktf.json names)")
    lint.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    lint.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    lint.set_defaults(handler=command_lint)
    capacity = commands.add_parser("capacity", help="read/write units, suggested autoscaling bounds, monthly cost")
    capacity.add_argument("blueprints", nargs="*", help="blueprint files (default: those cdktf.json names)")
    capacity.add_argument("--format", choices=("text", "json"), default="text")
    capacity.set_defaults(handler=command_capacity)
    return parser


def cdktf_app() -> int:
    """`cdktf synth` runs `python3 main.py`: synthesize where the CLI says (CDKTF_OUTDIR)."""
    synthesize_into(plan_stacks(load_all([])), outdir=None)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        if not arguments:
            return cdktf_app()
        args = build_parser().parse_args(arguments)
        return args.handler(args)
    except TablewrightError as error:
        print(error.render(), file=sys.stderr)
        return error.exit_code
