"""The tables of an environment's stacks, created in the local AWS as synth declares them: key schema, attribute
definitions, GSIs with their projections, TTL, streams and tags (the `tablewright:design` tag included, so the
generated clients' `check_design()` passes), with verify's sample items when asked.

The table's Terraform is computed as synth computes it (`table_terraform`: plain data, no jsii), then turned into
a CreateTable request as verify does (`create_table_request`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tablewright.constructs.assembly import table_terraform
from tablewright.errors import ErrorCode, TablewrightError
from tablewright.stacks.stack import Stack
from tablewright.verify.runner import write_samples
from tablewright.verify.samples import generate_samples
from tablewright.verify.tables import create_table_request, terraform_table

MAX_ITEMS = 1000  # sample items per entity: verify's samples hold fewer for most entities anyway


@dataclass(frozen=True)
class CreatedTable:
    blueprint: str
    stack: str
    table: str
    region: str
    items: int  # sample items written


def table_request(table: dict[str, Any]) -> dict[str, Any]:
    """The CreateTable request of a synthesized `aws_dynamodb_table`, with its stream."""
    request = create_table_request({"resource": {"aws_dynamodb_table": {"table": table}}})
    if table.get("stream_enabled"):
        request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": table["stream_view_type"]}
    return request


def time_to_live(table: dict[str, Any]) -> str | None:
    """The TTL attribute of a synthesized `aws_dynamodb_table`, if it has one."""
    ttl = table.get("ttl") or {}
    return str(ttl["attribute_name"]) if ttl.get("enabled") else None


def region_of(stack: Stack, default: str) -> str:
    return stack.design.blueprint.region or default


def create_tables(client_of: Any, stacks: Sequence[Stack], items: int = 0, seed: int = 7,
                  default_region: str = "us-east-1") -> list[CreatedTable]:
    """Create every stack's table (`client_of(region)`: a DynamoDB client of the emulator in that region), each
    with up to `items` of verify's sample items per entity."""
    created: list[CreatedTable] = []
    for stack in stacks:
        region = region_of(stack, default_region)
        client = client_of(region)
        table = terraform_table(table_terraform(stack, stack.name))
        request = table_request(table)
        if any((done.table, done.region) == (request["TableName"], region) for done in created):
            raise TablewrightError(f"two stacks declare the table {request['TableName']} in {region} (the second: "
                                   f"{stack.name})", code=ErrorCode.NAMING,
                                   hint="give each blueprint a table name of its own (`table.name`, `naming.table`)")
        client.create_table(**request)
        attribute = time_to_live(table)
        if attribute:
            client.update_time_to_live(TableName=request["TableName"],
                                       TimeToLiveSpecification={"Enabled": True, "AttributeName": attribute})
        samples = sample_items(stack, items, seed)
        write_samples(client, request["TableName"], samples)
        created.append(CreatedTable(stack.design.blueprint.blueprint, stack.name, request["TableName"], region,
                                    len(samples)))
    return created


def sample_items(stack: Stack, per_entity: int, seed: int) -> list[Any]:
    """The first `per_entity` of verify's samples of each entity."""
    if per_entity <= 0:
        return []
    taken: dict[str, int] = {}
    chosen = []
    for sample in generate_samples(stack.design, seed):
        if taken.get(sample.entity, 0) < per_entity:
            taken[sample.entity] = taken.get(sample.entity, 0) + 1
            chosen.append(sample)
    return chosen
