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
from modules.synth import plan_stacks, synthesize, synthesize_into

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CDKTF_JSON = PROJECT_ROOT / "cdktf.json"


def default_blueprints() -> list[Path]:
    """The blueprints `cdktf.json` names (context `blueprints`), relative to the project root."""
    config = json.loads(CDKTF_JSON.read_text())
    return [PROJECT_ROOT / path for path in config["context"]["blueprints"]]


def load_all(paths: Sequence[str]) -> list[LoadedBlueprint]:
    return [load_blueprint(path) for path in (paths or default_blueprints())]


def command_synth(args: argparse.Namespace) -> int:
    stacks = plan_stacks(load_all(args.blueprints))
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

    results = verify_stacks(plan_stacks(load_all(args.blueprints)), seed=args.seed)
    render = {"text": report.render_text, "markdown": report.render_markdown, "json": report.render_json}[args.format]
    sys.stdout.write(render(results))
    return 0 if all(result.passed for result in results) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablewright", description="DynamoDB single-table blueprints -> reviewed, tested Terraform (cdktf)."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    synth = commands.add_parser("synth", help="write cdktf.out/stacks/<blueprint>/cdk.tf.json")
    synth.add_argument("blueprints", nargs="*", help="blueprint files (default: those cdktf.json names)")
    synth.add_argument("--out", default="cdktf.out", help="output directory (default: cdktf.out)")
    synth.set_defaults(handler=command_synth)
    explain_parser = commands.add_parser("explain", help="entity and access-pattern charts, GSIs, query cookbook")
    explain_parser.add_argument("blueprints", nargs="*", help="blueprint files (default: those cdktf.json names)")
    explain_parser.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    explain_parser.set_defaults(handler=command_explain)
    verify = commands.add_parser("verify", help="run every access pattern against an embedded DynamoDB")
    verify.add_argument("blueprints", nargs="*", help="blueprint files (default: those cdktf.json names)")
    verify.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    verify.add_argument("--seed", type=int, default=7, help="sample data seed (default 7)")
    verify.set_defaults(handler=command_verify)
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
