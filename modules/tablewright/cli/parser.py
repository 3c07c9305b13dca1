"""The argument parser: every command, its options, and its help, which ends with the command's exit codes and
examples (`tablewright.cli.help`). Paths typed on the command line are converted to the project root the
command runs in (`tablewright.cli.paths`); defaults written as `Path` stay relative to that root."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from tablewright.cli.commands import (
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
from tablewright.cli.help import EPILOGS, TOP_EPILOG
from tablewright.cli.migrate_commands import command_migrate
from tablewright.cli.paths import typed_against, typed_path, typed_spec, typed_stack_plan
from tablewright.cli.review_commands import command_gate, command_review
from tablewright.cli.workspace_commands import command_init, command_local, command_terraform
from tablewright.errors import ErrorCode, TablewrightError

Handler = Callable[[argparse.Namespace], int]
_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)")


def did_you_mean(given: str, candidates: list[str], cutoff: float = 0.6) -> str:
    close = difflib.get_close_matches(given, candidates, n=3, cutoff=cutoff)
    return f"did you mean {' or '.join(close)}? " if close else ""


class ArgumentParser(argparse.ArgumentParser):
    """Usage errors in the same shape as every other error: `error: ...`, `fix: ...`, exit 2; the fix names the
    closest command, option or choice, and the command's own `--help`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)  # a prefix of one option may name another tomorrow
        super().__init__(*args, **kwargs)
        self.commands: dict[str, ArgumentParser] = {}

    def error(self, message: str) -> NoReturn:
        suggestion = ""
        choice = _INVALID_CHOICE.search(message)
        if choice:
            choices = re.findall(r"'([^']*)'", choice.group("choices"))
            suggestion = did_you_mean(choice.group("given"), choices)
        raise TablewrightError(f"{self.prog}: {message}", code=ErrorCode.USAGE,
                               hint=f"{suggestion}see `{self.prog} --help`")

    def unrecognized(self, extras: list[str]) -> NoReturn:
        options = [option for option in self._option_string_actions if option.startswith("--")]
        suggestions = [did_you_mean(extra.partition("=")[0], options, cutoff=0.75) for extra in extras
                       if extra.startswith("--")]
        if self.get_default("arguments") is not None and "--" not in extras:  # `terraform`: its arguments after --
            suggestions.append(f"Terraform's arguments go after `--` ({self.prog} STACK -- {' '.join(extras)}); ")
        raise TablewrightError(f"{self.prog}: unrecognized arguments: {' '.join(extras)}", code=ErrorCode.USAGE,
                               hint=f"{''.join(suggestions)}see `{self.prog} --help`")


class _Version(argparse.Action):
    """`--version`: the installed distribution's version, looked up only when asked (it costs start-up time)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print Tablewright's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        from tablewright.cli.terminal import tool_version

        print(f"tablewright {tool_version()}")
        parser.exit()


ACKNOWLEDGEMENT_HELP = {
    "destroy": "acknowledge deleting or replacing the table, or deleting a customer-managed key",
    "unprotect": "acknowledge turning off production, deletion protection or point-in-time recovery",
    "foreign": "acknowledge changes Tablewright does not write (IAM, resource policies, wildcard principals)",
}


def add_acknowledgements(command: argparse.ArgumentParser) -> None:
    """`--allow-destroy` and friends: each lifts one kind of blocked change into the maintenance window."""
    from tablewright.review.classified import ACKNOWLEDGEMENTS

    for name, flag in ACKNOWLEDGEMENTS.items():
        command.add_argument(flag, dest=f"allow_{name}", action="store_true",
                             help=f"{ACKNOWLEDGEMENT_HELP[name]}: blocked becomes window")


class Commands:
    """Adds the commands to the parser; `path`, `spec` and `plan` convert what the user typed (see the module)."""

    def __init__(self, parser: ArgumentParser, working: Path, root: Path) -> None:
        self.parser = parser
        self.subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                                 parser_class=ArgumentParser)
        self.path, self.spec, self.plan = (typed_path(working, root), typed_spec(working, root),
                                           typed_stack_plan(working, root))
        self.against = typed_against(working, root)
        self.common = ArgumentParser(add_help=False)
        self.common.add_argument("--root", metavar="DIR", help="the project (default: the nearest directory up from "
                                                               "here with cdktf.json, else with blueprints/)")

    def command(self, name: str, help: str, handler: Handler, description: str | None = None,
                usage: str | None = None) -> ArgumentParser:
        command: ArgumentParser = self.subcommands.add_parser(
            name, help=help, description=description, epilog=EPILOGS[name], parents=[self.common], usage=usage,
            formatter_class=argparse.RawDescriptionHelpFormatter)
        command.set_defaults(handler=handler)
        self.parser.commands[name] = command
        return command

    def blueprint_command(self, name: str, help: str, handler: Handler,
                          formats: tuple[str, ...] = ()) -> ArgumentParser:
        """A command over blueprint files; `formats`: the choices of its `--format`, the first the default."""
        command = self.command(name, help, handler)
        command.add_argument("blueprints", nargs="*", type=self.path,
                             help="blueprint files (default: every one under blueprints/, or cdktf.json's list)")
        command.add_argument("--env", help="only this environment's stack of each blueprint"
                                           " (of the default blueprints, those without it are left out, with a note)")
        if formats:
            command.add_argument("--format", choices=formats, default=formats[0])
        return command


def build_parser(working: Path | None = None, root: Path | None = None) -> ArgumentParser:
    """`working`: where the command was typed; `root`: the project it runs in (both default to here)."""
    here = Path.cwd()
    parser = ArgumentParser(
        prog="tablewright", description="DynamoDB single-table blueprints -> reviewed, tested Terraform (cdktf).",
        epilog=TOP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    commands = Commands(parser, working or here, root or here)
    parser.add_argument("--root", metavar="DIR", help=argparse.SUPPRESS)
    _design_commands(commands)
    _change_commands(commands)
    _project_commands(commands)
    return parser


def _migrate_command(commands: Commands) -> None:
    migrate = commands.command(
        "migrate", "plan, run and verify the data migrations a review lists (on the table itself)", command_migrate,
        description="plan: the items to touch, the write units, the duration and cost at --max-wcu, and the hours\n"
                    "it fits beside the declared traffic. run: a resumable, rate-limited parallel Scan that rewrites\n"
                    "each item, conditioned on the values read. verify: every item where the later design reads it,\n"
                    "recorded in the design lock beside BLUEPRINT. A run stopped by Ctrl-C exits 130 and resumes\n"
                    "where each segment stopped when run again.")
    migrate.add_argument("action", choices=("plan", "run", "verify"))
    migrate.add_argument("blueprint", metavar="BLUEPRINT", type=commands.path, help="the blueprint as it is now")
    migrate.add_argument("--against", required=True, metavar="REF|FILE", type=commands.against,
                         help="the design the table holds: GITREF:path, a git ref (the same path), or a file")
    migrate.add_argument("--env", help="the environment whose table to migrate")
    migrate.add_argument("--max-wcu", type=float, metavar="N",
                         help="write units per second the migration may use, all workers together (plan: the budget "
                              "to price; run: required)")
    migrate.add_argument("--endpoint-url", metavar="URL",
                         help="the DynamoDB endpoint (e.g. `tablewright local`'s); plan: count the items by a Scan")
    migrate.add_argument("--region",
                         help="the table's region (default: AWS_REGION, AWS_DEFAULT_REGION, else the blueprint's)")
    migrate.add_argument("--segments", type=int, default=8, metavar="K",
                         help="parallel Scan segments, all workers together (default 8; the same on every run)")
    migrate.add_argument("--segment", type=int, metavar="I",
                         help="run only segment I of K (one worker of many, e.g. an indexed Job's index)")
    migrate.add_argument("--format", choices=("text", "json"), default="text")


def _design_commands(commands: Commands) -> None:
    synth = commands.blueprint_command("synth", "write cdktf.out/stacks/<stack>/cdk.tf.json", command_synth)
    synth.add_argument("--out", type=commands.path, default=Path("cdktf.out"),
                       help="output directory (default: cdktf.out)")
    synth.add_argument("--allow-lint-errors", action="store_true", help="synthesize despite lint errors")
    synth.add_argument("--locked", action="store_true",
                       help="never write the design locks; fail if the design differs from them (for pipelines)")
    synth.add_argument("--changed-since", metavar="GITREF",
                       help="only the blueprints a change since GITREF affects (their file, what they extend, their "
                            "lock), like a pull request's diff: from the merge base to the work tree")
    explain = commands.blueprint_command("explain", "entity and access-pattern charts, indexes, query cookbook",
                                         command_explain, formats=("text", "markdown", "json"))
    explain.add_argument("--resolved", action="store_true",
                         help="print the composed blueprint with the file and line of every value")
    verify = commands.blueprint_command("verify", "run every access pattern against an embedded DynamoDB",
                                        command_verify, formats=("text", "markdown", "json"))
    verify.add_argument("--seed", type=int, default=7, help="sample data seed (default 7)")
    verify.add_argument("--allow-lint-errors", action="store_true", help="verify despite lint errors")
    verify.add_argument("--client", action="store_true",
                        help="also drive the generated Python client (`client --lang python`) through every write "
                             "and pattern")
    lint = commands.blueprint_command("lint", "hot partitions, key traps, limits and costs, with numbers",
                                      command_lint, formats=("text", "json", "sarif"))
    lint.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    lint.add_argument("--against", metavar="OLD", type=commands.spec,
                      help="also flag breaking changes from OLD (a path, or GITREF:path) without a major version bump")
    capacity = commands.blueprint_command("capacity", "read/write units, suggested autoscaling bounds, monthly cost",
                                          command_capacity)
    capacity.add_argument("--format", choices=("text", "json", "infracost"), default="text",
                          help="infracost: an Infracost usage file (YAML) from the declared rates")
    capacity.add_argument("--out-dir", metavar="DIR", type=commands.path,
                          help="with --format infracost: one usage file per stack, DIR/<stack>.yml, instead of stdout")
    commands.blueprint_command(
        "simulate", "a day of the declared traffic per second: throttling, capacity, cost by mode", command_simulate,
        formats=("text", "json", "markdown"))
    calibrate = commands.blueprint_command(
        "calibrate", "CloudWatch's consumed capacity and throttles against the declared rates", command_calibrate)
    calibrate.add_argument("--metrics", nargs="+", metavar="FILE", default=[], type=commands.path,
                           help="`aws cloudwatch get-metric-data` output of the printed queries (every page)")
    calibrate.add_argument("--insights", nargs="+", metavar="FILE", default=[], type=commands.path,
                           help="`aws cloudwatch get-insight-rule-report` output, each file named <rule>.json")
    calibrate.add_argument("--write", action="store_true",
                           help="make the changes in the named blueprint files (comments and layout kept), diff on "
                                "stderr")
    calibrate.add_argument("--print-queries", action="store_true",
                           help="print the `aws` commands whose output --metrics reads")
    calibrate.add_argument("--tolerance", type=float, default=25.0, metavar="PERCENT",
                           help="differences up to this are as declared (default 25)")
    calibrate.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    client = commands.blueprint_command(
        "client", "a typed data-access module per blueprint for application code (Python or TypeScript)",
        command_client)
    client.add_argument("--lang", required=True, choices=("python", "typescript"), help="the module's language")
    client.add_argument("--out", required=True, metavar="DIR", type=commands.path,
                        help="directory inside the project: DIR/<blueprint>_client.py|.ts is replaced, other files "
                             "stay")


def _change_commands(commands: Commands) -> None:
    review = commands.command("review", "classify the Terraform changes between two blueprint versions",
                              command_review)
    review.add_argument("blueprints", nargs="*", type=commands.path,
                        help="with --changed-since: the blueprints to consider (default: every one under "
                             "blueprints/, or cdktf.json's list)")
    review.add_argument("--base", metavar="OLD", type=commands.spec, help="the blueprint before: a path or GITREF:path")
    review.add_argument("--head", metavar="NEW", type=commands.spec, help="the blueprint after: a path or GITREF:path")
    review.add_argument("--changed-since", metavar="GITREF",
                        help="review every blueprint a change since GITREF affects against its version at the merge "
                             "base, in one comment (instead of --base/--head)")
    review.add_argument("--plan", action="append", default=[], metavar="STACK=PLAN.json", type=commands.plan,
                        help="with --changed-since: the stack's `terraform show -json` plan, summarised in the comment")
    review.add_argument("--plan-dir", metavar="DIR", type=commands.path,
                        help="with --changed-since: every DIR/<stack>.json as --plan <stack>=DIR/<stack>.json")
    review.add_argument("--env", help="only this environment's stack")
    review.add_argument("--format", choices=("markdown", "json", "text"), default="markdown")
    review.add_argument("--detailed-exitcode", action="store_true",
                        help="exit 1 when a change is blocked, 4 when one needs the maintenance window (default: 0)")
    add_acknowledgements(review)
    _migrate_command(commands)
    gate = commands.command("gate", "exit 1 if a plan must not be applied now", command_gate)
    gate.add_argument("--plan", required=True, type=commands.path, help="`terraform show -json PLAN` output")
    gate.add_argument("blueprints", nargs="*", type=commands.path,
                      help="the blueprints the plan may come from (as --blueprint)")
    gate.add_argument("--blueprint", action="append", metavar="BLUEPRINT", type=commands.path,
                      help="the blueprint the plan was synthesized from; repeat it, or leave it out for those "
                           "under blueprints/: the plan's table picks the stack")
    gate.add_argument("--env", help="its environment (default: the one whose table the plan names)")
    gate.add_argument("--now", help="decide as of this ISO 8601 time with offset (default: now)")
    add_acknowledgements(gate)
    gate.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    gate.add_argument("--detailed-exitcode", action="store_true",
                      help="exit 4 (not 1) when only window changes wait for the window; 1 stays blocked")


def _project_commands(commands: Commands) -> None:
    init = commands.command("init", "scaffold an infrastructure repository: cdktf.json, a platform base, CI",
                            command_init)
    init.add_argument("directory", nargs="?", type=commands.path, metavar="DIR",
                      help="the repository to scaffold (default: here, or --root)")
    init.set_defaults(here=commands.path("."))  # where init was typed, as seen from the root it runs in
    init.add_argument("--region", default="us-east-1", help="the region the stacks deploy to (default: us-east-1)")
    init.add_argument("--backend", choices=("local", "s3"), default="local",
                      help="where Terraform keeps state: s3 (with a native lock file) for teams, local for a trial "
                           "(default)")
    init.add_argument("--state-bucket", metavar="BUCKET", help="with --backend s3: the state bucket")
    init.add_argument("--state-region", metavar="REGION", help="with --backend s3: the bucket's region")
    init.add_argument("--ci", choices=("github", "gitlab", "none"), default="github",
                      help="the CI workflow to write (default: github)")
    init.add_argument("--skip-existing", action="store_true",
                      help="leave files that exist with other contents as they are (for a .gitignore, say which "
                           "lines to add), instead of refusing")
    listing = commands.command("list", "the catalog: every blueprint in a directory", command_list)
    listing.add_argument("directory", nargs="?", default=Path("blueprints"), type=commands.path,
                         help="default: blueprints/")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    new = commands.command("new", "scaffold a service blueprint that extends the platform base", command_new)
    new.add_argument("name", help="blueprint name: lowercase letters, digits and '-'")
    new.add_argument("--dir", default=Path("blueprints"), type=commands.path,
                     help="where to write it (default: blueprints/)")
    new.add_argument("--base", default=Path("blueprints/shared/platform-base.yaml"), type=commands.path,
                     help="the shared blueprint to extend (default: blueprints/shared/platform-base.yaml)")
    adopt = commands.command(
        "adopt", "write a blueprint that reproduces an existing table (from AWS CLI descriptions)", command_adopt,
        description="Reads the JSON of `aws dynamodb describe-table` and, optionally, describe-time-to-live,\n"
        "describe-continuous-backups, describe-contributor-insights, list-tags-of-resource and\n"
        "application-autoscaling describe-scalable-targets / describe-scaling-policies\n"
        "(one file each, any order).")
    adopt.add_argument("descriptions", nargs="+", metavar="DESCRIPTION.json", type=commands.path,
                       help="AWS CLI output files")
    adopt.add_argument("--name", help="blueprint name (default: from the table name)")
    adopt.add_argument("--out", type=commands.path,
                       help="the new blueprint file (default: blueprints/<name>.yaml; `-`: stdout)")
    schema = commands.command("schema", "write the blueprint JSON Schemas (for editors and CI)", command_schema)
    schema.add_argument("--out", default=Path("schema"), type=commands.path, help="directory (default: schema/)")
    _local_commands(commands)


def _local_commands(commands: Commands) -> None:
    local = commands.command(
        "local", "a local AWS on 127.0.0.1 with the blueprints' tables, for plans and application tests",
        command_local,
        description="Serves DynamoDB, Application Auto Scaling, CloudWatch, EventBridge, SSM, SNS, KMS, IAM, STS,\n"
        "S3 and CloudTrail on 127.0.0.1 (an emulator: moto, with what a synthesized stack calls). Prints the\n"
        "`export` lines that point the AWS CLI, the SDKs and Terraform at it first, then serves until\n"
        "Ctrl-C or SIGTERM (exit 0). Nothing is kept when it stops.")
    local.add_argument("blueprints", nargs="*", type=commands.path,
                       help="blueprints whose tables to create (default: every one under blueprints/, or "
                            "cdktf.json's list)")
    local.add_argument("--env", help="the environment whose tables to create (default: dev; a blueprint without "
                                     "environments: its one table)")
    local.add_argument("--port", type=int, default=4566, help="the port on 127.0.0.1 (default: 4566)")
    local.add_argument("--host", default="127.0.0.1", help="the address: 127.0.0.1, the only one allowed")
    local.add_argument("--items", type=int, default=0, metavar="N",
                       help="write N sample items per entity (verify's samples; default: none)")
    local.add_argument("--seed", type=int, default=7, help="sample data seed (default 7)")
    local.add_argument("--empty", action="store_true",
                       help="create no table: for `tablewright terraform STACK --endpoint ... -- apply`")
    terraform = commands.command(
        "terraform", "run Terraform in a stack's directory, against `tablewright local` with --endpoint",
        command_terraform,
        usage="tablewright terraform [-h] [--root DIR] [--endpoint URL] [--out OUT] STACK -- ARGS...",
        description="Runs `terraform ARGS...` in cdktf.out/stacks/STACK. With --endpoint, every AWS call goes to\n"
        "that emulator (a provider override file, removed afterwards, and a state of its own beside the\n"
        "stack, never the stack's real backend). Providers come from the mirror TABLEWRIGHT_PROVIDER_MIRROR\n"
        "names; else your own CLI configuration (TF_CLI_CONFIG_FILE, ~/.terraformrc) as it is; else a\n"
        "mirror in /opt/tf-plugins or Terraform's plugin directories; else the registry. Once Terraform\n"
        "runs, its exit code is the command's; a refusal before it starts exits 2 with an `error:` line.")
    terraform.add_argument("stack", metavar="STACK", help="the stack: <blueprint>[-<env>], as synth named it")
    terraform.add_argument("--endpoint", metavar="URL", help="the emulator, e.g. http://127.0.0.1:4566")
    terraform.add_argument("--out", type=commands.path, default=Path("cdktf.out"),
                           help="the synth output directory (default: cdktf.out)")
    terraform.set_defaults(arguments=[])  # what Terraform runs: everything after `--` (cli.run puts it here)
