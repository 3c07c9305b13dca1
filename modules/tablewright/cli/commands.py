"""The blueprint commands: synth, explain, verify, lint, capacity, list, new, adopt, schema; and the cdktf app.
Each ends with a summary line on stderr, so stdout stays the report (and machine-readable with --format json)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tablewright.blueprint.load import LoadedBlueprint, with_base_locks
from tablewright.cli.project import (
    SCHEMA_FILE,
    changed_blueprints,
    designed,
    inside_project,
    listed_blueprints,
    load_all,
    picked_up,
    refuse_lint_errors,
    report_kept,
    stacks_of,
    state_notes,
    write_files,
)
from tablewright.cli.terminal import progress, say, status, write
from tablewright.errors import ErrorCode, TablewrightError
from tablewright.stacks.stack import Stack, build_stacks

if TYPE_CHECKING:
    from tablewright.calibrate.calibration import Calibration
    from tablewright.calibrate.compare import Change


def blueprint_count(stacks: Sequence[Stack]) -> int:
    return len({stack.source.path for stack in stacks})


def fitted(text: str, output: str = "text") -> str:
    """Text output within 100 columns (Markdown and JSON as they are)."""
    from tablewright.report.tables import fit_lines

    return fit_lines(text) if output == "text" else text


def stacks_line(stacks: Sequence[Stack], done: str) -> str:
    """e.g. `4 stack(s) of 2 blueprint(s) explained`."""
    return f"{len(stacks)} stack(s) of {blueprint_count(stacks)} blueprint(s) {done}"


def command_synth(args: argparse.Namespace) -> int:
    from tablewright.synth.output import check_target
    from tablewright.synth.synth import check_locks, synthesize_keeping, write_locks

    check_target(Path(args.out))  # refuse a wrong --out before any work
    if args.changed_since is None:
        stacks = stacks_of(args)
    else:  # exactly the affected blueprints; none: an empty output, so no stale stack is planned
        chosen = changed_blueprints(args.changed_since, args.blueprints)
        stacks = (designed(load_all(chosen, args.env, named=bool(args.blueprints), some=False), args.command) if chosen
                  else [])
    refuse_lint_errors(stacks, args.allow_lint_errors)
    if args.locked:
        check_locks(stacks)
    # An inherited CDKTF_OUTDIR must not redirect an explicit synth away from --out.
    os.environ.pop("CDKTF_OUTDIR", None)
    with status(f"synth writing {len(stacks):,} stack(s)", len(stacks)):
        written, kept = synthesize_keeping(stacks, Path(args.out))
    for path in written:
        print(f"wrote {os.path.relpath(path)}")
    report_kept(Path(args.out), kept, stacks)
    locks = [] if args.locked else write_locks(stacks)
    for path in locks:
        print(f"wrote {os.path.relpath(path)} (the design lock: review and commit it)")
    say(f"{blueprint_count(stacks)} blueprint(s), {len(stacks)} stack(s) synthesized, {len(locks)} lock(s) written "
        f"into {args.out}")
    return 0


def command_explain(args: argparse.Namespace) -> int:
    from tablewright.report import explain

    if args.resolved:
        from tablewright.report.resolved import render_resolved

        loaded = load_all(args.blueprints, args.env, args.command)
        sys.stdout.write("\n".join(render_resolved(stack) for stack in loaded))
        say(f"{len(loaded)} stack(s) of {len({stack.path for stack in loaded})} blueprint(s) resolved")
        return 0
    stacks = stacks_of(args)
    if args.format == "markdown":
        write(fitted("\n".join(explain.render_markdown(stack) for stack in stacks), args.format), styled=False)
    else:
        from tablewright.alternatives.alternatives import stack_choices

        explained = [(stack, stack_choices(stack)) for stack in stacks]
        if args.format == "json":
            sys.stdout.write(explain.render_json(explained))
        else:
            write(fitted("\n".join(explain.render_text(*pair) for pair in explained), args.format), styled=False)
    say(stacks_line(stacks, "explained"))
    return 0


def command_verify(args: argparse.Namespace) -> int:
    from tablewright.report import verify as report
    from tablewright.verify.verify import verify_stacks

    stacks = stacks_of(args)
    refuse_lint_errors(stacks, args.allow_lint_errors)
    results = verify_stacks(stacks, seed=args.seed, with_client=args.client)
    render = {"text": report.render_text, "markdown": report.render_markdown, "json": report.render_json}[args.format]
    write(fitted(render(results), args.format), styled=args.format == "text")
    checks = [check.passed for result in results for check in result.results]
    checks += [index.passed for result in results for index in result.indexes]
    checks += [check.passed for result in results for check in result.client]
    refused = sum(1 for result in results if result.refused is not None)
    say(f"{checks.count(True)} pattern and index check(s) passed, {checks.count(False)} failed"
        + (f", {refused} stack(s) refused" if refused else "") + f" in {stacks_line(stacks, 'verified')}")
    return 0 if all(result.passed for result in results) else 1


def command_lint(args: argparse.Namespace) -> int:
    from tablewright.lint.engine import failed
    from tablewright.report import lint as report
    render = {"text": report.render_text, "json": report.render_json, "sarif": report.render_sarif}[args.format]

    def broken(error: TablewrightError) -> int:
        if args.format == "text":
            raise error
        sys.stdout.write(render(report.error_results(error)))  # machine-readable even when broken
        say(error.render())
        return error.exit_code

    try:
        loaded = load_all(args.blueprints, args.env, args.command)
        stacks = [] if args.against else designed(loaded, args.command)
    except TablewrightError as error:
        return broken(error)
    if args.against:
        try:
            stacks = _with_breaking_changes(args.against, loaded)
        except _HeadNotDesigned as error:
            return broken(error.cause)
    results = [stack.lint for stack in stacks]
    write(render(results), styled=args.format == "text")
    say(f"{sum(r.count('error') for r in results)} error(s), {sum(r.count('warning') for r in results)} warning(s) "
        f"in {stacks_line(stacks, 'linted')}")
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

    from tablewright.blueprint.gitref import load_spec
    from tablewright.lint.versions import breaking_changes
    if len({stack.path for stack in loaded}) != 1:
        raise TablewrightError("--against compares one blueprint: name exactly one", code=ErrorCode.USAGE,
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
    from tablewright.report import capacity as report

    render = {"text": report.render_text, "json": report.render_json, "infracost": report.render_infracost}[args.format]
    if args.out_dir is not None and args.format != "infracost":
        raise TablewrightError("--out-dir writes Infracost usage files", code=ErrorCode.USAGE,
                               hint="add `--format infracost`, or leave out --out-dir to write to stdout")
    stacks = stacks_of(args)
    if args.out_dir is None:
        write(fitted(render(stacks), args.format), styled=False)
        say(stacks_line(stacks, "estimated"))
        return 0
    usage = {f"{stack.name}.yml": report.render_infracost([stack]) for stack in stacks}
    for path in write_files(Path(args.out_dir), usage, "--out-dir"):
        print(f"wrote {os.path.relpath(path)}")
    say(stacks_line(stacks, f"estimated, one usage file each in {args.out_dir}"))
    return 0


def command_simulate(args: argparse.Namespace) -> int:
    from tablewright.report import simulate as report

    render = {"text": report.render_text, "json": report.render_json, "markdown": report.render_markdown}[args.format]
    stacks = stacks_of(args)
    items = report.simulated(progress(stacks, len(stacks), "simulating", "stacks"))
    write(fitted(render(items), args.format), styled=False)
    say(stacks_line(stacks, "simulated over a day"))
    return 0


def command_client(args: argparse.Namespace) -> int:
    from tablewright.client.generate import generate

    out = inside_project(Path(args.out), "--out")  # refuse a wrong --out before any work
    stacks = stacks_of(args)
    refuse_lint_errors(stacks, allowed=False)  # a client of a design known to fail would write items no one reads
    written = write_files(out, generate(stacks, args.lang), "--out")
    for path in written:
        print(f"wrote {os.path.relpath(path)}")
    say(f"{len(written)} {args.lang} client module(s) written into {args.out}, from {stacks_line(stacks, 'designed')}")
    return 0


def command_calibrate(args: argparse.Namespace) -> int:
    from tablewright.calibrate.calibration import Calibration
    from tablewright.calibrate.compare import compare
    from tablewright.calibrate.insights import read_insights
    from tablewright.calibrate.keys import observe_keys
    from tablewright.calibrate.metrics import read_metrics
    from tablewright.calibrate.queries import print_queries
    from tablewright.calibrate.replay import replay
    from tablewright.report import calibrate as report

    if not 0 <= args.tolerance <= 1000:
        raise TablewrightError(f"--tolerance {args.tolerance:g} is not a percentage from 0 to 1000",
                               code=ErrorCode.USAGE, hint="e.g. --tolerance 25 (the default)")
    if args.print_queries == bool(args.metrics):
        raise TablewrightError("calibrate takes either --metrics FILE ... (and --insights FILE ...) or "
                               "--print-queries", code=ErrorCode.USAGE,
                               hint="first `calibrate BLUEPRINT --env E --print-queries`, run what it prints, then "
                                    "`calibrate BLUEPRINT --env E --metrics metrics-STACK.json`")
    stacks = stacks_of(args)
    if args.print_queries:
        write("\n".join(print_queries(stack) for stack in stacks), styled=False)
        say(stacks_line(stacks, "queried"))
        return 0
    metrics = read_metrics([Path(path) for path in args.metrics])
    reports = read_insights([Path(path) for path in args.insights], stacks)
    tolerance = args.tolerance / 100
    comparisons = compare(stacks, metrics, tolerance, reports)
    calibration = Calibration(comparisons, observe_keys(stacks, reports, tolerance, comparisons),
                              metrics.partial, tolerance, replay(stacks, metrics))
    render = {"text": report.render_text, "json": report.render_json, "markdown": report.render_markdown}[args.format]
    write(fitted(render(calibration), args.format), styled=False)
    if args.write:
        write_calibration(calibration)
    failing = sum(item.fails for item in calibration.comparisons) + sum(key.fails for key in calibration.keys)
    say(f"{len(calibration.comparisons)} table/GSI direction(s) and {len(calibration.keys)} key(s) of "
        f"{len(stacks)} stack(s) compared, {failing} above what is declared or throttled")
    return 1 if failing else 0


def write_calibration(calibration: Calibration) -> None:
    """The changes in the blueprint files, each diff on stderr (a line only from its own blueprint's stacks: what
    extending tables ask of a base is a note). Of two changes to one line, the higher value."""
    from tablewright.calibrate.write import diff, write_changes

    chosen: dict[tuple[str, int, str], Change] = {}
    for change in calibration.changes:
        key = (change.location.file, change.location.line, change.field)
        if key not in chosen or change.suggested > chosen[key].suggested:
            chosen[key] = change
    for note in calibration.write_notes:
        say(f"note: {note}")
    written, missed = write_changes(list(chosen.values()))
    for change in missed:
        say(f"note: not written: `{change.field}` was not found at {change.location}")
    for path, text in written:
        with path.open(encoding="utf-8", newline="") as current:  # as it is: CRLF line ends stay in the diff
            before = current.read()
        write_files(path.parent, {path.name: text}, "--write")
        write(diff(path, before, text), styled=False, stream=sys.stderr)
    say(f"{len(written)} blueprint file(s) written")


def command_schema(args: argparse.Namespace) -> int:
    from tablewright.blueprint.schema import schema_texts

    for path in write_files(Path(args.out), schema_texts(), "--out"):
        print(f"wrote {os.path.relpath(path)}")
    return 0


def command_list(args: argparse.Namespace) -> int:
    from tablewright.catalog.catalog import catalog
    from tablewright.report import catalog as report

    entries = catalog(Path(args.directory))
    sys.stdout.write(report.render_json(entries) if args.format == "json" else fitted(report.render_text(entries)))
    kinds = [entry.kind for entry in entries]
    say(f"{kinds.count('service')} blueprint(s), {kinds.count('shared')} shared base(s), {kinds.count('invalid')} "
        f"invalid in {args.directory}")
    return 0


def command_new(args: argparse.Namespace) -> int:
    from tablewright.catalog.catalog import scaffold

    listed = listed_blueprints()  # a broken cdktf.json is said before anything is written
    path = scaffold(args.name, Path(args.dir), Path(args.base), SCHEMA_FILE)
    print(f"wrote {os.path.relpath(path)}: next, `tablewright lint {os.path.relpath(path)}`")
    if not SCHEMA_FILE.is_file():
        print(f"note: {path} names the JSON Schema {SCHEMA_FILE} for editors, which is missing: `tablewright schema` "
              "writes it")
    print(f"set `tags.cost-center` in {os.path.relpath(path)} (the scaffold writes `set-me`): lint and synth refuse "
          "a placeholder tag in a production environment (TW601)")
    print(picked_up(path, listed))
    return 0


def command_adopt(args: argparse.Namespace) -> int:
    from tablewright.adopt import adopted_blueprint, blueprint_name, read_description, write_blueprint
    from tablewright.catalog.catalog import check_blueprint_name

    if args.name is not None:
        check_blueprint_name(args.name, "--name")  # before anything is read or written
    listed = listed_blueprints()
    described = read_description([Path(path) for path in args.descriptions])
    name = args.name or blueprint_name(described.Table.TableName)
    path = None if args.out == "-" else Path(args.out or f"blueprints/{name}.yaml")
    schema = None if path is None else os.path.relpath(SCHEMA_FILE.resolve(), path.parent.resolve())
    adoption = adopted_blueprint(described, name, schema)
    for warning in adoption.warnings:
        say(f"warning: {warning}")
    write_blueprint(adoption, path)
    if path is None:
        sys.stdout.write(adoption.text)
    else:
        print(f"wrote {os.path.relpath(path)}: next, `tablewright lint {os.path.relpath(path)}`, then `synth` and "
              "`terraform plan`, which imports the table and changes nothing of it")
        print(picked_up(path, listed))
    return 0


def cdktf_app() -> int:
    """`cdktf synth` runs `tablewright`: synthesize where the CLI says (CDKTF_OUTDIR)."""
    from tablewright.synth.output import foreign_entries, refuse_orphans
    from tablewright.synth.synth import check_locks, synthesize_into

    stacks = build_stacks(load_all([]))
    refuse_lint_errors(stacks, allowed=False)  # as `synth` does: cdktf synth has no --allow-lint-errors
    check_locks([stack for stack in stacks if stack.source.lock is not None])  # pipelines: locked when locked
    # The cdktf CLI keeps the stack directories it writes again and deletes the others, whatever they hold, through
    # symbolic links too: it is refused first.
    outdir = Path(os.environ.get("CDKTF_OUTDIR", "cdktf.out"))
    real = Path(os.path.realpath(outdir))
    if (real / "stacks").is_symlink():
        raise TablewrightError(f"{outdir}/stacks is a symbolic link: the cdktf CLI deletes the stack directories it "
                               "no longer writes through it", code=ErrorCode.OUTPUT_HOLDS_FILES,
                               hint=f"make {outdir}/stacks a directory (or remove it: synth writes it)")
    if real.is_dir():
        refuse_orphans(outdir, real, {stack.name for stack in stacks}, option="")
        state_notes(outdir, foreign_entries(real), stacks)
    synthesize_into(stacks, outdir=None)
    return 0


