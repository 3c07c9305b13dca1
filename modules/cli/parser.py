"""The argument parser: every command, its options, and its help, which ends with the command's exit codes and
examples (`EPILOGS`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn

from modules.cli.commands import (
    command_adopt,
    command_calibrate,
    command_capacity,
    command_client,
    command_explain,
    command_lint,
    command_list,
    command_new,
    command_schema,
    command_simulate,
    command_synth,
    command_verify,
)
from modules.cli.project import PROJECT_ROOT
from modules.cli.review_commands import command_gate, command_review
from modules.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, EXIT_WINDOW, ErrorCode, TablewrightError

Handler = Callable[[argparse.Namespace], int]


def epilog(failed: str | None, examples: list[str], window: str | None = None) -> str:
    """The exit codes (modules/errors.py) and example command lines closing a command's --help."""
    lines = ["exit codes:", f"  {EXIT_OK}  ok",
             f"  {EXIT_FAILED}  " + (f"failed: {failed}" if failed else "not used by this command"),
             f"  {EXIT_BAD_INPUT}  bad input: a blueprint, plan, file or argument is wrong (one located message "
             "with its fix)",
             f"  {EXIT_INTERNAL}  internal error: a bug in Tablewright (--debug prints the traceback)"]
    if window:
        lines.append(f"  {EXIT_WINDOW}  with --detailed-exitcode: {window}")
    return "\n".join([*lines, "", "examples:", *(f"  {example}" for example in examples)])


EPILOGS: dict[str, str] = {
    "synth": epilog(None, ["python main.py synth", "python main.py synth blueprints/orders.yaml --env prod --locked",
                           "python main.py synth --changed-since origin/main --out cdktf.out"]),
    "explain": epilog(None, ["python main.py explain blueprints/orders.yaml --env prod",
                             "python main.py explain blueprints/orders.yaml --format markdown > DESIGN.md",
                             "python main.py explain blueprints/orders.yaml --env prod --resolved"]),
    "verify": epilog("an access pattern or an index returned other items than the design says",
                     ["python main.py verify blueprints/orders.yaml", "python main.py verify --format json"]),
    "lint": epilog("a lint error (--strict: a warning too), or a breaking change without a major version",
                   ["python main.py lint --strict", "python main.py lint blueprints/orders.yaml --format sarif > "
                    "lint.sarif", "python main.py lint blueprints/orders.yaml --against "
                    "origin/main:blueprints/orders.yaml"]),
    "capacity": epilog(None, ["python main.py capacity blueprints/orders.yaml --env prod",
                              "python main.py capacity blueprints/orders.yaml --env prod --format infracost "
                              "> usage.yml",
                              "python main.py capacity --format infracost --out-dir infracost"]),
    "simulate": epilog(None, ["python main.py simulate blueprints/orders.yaml --env prod",
                              "python main.py simulate --format json > simulation.json",
                              "python main.py simulate blueprints/orders.yaml --format markdown"]),
    "calibrate": epilog("observed traffic exceeds the declared rates beyond the tolerance, or was throttled",
                        ["python main.py calibrate blueprints/orders.yaml --env prod --print-queries > query.sh",
                         "python main.py calibrate blueprints/orders.yaml --env prod --metrics metrics.json",
                         "python main.py calibrate --env prod --metrics p1.json p2.json --insights insights/*.json"]),
    "client": epilog(None, ["python main.py client blueprints/orders.yaml --lang python --out app/db",
                            "python main.py client --lang typescript --out src/db"]),
    "review": epilog("with --detailed-exitcode: a change is blocked (it would lose data or protection)",
                     ["python main.py review --base origin/main:blueprints/orders.yaml --head blueprints/orders.yaml",
                      "python main.py review --changed-since origin/main --plan-dir plans --detailed-exitcode"],
                     window="a change needs the maintenance window, none is blocked"),
    "gate": epilog("the plan must not be applied now (a change is blocked, or waits for the window)",
                   ["terraform show -json plan.out > plan.json && python main.py gate --plan plan.json",
                    "python main.py gate --plan plan.json --blueprint blueprints/orders.yaml --detailed-exitcode"],
                   window="only window changes wait for the window (1 stays blocked)"),
    "list": epilog(None, ["python main.py list", "python main.py list blueprints --format json"]),
    "new": epilog(None, ["python main.py new billing", "python main.py new billing --dir services"]),
    "adopt": epilog(None, ["aws dynamodb describe-table --table-name orders > table.json",
                           "python main.py adopt table.json --name orders"]),
    "schema": epilog(None, ["python main.py schema", "python main.py schema --out schema"]),
}
TOP_EPILOG = (epilog("what it means depends on the command: see `python main.py COMMAND --help`",
                     ["python main.py new billing", "python main.py lint --strict", "python main.py synth"],
                     window="review and gate: a change waits for the maintenance window")
              + "\n\nEvery command also takes --debug: on an internal error (exit 3), print the traceback."
              "\nColour: on a terminal only; NO_COLOR=1 turns it off.")


class ArgumentParser(argparse.ArgumentParser):
    """Usage errors in the same shape as every other error: `error: ...`, `fix: ...`, exit 2."""

    def error(self, message: str) -> NoReturn:
        raise TablewrightError(f"{self.prog}: {message}", code=ErrorCode.USAGE, hint=f"see `{self.prog} --help`")


ACKNOWLEDGEMENT_HELP = {
    "destroy": "acknowledge deleting or replacing the table, or deleting a customer-managed key",
    "unprotect": "acknowledge turning off production, deletion protection or point-in-time recovery",
    "foreign": "acknowledge changes Tablewright does not write (IAM, resource policies, wildcard principals)",
}


def add_acknowledgements(command: argparse.ArgumentParser) -> None:
    """`--allow-destroy` and friends: each lifts one kind of blocked change into the maintenance window."""
    from modules.review.classified import ACKNOWLEDGEMENTS

    for name, flag in ACKNOWLEDGEMENTS.items():
        command.add_argument(flag, dest=f"allow_{name}", action="store_true",
                             help=f"{ACKNOWLEDGEMENT_HELP[name]}: blocked becomes window")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="tablewright", description="DynamoDB single-table blueprints -> reviewed, tested Terraform (cdktf).",
        epilog=TOP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command_of(name: str, help: str, description: str | None = None) -> argparse.ArgumentParser:
        return subcommands.add_parser(name, help=help, description=description, epilog=EPILOGS[name],
                                      formatter_class=argparse.RawDescriptionHelpFormatter)

    def add(name: str, help: str, handler: Handler) -> argparse.ArgumentParser:
        command = command_of(name, help)
        command.add_argument("blueprints", nargs="*",
                             help="blueprint files (default: every one under blueprints/, or cdktf.json's list)")
        command.add_argument("--env", help="only this environment's stack of each blueprint"
                                     " (of the default blueprints, those without it are left out, with a note)")
        command.set_defaults(handler=handler)
        return command

    synth = add("synth", "write cdktf.out/stacks/<stack>/cdk.tf.json", command_synth)
    synth.add_argument("--out", default="cdktf.out", help="output directory (default: cdktf.out)")
    synth.add_argument("--allow-lint-errors", action="store_true", help="synthesize despite lint errors")
    synth.add_argument("--locked", action="store_true",
                       help="never write the design locks; fail if the design differs from them (for pipelines)")
    synth.add_argument("--changed-since", metavar="GITREF",
                       help="only the blueprints a change since GITREF affects (their file, what they extend, their "
                            "lock), like a pull request's diff: from the merge base to the work tree")
    explain_command = add("explain", "entity and access-pattern charts, indexes, query cookbook", command_explain)
    explain_command.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    explain_command.add_argument("--resolved", action="store_true",
                                 help="print the composed blueprint with the file and line of every value")
    verify = add("verify", "run every access pattern against an embedded DynamoDB", command_verify)
    verify.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    verify.add_argument("--seed", type=int, default=7, help="sample data seed (default 7)")
    verify.add_argument("--allow-lint-errors", action="store_true", help="verify despite lint errors")
    verify.add_argument("--client", action="store_true",
                        help="also drive the generated Python client (`client --lang python`) through every write "
                             "and pattern")
    lint = add("lint", "hot partitions, key traps, limits and costs, with numbers", command_lint)
    lint.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    lint.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    lint.add_argument("--against", metavar="OLD",
                      help="also flag breaking changes from OLD (a path, or GITREF:path) without a major version bump")
    capacity = add("capacity", "read/write units, suggested autoscaling bounds, monthly cost", command_capacity)
    capacity.add_argument("--format", choices=("text", "json", "infracost"), default="text",
                          help="infracost: an Infracost usage file (YAML) from the declared rates")
    capacity.add_argument("--out-dir", metavar="DIR",
                          help="with --format infracost: one usage file per stack, DIR/<stack>.yml, instead of stdout")
    simulate = add("simulate", "a day of the declared traffic per second: throttling, capacity, cost by mode",
                   command_simulate)
    simulate.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    calibrate = add("calibrate", "CloudWatch's consumed capacity and throttles against the declared rates",
                    command_calibrate)
    calibrate.add_argument("--metrics", nargs="+", metavar="FILE", default=[],
                           help="`aws cloudwatch get-metric-data` output of the printed queries (every page)")
    calibrate.add_argument("--insights", nargs="+", metavar="FILE", default=[],
                           help="`aws cloudwatch get-insight-rule-report` output, each file named <rule>.json")
    calibrate.add_argument("--write", action="store_true",
                           help="make the changes in the named blueprint files (comments and layout kept), diff on "
                                "stderr")
    calibrate.add_argument("--print-queries", action="store_true",
                           help="print the `aws` commands whose output --metrics reads")
    calibrate.add_argument("--tolerance", type=float, default=25.0, metavar="PERCENT",
                           help="differences up to this are as declared (default 25)")
    calibrate.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    client = add("client", "a typed data-access module per blueprint for application code (Python or TypeScript)",
                 command_client)
    client.add_argument("--lang", required=True, choices=("python", "typescript"), help="the module's language")
    client.add_argument("--out", required=True, metavar="DIR",
                        help="directory inside the working directory: DIR/<blueprint>_client.py|.ts is replaced, "
                             "other files stay")
    review = command_of("review", help="classify the Terraform changes between two blueprint versions")
    review.add_argument("blueprints", nargs="*",
                        help="with --changed-since: the blueprints to consider (default: every one under "
                             "blueprints/, or cdktf.json's list)")
    review.add_argument("--base", metavar="OLD", help="the blueprint before: a path or GITREF:path")
    review.add_argument("--head", metavar="NEW", help="the blueprint after: a path or GITREF:path")
    review.add_argument("--changed-since", metavar="GITREF",
                        help="review every blueprint a change since GITREF affects against its version at the merge "
                             "base, in one comment (instead of --base/--head)")
    review.add_argument("--plan", action="append", default=[], metavar="STACK=PLAN.json",
                        help="with --changed-since: the stack's `terraform show -json` plan, summarised in the comment")
    review.add_argument("--plan-dir", metavar="DIR",
                        help="with --changed-since: every DIR/<stack>.json as --plan <stack>=DIR/<stack>.json")
    review.add_argument("--env", help="only this environment's stack")
    review.add_argument("--format", choices=("markdown", "json", "text"), default="markdown")
    review.add_argument("--detailed-exitcode", action="store_true",
                        help="exit 1 when a change is blocked, 4 when one needs the maintenance window (default: 0)")
    add_acknowledgements(review)
    review.set_defaults(handler=command_review)
    gate_command = command_of("gate", help="exit 1 if a plan must not be applied now")
    gate_command.add_argument("--plan", required=True, help="`terraform show -json PLAN` output")
    gate_command.add_argument("blueprints", nargs="*", help="the blueprints the plan may come from (as --blueprint)")
    gate_command.add_argument("--blueprint", action="append", metavar="BLUEPRINT",
                              help="the blueprint the plan was synthesized from; repeat it, or leave it out for those "
                                   "under blueprints/: the plan's table picks the stack")
    gate_command.add_argument("--env", help="its environment (default: the one whose table the plan names)")
    gate_command.add_argument("--now", help="decide as of this ISO 8601 time with offset (default: now)")
    add_acknowledgements(gate_command)
    gate_command.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    gate_command.add_argument("--detailed-exitcode", action="store_true",
                              help="exit 4 (not 1) when only window changes wait for the window; 1 stays blocked")
    gate_command.set_defaults(handler=command_gate)
    listing = command_of("list", help="the catalog: every blueprint in a directory")
    listing.add_argument("directory", nargs="?", default="blueprints", help="default: blueprints/")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    listing.set_defaults(handler=command_list)
    new = command_of("new", help="scaffold a service blueprint that extends the platform base")
    new.add_argument("name", help="blueprint name: lowercase letters, digits and '-'")
    new.add_argument("--dir", default="blueprints", help="where to write it (default: blueprints/)")
    new.add_argument("--base", default="blueprints/shared/platform-base.yaml", help="the shared blueprint to extend")
    new.set_defaults(handler=command_new)
    adopt = command_of(
        "adopt", help="write a blueprint that reproduces an existing table (from AWS CLI descriptions)",
        description="Reads the JSON of `aws dynamodb describe-table` and, optionally, describe-time-to-live,\n"
        "describe-continuous-backups, describe-contributor-insights, list-tags-of-resource and\n"
        "application-autoscaling describe-scalable-targets / describe-scaling-policies\n"
        "(one file each, any order).")
    adopt.add_argument("descriptions", nargs="+", metavar="DESCRIPTION.json", help="AWS CLI output files")
    adopt.add_argument("--name", help="blueprint name (default: from the table name)")
    adopt.add_argument("--out", help="the new blueprint file (default: blueprints/<name>.yaml; `-`: stdout)")
    adopt.set_defaults(handler=command_adopt)
    schema = command_of("schema", help="write the blueprint JSON Schemas (for editors and CI)")
    schema.add_argument("--out", default=str(PROJECT_ROOT / "schema"), help="directory (default: schema/)")
    schema.set_defaults(handler=command_schema)
    return parser


