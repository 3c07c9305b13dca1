"""`tablewright migrate plan|run|verify BLUEPRINT --against REF|FILE`: the data migrations a review lists, as code."""

from __future__ import annotations

import argparse
import os
import signal
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablewright.cli.terminal import say, write
from tablewright.errors import EXIT_FAILED, EXIT_OK, ErrorCode, TablewrightError

if TYPE_CHECKING:
    from tablewright.migrate.migration import Migration

EXIT_INTERRUPTED = 130  # the shell's code for a process stopped by Ctrl-C


def against(spec: str, blueprint: str) -> str:
    """`--against` as review reads a side: a file, GITREF:path, or for a bare revision the blueprint's own path at
    it (relative to its repository)."""
    from tablewright.blueprint.compose import repository_root
    from tablewright.blueprint.gitref import is_revision

    if not is_revision(spec) or Path(spec).exists():
        return spec
    path = Path(blueprint).resolve()
    root = repository_root(path)
    if not path.is_relative_to(root):
        raise TablewrightError(f"--against {spec}: {blueprint} is not inside a repository to read it at {spec}",
                               code=ErrorCode.USAGE, hint=f"write --against {spec}:PATH, or a file")
    return f"{spec}:{path.relative_to(root).as_posix()}"


def _migration(args: argparse.Namespace) -> Migration:
    from tablewright.migrate.migration import migration
    from tablewright.review.review import stack_pairs

    pairs = stack_pairs(against(args.against, args.blueprint), args.blueprint, args.env)
    if not pairs:
        raise TablewrightError(f"{args.blueprint} and --against {args.against} share no stack"
                               + (f" in environment `{args.env}`" if args.env else ""), code=ErrorCode.USAGE,
                               hint="pass the same blueprint as it was (a git ref such as origin/main, or a file)")
    if len(pairs) > 1:
        names = ", ".join(new.name for _, new in pairs)
        raise TablewrightError(f"{args.blueprint} has {len(pairs)} stacks ({names}): a migration runs on one table",
                               code=ErrorCode.USAGE, hint="pass --env with the environment whose table to migrate")
    old, new = pairs[0]
    return migration(old, new)


def _client(args: argparse.Namespace, threads: int, plan: Migration) -> Any:
    """A DynamoDB client for the run, once the table answers (so a wrong endpoint, region or table is a located
    error before anything is read or written)."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    from tablewright.migrate.limiter import client_config

    table = plan.table
    region = (args.region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
              or plan.new.design.blueprint.region)
    endpoint = args.endpoint_url or os.environ.get("AWS_ENDPOINT_URL")
    try:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name=region, config=client_config(threads))
        client.describe_table(TableName=table)
    except (BotoCoreError, ClientError, ValueError) as error:
        where = f"{endpoint or 'DynamoDB'} ({region or 'no region'})"
        raise TablewrightError(f"table {table} at {where}: {error}", code=ErrorCode.MIGRATION,
                               hint="check --endpoint-url, --region and the AWS credentials, and that the stack's "
                                    "table is deployed (with the later design's indexes: the expand step)") from None
    return client


def _segments(args: argparse.Namespace) -> list[int]:
    if args.segments < 1 or args.segments > 1000:
        raise TablewrightError(f"--segments {args.segments}: between 1 and 1000", code=ErrorCode.USAGE,
                               hint="the parallel Scan's segments, e.g. --segments 8")
    if args.segment is None:
        return list(range(args.segments))
    if not 0 <= args.segment < args.segments:
        raise TablewrightError(f"--segment {args.segment} is not one of 0..{args.segments - 1}", code=ErrorCode.USAGE,
                               hint="a worker's segment, e.g. the Job's completion index")
    return [args.segment]


def _budget(args: argparse.Namespace) -> float:
    if args.max_wcu is None:
        raise TablewrightError(f"migrate {args.action} needs --max-wcu", code=ErrorCode.USAGE,
                               hint="pass the write units per second the migration may use, e.g. --max-wcu 100")
    if not 0 < args.max_wcu <= 1_000_000:
        raise TablewrightError(f"--max-wcu {args.max_wcu}: the write units per second the migration may use must be "
                               "above 0 (and at most 1,000,000)", code=ErrorCode.USAGE,
                               hint="e.g. --max-wcu 100; `tablewright migrate plan` shows the hours it fits")
    return float(args.max_wcu)


def _counts(args: argparse.Namespace, plan: Migration) -> dict[str, int] | None:
    if args.endpoint_url is None:
        return None
    from tablewright.migrate.verify import count_items

    return count_items(_client(args, 1, plan), plan)


def command_migrate_plan(args: argparse.Namespace) -> int:
    from tablewright.migrate.plan import plan_of
    from tablewright.report.migrate import render_plan_json, render_plan_text

    plan = _migration(args)
    figures = plan_of(plan, _budget(args), _counts(args, plan))
    write(render_plan_json(figures) if args.format == "json" else render_plan_text(figures))
    return EXIT_OK


def command_migrate_run(args: argparse.Namespace) -> int:
    from botocore.exceptions import BotoCoreError, ClientError

    from tablewright.migrate.progress import Progress
    from tablewright.migrate.runner import Job, run_job

    plan = _migration(args)
    budget, mine = _budget(args), _segments(args)
    client = _client(args, len(mine), plan)
    rewriter = replace(plan.rewriter, existing=lambda key: client.get_item(
        TableName=plan.table, Key=key, ConsistentRead=True).get("Item"), max_units=budget * len(mine) / args.segments)
    keys = plan.new.design.table_keys
    job = Job(plan.table, plan.identity, keys.pk, keys.sk, plan.entities, rewriter.rewrite)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())  # a Job's pod stopped: checkpoint and exit
    try:
        result = run_job(client, job, budget, args.segments, mine, Progress(), stop=stop)
    except (BotoCoreError, ClientError) as error:  # after the backoff's attempts: the checkpoints hold
        raise TablewrightError(f"the run stopped: {error}", code=ErrorCode.MIGRATION,
                               hint="fix the cause, then run the same command again: each segment resumes at its "
                                    "last checkpoint") from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    for failure in rewriter.failures[:5]:
        say(f"not migrated: {failure}")
    if result.interrupted:
        say("interrupted (Ctrl-C or SIGTERM): run the same command again to resume where each segment stopped")
        return EXIT_INTERRUPTED
    earlier = f" (and {result.unresolved_before} left by earlier runs of these segments: `migrate verify` " \
        "lists them)" if result.unresolved_before else ""
    say(f"{result.rewritten:,} of {result.scanned:,} item(s) rewritten, {result.units:,.0f} write units in "
        f"{result.seconds:,.1f} s; {result.conflicts_unresolved} unresolved conflict(s){earlier}, "
        f"{len(rewriter.failures)} item(s) that do not convert")
    if result.conflicts_unresolved or result.unresolved_before or rewriter.failures:
        return EXIT_FAILED
    return EXIT_OK


def command_migrate_verify(args: argparse.Namespace) -> int:
    from tablewright.migrate.verify import record_verified, verify_table
    from tablewright.report.migrate import render_verification

    plan = _migration(args)
    verification = verify_table(_client(args, 1, plan), plan)
    write(render_verification(verification, args.format))
    if not verification.passed:
        return EXIT_FAILED
    endpoint = args.endpoint_url or os.environ.get("AWS_ENDPOINT_URL") or None
    recorded = record_verified(plan, args.blueprint, verification, endpoint)
    environment = plan.new.source.environment or "default"
    say(f"recorded in {recorded}: commit it with the blueprint" if recorded is not None else
        f"not recorded: no design lock beside {args.blueprint} with environment `{environment}` (`tablewright "
        "synth` writes it); the review and the gate keep the migration's declarations until it is")
    return EXIT_OK


HANDLERS = {"plan": command_migrate_plan, "run": command_migrate_run, "verify": command_migrate_verify}


def command_migrate(args: argparse.Namespace) -> int:
    return HANDLERS[args.action](args)
