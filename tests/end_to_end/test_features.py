"""Sharded keys, time buckets, local indexes, filters and scans: designed, synthesized, verified."""

from __future__ import annotations

import json

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.design.designer import design
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tablewright.verify import runner
from tablewright.verify.verify import verify_stacks
from tests.conftest import TEST_BLUEPRINTS
from tests.support.terraform_support import terraform_environment, validate

FEATURES = TEST_BLUEPRINTS / "features.yaml"


@pytest.fixture(scope="module")
def features():
    return design(load_blueprint(FEATURES).blueprint)


def test_sharded_partition_keys_fan_out_or_compute_the_shard(features):
    by_kind = features.plan("events_by_kind")
    assert by_kind.fan_out.kind == "shards" and by_kind.fan_out.shards == 5
    assert by_kind.operations_per_call == 5
    assert dict(by_kind.values)[":pk"] == "EVENT#{kind}#{_shard}"
    one = features.plan("event")
    assert one.operation == "GetItem" and one.fan_out is None
    shard = next(p for p in one.parameters if p.name == "_shard")
    assert shard.role == "derived" and "SHA-256" in shard.encoding
    gsi = features.plan("orders_by_status")
    assert (gsi.index, gsi.fan_out.shards) == ("GSI1", 4)


def test_time_buckets_fan_out_over_the_range(features):
    readings = features.plan("readings")
    assert readings.fan_out.kind == "buckets" and readings.fan_out.bucket == "day"
    assert readings.key_condition == "#pk = :pk AND #sk BETWEEN :lo AND :hi"
    assert features.plan("reading_at").operation == "GetItem"


def test_local_index_allows_consistent_reads(features):
    plan = features.plan("customer_orders_by_time")
    assert (plan.index, plan.keys.pk, plan.keys.sk, plan.consistent) == ("LSI1", "PK", "LSI1SK", True)
    [lsi] = features.local_indexes
    assert lsi.name == "LSI1"


def test_filters_and_scans_are_filter_expressions(features):
    big = features.plan("big_orders")
    assert big.filter_expression == "#total > :f_total"
    assert dict(big.filter_values)[":f_total"] == {"N": "{total}"}
    from tablewright.design.cookbook import request

    assert "Limit" not in request(big, "t")  # a Limit would count items before the filter
    scan = features.plan("notes_search")
    assert scan.operation == "Scan"
    assert scan.filter_expression == "begins_with(#note, :f_note) AND #_entity = :entity"


def test_every_feature_verifies(verified_features):
    result = verified_features
    assert result.passed, [r.failure for r in result.results if r.failure]
    items = {r.pattern: r.items for r in result.results}
    assert items["readings"] > 1 and items["events_by_kind"] == 7 and items["big_orders"] == 2


@pytest.mark.parametrize("pattern", ["events_by_kind", "orders_by_status", "readings"])
def test_skipping_the_fan_out_is_caught(pattern, monkeypatch):
    """Reading one shard or bucket only must fail verification: the fan-out is what makes it right."""
    original = runner.fan_out_values
    monkeypatch.setattr(runner, "fan_out_values", lambda plan, probe, specs: original(plan, probe, specs)[:1])
    [result] = verify_stacks(build_stacks([load_blueprint(FEATURES)]))
    failed = {r.pattern for r in result.results if not r.passed}
    assert pattern in failed


@pytest.mark.terraform
def test_local_index_and_shards_synthesize_valid_terraform(tmp_path):
    [written] = synthesize(build_stacks([load_blueprint(FEATURES)]), tmp_path / "out")
    table = json.loads(written.read_text())["resource"]["aws_dynamodb_table"]["features"]
    assert table["local_secondary_index"] == [
        {"name": "LSI1", "range_key": "LSI1SK", "projection_type": "INCLUDE",
         "non_key_attributes": ["customerId", "note", "orderId", "placedAt", "status", "total"]}
    ]
    assert {"name": "LSI1SK", "type": "S"} in table["attribute"]
    validate(written.parent, terraform_environment(tmp_path))
