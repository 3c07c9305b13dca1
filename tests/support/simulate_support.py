"""Blueprints the simulate tests share (tests/simulate/): a fleet whose status GSI is hot, a flash sale an on-demand
table cannot serve, provisioned capacity for it; and the stack of a blueprint text."""

from __future__ import annotations

from tablewright.blueprint.load import load_blueprint
from tablewright.stacks.stack import build_stack

FLEET = """\
blueprint: fleet
version: 1.0.0
region: us-east-1
table: {{name: fleet}}
entities:
  Device:
    attributes:
      deviceId: string
      status: {{type: string, values: [ONLINE, OFFLINE, UPDATING]}}
    key: {{pk: "DEVICE#{{deviceId}}", sk: "DEVICE"}}
    writes: {{inserts: 2000}}
    item_count: 1000000
access_patterns:
  devices_by_status:
    entity: Device
    where: {{status: "="}}
    limit: 50
    rps: 5
{extra}"""


ON_DEMAND_SALE = """\
blueprint: shop
version: 1.0.0
region: us-east-1
table: {name: shop}
traffic: {peak_factor: 1}
entities:
  Order:
    attributes: {orderId: string}
    key: {pk: "ORDER#{orderId}", sk: "ORDER"}
    writes: {inserts: 10}
    item_count: 1000
    traffic:
      events: [{name: flash-sale, start: "18:00", duration: 10m, rate: 10000}]
access_patterns:
  order_by_id: {entity: Order, where: {orderId: "="}, rps: 1}
"""
PROVISIONED = ("table: {name: shop, billing: provisioned, capacity: {read: {min: 5, max: 100}, "
               "write: {min: 5, max: 40000}}}")


def stack_of(write_blueprint, text: str, name: str = "blueprint.yaml"):
    return build_stack(load_blueprint(write_blueprint(text, name)))
