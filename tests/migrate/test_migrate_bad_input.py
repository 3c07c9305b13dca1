"""`migrate` refuses what it cannot run with one located error, exit 2, and writes nothing to the table: an unknown
--against, a budget of 0, an endpoint that refuses, a table whose control items belong to another design's
migration in progress. A verified migration is recorded in the design lock, and its declarations may then leave
the blueprint past the review."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.design.items import build_item
from tablewright.local.tables import create_tables
from tablewright.migrate.migration import migration
from tablewright.migrate.progress import Progress
from tablewright.migrate.runner import Job, run_job
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import write_locks
from tests.support.emulator import Emulator
from tests.support.gate_support import shop

pytestmark = pytest.mark.terraform

RENAMED = {"entities": {"Customer": {"attributes": {"name": None, "fullName": {"type": "string",
                                                                              "renamed_from": "name"}}}}}
EMAIL_GONE = {"entities": {"Customer": {"attributes": {"email": None}}},
              "migrations": [{"entity": "Customer", "attribute": "email", "removal": "delete", "reason": "r"}]}


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator() as running:
        yield running


@pytest.fixture
def table(tmp_path: Path, emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The shop's table on the emulator with 30 customers of the earlier design; the base and two heads."""
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    for side in ("base", "head", "other"):
        (tmp_path / side).mkdir()
    table_name = f"shop_{tmp_path.name[-12:].replace('-', '_')}"
    paths = {side: shop(tmp_path / side, table={"name": table_name}, **overlay)
             for side, overlay in (("base", {}), ("head", RENAMED), ("other", EMAIL_GONE))}
    [old] = build_stacks(load_blueprints(paths["base"]))
    client = boto3.client("dynamodb", endpoint_url=emulator.endpoint, region_name="us-east-1")
    create_tables(lambda region: client, [old])
    for number in range(30):
        values = {"customerId": f"c{number}", "email": f"{number}@example.com", "name": f"N{number}", "region": "EU"}
        client.put_item(TableName=table_name, Item=build_item(old.design, "Customer", values))
    return {"client": client, "name": table_name, "endpoint": emulator.endpoint, **paths}


def items(table: dict[str, Any]) -> list[dict[str, Any]]:
    scanned = table["client"].scan(TableName=table["name"], ConsistentRead=True)["Items"]
    return sorted(scanned, key=lambda item: json.dumps(item, sort_keys=True))


def refused(run_cli, table: dict[str, Any], *args: str) -> str:
    before = items(table)
    code, out, err = run_cli("migrate", *args)
    assert (code, out) == (2, ""), err
    assert err.startswith("error: ") and "\n  fix: " in err and "Traceback" not in err
    assert items(table) == before
    return err


def test_bad_input_is_one_located_error_and_writes_nothing(run_cli, table):
    head, base, endpoint = table["head"], table["base"], table["endpoint"]
    err = refused(run_cli, table, "run", head, "--against", "nosuch.yaml", "--max-wcu", "5", "--endpoint-url", endpoint)
    assert "in the --against blueprint: file not found: nosuch.yaml" in err
    err = refused(run_cli, table, "run", head, "--against", base, "--max-wcu", "0", "--endpoint-url", endpoint)
    assert "--max-wcu 0.0: the write units per second" in err
    err = refused(run_cli, table, "run", head, "--against", base, "--max-wcu", "5", "--endpoint-url",
                  "http://127.0.0.1:1")
    assert "Could not connect to the endpoint URL" in err and "[E802]" in err
    err = refused(run_cli, table, "run", head, "--against", base, "--max-wcu", "5", "--endpoint-url", endpoint,
                  "--segments", "4", "--segment", "4")
    assert "--segment 4 is not one of 0..3" in err


def test_a_table_holding_another_designs_migration_in_progress_is_refused(run_cli, table):
    """The `other` head's migration (email removed) started and stopped after one segment of four: the control
    items say it is in progress, so the rename's migration refuses to start."""
    [old] = build_stacks(load_blueprints(table["base"]))
    [other] = build_stacks(load_blueprints(table["other"]))
    started = migration(old, other)
    keys = other.design.table_keys
    job = Job(started.table, started.identity, keys.pk, keys.sk, started.entities, started.rewriter.rewrite)
    run_job(table["client"], job, 100, 4, [0], Progress(out=io.StringIO(), terminal=False))
    err = refused(run_cli, table, "run", table["head"], "--against", table["base"], "--max-wcu", "5",
                  "--endpoint-url", table["endpoint"])
    assert f"a migration {started.identity} is in progress" in err or started.identity in err


def test_a_verified_migration_is_recorded_and_lets_its_declaration_go(run_cli, table, tmp_path):
    [old] = build_stacks(load_blueprints(table["base"]))
    write_locks([old])
    shutil.copy(table["base"].with_name("shop.lock.json"), table["head"].with_name("shop.lock.json"))
    code, _, err = run_cli("migrate", "verify", table["head"], "--against", table["base"],
                           "--endpoint-url", table["endpoint"])
    assert code == 1 and "NOT migrated: 30 item(s)" in _ + err
    code, _, err = run_cli("migrate", "run", table["head"], "--against", table["base"], "--max-wcu", "50",
                           "--endpoint-url", table["endpoint"], "--segments", "2")
    assert code == 0, err
    merged = tmp_path / "merged"  # the rename as merged: its lock has no record of the migration
    shutil.copytree(table["head"].parent, merged)
    code, out, err = run_cli("migrate", "verify", table["head"], "--against", table["base"],
                             "--endpoint-url", table["endpoint"])
    assert code == 0 and "verified" in out and "recorded in " in err
    lock = json.loads(table["head"].with_name("shop.lock.json").read_text())
    [record] = lock["environments"]["default"]["migrated"]
    assert record["declarations"] == ["attribute Customer.name renamed fullName"] and record["items"] == 30
    assert (record["table"], record["endpoint"]) == (table["name"], table["endpoint"])
    contract = tmp_path / "contract"  # the next change: `renamed_from` goes, the old name is no longer read
    contract.mkdir()
    done = shop(contract, table={"name": table["name"]}, entities={"Customer": {"attributes": {
        "name": None, "fullName": "string"}}})
    shutil.copy(merged / "shop.lock.json", done.with_name("shop.lock.json"))
    code, out, err = run_cli("review", "--base", merged / "shop.yaml", "--head", done, "--format", "json")
    blocked = [c for c in json.loads(out)["stacks"][0]["changes"] if c["subject"].startswith("contract: ")]
    assert [(c["subject"], c["cls"]) for c in blocked] == [
        ("contract: attribute Customer.name renamed fullName", "blocked")]
    shutil.copy(table["head"].with_name("shop.lock.json"), done.with_name("shop.lock.json"))  # with the record
    code, out, err = run_cli("review", "--base", merged / "shop.yaml", "--head", done, "--format", "json")
    assert [c for c in json.loads(out)["stacks"][0]["changes"] if c["subject"].startswith("contract: ")] == []
    assert json.loads(out)["verdict"] != "blocked"
    [shown] = [line for line in json.loads(out)["stacks"][0]["lock_diff"] if line.startswith("migrated: ")]
    assert shown.startswith("migrated: attribute Customer.name renamed fullName verified ") and \
        f"on {table['name']} at {table['endpoint']} (30 items) recorded" in shown  # reviewers see the record


def test_sigterm_stops_a_run_resumably_and_the_next_run_finishes_it(table, emulator):
    """A Kubernetes Job's pod is stopped with SIGTERM: the worker records where it is and exits 130; run again, it
    resumes and `verify` passes."""
    command = [sys.executable, "-m", "tablewright", "migrate", "run", str(table["head"]), "--against",
               str(table["base"]), "--max-wcu", "4", "--segments", "1", "--endpoint-url", table["endpoint"]]
    worker = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ)
    assert worker.stdout is not None
    for line in worker.stdout:
        if '"event": "second"' in line:  # writing: stop it
            worker.send_signal(signal.SIGTERM)
            break
    out, err = worker.communicate(timeout=60)
    assert worker.returncode == 130, err
    assert "interrupted (Ctrl-C or SIGTERM)" in err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["interrupted"] and 0 < summary["rewritten"] < 30
    faster = [*command[:command.index("--max-wcu") + 1], "100", *command[command.index("--max-wcu") + 2:]]
    finished = subprocess.run(faster, capture_output=True, text=True, env=os.environ, timeout=120)
    assert finished.returncode == 0, finished.stderr
    verified = subprocess.run([sys.executable, "-m", "tablewright", "migrate", "verify", str(table["head"]),
                               "--against", str(table["base"]), "--endpoint-url", table["endpoint"]],
                              capture_output=True, text=True, env=os.environ, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_two_migrations_that_start_together_cannot_both_run(run_cli, table):
    """Each one's checks may read the control items before the other writes any: the claim item, written
    conditionally, lets one through. Here the other design's migration holds the claim and has written nothing
    else yet."""
    from tablewright.migrate.control import claim_request

    [old] = build_stacks(load_blueprints(table["base"]))
    [other] = build_stacks(load_blueprints(table["other"]))
    started = migration(old, other)
    keys = other.design.table_keys
    job = Job(started.table, started.identity, keys.pk, keys.sk, started.entities, started.rewriter.rewrite)
    table["client"].put_item(**claim_request(job, False))
    err = refused(run_cli, table, "run", table["head"], "--against", table["base"], "--max-wcu", "5",
                  "--endpoint-url", table["endpoint"])
    assert f"a migration {started.identity} is in progress" in err
