"""A migration worker, as `tablewright migrate run` will run one, over the synthetic migration of the tests: items of
entity `Item` (`PK = ITEM#00042`, `SK = PROFILE`, `name`, `group`) get `GSI1PK = GROUP#<group>`, `GSI1SK = ITEM#42`
and `name` renamed to `fullName`, in one UpdateItem conditioned on the values read.

    python -m tests.support.migrate_worker --endpoint URL --table T --segments 4 [--segment I ...] --max-wcu 300

JSON lines on stdout (tablewright.migrate.progress); exit 0 when its segments are done, 130 when interrupted,
2 on a refusal (the error on stderr).
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
from typing import Any

from tablewright.capacity.size import WRITE_UNIT_BYTES, item_size
from tablewright.errors import TablewrightError
from tablewright.migrate.progress import Progress
from tablewright.migrate.runner import Job, Rewrite, client_config, run_job

MIGRATION = "0123456789abcdef"
ENTITY = "Item"


def item_key(number: int) -> dict[str, Any]:
    return {"PK": {"S": f"ITEM#{number:05d}"}, "SK": {"S": "PROFILE"}}


def old_item(number: int, groups: int = 40) -> dict[str, Any]:
    """An item in the old shape."""
    return {**item_key(number), "_entity": {"S": ENTITY}, "name": {"S": f"Name {number}"},
            "group": {"S": f"G{number % groups}"}}


def migrated(item: dict[str, Any]) -> dict[str, Any]:
    """The item in the new shape (the values it holds carried over)."""
    number = int(item["PK"]["S"].removeprefix("ITEM#"))
    new = {name: value for name, value in item.items() if name != "name"}
    return {**new, "fullName": item["name"], "GSI1PK": {"S": f"GROUP#{item['group']['S']}"},
            "GSI1SK": {"S": f"ITEM#{number}"}}


def write_units(before: dict[str, Any], after: dict[str, Any]) -> float:
    """The table write (the larger of the two sizes) plus the new GSI1 entry (projection ALL: the item)."""
    def units(size: int) -> int:
        return max(1, math.ceil(size / WRITE_UNIT_BYTES))
    return float(units(max(item_size(before), item_size(after))) + units(item_size(after)))


def rewrite(item: dict[str, Any]) -> Rewrite | None:
    if "name" not in item:
        return None  # migrated already
    after = migrated(item)
    update = {
        "Key": {"PK": item["PK"], "SK": item["SK"]},
        "UpdateExpression": "SET #full = :name, #gpk = :gpk, #gsk = :gsk REMOVE #name",
        "ConditionExpression": "#name = :name AND #group = :group AND attribute_not_exists(#full)",
        "ExpressionAttributeNames": {"#full": "fullName", "#gpk": "GSI1PK", "#gsk": "GSI1SK", "#name": "name",
                                     "#group": "group"},
        "ExpressionAttributeValues": {":name": item["name"], ":group": item["group"], ":gpk": after["GSI1PK"],
                                      ":gsk": after["GSI1SK"]},
    }
    return Rewrite(({"Update": update},), write_units(item, after))


def job(table: str, migration: str = MIGRATION) -> Job:
    return Job(table=table, migration=migration, partition_key="PK", sort_key="SK", entity_filter=(ENTITY,),
               rewrite=rewrite)


def client(endpoint: str, threads: int) -> Any:
    import boto3

    return boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing", config=client_config(threads))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--migration", default=MIGRATION)
    parser.add_argument("--segments", type=int, required=True)
    parser.add_argument("--segment", type=int, action="append", help="one of the segments to run (default: all)")
    parser.add_argument("--max-wcu", type=float, required=True)
    parser.add_argument("--page-size", type=int, default=100)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if the parent ignores it
    mine = args.segment if args.segment is not None else list(range(args.segments))
    progress = Progress(out=sys.stdout, err=sys.stderr, terminal=False)
    try:
        result = run_job(client(args.endpoint, len(mine)), job(args.table, args.migration), args.max_wcu,
                         args.segments, mine, progress, page_size=args.page_size)
    except TablewrightError as error:
        print(error.render(), file=sys.stderr)
        return 2
    return 0 if result.finished else 130 if result.interrupted else 1


if __name__ == "__main__":
    sys.exit(main())
