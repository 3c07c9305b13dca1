"""Clients during a migration: while `migrate verify` has not recorded a rename in the lock, the generated module
reads the renamed attribute under its old name too (old items carry it) and writes the new one, and types what old
items may lack as not required; once recorded, it reads and types the new design only."""

from __future__ import annotations

import shutil
from pathlib import Path

import boto3
import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.blueprint.lock import MigratedRecord, lock_path, lock_text, read_lock
from tablewright.client.generate import generate
from tablewright.client.model import client_of
from tablewright.design.items import build_item
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import write_locks
from tests.support.client_support import TypeScriptTable, module_text, python_module, run_tsc, table_of
from tests.support.emulator import Emulator
from tests.support.gate_support import shop

RENAMED = {"Customer": {"attributes": {"name": None, "fullName": {"type": "string", "renamed_from": "name"}}}}
TIER = {"Customer": {"attributes": {"tier": "string"}}}
DEFAULTED = [{"entity": "Customer", "attribute": "tier", "default": "FREE", "reason": "r"}]


def sides(tmp_path: Path, **head: object) -> tuple[Path, Path]:
    for side in ("base", "head"):
        (tmp_path / side).mkdir()
    base = shop(tmp_path / "base")
    [old] = build_stacks(load_blueprints(base))
    write_locks([old])
    path = shop(tmp_path / "head", **head)
    shutil.copy(lock_path(base), lock_path(path))
    return base, path


def record(path: Path, *declarations: str) -> None:
    """What `migrate verify` writes into the lock once the table is migrated."""
    lock = read_lock(lock_path(path))
    entry = lock.environments["default"]
    done = MigratedRecord(identity="0123456789abcdef", declarations=list(declarations), items=1,
                          verified="2026-12-06T03:00:00Z", table=entry.table)
    updated = lock.model_copy(update={"environments": {"default": entry.model_copy(update={"migrated": [done]})}})
    lock_path(path).write_text(lock_text(updated.model_dump(mode="json", exclude_defaults=True)))


def test_a_pending_rename_reads_old_items_under_the_old_name_and_writes_the_new(aws, tmp_path):
    base, head = sides(tmp_path, entities=RENAMED)
    module = python_module(head)
    name = table_of(aws, head, tmp_path)
    [old] = build_stacks(load_blueprints(base))
    values = {"customerId": "c1", "email": "a@example.com", "name": "Ann", "region": "EU"}
    aws.put_item(TableName=name, Item=build_item(old.design, "Customer", values))
    table = module.ShopTable(aws, name)
    assert table.customer(customerId="c1") == {"customerId": "c1", "email": "a@example.com", "fullName": "Ann",
                                               "region": "EU"}
    table.put_customer({"customerId": "c2", "email": "b@example.com", "fullName": "Bo", "region": "US"})
    stored = aws.get_item(TableName=name, Key={"PK": {"S": "CUSTOMER#c2"}, "SK": {"S": "PROFILE"}})["Item"]
    assert stored["fullName"] == {"S": "Bo"} and "name" not in stored
    assert table.customer(customerId="c2")["fullName"] == "Bo"
    both = build_item(old.design, "Customer", {**values, "customerId": "c3"}) | {"fullName": {"S": "Ann Lee"}}
    aws.put_item(TableName=name, Item=both)  # updated by the new version before the backfill reached it
    assert table.customer(customerId="c3")["fullName"] == "Ann Lee"


def test_types_say_what_old_items_may_lack_until_the_migration_is_recorded(tmp_path):
    _, head = sides(tmp_path, entities={**RENAMED, "Customer": {
        "attributes": {**RENAMED["Customer"]["attributes"], "tier": "string"}}}, migrations=DEFAULTED)
    (pending,) = generate(build_stacks(load_blueprints(head)), "python").values()
    assert '    "fullName": NotRequired[str],' in pending and '    "tier": NotRequired[str],' in pending
    assert 'formers={"fullName": "name"},' in pending
    assert "'#name': 'name'" in pending  # the reads project the old name too
    record(head, "attribute Customer.name renamed fullName", "attribute Customer.tier (default)")
    (done,) = generate(build_stacks(load_blueprints(head)), "python").values()
    assert "formers=" not in done and "'#name': 'name'" not in done
    assert '    "fullName": str,' in done and '    "tier": str,' in done and "NotRequired[str]" not in done


@pytest.mark.terraform
def test_the_typescript_client_reads_old_items_under_the_old_name_too(tmp_path):
    base, head = sides(tmp_path, entities=RENAMED)
    [old], [new] = build_stacks(load_blueprints(base)), build_stacks(load_blueprints(head))
    (tmp_path / "ts").mkdir()
    (tmp_path / "ts" / "shop_client.ts").write_text(module_text(head, "typescript"))
    done = run_tsc(tmp_path / "ts", "*.ts", out_dir="build")
    assert done.returncode == 0, done.stdout + done.stderr
    with Emulator() as emulator:
        client = boto3.client("dynamodb", endpoint_url=emulator.endpoint, region_name="us-east-1",
                              aws_access_key_id="testing", aws_secret_access_key="testing")
        name = table_of(client, head, tmp_path)
        values = {"customerId": "c1", "email": "a@example.com", "name": "Ann", "region": "EU"}
        client.put_item(TableName=name, Item=build_item(old.design, "Customer", values))
        table = TypeScriptTable(tmp_path / "ts" / "build" / "shop_client.js", client_of([new], ""),
                                emulator.endpoint, name)
        try:
            assert table.customer(customerId="c1")["fullName"] == "Ann"
        finally:
            table.close()
