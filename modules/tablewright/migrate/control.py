"""A migration's checkpoints, kept in the migrated table itself: one control item per Scan segment.

Key: partition key `_tablewright#migration`, sort key `segment#00007`; a table without a sort key puts the segment
into the partition key (`_tablewright#migration#segment#00007`) and keeps a header item under
`_tablewright#migration` that names the running migration and its number of segments, so the segments can be read
by key. Each control item records the migration's id, the number of segments K, where the segment is (the key to
resume the Scan after, as typed JSON; absent at the start and once done), whether it is done, its counts and when
it was written. Control items carry no `_entity`: entity filters and the application's patterns never see them.

The key attributes must be strings (they are in every Tablewright design).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from tablewright.errors import ErrorCode, TablewrightError

CONTROL = "_tablewright#migration"
SEGMENT_PREFIX = "segment#"
CODE = ErrorCode.MIGRATION  # the refusals' error code
Typed = dict[str, Any]


class TableKeys(Protocol):
    """What the control items need of a job (`runner.Job` has it)."""

    @property
    def table(self) -> str: ...
    @property
    def migration(self) -> str: ...
    @property
    def partition_key(self) -> str: ...
    @property
    def sort_key(self) -> str | None: ...
    @property
    def entity_filter(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class SegmentState:
    segment: int
    migration: str
    segments: int  # K, the number of segments the migration was started with
    position: Typed | None  # the key to resume the segment's Scan after (ExclusiveStartKey); None: from the start
    done: bool
    scanned: int = 0
    rewritten: int = 0
    conflicts: int = 0  # items left unmigrated after their retries
    updated_at: str = ""


def segment_name(segment: int) -> str:
    return f"{SEGMENT_PREFIX}{segment:05d}"


def control_key(job: TableKeys, segment: int | None) -> Typed:
    """The key of a segment's control item (None: the header of a table without a sort key)."""
    if job.sort_key is None:
        name = CONTROL if segment is None else f"{CONTROL}#{segment_name(segment)}"
        return {job.partition_key: {"S": name}}
    if segment is None:
        raise ValueError("a table with a sort key has no header item")
    return {job.partition_key: {"S": CONTROL}, job.sort_key: {"S": segment_name(segment)}}


def encode_key(key: Typed) -> str:
    """A typed key (as boto3's client gives it: binaries as bytes) as JSON (binaries in base64)."""
    def plain(value: Typed) -> Typed:
        (kind, content), = value.items()
        return {kind: base64.b64encode(content).decode() if kind == "B" else content}
    return json.dumps({name: plain(value) for name, value in sorted(key.items())})


def decode_key(text: str) -> Typed:
    def typed(value: Typed) -> Typed:
        (kind, content), = value.items()
        return {kind: base64.b64decode(content) if kind == "B" else content}
    return {name: typed(value) for name, value in json.loads(text).items()}


def to_item(job: TableKeys, state: SegmentState) -> Typed:
    item: Typed = {**control_key(job, state.segment), "_migration": {"S": state.migration},
                   "_segments": {"N": str(state.segments)}, "_segment": {"N": str(state.segment)},
                   "_done": {"BOOL": state.done}, "_scanned": {"N": str(state.scanned)},
                   "_rewritten": {"N": str(state.rewritten)}, "_conflicts": {"N": str(state.conflicts)},
                   "_updatedAt": {"S": state.updated_at or datetime.now(UTC).isoformat(timespec="seconds")}}
    if state.position is not None:
        item["_position"] = {"S": encode_key(state.position)}
    return item


def from_item(item: Typed) -> SegmentState | None:
    """The state a control item records (None: not a segment's control item)."""
    if "_segment" not in item or "_migration" not in item:
        return None
    return SegmentState(
        segment=int(item["_segment"]["N"]), migration=item["_migration"]["S"], segments=int(item["_segments"]["N"]),
        position=decode_key(item["_position"]["S"]) if "_position" in item else None,
        done=bool(item.get("_done", {}).get("BOOL")), scanned=int(item.get("_scanned", {}).get("N", 0)),
        rewritten=int(item.get("_rewritten", {}).get("N", 0)), conflicts=int(item.get("_conflicts", {}).get("N", 0)),
        updated_at=item.get("_updatedAt", {}).get("S", ""))


def checkpoint_request(job: TableKeys, state: SegmentState) -> Typed:
    """PutItem arguments of a segment's control item: written unless another migration, not done, holds it."""
    return {"TableName": job.table, "Item": to_item(job, state),
            "ConditionExpression": "attribute_not_exists(#pk) OR #migration = :migration OR #done = :done",
            "ExpressionAttributeNames": {"#pk": job.partition_key, "#migration": "_migration", "#done": "_done"},
            "ExpressionAttributeValues": {":migration": {"S": state.migration}, ":done": {"BOOL": True}}}


def scan_request(job: TableKeys, state: SegmentState, page_size: int) -> Typed:
    """Scan arguments of a segment's next page: strongly consistent, the job's entities only (control items never:
    they have no `_entity`, and without an entity filter their partition key is filtered out)."""
    arguments: Typed = {"TableName": job.table, "Segment": state.segment, "TotalSegments": state.segments,
                        "Limit": page_size, "ConsistentRead": True, "ReturnConsumedCapacity": "TOTAL",
                        **({"ExclusiveStartKey": state.position} if state.position else {})}
    entities = job.entity_filter
    if entities:
        values = {f":e{i}": {"S": entity} for i, entity in enumerate(entities)}
        return {**arguments, "FilterExpression": f"#entity IN ({', '.join(values)})",
                "ExpressionAttributeNames": {"#entity": "_entity"}, "ExpressionAttributeValues": values}
    return {**arguments, "FilterExpression": "NOT begins_with(#pk, :control)",
            "ExpressionAttributeNames": {"#pk": job.partition_key},
            "ExpressionAttributeValues": {":control": {"S": CONTROL}}}


def claim_request(job: TableKeys, finished: bool) -> Typed:
    """PutItem arguments of the table's claim item, which one migration holds from its first worker's start to its
    last segment done (`finished`): written unless another migration holds it unfinished, so two migrations
    that start together cannot both run (each one's checks read the control items before the other writes any)."""
    key = ({job.partition_key: {"S": f"{CONTROL}#claim"}} if job.sort_key is None
           else {job.partition_key: {"S": CONTROL}, job.sort_key: {"S": "claim"}})
    item = {**key, "_migration": {"S": job.migration}, "_finished": {"BOOL": finished}}
    return {"TableName": job.table, "Item": item,
            "ConditionExpression": "attribute_not_exists(#pk) OR #migration = :migration OR #finished = :finished",
            "ExpressionAttributeNames": {"#pk": job.partition_key, "#migration": "_migration",
                                         "#finished": "_finished"},
            "ExpressionAttributeValues": {":migration": {"S": job.migration}, ":finished": {"BOOL": True}}}


def claimed_by(client: Any, job: TableKeys) -> str:
    """The migration that holds the claim item now."""
    key = claim_request(job, False)["Item"]
    wanted = {name: key[name] for name in (job.partition_key, job.sort_key) if name}
    item = client.get_item(TableName=job.table, Key=wanted, ConsistentRead=True).get("Item", {})
    return str(item.get("_migration", {}).get("S", "another migration"))


def header_request(job: TableKeys, segments: int) -> Typed:
    """PutItem arguments of the header item (tables without a sort key)."""
    return {"TableName": job.table, "Item": {**control_key(job, None), "_migration": {"S": job.migration},
                                             "_segments": {"N": str(segments)}}}


def read_control(client: Any, job: TableKeys, segments: int | None = None) -> list[SegmentState]:
    """Every segment's control item in the table (strongly consistent reads), by segment number. A table without a
    sort key is read by key: the segments of the header's migration and of `segments`, and of every K recorded."""
    from botocore.exceptions import ClientError

    try:
        return _read_control(client, job, segments)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
            raise
        raise TablewrightError(f"table {job.table} does not exist here", code=CODE,
                               hint="check the table name, the region (AWS_REGION) and --endpoint-url") from None


def _read_control(client: Any, job: TableKeys, segments: int | None) -> list[SegmentState]:
    if job.sort_key is not None:
        found = []
        arguments: Typed = {
            "TableName": job.table, "ConsistentRead": True,
            "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :segment)",
            "ExpressionAttributeNames": {"#pk": job.partition_key, "#sk": job.sort_key},
            "ExpressionAttributeValues": {":pk": {"S": CONTROL}, ":segment": {"S": SEGMENT_PREFIX}}}
        while True:
            page = client.query(**arguments)
            found += [state for item in page.get("Items", []) if (state := from_item(item))]
            if "LastEvaluatedKey" not in page:
                return sorted(found, key=lambda state: state.segment)
            arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    header = client.get_item(TableName=job.table, Key=control_key(job, None), ConsistentRead=True).get("Item", {})
    wanted = max(int(header.get("_segments", {}).get("N", 0)), segments or 0)
    states: dict[int, SegmentState] = {}
    read = 0
    while read < wanted:
        for state in _by_key(client, job, range(read, wanted)):
            states[state.segment] = state
        read, wanted = wanted, max([wanted, *(state.segments for state in states.values())])
    return [states[segment] for segment in sorted(states)]


def _by_key(client: Any, job: TableKeys, segments: range) -> list[SegmentState]:
    """BatchGetItem of the segments' control items, 100 keys a request, unprocessed keys asked again."""
    import time

    found: list[SegmentState] = []
    for start in range(segments.start, segments.stop, 100):
        keys = [control_key(job, segment) for segment in range(start, min(start + 100, segments.stop))]
        for attempt in range(10):
            answer = client.batch_get_item(RequestItems={job.table: {"Keys": keys, "ConsistentRead": True}})
            found += [state for item in answer.get("Responses", {}).get(job.table, []) if (state := from_item(item))]
            keys = answer.get("UnprocessedKeys", {}).get(job.table, {}).get("Keys", [])
            if not keys:
                break
            time.sleep(min(5.0, 0.05 * 2 ** attempt))
        else:
            raise TablewrightError(f"cannot read the control items of table {job.table}: DynamoDB left keys "
                                   "unprocessed ten times", code=CODE, hint="run again in a moment")
    return found


def all_done(states: list[SegmentState], migration: str, segments: int) -> bool:
    """Whether every one of the K segments of `migration` is done."""
    done = {state.segment for state in states if state.migration == migration and state.done
            and state.segments == segments}
    return done >= set(range(segments))


def unfinished(states: list[SegmentState], mine: str) -> list[str]:
    """The other migrations the control items show in progress: one with a segment not done, or with a segment in
    its 0..K-1 that has no control item at all (started by a worker, not yet by the others)."""
    present = {state.segment for state in states}
    others = sorted({state.migration for state in states if state.migration != mine})
    return [other for other in others
            if any(not state.done for state in states if state.migration == other)
            or any(set(range(state.segments)) - present for state in states if state.migration == other)]


def check_start(states: list[SegmentState], job: TableKeys, segments: int, mine: list[int]) -> dict[int, SegmentState]:
    """Refuse to start (nothing written yet) when the segments asked for are not 0..K-1, another migration is in
    progress, or this one was started with another K; else this migration's recorded states, by segment."""
    if segments < 1:
        raise TablewrightError(f"--segments {segments}: a Scan has at least one segment", code=CODE,
                               hint="pass --segments K with K >= 1")
    outside = [segment for segment in mine if not 0 <= segment < segments]
    if outside or not mine or len(set(mine)) != len(mine):
        raise TablewrightError(
            f"segment {outside[0] if outside else mine} is not one of 0..{segments - 1} (--segments {segments}), "
            "each once", code=CODE, hint=f"pass --segment I with 0 <= I < {segments}, or leave it out for all")
    others = unfinished(states, job.migration)
    if others:
        raise TablewrightError(
            f"a migration {others[0]} is in progress in table {job.table}", code=CODE,
            hint=f"finish it (`tablewright migrate run` with that design) or delete its control items "
                 f"(partition key {CONTROL!r}) before starting another")
    recorded = sorted({state.segments for state in states if state.migration == job.migration} - {segments})
    if recorded:
        raise TablewrightError(
            f"migration {job.migration} was started in table {job.table} with K={recorded[0]} segments, not "
            f"{segments}", code=CODE, hint=f"run with --segments {recorded[0]}: a Scan's segments depend on K")
    return {state.segment: state for state in states if state.migration == job.migration}
