"""Migration benchmark: `tablewright migrate run`'s engine (tablewright/migrate/runner.py) on the emulator.

    python bench/migrate.py [--items 3000] [--budgets 150 300 600] [--segments 4]

For each write budget (WCU per second), a fresh table of `--items` items (PK/SK, one GSI, projection ALL) is
migrated by one worker process running every segment (tests/support/migrate_worker.py: add the GSI keys, rename
`name` to `fullName`, one conditional UpdateItem of 2 WCU per item) against the emulator, which reports consumed
capacity as DynamoDB computes it (tablewright/local/capacity.py). Printed per budget: items per second over the
run, the write units consumed per second, and the limiter's precision, over the seconds the worker reported (the
first and the last, partial, left out): the largest and the mean of consumed units per second / budget (the
largest must not exceed 1). A budget above what the emulator serves (about 450 requests a second on one core)
measures the emulator, not the limiter: the last line, `unlimited`, shows that ceiling.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tablewright.local.emulator import Emulator  # noqa: E402
from tests.support.migrate_worker import old_item  # noqa: E402

UNLIMITED = 1_000_000.0


def fresh_table(client: Any, table: str, items: int) -> None:
    client.create_table(
        TableName=table, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in ("PK", "SK", "GSI1PK",
                                                                                          "GSI1SK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "GSI1", "Projection": {"ProjectionType": "ALL"}, "KeySchema": [
            {"AttributeName": "GSI1PK", "KeyType": "HASH"}, {"AttributeName": "GSI1SK", "KeyType": "RANGE"}]}])
    made = [old_item(number) for number in range(items)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda chunk: client.batch_write_item(
            RequestItems={table: [{"PutRequest": {"Item": item}} for item in chunk]}),
            [made[start:start + 25] for start in range(0, items, 25)]))


def migrate(endpoint: str, table: str, budget: float, segments: int) -> list[dict[str, Any]]:
    """One worker's run over every segment: its JSON lines."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.migrate_worker", "--endpoint", endpoint, "--table", table,
         "--segments", str(segments), "--max-wcu", str(budget)],
        cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the worker failed ({done.returncode}): {done.stderr[-2000:]}")
    return [json.loads(line) for line in done.stdout.splitlines()]


def figures(events: list[dict[str, Any]], budget: float, items: int) -> str:
    summary = events[-1]
    if summary["event"] != "summary" or summary["rewritten"] != items:
        raise SystemExit(f"expected {items} items rewritten: {summary}")
    seconds = sorted((event["t"], event["units"]) for event in events if event["event"] == "second")
    full = [units for _, units in seconds[1:-1]] or [units for _, units in seconds]
    rate = items / summary["seconds"]
    if budget >= UNLIMITED:
        label, precision = "unlimited", f"{'-':>11} {'-':>12}"
    else:
        label, precision = f"{budget:,.0f}", f"{max(full) / budget:11.3f} {sum(full) / len(full) / budget:12.3f}"
    return f"{label:>10} {rate:9.1f} {summary['units'] / summary['seconds']:8.1f} {precision} {summary['seconds']:8.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=3000, help="items per table, default 3000")
    parser.add_argument("--budgets", type=float, nargs="+", default=[150.0, 300.0, 600.0],
                        help="write units per second, one run each (default 150 300 600)")
    parser.add_argument("--segments", type=int, default=4, help="parallel Scan segments (threads), default 4")
    args = parser.parse_args()
    print(f"{args.items:,} items, {args.segments} segments, 2 WCU per item ({os.cpu_count()} CPUs)")
    print(f"{'budget':>10} {'items/s':>9} {'WCU/s':>8} {'max/budget':>11} {'mean/budget':>12} {'seconds':>8}")
    with Emulator() as emulator:
        client = emulator.client("dynamodb")
        for number, budget in enumerate([*args.budgets, UNLIMITED]):
            table = f"bench-{number}"
            fresh_table(client, table, args.items)
            events = migrate(emulator.endpoint, table, budget, args.segments)
            print(figures(events, budget, args.items), flush=True)
            client.delete_table(TableName=table)


if __name__ == "__main__":
    main()
