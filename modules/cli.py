"""Command line: `python main.py synth|explain ...`; with no arguments, the cdktf app entry point."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from modules.blueprint.load import LoadedBlueprint, load_blueprints, with_base_locks
from modules.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, TablewrightError
from modules.stacks.stack import Stack, build_stacks, lint_errors

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# The project a command runs in is the working directory, as for cdktf (which runs the app where cdktf.json is):
# its cdktf.json and its blueprints/, whichever copy of Tablewright runs (a pipeline may run the base branch's
# Tablewright on the pull request's blueprints).
CDKTF_JSON = Path("cdktf.json")
# Tablewright's own files: when they change in the repository `--changed-since` reads (Tablewright kept
# beside the blueprints), every blueprint is affected.
TOOL_FILES = (PROJECT_ROOT / "modules", PROJECT_ROOT / "main.py", PROJECT_ROOT / "pyproject.toml")


def blueprints_directory() -> Path:
    return CDKTF_JSON.parent / "blueprints"


def _listed_blueprints() -> list[str] | None:
    """`context.blueprints` of cdktf.json: None when cdktf.json or the list is absent."""
    if not CDKTF_JSON.is_file():
        return None
    try:
        config = json.loads(CDKTF_JSON.read_text())
    except (OSError, ValueError) as error:
        raise TablewrightError(f"{CDKTF_JSON} is not valid JSON ({error})", code="E600",
                               hint="correct it (cdktf reads it too), or remove it") from None
    context = config.get("context") if isinstance(config, dict) else None
    listed = context.get("blueprints") if isinstance(context, dict) else None
    if listed is None:
        return None
    if not isinstance(listed, list) or not listed or not all(isinstance(path, str) and path for path in listed):
        raise TablewrightError(f"{CDKTF_JSON}: `context.blueprints` must list the blueprint files to synthesize",
                               code="E600", hint='write e.g. {"context": {"blueprints": ["blueprints/orders.yaml"]}}'
                                                 ", or remove it to take every blueprint under blueprints/")
    return listed


def default_blueprints() -> list[Path]:
    """The blueprints a command takes when it is named none: those `cdktf.json` lists (`context.blueprints`,
    relative to it), or else every blueprint under blueprints/. A blueprint under blueprints/ that the
    list leaves out is a warning: a pull request that adds one must not pass unreviewed."""
    from modules.blueprint.compose import linked_directories
    from modules.stacks.catalog import service_blueprints

    found = service_blueprints(blueprints_directory())
    for link in linked_directories(blueprints_directory()) if blueprints_directory().is_dir() else []:
        print(f"warning: {os.path.relpath(link)} is a symbolic link to a directory: its blueprints are not taken "
              "(name them on the command line, or make it a directory)", file=sys.stderr)
    listed = _listed_blueprints()
    if listed is None:
        if not found:
            raise TablewrightError(f"no blueprint under {os.path.relpath(blueprints_directory())}", code="E600",
                                   hint="write one with `python main.py new NAME`, or name the blueprints on the "
                                        "command line")
        return [Path(os.path.relpath(path)) for path in found]
    named = {(CDKTF_JSON.parent / path).resolve() for path in listed}
    for path in found:
        if path.resolve() not in named:
            print(f"warning: {os.path.relpath(path)} is a blueprint that {os.path.relpath(CDKTF_JSON)} does not list "
                  "(`context.blueprints`): it is not synthesized, reviewed or gated; add it to the list, or remove "
                  "the list to take every blueprint under blueprints/", file=sys.stderr)
    return [Path(os.path.relpath(CDKTF_JSON.parent / path)) for path in listed]


def load_all(paths: Sequence[str], environment: str | None = None) -> list[LoadedBlueprint]:
    """Every stack of the given blueprints (default: `default_blueprints`); with `environment`, only that
    environment's stack of each."""
    stacks = [stack for path in (paths or default_blueprints()) for stack in load_blueprints(path)]
    if environment is None:
        return stacks
    chosen = [stack for stack in stacks if stack.environment == environment]
    for path in dict.fromkeys(stack.path for stack in stacks):
        if not any(stack.path == path for stack in chosen):
            known = sorted(str(s.environment) for s in stacks if s.path == path and s.environment)
            raise TablewrightError(f"{path} has no environment `{environment}`",
                                   hint=f"its environments: {', '.join(known)}" if known else
                                   "it declares no environments: leave out --env for its one stack")
    return chosen


def stacks_of(args: argparse.Namespace) -> list[Stack]:
    """The stacks a blueprint command works on, each computed once (modules/stacks/stack.py)."""
    return build_stacks(load_all(args.blueprints, args.env))


def refuse_lint_errors(stacks: Sequence[Stack], allowed: bool) -> None:
    """`synth` and `verify` stop at lint errors unless told otherwise."""
    for stack in stacks if not allowed else ():
        refusal = lint_errors(stack)
        if refusal is not None:
            raise refusal


def changed_blueprints(since: str, blueprints: Sequence[str]) -> list[str]:
    """`--changed-since`: the blueprints (given, else the default ones) a change since `since`
    affects, each with the reasons printed."""
    from modules.blueprint.changed import affected
    from modules.blueprint.gitref import changed_files

    candidates = [Path(path) for path in blueprints] or default_blueprints()
    changes = changed_files(since)
    chosen = affected(candidates, changes, TOOL_FILES)
    print(f"changed since {since} (merge base {changes.merge_base[:12]}): {len(chosen)} of "
          f"{len(dict.fromkeys(candidates))} blueprint(s)")
    for entry in chosen:
        print(f"  {entry.path}: {'; '.join(entry.reasons)}")
    return [str(entry.path) for entry in chosen]


def report_kept(outdir: Path, kept: Sequence[Path], stacks: Sequence[Stack]) -> None:
    """Say what synth carried over from the previous output, and how to move a state file left from before the
    local state moved beside the output."""
    from modules.synth.output import MAX_NAMED

    if kept:
        print(f"kept {len(kept)} file(s) synth did not write, in place: "
              + ", ".join(str(outdir / entry) for entry in kept[:MAX_NAMED])
              + (" ..." if len(kept) > MAX_NAMED else ""))
    state_notes(outdir, kept, stacks)


def state_notes(outdir: Path, entries: Sequence[Path], stacks: Sequence[Stack]) -> None:
    from modules.synth.output import earlier_state, state_file

    local = {stack.name for stack in stacks if stack.design.blueprint.terraform.backend.type == "local"}
    for entry in earlier_state(entries, local):
        print(f"note: {outdir / entry} is Terraform state kept where earlier versions wrote it; the stack's state "
              f"is now {state_file(outdir, entry.parts[1])}: run `terraform init -migrate-state` in "
              f"{outdir / entry.parent} to move it there", file=sys.stderr)


def command_synth(args: argparse.Namespace) -> int:
    from modules.synth.output import check_target
    from modules.synth.synth import check_locks, synthesize_keeping, write_locks

    check_target(Path(args.out))  # refuse a wrong --out before any work
    if args.changed_since is None:
        stacks = stacks_of(args)
    else:  # exactly the affected blueprints; none: an empty output, so no stale stack is planned
        chosen = changed_blueprints(args.changed_since, args.blueprints)
        stacks = build_stacks(load_all(chosen, args.env)) if chosen else []
    refuse_lint_errors(stacks, args.allow_lint_errors)
    if args.locked:
        check_locks(stacks)
    # An inherited CDKTF_OUTDIR must not redirect an explicit synth away from --out.
    os.environ.pop("CDKTF_OUTDIR", None)
    written, kept = synthesize_keeping(stacks, Path(args.out))
    for path in written:
        print(f"wrote {os.path.relpath(path)}")
    report_kept(Path(args.out), kept, stacks)
    for path in [] if args.locked else write_locks(stacks):
        print(f"wrote {os.path.relpath(path)} (the design lock: review and commit it)")
    return 0


def command_explain(args: argparse.Namespace) -> int:
    from modules.report import explain

    if args.resolved:
        from modules.report.resolved import render_resolved

        sys.stdout.write("\n".join(render_resolved(loaded) for loaded in load_all(args.blueprints, args.env)))
        return 0
    stacks = stacks_of(args)
    if args.format == "json":
        sys.stdout.write(explain.render_json(stacks))
    else:
        render = explain.render_markdown if args.format == "markdown" else explain.render_text
        sys.stdout.write("\n".join(render(stack) for stack in stacks))
    return 0


def command_verify(args: argparse.Namespace) -> int:
    from modules.report import verify as report
    from modules.verify.verify import verify_stacks

    stacks = stacks_of(args)
    refuse_lint_errors(stacks, args.allow_lint_errors)
    results = verify_stacks(stacks, seed=args.seed)
    render = {"text": report.render_text, "markdown": report.render_markdown, "json": report.render_json}[args.format]
    sys.stdout.write(render(results))
    return 0 if all(result.passed for result in results) else 1


def command_lint(args: argparse.Namespace) -> int:
    from modules.lint.engine import failed
    from modules.report import lint as report
    render = {"text": report.render_text, "json": report.render_json, "sarif": report.render_sarif}[args.format]

    def broken(error: TablewrightError) -> int:
        if args.format == "text":
            raise error
        sys.stdout.write(render(report.error_results(error)))  # machine-readable even when broken
        print(error.render(), file=sys.stderr)
        return error.exit_code

    try:
        loaded = load_all(args.blueprints, args.env)
        stacks = [] if args.against else build_stacks(loaded)
    except TablewrightError as error:
        return broken(error)
    if args.against:
        try:
            stacks = _with_breaking_changes(args.against, loaded)
        except _HeadNotDesigned as error:
            return broken(error.cause)
    results = [stack.lint for stack in stacks]
    sys.stdout.write(render(results))
    return 1 if failed(results, args.strict) else 0


class _HeadNotDesigned(Exception):
    """The blueprint `lint --against` checks cannot be designed (reported like any broken blueprint)."""

    def __init__(self, cause: TablewrightError) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _with_breaking_changes(spec: str, loaded: list[LoadedBlueprint]) -> list[Stack]:
    """Each stack of `loaded`, designed as `review` designs the head (against its own lock, or the old
    blueprint's when it has none), with its breaking-change findings against the same environment of the
    old blueprint."""
    import tempfile

    from modules.blueprint.gitref import load_spec
    from modules.lint.versions import breaking_changes
    if len({stack.path for stack in loaded}) != 1:
        raise TablewrightError("--against compares one blueprint: name exactly one",
                               hint="lint BLUEPRINT --against OLD")
    with tempfile.TemporaryDirectory(prefix="tablewright-old-") as scratch:
        old_loaded = load_spec(spec, Path(scratch), "--against")
        old = {s.source.environment: s for s in build_stacks(old_loaded)}
        try:
            stacks = build_stacks(with_base_locks(loaded, old_loaded))
        except TablewrightError as error:
            raise _HeadNotDesigned(error) from None
        return [stack.with_findings(breaking_changes(old[stack.source.environment].source,
                                                     old[stack.source.environment].design, stack.source,
                                                     stack.design, stack.source.path.parent))
                if stack.source.environment in old else stack for stack in stacks]


def command_capacity(args: argparse.Namespace) -> int:
    from modules.report import capacity as report

    render = {"text": report.render_text, "json": report.render_json, "infracost": report.render_infracost}[args.format]
    sys.stdout.write(render(stacks_of(args)))
    return 0


def detailed_exit(verdict: str, detailed: bool) -> int:
    """`review --detailed-exitcode`: 1 when a change is blocked, 4 when one needs the window, else 0."""
    from modules.errors import EXIT_FAILED, EXIT_OK, EXIT_WINDOW

    if not detailed:
        return EXIT_OK
    return {"blocked": EXIT_FAILED, "window": EXIT_WINDOW}.get(verdict, EXIT_OK)


def _review_mode(args: argparse.Namespace) -> None:
    """Either `--base OLD --head NEW` (one blueprint), or `--changed-since GITREF [BLUEPRINT ...]`."""
    usage = "review --base OLD --head NEW, or review --changed-since GITREF [BLUEPRINT ...]"
    if args.changed_since is None:
        plans = args.plan or args.plan_dir is not None
        if args.base is None or args.head is None or args.blueprints or plans:
            wrong = ("BLUEPRINT arguments" if args.blueprints else "--plan and --plan-dir" if plans
                     else "--base and --head together")
            raise TablewrightError(f"review: {wrong} " + ("go with --changed-since" if args.blueprints or plans
                                                          else "are both needed"), code="E600", hint=usage)
    elif args.base is not None or args.head is not None:
        raise TablewrightError("review: --changed-since reviews every changed blueprint against the merge base; "
                               "it does not take --base or --head", code="E600", hint=usage)


def _plans(specs: Sequence[str], directory: str | None) -> dict[str, dict[str, object]]:
    """`--plan STACK=PLAN.json` and `--plan-dir DIR` (every `DIR/<stack>.json`), each plan read and checked as
    the gate reads one."""
    from modules.review.planfile import read_plan

    pairs = [spec.partition("=")[::2] for spec in specs]
    for spec, (stack, path) in zip(specs, pairs, strict=True):
        if not stack or not path:
            raise TablewrightError(f"--plan {spec!r} is not STACK=PLAN.json", code="E600",
                                   hint="write e.g. --plan crm-prod=plan.json (`terraform show -json` of that stack)")
    if directory is not None:
        if not Path(directory).is_dir():
            raise TablewrightError(f"--plan-dir {directory}: not a directory", code="E600",
                                   hint="pass the directory holding <stack>.json plans")
        pairs += [(path.stem, str(path)) for path in sorted(Path(directory).glob("*.json"))
                  if re.fullmatch(r"[a-z0-9][a-z0-9-]*", path.stem)]
    plans: dict[str, dict[str, object]] = {}
    for stack, path in pairs:
        if stack in plans:
            raise TablewrightError(f"two plans for stack `{stack}`", code="E600", hint="give one plan per stack")
        plans[stack] = read_plan(Path(path))
    return plans


def command_review(args: argparse.Namespace) -> int:
    from modules.report import review as render

    _review_mode(args)
    if args.changed_since is not None:
        from modules.report import comment
        from modules.review.pull import build_pull_review

        pull = build_pull_review(args.changed_since, [Path(p) for p in args.blueprints] or default_blueprints(),
                                 args.env, acknowledged(args), TOOL_FILES, _plans(args.plan, args.plan_dir))
        show = {"markdown": comment.render_comment, "json": comment.render_pull_json,
                "text": comment.render_pull_text}[args.format]
        sys.stdout.write(show(pull))
        return detailed_exit(pull.verdict, args.detailed_exitcode)
    from modules.review.review import build_review

    review = build_review(args.base, args.head, args.env, acknowledged(args))
    output = {"markdown": render.render_markdown, "json": render.render_json, "text": render.render_text}[args.format]
    sys.stdout.write(output(review))
    return detailed_exit(review.verdict, args.detailed_exitcode)


def command_gate(args: argparse.Namespace) -> int:
    from modules.errors import EXIT_FAILED, EXIT_OK, EXIT_WINDOW
    from modules.report import review as render
    from modules.review.gate import gate, parse_now, stack_for_plan
    from modules.review.planfile import read_plan

    plan = read_plan(Path(args.plan))
    now = parse_now(args.now)
    loaded = stack_for_plan(load_all([*args.blueprints, *(args.blueprint or [])], args.env), plan)
    stack, decision = gate(plan, loaded, now, acknowledged(args))
    sys.stdout.write(render.render_gate(stack, decision, args.format))
    if decision.outcome == "apply":
        return EXIT_OK
    return EXIT_WINDOW if decision.outcome == "wait" and args.detailed_exitcode else EXIT_FAILED


def command_schema(args: argparse.Namespace) -> int:
    from modules.blueprint.schema import write_schemas

    for path in write_schemas(Path(args.out)):
        print(f"wrote {os.path.relpath(path)}")
    return 0


def command_list(args: argparse.Namespace) -> int:
    from modules.report import catalog as report
    from modules.stacks.catalog import catalog

    entries = catalog(Path(args.directory))
    sys.stdout.write(report.render_json(entries) if args.format == "json" else report.render_text(entries))
    return 0


def command_new(args: argparse.Namespace) -> int:
    from modules.stacks.catalog import scaffold

    listed = _listed_blueprints()  # a broken cdktf.json is said before anything is written
    path = scaffold(args.name, Path(args.dir), Path(args.base), PROJECT_ROOT / "schema" / "blueprint.schema.json")
    print(f"wrote {os.path.relpath(path)}: next, `python main.py lint {os.path.relpath(path)}`")
    print(picked_up(path, listed))
    return 0


def picked_up(path: Path, listed: list[str] | None) -> str:
    """How the commands that take every blueprint find a new one (`new`, `adopt`); `listed`: cdktf.json's list."""
    relative = os.path.relpath(path)
    directory = blueprints_directory()
    if not path.resolve().is_relative_to(directory.resolve()):
        return (f"{relative} is outside {os.path.relpath(directory)}: synth, review --changed-since and gate take it "
                "only when it is named on the command line")
    if listed is not None:
        return (f"{os.path.relpath(CDKTF_JSON)} lists the blueprints synth, review --changed-since and gate take: add "
                f'"{os.path.relpath(path, CDKTF_JSON.parent)}" to its `context.blueprints`')
    return (f"synth, review --changed-since and gate take it with every blueprint under "
            f"{os.path.relpath(directory)}; commit it with its design lock once `synth` has written it")


def command_adopt(args: argparse.Namespace) -> int:
    from modules.adopt import adopted_blueprint, blueprint_name, read_description, write_blueprint
    from modules.stacks.catalog import check_blueprint_name

    if args.name is not None:
        check_blueprint_name(args.name, "--name")  # before anything is read or written
    listed = _listed_blueprints()
    described = read_description([Path(path) for path in args.descriptions])
    name = args.name or blueprint_name(described.Table.TableName)
    path = None if args.out == "-" else Path(args.out or f"blueprints/{name}.yaml")
    schema = None if path is None else os.path.relpath(PROJECT_ROOT / "schema" / "blueprint.schema.json",
                                                       path.parent.resolve())
    adoption = adopted_blueprint(described, name, schema)
    for warning in adoption.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    write_blueprint(adoption, path)
    if path is None:
        sys.stdout.write(adoption.text)
    else:
        print(f"wrote {os.path.relpath(path)}: next, `python main.py lint {os.path.relpath(path)}`, then `synth` and "
              "`terraform plan`, which imports the table and changes nothing of it")
        print(picked_up(path, listed))
    return 0


class ArgumentParser(argparse.ArgumentParser):
    """Usage errors in the same shape as every other error: `error: ...`, `fix: ...`, exit 2."""

    def error(self, message: str) -> NoReturn:
        raise TablewrightError(f"{self.prog}: {message}", code="E600", hint=f"see `{self.prog} --help`")


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


def acknowledged(args: argparse.Namespace) -> frozenset[str]:
    from modules.review.classified import ACKNOWLEDGEMENTS

    return frozenset(name for name in ACKNOWLEDGEMENTS if getattr(args, f"allow_{name}"))


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="tablewright", description="DynamoDB single-table blueprints -> reviewed, tested Terraform (cdktf).",
        epilog="Every command also takes --debug: on an internal error (exit 3), print the traceback.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def add(name: str, help: str, handler: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help)
        command.add_argument("blueprints", nargs="*",
                             help="blueprint files (default: every one under blueprints/, or cdktf.json's list)")
        command.add_argument("--env", help="only this environment's stack of each blueprint")
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
    lint = add("lint", "hot partitions, key traps, limits and costs, with numbers", command_lint)
    lint.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    lint.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    lint.add_argument("--against", metavar="OLD",
                      help="also flag breaking changes from OLD (a path, or GITREF:path) without a major version bump")
    capacity = add("capacity", "read/write units, suggested autoscaling bounds, monthly cost", command_capacity)
    capacity.add_argument("--format", choices=("text", "json", "infracost"), default="text",
                          help="infracost: an Infracost usage file (YAML) from the declared rates")
    review = commands.add_parser("review", help="classify the Terraform changes between two blueprint versions")
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
    gate_command = commands.add_parser("gate", help="exit 1 if a plan must not be applied now")
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
    listing = commands.add_parser("list", help="the catalog: every blueprint in a directory")
    listing.add_argument("directory", nargs="?", default="blueprints", help="default: blueprints/")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    listing.set_defaults(handler=command_list)
    new = commands.add_parser("new", help="scaffold a service blueprint that extends the platform base")
    new.add_argument("name", help="blueprint name: lowercase letters, digits and '-'")
    new.add_argument("--dir", default="blueprints", help="where to write it (default: blueprints/)")
    new.add_argument("--base", default="blueprints/shared/platform-base.yaml", help="the shared blueprint to extend")
    new.set_defaults(handler=command_new)
    adopt = commands.add_parser(
        "adopt", help="write a blueprint that reproduces an existing table (from AWS CLI descriptions)",
        description="Reads the JSON of `aws dynamodb describe-table` and, optionally, describe-time-to-live, "
        "describe-continuous-backups, describe-contributor-insights, list-tags-of-resource and application-"
        "autoscaling describe-scalable-targets / describe-scaling-policies (one file each, any order).")
    adopt.add_argument("descriptions", nargs="+", metavar="DESCRIPTION.json", help="AWS CLI output files")
    adopt.add_argument("--name", help="blueprint name (default: from the table name)")
    adopt.add_argument("--out", help="the new blueprint file (default: blueprints/<name>.yaml; `-`: stdout)")
    adopt.set_defaults(handler=command_adopt)
    schema = commands.add_parser("schema", help="write the blueprint JSON Schemas (for editors and CI)")
    schema.add_argument("--out", default=str(PROJECT_ROOT / "schema"), help="directory (default: schema/)")
    schema.set_defaults(handler=command_schema)
    return parser


def cdktf_app() -> int:
    """`cdktf synth` runs `python3 main.py`: synthesize where the CLI says (CDKTF_OUTDIR)."""
    from modules.synth.output import foreign_entries, refuse_orphans
    from modules.synth.synth import check_locks, synthesize_into

    stacks = build_stacks(load_all([]))
    refuse_lint_errors(stacks, allowed=False)  # as `synth` does: cdktf synth has no --allow-lint-errors
    check_locks([stack for stack in stacks if stack.source.lock is not None])  # pipelines: locked when locked
    # The cdktf CLI keeps the stack directories it writes again and deletes the others, whatever they hold, through
    # symbolic links too: it is refused first.
    outdir = Path(os.environ.get("CDKTF_OUTDIR", "cdktf.out"))
    real = Path(os.path.realpath(outdir))
    if (real / "stacks").is_symlink():
        raise TablewrightError(f"{outdir}/stacks is a symbolic link: the cdktf CLI deletes the stack directories it "
                               "no longer writes through it", code="E603",
                               hint=f"make {outdir}/stacks a directory (or remove it: synth writes it)")
    if real.is_dir():
        refuse_orphans(outdir, real, {stack.name for stack in stacks}, option="")
        state_notes(outdir, foreign_entries(real), stacks)
    synthesize_into(stacks, outdir=None)
    return 0


def tool_version() -> str:
    from importlib import metadata  # only on the error path: it costs start-up time

    try:
        return metadata.version("tablewright")
    except metadata.PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in arguments
    arguments = [argument for argument in arguments if argument != "--debug"]
    try:
        if not arguments:
            return cdktf_app()
        args = build_parser().parse_args(arguments)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except TablewrightError as error:
        print(error.render(), file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as error:  # the one place that turns a bug into a clear report
        if debug:
            traceback.print_exc()
        detail = " ".join(str(error).split())[:200]
        print(f"error: internal error in Tablewright {tool_version()}: {type(error).__name__}"
              f"{': ' + detail if detail else ''} [E900]\n"
              "  fix: this is a bug in Tablewright, not in your input: report it with the command and the files "
              "involved (add --debug for the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
