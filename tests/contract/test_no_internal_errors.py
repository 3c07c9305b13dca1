"""No input of any command exits 3: each case here did (an attack on every command found them), and now gives
the user's error (exit 2, located, with a fix) or its finding (exit 1). The hostile corpus is
tests/hostile/test_hostile_*.py, one file per surface (the contract: tests/support/hostile_support.py); these are the
inputs that reached a bug behind the contract."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

ITEMS = """\
blueprint: items
version: 1.0.0
table: {{name: {table}}}
{extra}entities:
  Item:
    attributes: {attributes}
    key: {{pk: "ITEM#{{id}}", sk: DETAILS}}
access_patterns:
{patterns}
"""


def items(tmp_path: Path, attributes: dict[str, Any], patterns: dict[str, Any], table: str = "items_main",
          extra: str = "") -> Path:
    path = tmp_path / "items.yaml"
    lines = "".join(f"  {name}: {json.dumps(spec)}\n" for name, spec in patterns.items())
    path.write_text(ITEMS.format(table=table, extra=extra, attributes=json.dumps(attributes), patterns=lines))
    return path


def assert_users_error(result: tuple[int, str, str], code: str, words: str) -> None:
    exit_code, _, err = result
    assert exit_code == 2 and "Traceback" not in err and "[E900]" not in err, err
    assert f"[{code}]" in err and words in err and "\n  fix: " in err, err


def assert_no_crash(result: tuple[int, str, str], expected: int) -> None:
    exit_code, _, err = result
    assert "Traceback" not in err and "[E900]" not in err, err
    assert exit_code == expected, err


@pytest.mark.parametrize(("key_schema", "words"), [
    ([{"AttributeName": "pk", "KeyType": "RANGE"}], "the KeySchema of table tbl is pk RANGE"),
    ([{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "HASH"}], "a HASH, b HASH"),
    ([{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "a", "KeyType": "RANGE"}], "a HASH, a RANGE"),
])
def test_adopt_refuses_a_key_schema_dynamodb_never_has(tmp_path, run_cli, key_schema, words):
    table = {"TableName": "tbl", "KeySchema": key_schema, "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"},
             "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "a", "b")]}
    (tmp_path / "t.json").write_text(json.dumps({"Table": table}))
    assert_users_error(run_cli("adopt", tmp_path / "t.json", "--out", "-"), "E800", words)


@pytest.mark.parametrize("value", ['"0001-01-01T00:00:00+05:00"', '"9999-12-31T23:59:59-05:00"', "1.0e+18",
                                   "1.0e+300", '"0999-12-31T00:00:00Z"'])
def test_an_example_time_keys_cannot_hold_is_a_located_error(tmp_path, run_cli, value):
    path = tmp_path / "r.yaml"
    path.write_text(f"""\
blueprint: r
version: 1.0.0
table: {{name: r_main}}
entities:
  Reading:
    attributes: {{sensorId: string, at: timestamp}}
    key: {{pk: "SENSOR#{{sensorId}}#{{at:day}}", sk: "{{at}}"}}
    examples:
      - {{sensorId: s1, at: {value}}}
access_patterns:
  readings: {{entity: Reading, where: {{sensorId: "=", at: between}}, rps: 1}}
""")
    for command in ("lint", "verify"):
        assert_users_error(run_cli(command, path), "E203", "years 1000 to 9998")


@pytest.mark.parametrize(("length", "extra", "resource"), [
    (238, "", "the CloudwatchMetricAlarm `alarm_name`"),
    (110, 'maintenance_window: {days: daily, start: "02:00", duration: 2h, timezone: UTC}\n', "the SsmDocument `name`"),
])
def test_a_table_name_too_long_for_the_names_derived_from_it_is_located(tmp_path, run_cli, length, extra, resource):
    path = items(tmp_path, {"id": "string"}, {"get": {"entity": "Item", "where": {"id": "="}}}, table="t" * length,
                 extra=extra)
    for command in ("synth", "verify"):
        result = run_cli(command, path, *(["--out", tmp_path / "out"] if command == "synth" else []))
        assert_users_error(result, "E402", resource)
        assert result[2].startswith(f"error: {path}:3:") and "table.name" in result[2]
    assert not (tmp_path / "out").exists()


def _wide(tmp_path: Path) -> Path:
    """GSI1 projects 102 attributes (lint TW302: more than DynamoDB's 100)."""
    attributes = {"id": "string", "g": "string", **{f"a{n}": "string" for n in range(100)}}
    return items(tmp_path, attributes, {"get": {"entity": "Item", "where": {"id": "="}},
                                        "by_g": {"entity": "Item", "where": {"g": "="}}})


def _many_indexes(tmp_path: Path) -> Path:
    """31 planned GSIs (lint TW301: more than DynamoDB's 20)."""
    attributes = {"id": "string", **{f"x{n}": "string" for n in range(31)}}
    patterns = {f"by_x{n}": {"entity": "Item", "where": {f"x{n}": "="}, "returns": []} for n in range(31)}
    return items(tmp_path, attributes, {"get": {"entity": "Item", "where": {"id": "="}}, **patterns})


@pytest.mark.parametrize("make", [_wide, _many_indexes], ids=["102-projected-attributes", "31-indexes"])
def test_a_design_over_dynamodbs_quotas_is_reported_not_a_crash(tmp_path, run_cli, make):
    path = make(tmp_path)
    assert_no_crash(run_cli("lint", path, "--against", path), 1)
    assert_no_crash(run_cli("review", "--base", path, "--head", path), 0)
    assert_no_crash(run_cli("synth", path, "--out", tmp_path / "out", "--allow-lint-errors"), 0)
    assert json.loads((tmp_path / "items.lock.json").read_text())["environments"]["default"]["indexes"]


def test_a_hand_made_lock_bucketing_text_by_day_is_refused(tmp_path, run_cli):
    shutil.copytree(ROOT / "blueprints", tmp_path / "blueprints")
    lock_path = tmp_path / "blueprints" / "crm.lock.json"
    lock = json.loads(lock_path.read_text())
    lock["environments"]["prod"]["entities"]["Customer"]["keys"]["GSI1"]["sk"] = "{industry:day}"
    lock_path.write_text(json.dumps(lock, indent=2))
    assert_users_error(run_cli("lint", tmp_path / "blueprints" / "crm.yaml"), "E403",
                       "bucket `industry` by day, which is written as string, not a time")


def test_a_hot_key_on_an_index_no_pattern_reads_is_a_finding(tmp_path, run_cli):
    """The bundled orders blueprint with GSI1's patterns removed (GSI1 retires) and a hot product on it."""
    shutil.copytree(ROOT / "blueprints", tmp_path / "blueprints")
    path = tmp_path / "blueprints" / "orders.yaml"
    data = yaml.safe_load(path.read_text())
    for name in ("user_orders_by_date", "orders_with_product"):
        del data["access_patterns"][name]
    data["entities"]["OrderItem"]["attributes"]["productId"] = {"type": "string", "hot_key_share": 0.9}
    data["entities"]["OrderItem"]["writes_per_second"] = 1000
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    code, out, err = run_cli("lint", path, "--format", "json")
    assert_no_crash((code, out, err), 1)
    [hot] = [f for report in json.loads(out) for f in report["findings"] if f["code"] in ("TW103", "TW104")][:1]
    assert hot["message"].startswith("GSI1: partition key ORDER_ITEM#{productId}")


@pytest.mark.parametrize("value", [1, 1.5, True, "name", [1]])
def test_a_plan_whose_replace_paths_is_not_a_list_of_paths_is_refused(tmp_path, run_cli, value):
    entry = {"address": "aws_sns_topic.x", "mode": "managed", "type": "aws_sns_topic", "name": "x",
             "change": {"actions": ["update"], "before": {}, "after": {}, "replace_paths": value}}
    (tmp_path / "plan.json").write_text(json.dumps({"format_version": "1.2", "planned_values": {},
                                                    "resource_changes": [entry]}))
    assert_users_error(run_cli("gate", "--plan", tmp_path / "plan.json", ROOT / "blueprints" / "orders.yaml"),
                       "E700", "whose replace_paths is not a list of paths")
