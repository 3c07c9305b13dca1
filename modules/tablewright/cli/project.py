"""The project a command works in: its blueprints (named, listed in cdktf.json, or under blueprints/), loaded
and built into stacks, and what the commands say about where the output and a new blueprint go."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tablewright.blueprint.load import LoadedBlueprint, check_distinct_blueprints, load_blueprints
from tablewright.cli.terminal import progress, say
from tablewright.errors import ErrorCode, TablewrightError
from tablewright.scaffold import PIN_FILE
from tablewright.stacks.stack import Stack, build_stacks, lint_errors

PACKAGE = Path(__file__).resolve().parent.parent
# Run from a clone of Tablewright (modules/tablewright/ in its repository), main.py and pyproject.toml are the tool too.
_CHECKOUT = PACKAGE.parent.parent
# A command runs in the project's root (tablewright.cli.paths), as cdktf runs the app where cdktf.json is: its
# cdktf.json and its blueprints/, whichever copy of Tablewright runs (a pipeline may run the base branch's
# Tablewright on the pull request's blueprints).
CDKTF_JSON = Path("cdktf.json")
# The blueprint JSON Schema editors read (`# yaml-language-server: $schema=...` in every scaffold): the project's own
# copy, written by `init` and `schema`, so the reference holds on every machine that checks the repository out.
SCHEMA_FILE = Path("schema") / "blueprint.schema.json"
# Tablewright's own files, and the version a repository pins (`init`'s requirements-tablewright.txt): when they
# change in the repository `--changed-since` reads, every blueprint is affected.
TOOL_FILES = (PACKAGE, Path(PIN_FILE),
              *((_CHECKOUT / "main.py", _CHECKOUT / "pyproject.toml") if PACKAGE.parent.name == "modules" else ()))


def blueprints_directory() -> Path:
    return CDKTF_JSON.parent / "blueprints"


def listed_blueprints() -> list[str] | None:
    """`context.blueprints` of cdktf.json: None when cdktf.json or the list is absent."""
    if not CDKTF_JSON.is_file():
        return None
    try:
        config = json.loads(CDKTF_JSON.read_text())
    except (OSError, ValueError) as error:
        raise TablewrightError(f"{CDKTF_JSON} is not valid JSON ({error})", code=ErrorCode.CDKTF_JSON,
                               hint="correct it (cdktf reads it too), or remove it") from None
    context = config.get("context") if isinstance(config, dict) else None
    listed = context.get("blueprints") if isinstance(context, dict) else None
    if listed is None:
        return None
    if not isinstance(listed, list) or not listed or not all(isinstance(path, str) and path for path in listed):
        raise TablewrightError(f"{CDKTF_JSON}: `context.blueprints` must list the blueprint files to synthesize",
                               code=ErrorCode.CDKTF_JSON,
                               hint='write e.g. {"context": {"blueprints": ["blueprints/orders.yaml"]}}'
                                                 ", or remove it to take every blueprint under blueprints/")
    return listed


def default_blueprints(quiet: bool = False) -> list[Path]:
    """The blueprints a command takes when it is named none: those `cdktf.json` lists (`context.blueprints`,
    relative to it), or else every blueprint under blueprints/. A blueprint under blueprints/ that the
    list leaves out is a warning (`quiet`: none), as a pull request that adds one must not pass unreviewed."""
    from tablewright.blueprint.compose import linked_directories
    from tablewright.catalog.catalog import service_blueprints

    found = service_blueprints(blueprints_directory())
    for link in linked_directories(blueprints_directory()) if blueprints_directory().is_dir() and not quiet else []:
        say(f"warning: {os.path.relpath(link)} is a symbolic link to a directory: its blueprints are not taken "
            "(name them on the command line, or make it a directory)")
    listed = listed_blueprints()
    if listed is None:
        if not found:
            raise TablewrightError(f"no blueprint under {os.path.relpath(blueprints_directory())}",
                                   code=ErrorCode.NO_BLUEPRINTS,
                                   hint="write one with `tablewright new NAME`, or name the blueprints on the "
                                        "command line")
        return [Path(os.path.relpath(path)) for path in found]
    named = {(CDKTF_JSON.parent / path).resolve() for path in listed}
    for path in found if not quiet else ():
        if path.resolve() not in named:
            say(f"warning: {os.path.relpath(path)} is a blueprint that {os.path.relpath(CDKTF_JSON)} does not list "
                "(`context.blueprints`): it is not synthesized, reviewed or gated; add it to the list, or remove "
                "the list to take every blueprint under blueprints/")
    return [Path(os.path.relpath(CDKTF_JSON.parent / path)) for path in listed]


def load_all(paths: Sequence[str], environment: str | None = None, label: str = "load", *,
             named: bool | None = None, some: bool = True) -> list[LoadedBlueprint]:
    """Every stack of the given blueprints (default: `default_blueprints`); with `environment`, only that
    environment's stack of each. Blueprints `named` on the command line (default: when `paths` are given) must
    declare it; of the others, those that do not are left out with a note, unless none does and `some` are
    expected. `label`: the command, for the progress line."""
    named = bool(paths) if named is None else named
    chosen_paths: list[str | Path] = [*(paths or default_blueprints())]
    stacks = [stack for path in progress(chosen_paths, len(chosen_paths), f"{label} reading")
              for stack in load_blueprints(path)]
    check_in_repository(stacks, others=bool(paths))
    if environment is None:
        return stacks
    chosen = [stack for stack in stacks if stack.environment == environment]
    without = [path for path in dict.fromkeys(stack.path for stack in stacks)
               if not any(stack.path == path for stack in chosen)]
    if without and named:
        raise _no_environment(without[0], environment, stacks)
    if not chosen and some:
        declared = sorted({str(stack.environment) for stack in stacks if stack.environment})
        raise TablewrightError(f"none of the {len(without)} blueprint(s) declares environment `{environment}`",
                               code=ErrorCode.UNKNOWN_ENVIRONMENT,
                               hint=f"the environments they declare: {', '.join(declared)}" if declared else
                               "none declares environments: leave out --env")
    if without:
        say(f"note: {len(without)} blueprint(s) without environment `{environment}` left out: "
            + ", ".join(map(str, without[:MAX_LISTED])) + (" ..." if len(without) > MAX_LISTED else ""))
    return chosen


MAX_LISTED = 5


def check_in_repository(loaded: Sequence[LoadedBlueprint], others: bool = True) -> None:
    """No two blueprints of the repository (those under blueprints/ or that cdktf.json lists) make the same stack,
    manage the same table or share a Terraform state, whatever subset a command loads: those `loaded` that are the
    repository's are checked against each other and (`others`) against its other blueprints (one that does not load
    is left out, with a note). A file elsewhere (a next version beside the blueprint, a scratch copy) is not one."""
    if not others:  # `loaded` is the repository's whole set
        check_distinct_blueprints(loaded)
        return
    try:
        repository = [path.resolve() for path in default_blueprints(quiet=True)]
    except TablewrightError:  # no blueprints/ and no list: no repository to compare with
        repository = []
    directory = blueprints_directory().resolve()
    inside = [stack for stack in loaded
              if stack.path.resolve() in repository or stack.path.resolve().is_relative_to(directory)]
    if not inside:
        return
    rest: list[LoadedBlueprint] = []
    taken = {stack.path.resolve() for stack in loaded}
    for path in (path for path in repository if path not in taken):
        try:
            rest += load_blueprints(os.path.relpath(path))
        except TablewrightError as error:
            say(f"note: {os.path.relpath(path)} does not load ({error.message}): not checked for a stack, table or "
                "state this command's blueprints share with it")
    check_distinct_blueprints([*rest, *inside])  # located in a blueprint the command was given


def _no_environment(path: Path, environment: str, stacks: Sequence[LoadedBlueprint]) -> TablewrightError:
    known = sorted(str(s.environment) for s in stacks if s.path == path and s.environment)
    return TablewrightError(f"{path} has no environment `{environment}`", code=ErrorCode.UNKNOWN_ENVIRONMENT,
                            hint=f"its environments: {', '.join(known)}" if known else
                            "it declares no environments: leave out --env for its one stack")


def stacks_of(args: argparse.Namespace) -> list[Stack]:
    """The stacks a blueprint command works on, each computed once (modules/tablewright/stacks/stack.py)."""
    return designed(load_all(args.blueprints, args.env, args.command), args.command)


def designed(loaded: Sequence[LoadedBlueprint], label: str) -> list[Stack]:
    """`build_stacks`, with progress on a terminal (`label`: the command)."""
    return build_stacks(progress(loaded, len(loaded), f"{label} designing", "stacks"))


def refuse_lint_errors(stacks: Sequence[Stack], allowed: bool) -> None:
    """`synth` and `verify` stop at lint errors unless told otherwise."""
    for stack in stacks if not allowed else ():
        refusal = lint_errors(stack)
        if refusal is not None:
            raise refusal


def changed_blueprints(since: str, blueprints: Sequence[str]) -> list[str]:
    """`--changed-since`: the blueprints (given, else the default ones) a change since `since`
    affects, each with the reasons printed."""
    from tablewright.blueprint.changed import affected
    from tablewright.blueprint.gitref import changed_files

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
    from tablewright.synth.output import MAX_NAMED

    if kept:
        print(f"kept {len(kept)} file(s) synth did not write, in place: "
              + ", ".join(str(outdir / entry) for entry in kept[:MAX_NAMED])
              + (" ..." if len(kept) > MAX_NAMED else ""))
    state_notes(outdir, kept, stacks)


def state_notes(outdir: Path, entries: Sequence[Path], stacks: Sequence[Stack]) -> None:
    from tablewright.synth.output import earlier_state, state_file

    local = {stack.name for stack in stacks if stack.design.blueprint.terraform.backend.type == "local"}
    for entry in earlier_state(entries, local):
        say(f"note: {outdir / entry} is Terraform state kept where earlier versions wrote it; the stack's state "
            f"is now {state_file(outdir, entry.parts[1])}: run `terraform init -migrate-state` in "
            f"{outdir / entry.parent} to move it there")




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



def inside_project(directory: Path, option: str) -> Path:
    """`directory` if it lies inside the working directory (links resolved), else a refusal: generated code
    belongs in the project it is generated for."""
    project = Path.cwd().resolve()
    resolved = directory.resolve()
    if resolved == project or not resolved.is_relative_to(project):
        where = "the working directory" if resolved == project else "outside the working directory"
        raise TablewrightError(f"{option} {directory} is {where} ({project})", code=ErrorCode.PATH_ARGUMENT,
                               hint=f"pass a directory inside the project, e.g. {option} app/db")
    return directory


def _mode_of(target: Path) -> int:
    """The permissions a written file gets: those of the file it replaces, else the umask's for a new file."""
    if target.is_file():
        return target.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_files(directory: Path, texts: dict[str, str], option: str) -> list[Path]:
    """Write each of `texts` (file name -> text) into `directory` (`option` names it on the command line), made
    if missing; other files there stay. Returns the files written."""
    if directory.exists() and not directory.is_dir():
        raise TablewrightError(f"{option} {directory} is a file", code=ErrorCode.PATH_ARGUMENT,
                               hint=f"pass a directory to {option}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TablewrightError(f"{option} {directory}: cannot create it ({error.strerror})",
                               code=ErrorCode.PATH_ARGUMENT, hint="pass a writable directory") from None
    for name in texts:
        path = directory / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise TablewrightError(f"{path} is not a regular file", code=ErrorCode.PATH_ARGUMENT,
                                   hint=f"remove it, or pass another {option} directory")
    staged: dict[Path, Path] = {}
    try:  # every file staged first, then each renamed over its name: none half-written, links replaced not followed
        for name, text in texts.items():
            # A new file of a random name (O_CREAT | O_EXCL): no link planted in the directory is followed.
            handle, staged_name = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
            staged[directory / name] = Path(staged_name)
            os.fchmod(handle, _mode_of(directory / name))
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
        for target, staging in staged.items():
            staging.replace(target)
    except OSError as error:
        for staging in staged.values():
            staging.unlink(missing_ok=True)
        raise TablewrightError(f"{option} {directory}: cannot write {error.filename} ({error.strerror})",
                               code=ErrorCode.PATH_ARGUMENT, hint="pass a writable directory") from None
    return list(staged)
