"""Tenants (`tenant:`): every entity names its tenant, and every partition key leads with it.

A key that leads with the tenant is what `dynamodb:LeadingKeys` can confine a role to: the policies
`synth` writes match a partition key's text up to the tenant's value.
"""

from __future__ import annotations

from modules.blueprint.language import Blueprint, EntitySpec
from modules.blueprint.templates import parse_template
from modules.errors import BlueprintError, ErrorCode, FieldPath


def leads_with(text: str, tenant: str) -> bool:
    """Whether a partition-key template's first placeholder is the tenant (literal text may come before it)."""
    attributes = parse_template(text).attributes
    return bool(attributes) and attributes[0] == tenant


def check_tenant(blueprint: Blueprint) -> None:
    tenant = blueprint.tenant
    if tenant is None:
        return
    for name, entity in sorted(blueprint.entities.items()):
        _check_entity(tenant, name, entity)


def _check_entity(tenant: str, name: str, entity: EntitySpec) -> None:
    base: FieldPath = ("entities", name)
    spec = entity.attributes.get(tenant)
    if spec is None:
        raise BlueprintError(
            f"{name} has no `{tenant}`, the blueprint's tenant attribute", path=(*base, "attributes"),
            hint=f"declare `{tenant}: string` on {name}: every item belongs to one tenant",
            code=ErrorCode.MISSING_FIELD)
    if spec.type != "string" or spec.is_optional:
        raise BlueprintError(
            f"`{tenant}` of {name} is {'optional' if spec.is_optional else 'a ' + spec.type}: the tenant must be a "
            "string every item has", path=(*base, "attributes", tenant),
            hint=f"declare `{tenant}: string`", code=ErrorCode.CONTRADICTION)
    keys = [(("key", "pk"), entity.key.pk)] + [(("index_keys", index, "pk"), spec_.pk)
                                                for index, spec_ in sorted(entity.index_keys.items())]
    for path, text in keys:
        if not leads_with(text, tenant):
            raise BlueprintError(
                f"partition key `{text}` of {name} does not lead with `{tenant}`: `dynamodb:LeadingKeys` cannot "
                "confine a role to one tenant's items", path=(*base, *path),
                hint=f"put the tenant first, e.g. `{_led(text, tenant)}`", code=ErrorCode.CONTRADICTION)


def _led(text: str, tenant: str) -> str:
    return "{" + tenant + "}#" + text.replace("{" + tenant + "}#", "").replace("#{" + tenant + "}", "")
