"""The review corpus: blueprint changes to tests/data/blueprints/shop.yaml, each with what a reviewer must be
told. `expected` lists every blocked and window change as (class, action, words of its subject)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

BASE = Path(__file__).parents[1] / "data" / "blueprints" / "shop.yaml"


@dataclass(frozen=True)
class Case:
    name: str
    overlay: dict[str, Any]
    verdict: str
    expected: tuple[tuple[str, str, str], ...] = ()
    safe: frozenset[str] = frozenset()  # categories of safe changes that must appear
    data: tuple[tuple[str, str, bool], ...] = ()  # (entity, index, breaking)
    warns: bool = False
    real_plan: bool = False  # also planned by the real Terraform CLI against the applied base


def merged(base: Any, overlay: Any) -> Any:
    """`overlay` over `base`: mappings merge, `None` removes a key, anything else replaces."""
    if not isinstance(base, dict) or not isinstance(overlay, dict):
        return copy.deepcopy(overlay)
    result = copy.deepcopy(base)
    for key, value in overlay.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merged(result.get(key), value)
    return result


def write_case(case: Case, directory: Path) -> Path:
    path = directory / f"{case.name}.yaml"
    path.write_text(yaml.safe_dump(merged(yaml.safe_load(BASE.read_text()), case.overlay), sort_keys=False))
    return path


ORDERS_BY_STATUS = {"entity": "Order", "where": {"status": "="}, "order_by": "placedAt", "rps": 5}
CUSTOMERS_BY_EMAIL = {"entity": "Customer", "where": {"email": "="}, "rps": 5}
LSI = {"indexes": {"LSI1": {"type": "local"}},
       "entities": {"Order": {"index_keys": {"LSI1": {"pk": "CUSTOMER#{customerId}", "sk": "PLACED#{placedAt}"}}}},
       "access_patterns": {"orders_by_time": {"entity": "Order", "where": {"customerId": "=", "placedAt": "between"},
                                              "index": "LSI1", "rps": 5}}}

CASES = [
    Case("add_gsi", {"access_patterns": {"orders_by_status": ORDERS_BY_STATUS}}, "window",
         (("window", "create", "GSI GSI2"),), frozenset({"autoscaling", "alarms", "contributor insights"}),
         data=(("Order", "GSI2", False),), real_plan=True),
    Case("change_projection", {"indexes": {"GSI1": {"projection": "all"}}}, "window",
         (("window", "replace", "GSI GSI1"),), real_plan=True),
    Case("switch_billing", {"table": {"billing": "on_demand", "capacity": None}}, "window",
         (("window", "update", "billing PROVISIONED -> PAY_PER_REQUEST"),), frozenset({"autoscaling", "alarms"}),
         real_plan=True),
    Case("rename_table", {"table": {"name": "shop_orders"}}, "blocked",  # the calendar is named after the table
         (("blocked", "replace", "table shop_main"), ("window", "replace", "change window: shop_window")),
         frozenset({"alarms", "autoscaling"}), real_plan=True),
    Case("change_key_template", {"entities": {"Order": {"key": {"sk": "ORDER#{placedAt}#{orderId}"}}}}, "blocked",
         (("blocked", "update", "Order keys on the table"), ("blocked", "update", "Order keys on GSI1")),
         data=(("Order", "table", True), ("Order", "GSI1", True))),  # the planned GSI1 sort key follows the table's
    Case("change_gsi_key_template", {"entities": {"Order": {"index_keys": {"GSI1": {"pk": "ORDERID#{orderId}",
                                                                                     "sk": "{customerId}"}}}}},
         "blocked", (("blocked", "update", "Order keys on GSI1"),), data=(("Order", "GSI1", True),)),
    Case("add_alarm", {"alarms": {"latency": {"enabled": True, "operations": {"GetItem": 25}}}}, "safe",
         safe=frozenset({"alarms"}), real_plan=True),
    Case("change_alarm_threshold", {"alarms": {"throttles": {"threshold": 5}}}, "safe", safe=frozenset({"alarms"})),
    Case("change_capacity", {"table": {"capacity": {"read": {"min": 20, "max": 400}}}}, "safe",
         safe=frozenset({"autoscaling"}), real_plan=True),
    Case("stream_on", {"table": {"stream": "new_and_old_images"}}, "window",
         (("window", "update", "stream off -> NEW_AND_OLD_IMAGES"),), real_plan=True),
    Case("ttl_off", {"table": {"ttl_attribute": None}}, "window", (("window", "update", "TTL expiresAt -> off"),),
         real_plan=True),
    Case("table_class", {"table": {"table_class": "standard_infrequent_access"}}, "window",
         (("window", "update", "class STANDARD -> STANDARD_INFREQUENT_ACCESS"),), real_plan=True),
    Case("customer_managed_key", {"table": {"encryption": "customer_managed"}}, "window",
         (("window", "update", "encryption AWS owned key -> customer managed key"),), frozenset({"encryption keys"}),
         real_plan=True),
    Case("pitr_off_in_production", {"production": True, "table": {"point_in_time_recovery": False}}, "blocked",
         (("blocked", "update", "point-in-time recovery off"),), real_plan=True),
    Case("pitr_off_outside_production", {"table": {"point_in_time_recovery": False}}, "blocked",
         (("blocked", "update", "point-in-time recovery off"),)),
    Case("deletion_protection_off_in_production", {"production": True, "table": {"deletion_protection": False}},
         "blocked", (("blocked", "update", "deletion protection off"),)),
    Case("retag", {"tags": {"team": "checkout"}}, "safe", safe=frozenset({"tags", "alarms"})),
    Case("remove_gsi", {"access_patterns": {"order_by_id": None}}, "window", (("window", "delete", "GSI GSI1"),),
         frozenset({"autoscaling", "alarms", "contributor insights"}), real_plan=True),
    Case("add_two_gsis", {"access_patterns": {"orders_by_status": ORDERS_BY_STATUS,
                                              "customers_by_email": CUSTOMERS_BY_EMAIL}}, "window",
         # Customer joins the overloaded GSI1 (its projection grows: a rebuild) and Order needs GSI2.
         (("window", "create", "GSI GSI2"), ("window", "replace", "GSI GSI1")), warns=True,
         data=(("Customer", "GSI1", False), ("Order", "GSI2", False))),
    Case("add_local_index", LSI, "blocked", (("blocked", "replace", "table shop_main"),),
         data=(("Order", "LSI1", False),), real_plan=True),
    Case("contributor_insights_off", {"contributor_insights": "off"}, "safe",
         safe=frozenset({"contributor insights"})),
    # The gate judges it by the window in force before it (the state's), not by the one it brings.
    Case("move_maintenance_window", {"maintenance_window": {"start": "03:00"}}, "window",
         (("window", "update", "change window"),), warns=True, real_plan=True),
    Case("widen_maintenance_window", {"maintenance_window": {"start": "00:00", "duration": "24h"},
                                      "table": {"stream": "new_and_old_images"}}, "window",
         (("window", "update", "change window"), ("window", "update", "stream off -> NEW_AND_OLD_IMAGES")),
         warns=True, real_plan=True),
]
