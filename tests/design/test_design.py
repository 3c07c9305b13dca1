"""Design stage: key templates, routing, GSI planning, projections, key conditions."""

from __future__ import annotations

import pytest

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.templates import entity_tag, parse_template
from tablewright.design.design import TABLE
from tablewright.design.indexes import Need, sort_sequence
from tablewright.errors import DesignError
from tests.support.design_helpers import CONTACT, CUSTOMER, designed

# --- templates -------------------------------------------------------------------------------------


def test_template_segments_and_rendering():
    template = parse_template("CONTACT#{contactAt}#{channel}")
    assert [s.literal for s in template.segments] == ["CONTACT", None, None]
    assert template.attributes == ("contactAt", "channel")
    assert template.render({"contactAt": "2024-01-01T00:00:00Z", "channel": "CALL"}) == (
        "CONTACT#2024-01-01T00:00:00Z#CALL"
    )
    assert template.prefix(1).text == "CONTACT"


@pytest.mark.parametrize(
    "text, problem",
    [("", "empty"), ("A##{b}", "empty segment"), ("#A", "empty segment"), ("A{b}", "mixes"), ("A B", "characters")],
)
def test_malformed_templates(text, problem):
    with pytest.raises(Invalid, match=problem):
        parse_template(text)


def test_entity_tags():
    assert entity_tag("OrderItem") == "ORDER_ITEM"
    assert entity_tag("Customer") == "CUSTOMER"
    assert entity_tag("HTTPLog") == "HTTPLOG"


# --- base table routing ---------------------------------------------------------------------------


def test_fully_bound_key_on_the_table_is_a_get_item():
    plan = designed({"Customer": CUSTOMER}, {"profile": {"entity": "Customer", "where": {"customerId": "="}}}).plan(
        "profile"
    )
    assert (plan.operation, plan.index) == ("GetItem", TABLE)
    assert dict(plan.values) == {":pk": "CUSTOMER#{customerId}", ":sk": "PROFILE"}
    assert plan.limit is None


def test_bound_sort_key_prefix_uses_begins_with():
    design = designed(
        {"Customer": CUSTOMER, "Contact": CONTACT},
        {"contacts": {"entity": "Contact", "where": {"customerId": "="}, "order": "desc"}},
    )
    plan = design.plan("contacts")
    assert plan.key_condition == "#pk = :pk AND begins_with(#sk, :sk)"
    assert dict(plan.values)[":sk"] == "CONTACT#"
    assert plan.scan_index_forward is False
    assert plan.order_attributes == ("contactAt", "channel")
    assert design.indexes == ()


def test_between_on_a_middle_component_covers_the_upper_bound():
    plan = designed(
        {"Customer": CUSTOMER, "Contact": CONTACT},
        {"recent": {"entity": "Contact", "where": {"customerId": "=", "contactAt": "between"}, "limit": 3}},
    ).plan("recent")
    assert plan.key_condition == "#pk = :pk AND #sk BETWEEN :lo AND :hi"
    assert dict(plan.values)[":lo"] == "CONTACT#{contactAt.from}"
    # Items store CONTACT#<time>#<channel>: '#' sorts below '$', so every item at the upper time is included.
    assert dict(plan.values)[":hi"] == "CONTACT#{contactAt.to}$"
    assert [p.name for p in plan.parameters] == ["customerId", "contactAt.from", "contactAt.to"]
    assert plan.limit == 3


def test_between_on_the_last_component_needs_no_suffix():
    event = {
        "attributes": {"deviceId": "string", "at": "timestamp"},
        "key": {"pk": "DEVICE#{deviceId}", "sk": "EVENT#{at}"},
    }
    plan = designed(
        {"Event": event}, {"window": {"entity": "Event", "where": {"deviceId": "=", "at": "between"}}}
    ).plan("window")
    assert dict(plan.values)[":hi"] == "EVENT#{at.to}"


def test_open_range_is_closed_at_the_prefix_when_the_partition_is_shared():
    plan = designed(
        {"Customer": CUSTOMER, "Contact": CONTACT},
        {"since": {"entity": "Contact", "where": {"customerId": "=", "contactAt": ">="}}},
    ).plan("since")
    assert plan.key_condition == "#pk = :pk AND #sk BETWEEN :lo AND :hi"
    assert dict(plan.values) == {":pk": "CUSTOMER#{customerId}", ":lo": "CONTACT#{contactAt}", ":hi": "CONTACT$"}


def test_open_range_stays_single_sided_when_the_entity_has_the_partition_alone():
    event = {
        "attributes": {"deviceId": "string", "at": "timestamp"},
        "key": {"pk": "DEVICE#{deviceId}", "sk": "{at}"},
    }
    plan = designed(
        {"Event": event}, {"since": {"entity": "Event", "where": {"deviceId": "=", "at": ">"}}}
    ).plan("since")
    assert plan.key_condition == "#pk = :pk AND #sk > :sk"
    assert dict(plan.values)[":sk"] == "{at}"


def test_strict_comparison_on_last_component_of_a_shared_partition_is_refused():
    note = {
        "attributes": {"customerId": "string", "at": "timestamp"},
        "key": {"pk": "CUSTOMER#{customerId}", "sk": "NOTE#{at}"},
    }
    with pytest.raises(DesignError, match="cannot be bounded in a partition shared with Customer") as error:
        designed({"Customer": CUSTOMER, "Note": note},
                 {"old_notes": {"entity": "Note", "where": {"customerId": "=", "at": "<"}, "index": "table"}})
    assert "use `<=`" in error.value.hint


def test_sort_key_prefix_collision_is_a_design_error():
    order = {"attributes": {"userId": "string", "orderId": "string"},
             "key": {"pk": "USER#{userId}", "sk": "ORDER#{orderId}"}}
    item = {"attributes": {"userId": "string", "orderId": "string", "sku": "string"},
            "key": {"pk": "USER#{userId}", "sk": "ORDER#{orderId}#ITEM#{sku}"}}
    with pytest.raises(DesignError,
                       match=r"sort-key prefix collision: begins_with\(SK, 'ORDER#'\) also matches OrderItem"):
        designed({"Order": order, "OrderItem": item},
                 {"orders_of_user": {"entity": "Order", "where": {"userId": "="}}})
    exact = designed({"Order": order, "OrderItem": item},
                     {"one_order": {"entity": "Order", "where": {"userId": "=", "orderId": "="}}})
    assert exact.plan("one_order").operation == "GetItem"


def test_enumerated_values_rule_out_collisions():
    a = {"attributes": {"id": "string", "kind": {"type": "string", "values": ["A"]}},
         "key": {"pk": "X#{id}", "sk": "{kind}#V"}}
    b = {"attributes": {"id": "string"}, "key": {"pk": "X#{id}", "sk": "B#V"}}
    plan = designed({"Alpha": a, "Beta": b}, {"alphas": {"entity": "Alpha", "where": {"id": "=", "kind": "="}}}).plan(
        "alphas"
    )
    assert plan.index == TABLE


# --- GSI planning ---------------------------------------------------------------------------------


def test_patterns_sharing_a_shape_share_a_gsi_and_entities_overload_it():
    design = designed(
        {"Customer": CUSTOMER, "Contact": CONTACT},
        {
            "by_industry": {"entity": "Customer", "where": {"industry": "="}, "order_by": "lastTouchAt"},
            "stale": {"entity": "Customer", "where": {"industry": "=", "lastTouchAt": "<"}},
            "by_region": {"entity": "Customer", "where": {"region": "="}, "order_by": "tier"},
            "by_channel": {"entity": "Contact", "where": {"channel": "="}, "order": "desc", "order_by": "contactAt"},
        },
    )
    assert [i.name for i in design.indexes] == ["GSI1", "GSI2"]
    customer = design.shapes["Customer"]
    assert str(customer["GSI1"]) == "CUSTOMER#{industry} / {lastTouchAt}"
    assert str(customer["GSI2"]) == "CUSTOMER#{region} / {tier}"
    assert str(design.shapes["Contact"]["GSI1"]) == "CONTACT#{channel} / {contactAt}"
    assert design.plan("stale").key_condition == "#pk = :pk AND #sk < :sk"
    assert design.plan("by_channel").index == "GSI1"
    assert "Customer" in design.notes[0]


def test_nested_equalities_fold_into_one_shape():
    item = {"attributes": {"id": "string", "a": "string", "b": "string", "c": "number"},
            "key": {"pk": "ITEM#{id}", "sk": "ITEM"}}
    design = designed(
        {"Item": item},
        {
            "by_a": {"entity": "Item", "where": {"a": "="}},
            "by_a_b": {"entity": "Item", "where": {"a": "=", "b": "="}},
            "by_a_b_c": {"entity": "Item", "where": {"a": "=", "b": "=", "c": "<"}},
        },
    )
    assert len(design.indexes) == 1
    assert str(design.shapes["Item"]["GSI1"]) == "ITEM#{a} / {b}#{c}"
    assert design.plan("by_a_b").key_condition == "#pk = :pk AND begins_with(#sk, :sk)"
    assert dict(design.plan("by_a_b").values)[":sk"] == "{b}#"


def test_conflicting_orders_need_separate_shapes():
    item = {"attributes": {"id": "string", "a": "string", "b": "string", "c": "string"},
            "key": {"pk": "ITEM#{id}", "sk": "ITEM"}}
    design = designed(
        {"Item": item},
        {"a_by_b": {"entity": "Item", "where": {"a": "="}, "order_by": "b"},
         "a_by_c": {"entity": "Item", "where": {"a": "="}, "order_by": "c"}},
    )
    assert len(design.indexes) == 2


def test_sort_sequence_proves_impossibility():
    needs = [Need("p", frozenset({"a", "b"}), None), Need("q", frozenset({"a"}), "c")]
    assert sort_sequence(needs, frozenset({"a"})) is None
    assert sort_sequence([Need("q", frozenset({"a"}), "c")], frozenset({"a"})) == ["c"]


def test_pattern_without_order_gets_the_entity_identity_as_sort_key():
    design = designed({"Customer": CUSTOMER}, {"by_tier": {"entity": "Customer", "where": {"tier": "="}}})
    assert str(design.shapes["Customer"]["GSI1"]) == "CUSTOMER#{tier} / {customerId}"


# --- projections and follow-ups -------------------------------------------------------------------


def test_projection_is_the_union_of_returns_and_never_all_unless_asked():
    design = designed(
        {"Customer": CUSTOMER},
        {"a": {"entity": "Customer", "where": {"industry": "="}, "returns": ["name"]},
         "b": {"entity": "Customer", "where": {"industry": "=", "lastTouchAt": "<"}, "returns": ["lastTouchAt"]}},
    )
    projection = design.indexes[0].projection
    assert (projection.type, projection.attributes) == ("INCLUDE", ("lastTouchAt", "name"))
    everything = designed({"Customer": CUSTOMER}, {"a": {"entity": "Customer", "where": {"industry": "="}}})
    assert everything.indexes[0].projection.type == "INCLUDE"
    assert set(everything.indexes[0].projection.attributes) == set(CUSTOMER["attributes"])
    asked = designed({"Customer": CUSTOMER}, {"a": {"entity": "Customer", "where": {"industry": "="}}},
                     indexes={"GSI1": {"projection": "all"}})
    assert asked.indexes[0].projection.type == "ALL"


def test_keys_only_when_patterns_read_no_attributes():
    design = designed({"Customer": CUSTOMER}, {"a": {"entity": "Customer", "where": {"industry": "="}, "returns": []}})
    assert design.indexes[0].projection.type == "KEYS_ONLY"


def test_missing_projected_attribute_adds_a_follow_up_or_fails_when_disabled():
    patterns = {"a": {"entity": "Customer", "where": {"industry": "="}, "returns": ["name", "tier"]}}
    design = designed({"Customer": CUSTOMER}, patterns, indexes={"GSI1": {"projection": ["name"]}})
    plan = design.plan("a")
    assert plan.follow_up is not None and plan.follow_up.attributes == ("name", "tier")
    assert plan.projected == ("name",)
    assert plan.operations_per_call == 2
    patterns["a"]["follow_up"] = False
    with pytest.raises(DesignError, match="GSI1 does not project tier"):
        designed({"Customer": CUSTOMER}, patterns, indexes={"GSI1": {"projection": ["name"]}})


def test_strongly_consistent_read_cannot_use_a_gsi():
    with pytest.raises(DesignError, match="strongly consistent read needs the base table"):
        designed({"Customer": CUSTOMER}, {"a": {"entity": "Customer", "where": {"industry": "="}, "consistent": True}})


# --- item collections and declared index keys -----------------------------------------------------


ORDER = {"attributes": {"orderId": "string", "total": "number"}, "key": {"pk": "ORDER#{orderId}", "sk": "DETAILS"}}
ITEM = {"attributes": {"orderId": "string", "sku": "string"}, "key": {"pk": "ORDER#{orderId}", "sk": "ITEM#{sku}"}}


def test_item_collection_reads_the_partition():
    plan = designed({"Order": ORDER, "OrderItem": ITEM},
                    {"order": {"entity": ["Order", "OrderItem"], "where": {"orderId": "="}}}).plan("order")
    assert (plan.operation, plan.key_condition) == ("Query", "#pk = :pk")


def test_item_collection_excludes_other_entities_by_prefix_or_fails():
    note = {"attributes": {"orderId": "string", "at": "timestamp"}, "key": {"pk": "ORDER#{orderId}", "sk": "NOTE#{at}"}}
    line = {"attributes": {"orderId": "string", "sku": "string"}, "key": {"pk": "ORDER#{orderId}", "sk": "LINE#{sku}"}}
    item = {"attributes": {"orderId": "string", "sku": "string"},
            "key": {"pk": "ORDER#{orderId}", "sk": "LINE#X#{sku}"}}
    plan = designed({"OrderItem": line, "Extra": item, "Note": note},
                    {"lines": {"entity": ["OrderItem", "Extra"], "where": {"orderId": "="}}}).plan("lines")
    assert dict(plan.values)[":sk"] == "LINE#"
    with pytest.raises(DesignError, match="also holds Note items"):
        designed({"Order": ORDER, "OrderItem": ITEM, "Note": note},
                 {"order": {"entity": ["Order", "OrderItem"], "where": {"orderId": "="}}})


def test_declared_index_keys_serve_a_pinned_pattern():
    customer = dict(CUSTOMER, index_keys={"ByRegion": {"pk": "REGION#{region}", "sk": "{name}"}})
    design = designed({"Customer": customer},
                      {"a": {"entity": "Customer", "where": {"region": "="}, "index": "ByRegion"}})
    plan = design.plan("a")
    assert (plan.index, plan.keys.pk) == ("ByRegion", "ByRegionPK")
    assert [i.name for i in design.indexes] == ["ByRegion"]
    with pytest.raises(DesignError, match="cannot serve this pattern"):
        designed({"Customer": customer}, {"a": {"entity": "Customer", "where": {"tier": "="}, "index": "ByRegion"}})


def test_design_ignores_declaration_order():
    patterns = {
        "by_industry": {"entity": "Customer", "where": {"industry": "="}, "order_by": "lastTouchAt"},
        "by_region": {"entity": "Customer", "where": {"region": "="}},
        "contacts": {"entity": "Contact", "where": {"customerId": "="}},
    }
    forward = designed({"Customer": CUSTOMER, "Contact": CONTACT}, patterns)
    backward = designed({"Contact": CONTACT, "Customer": CUSTOMER}, dict(reversed(list(patterns.items()))))
    assert forward.plans == backward.plans
    assert forward.indexes == backward.indexes
