"""The plan is read as a stream (modules/tablewright/review/planfile.py): strict JSON, refused with the place in the
document, and only what the gate reads is kept, so a large plan costs little memory. The time and memory of a 200 MB
plan are measured by `python bench/plan.py`; the hostile corpus (tests/hostile/) has every shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.errors import PlanError
from tablewright.review.gate import gate
from tablewright.review.planfile import read_plan
from tests.support.gate_support import NOW, TABLE, entry, plan, record, shop

STREAM_ON = entry("aws_dynamodb_table.shop", ["update"], {"name": "shop_main", "stream_enabled": False},
                  {"name": "shop_main", "stream_enabled": True, "stream_view_type": "NEW_AND_OLD_IMAGES"})


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.json"
    path.write_text(text)
    return path


def refusal(tmp_path: Path, text: str) -> str:
    with pytest.raises(PlanError) as caught:
        read_plan(written(tmp_path, text))
    assert caught.value.code == "E700"
    return caught.value.message


@pytest.mark.parametrize(("text", "expected"), [
    ('{"format_version": "1.2", "planned_values": {}, "prior_state": {"values": {"a": 1, "a": 2}}}',
     "the plan gives the key 'a' twice in prior_state.values (JSON parsers disagree on which one counts)"),
    ('{"format_version": "1.2", "format_version": "1.2", "planned_values": {}}',
     "the plan gives the key 'format_version' twice in the top level"),
    ('{"format_version": "1.2", "planned_values": {}, "resource_changes": [{"a": NaN}]}',
     "the plan is not valid JSON at resource_changes[0].a: lexical error: invalid char in json text."),
    ('{"format_version": "1.2", "planned_values": {"x": 1e400}}',
     "the plan is not valid JSON at planned_values.x: parse error: numeric (floating point) overflow"),
    ('{"format_version": "1.2", "planned_values": {"x": ' + "1" * 4400 + "}}",
     "the plan is not valid JSON at planned_values.x: parse error: integer overflow"),
    ('{"format_version": "2.0", "planned_values": {}}',
     "the plan has format_version 2.0: this Tablewright reads plans of format 1.x"),
    ('{"format_version": 1.2, "planned_values": {}}',
     "the plan has format_version 1.2 (a float), not a version like \"1.2\""),
    ('{"format_version": "01.2", "planned_values": {}}',
     "the plan has format_version \"01.2\" (text), not a version like \"1.2\""),
    ('{"format_version": "1.2", "planned_values": {}, "output_changes": []}',
     "the plan has `output_changes` that is not an object"),
    ('{"format_version": "1.2", "planned_values": {}, "output_changes": {"tablewright": 7}}',
     "the plan has output_changes.tablewright that is not an object"),
    ('{"format_version": "1.2", "planned_values": {}, "resource_drift": {}}',
     "the plan has `resource_drift` that is not a list"),
    ('{"format_version": "1.2", "planned_values": {}, "resource_drift": [{"address": 1}]}',
     "the plan has resource_drift[0] without a string address, type and mode"),
    ('{"format_version": "1.2", "planned_values": {"a": ' + "[" * 70 + "]" * 70 + "}}",
     "the plan is nested deeper than 64 levels at planned_values.a"),
])
def test_a_plan_that_is_not_strict_json_is_refused_where_it_breaks(tmp_path, text, expected):
    assert refusal(tmp_path, text).startswith(f"{tmp_path / 'plan.json'}: {expected}")


def test_what_the_gate_does_not_read_is_checked_and_dropped(tmp_path):
    """No-op entries, data sources and the states are parsed, and not kept; the table entry is, even unchanged."""
    noise = [entry(f"aws_cloudwatch_metric_alarm.a{i}", ["no-op"], {"x": i}, {"x": i}) for i in range(3000)]
    data = entry("data.aws_region.current", ["read"], None, {"name": "us-east-1"}, mode="data")
    document = plan(TABLE, STREAM_ON, *noise, data, outputs=record(production=True),
                    prior_state={"values": {"root_module": {"resources": noise}}},
                    configuration={"provider_config": {}}, relevant_attributes=[{"resource": "x"}])
    kept = read_plan(written(tmp_path, json.dumps(document)))
    assert [entry["address"] for entry in kept["resource_changes"]] == ["aws_dynamodb_table.shop"] * 2
    assert set(kept) == {"format_version", "planned_values", "resource_changes", "resource_drift", "output_changes"}
    assert kept["output_changes"] == {"tablewright": document["output_changes"]["tablewright"]}


def test_the_gate_decides_the_same_from_the_stream_as_from_the_whole_plan(tmp_path):
    drifted = entry("aws_dynamodb_table.gone", ["delete"], {"name": "gone"}, None)
    cases = [plan(TABLE, STREAM_ON), plan(TABLE, STREAM_ON, outputs=record(production=True)),
             plan(STREAM_ON, resource_drift=[drifted]), plan(TABLE, outputs=record(maintenance_window=False))]
    [loaded] = load_blueprints(shop(tmp_path))
    for number, document in enumerate(cases):
        path = tmp_path / f"plan-{number}.json"
        path.write_text(json.dumps(document, indent=2))
        whole, streamed = gate(document, loaded, NOW), gate(read_plan(path), loaded, NOW)
        assert streamed == whole, number


def test_more_resource_changes_than_any_stack_has_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr("tablewright.review.planfile.MAX_KEPT_ENTRIES", 5)
    updates = [entry(f"aws_cloudwatch_metric_alarm.a{i}", ["update"], {"x": 1}, {"x": 2}) for i in range(6)]
    message = refusal(tmp_path, json.dumps(plan(*updates)))
    assert "the plan changes more than 5 resources the gate reads, which no Tablewright stack has" in message
    no_ops = [entry(f"aws_cloudwatch_metric_alarm.a{i}", ["no-op"], {"x": 1}, {"x": 1}) for i in range(50)]
    assert read_plan(written(tmp_path, json.dumps(plan(*no_ops))))["resource_changes"] == []  # not kept: no bound


def test_a_value_longer_than_any_argument_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    """The parser holds a string whole (four bytes a character in Python once one is beyond U+FFFF): a run without
    a string boundary longer than MAX_STRING_BYTES is refused as it streams in, escaped quotes inside or not."""
    monkeypatch.setattr("tablewright.review.planfile.MAX_STRING_BYTES", 4096)
    monkeypatch.setattr("tablewright.review.planfile.READ_BUFFER", 512)
    for value in ("\U0001f600" * 2000, 'a\\"b' * 2000):
        text = '{"format_version": "1.2", "planned_values": {}, "prior_state": {"x": "' + value + '"}}'
        assert "has a value of more than 4,096 bytes at prior_state.x" in refusal(tmp_path, text)
    short = '{"format_version": "1.2", "planned_values": {}, "prior_state": {"x": "' + "\U0001f600" * 500 + '"}}'
    assert read_plan(written(tmp_path, short))["resource_changes"] == []


def test_the_text_kept_for_the_gate_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr("tablewright.review.planfile.MAX_KEPT_CHARACTERS", 1000)
    updates = [entry(f"aws_cloudwatch_metric_alarm.a{i}", ["update"], {"x": "a" * 300}, {"x": "b" * 300})
               for i in range(3)]
    assert "characters in the changes the gate reads" in refusal(tmp_path, json.dumps(plan(*updates)))
    no_ops = [entry(f"aws_cloudwatch_metric_alarm.a{i}", ["no-op"], {"x": "a" * 300}, {"x": "a" * 300})
              for i in range(30)]
    assert read_plan(written(tmp_path, json.dumps(plan(*no_ops))))["resource_changes"] == []  # dropped: not counted
