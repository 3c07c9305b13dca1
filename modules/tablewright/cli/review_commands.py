"""The change commands: review (two versions of a blueprint, or a pull request's) and gate (a plan, now)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tablewright.cli.project import TOOL_FILES, check_in_repository, default_blueprints, load_all
from tablewright.cli.terminal import say, write
from tablewright.errors import ErrorCode, TablewrightError

if TYPE_CHECKING:
    from tablewright.review.classified import Change


def detailed_exit(verdict: str, detailed: bool) -> int:
    """`review --detailed-exitcode`: 1 when a change is blocked, 4 when one needs the window, else 0."""
    from tablewright.errors import EXIT_FAILED, EXIT_OK, EXIT_WINDOW

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
                                                          else "are both needed"), code=ErrorCode.USAGE, hint=usage)
    elif args.base is not None or args.head is not None:
        raise TablewrightError("review: --changed-since reviews every changed blueprint against the merge base; "
                               "it does not take --base or --head", code=ErrorCode.USAGE, hint=usage)


def _plans(specs: Sequence[str], directory: str | None) -> dict[str, dict[str, object]]:
    """`--plan STACK=PLAN.json` and `--plan-dir DIR` (every `DIR/<stack>.json`), each plan read and checked as
    the gate reads one."""
    from tablewright.review.planfile import read_plan

    pairs = [spec.partition("=")[::2] for spec in specs]
    for spec, (stack, path) in zip(specs, pairs, strict=True):
        if not stack or not path:
            raise TablewrightError(f"--plan {spec!r} is not STACK=PLAN.json", code=ErrorCode.PLAN_ARGUMENT,
                                   hint="write e.g. --plan crm-prod=plan.json (`terraform show -json` of that stack)")
    if directory is not None:
        if not Path(directory).is_dir():
            raise TablewrightError(f"--plan-dir {directory}: not a directory", code=ErrorCode.PATH_ARGUMENT,
                                   hint="pass the directory holding <stack>.json plans")
        pairs += [(path.stem, str(path)) for path in sorted(Path(directory).glob("*.json"))
                  if re.fullmatch(r"[a-z0-9][a-z0-9-]*", path.stem)]
    plans: dict[str, dict[str, object]] = {}
    for stack, path in pairs:
        if stack in plans:
            raise TablewrightError(f"two plans for stack `{stack}`",
                                   code=ErrorCode.PLAN_ARGUMENT, hint="give one plan per stack")
        plans[stack] = read_plan(Path(path))
    return plans


def command_review(args: argparse.Namespace) -> int:
    from tablewright.report import review as render

    _review_mode(args)
    if args.changed_since is not None:
        from tablewright.blueprint.load import load_blueprints
        from tablewright.report import comment
        from tablewright.review.pull import build_pull_review

        pull = build_pull_review(args.changed_since, [Path(p) for p in args.blueprints] or default_blueprints(),
                                 args.env, acknowledged(args), TOOL_FILES, _plans(args.plan, args.plan_dir))
        check_in_repository([stack for review in pull.blueprints if Path(review.blueprint).is_file()
                             for stack in load_blueprints(review.blueprint)])
        show = {"markdown": comment.render_comment, "json": comment.render_pull_json,
                "text": comment.render_pull_text}[args.format]
        write(show(pull), styled=args.format == "text")
        say(f"{changes_line(pull.changes)} in {len(pull.blueprints)} changed blueprint(s), {pull.unaffected} unchanged")
        return detailed_exit(pull.verdict, args.detailed_exitcode)
    from tablewright.review.review import build_review

    review = build_review(args.base, args.head, args.env, acknowledged(args))
    output = {"markdown": render.render_markdown, "json": render.render_json, "text": render.render_text}[args.format]
    write(output(review), styled=args.format == "text")
    say(f"{changes_line(review.changes)} in {len(review.stacks)} stack(s)")
    return detailed_exit(review.verdict, args.detailed_exitcode)


def command_gate(args: argparse.Namespace) -> int:
    from tablewright.errors import EXIT_FAILED, EXIT_OK, EXIT_WINDOW
    from tablewright.report import review as render
    from tablewright.review.gate import gate, parse_now, stack_for_plan
    from tablewright.review.planfile import read_plan

    plan = read_plan(Path(args.plan))
    now = parse_now(args.now)
    loaded = stack_for_plan(load_all([*args.blueprints, *(args.blueprint or [])], args.env), plan)
    stack, decision = gate(plan, loaded, now, acknowledged(args))
    write(render.render_gate(stack, decision, args.format), styled=args.format == "text")
    say(f"gate {decision.outcome} for {stack.stack}: {changes_line(stack.changes)}")
    if decision.outcome == "apply":
        return EXIT_OK
    return EXIT_WINDOW if decision.outcome == "wait" and args.detailed_exitcode else EXIT_FAILED


def changes_line(changes: Sequence[Change]) -> str:
    """e.g. `7 change(s): 1 blocked, 2 window, 4 safe`."""
    from tablewright.review.classified import counts

    found = counts(list(changes))
    return f"{len(changes)} change(s): " + ", ".join(f"{count} {cls}" for cls, count in found.items())


def acknowledged(args: argparse.Namespace) -> frozenset[str]:
    from tablewright.review.classified import ACKNOWLEDGEMENTS

    return frozenset(name for name in ACKNOWLEDGEMENTS if getattr(args, f"allow_{name}"))


