"""`tablewright migrate` end to end on the emulator, as a team runs it: 20,000 orders of the old design, a new index on
synthetic keys (orders by status) and a renamed attribute (`total` -> `amount`) migrated by `migrate run` while the
application's new version updates 1,000 of them; the run killed with SIGKILL mid-way and resumed by four workers;
then `migrate verify` and the generated client of the new design reading every old order through the new pattern."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.design.items import build_item
from tablewright.local.tables import create_tables
from tablewright.stacks.stack import Stack, build_stacks
from tests.support.client_support import python_module
from tests.support.emulator import Emulator
from tests.support.gate_support import shop

pytestmark = pytest.mark.terraform

ITEMS, UPDATED, BUDGET, SEGMENTS = 20_000, 1_000, 1_500.0, 4
STATUSES = ("PLACED", "PAID", "SHIPPED")
HEAD = {"entities": {"Order": {"attributes": {"total": None, "amount": {"type": "number", "renamed_from": "total"}}}},
        "access_patterns": {"orders_by_status": {"entity": "Order", "where": {"status": "="}, "order_by": "placedAt",
                                                 "rps": 5}}}


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator() as running:
        yield running


def aws(emulator: Emulator) -> Any:
    return boto3.client("dynamodb", endpoint_url=emulator.endpoint, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def environment(emulator: Emulator) -> dict[str, str]:
    return {**os.environ, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": emulator.endpoint}


def order(number: int) -> dict[str, Any]:
    placed = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(minutes=number)
    return {"orderId": f"o{number:05d}", "customerId": f"c{number % 500:03d}", "placedAt": placed,
            "status": STATUSES[number % 3], "total": number, "expiresAt": datetime(2040, 1, 1, tzinfo=UTC)}


def seed(client: Any, stack: Stack, table: str) -> None:
    items = [build_item(stack.design, "Order", order(number)) for number in range(ITEMS)]
    for start in range(0, ITEMS, 25):
        requests = [{"PutRequest": {"Item": item}} for item in items[start:start + 25]]
        client.batch_write_item(RequestItems={table: requests})


def migrate(emulator: Emulator, base: Path, head: Path, action: str, *extra: str,
            wait: bool = True) -> subprocess.Popen[str] | subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tablewright", "migrate", action, str(head), "--against", str(base),
               "--endpoint-url", emulator.endpoint, *extra]
    if wait:
        return subprocess.run(command, capture_output=True, text=True, env=environment(emulator), timeout=600)
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environment(emulator))


def events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


class Writer(threading.Thread):
    """The application's new version: updates orders as the new design writes them (status with its new index keys,
    the amount under its new name), unconditionally, remembering the last values it wrote."""

    def __init__(self, emulator: Emulator, stack: Stack, table: str) -> None:
        super().__init__(daemon=True)
        self.client, self.stack, self.table = aws(emulator), stack, table
        self.last: dict[str, dict[str, Any]] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        rng = random.Random(3)
        for update in range(UPDATED):
            if self.stop.is_set():
                return
            number = rng.randrange(ITEMS)
            values = {**order(number), "status": STATUSES[(number + update) % 3], "amount": 100_000 + update}
            values.pop("total")
            item = build_item(self.stack.design, "Order", values)
            changed = {name: item[name] for name in ("status", "amount", "GSI2PK", "GSI2SK")}
            names = {f"#a{i}": name for i, name in enumerate(changed)}
            self.client.update_item(
                TableName=self.table, Key={"PK": item["PK"], "SK": item["SK"]},
                UpdateExpression="SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(changed))),
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={f":a{i}": value for i, value in enumerate(changed.values())})
            self.last[item["PK"]["S"] + "|" + item["SK"]["S"]] = changed
            time.sleep(0.01)


def test_a_migration_killed_mid_way_resumes_and_loses_no_write(tmp_path, emulator):
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    base, head = shop(tmp_path / "base"), shop(tmp_path / "head", **HEAD)
    [old] = build_stacks(load_blueprints(base))
    [new] = build_stacks(load_blueprints(head))
    client = aws(emulator)
    [created] = create_tables(lambda region: client, [new])  # the expand step is deployed: the table has GSI2
    seed(client, old, created.table)

    planned = migrate(emulator, base, head, "plan", "--max-wcu", str(BUDGET), "--format", "json")
    assert planned.returncode == 0, planned.stderr
    assert {work["former"]: work["items"] for work in json.loads(planned.stdout)["works"]} == {"Order": ITEMS}

    writer = Writer(emulator, new, created.table)
    writer.start()
    first = migrate(emulator, base, head, "run", "--max-wcu", str(BUDGET), "--segments", str(SEGMENTS), wait=False)
    seen: list[dict[str, Any]] = []
    assert first.stdout is not None
    for line in first.stdout:
        seen += events(line)
        if sum(event["event"] == "page" for event in seen) >= 20:
            first.send_signal(signal.SIGKILL)
            break
    first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL, "the run ended before it was killed: raise ITEMS or lower BUDGET"
    seen += events(first.stdout.read())
    workers = [migrate(emulator, base, head, "run", "--max-wcu", str(BUDGET), "--segments", str(SEGMENTS),
                       "--segment", str(segment), wait=False) for segment in range(SEGMENTS)]
    for worker in workers:
        out, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err
        seen += events(out)
    writer.join(timeout=120)
    assert not writer.is_alive()

    per_second: dict[int, float] = defaultdict(float)
    for event in seen:
        if event["event"] == "second":
            per_second[event["t"]] += event["units"]
    assert per_second and max(per_second.values()) <= BUDGET + 1e-6, max(per_second.values())

    verified = migrate(emulator, base, head, "verify", "--format", "json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    report = json.loads(verified.stdout)
    assert report["entities"] == {"Order": [ITEMS, ITEMS]} and report["patterns"]["orders_by_status"] == ITEMS

    stored = {}
    for page in client.get_paginator("scan").paginate(TableName=created.table, ConsistentRead=True):
        for item in page["Items"]:
            if item.get("_entity") == {"S": "Order"}:
                stored[item["PK"]["S"] + "|" + item["SK"]["S"]] = item
    assert len(stored) == ITEMS and not any("total" in item for item in stored.values())
    for key, changed in writer.last.items():  # every write of the application is there, none overwritten
        assert {name: stored[key][name] for name in changed} == changed, key
    untouched = [item for key, item in stored.items() if key not in writer.last]
    assert all(item["amount"]["N"] == str(int(item["orderId"]["S"][1:])) for item in untouched)

    module = python_module(head)
    table = module.ShopTable(client, created.table)
    found, now = 0, datetime.now(UTC)
    for status in STATUSES:
        page = table.orders_by_status(status=status, limit=10_000, as_of=now)
        found += len(page.items)
        while page.next is not None:
            page = table.orders_by_status(status=status, limit=10_000, start=page.next, as_of=now)
            found += len(page.items)
    assert found == ITEMS

    again = migrate(emulator, base, head, "run", "--max-wcu", str(BUDGET), "--segments", str(SEGMENTS))
    assert again.returncode == 0 and "0 of 0 item(s) rewritten" in again.stderr
