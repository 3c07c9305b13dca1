"""Tenants (`tenant:`): every entity names its tenant, and every partition key starts with it.

A partition key that starts with the tenant's value, followed by the separator or nothing, is what
`dynamodb:LeadingKeys` can confine a role to: the policies `synth` writes match `<tenant>` or
`<tenant>#*`. That holds only when no tenant id contains the separator or a StringLike wildcard (a
tenant `acme` would otherwise match `acme#x`'s keys), and when no literal comes before the tenant (a
tenant named like that literal would match every tenant's keys after it).
"""

from __future__ import annotations

import re

from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language import AttributeSpec, Blueprint, EntitySpec
from tablewright.blueprint.templates import SEPARATOR, parse_template
from tablewright.errors import BlueprintError, ErrorCode, FieldPath

FORBIDDEN = (SEPARATOR, "*", "?")  # the key separator and StringLike's wildcards (the policies' LeadingKeys)
TENANT_PATTERN = "^[A-Za-z0-9_.-]+$"


def leads_with(text: str, tenant: str) -> bool:
    """Whether a partition-key template starts with the tenant placeholder (nothing before it). A malformed
    template is reported by the key checks, with its fix."""
    try:
        return parse_template(text).segments[0].attribute == tenant
    except Invalid:
        return True


def check_tenant(blueprint: Blueprint) -> None:
    tenant = blueprint.tenant
    if tenant is None:
        _check_no_tenant(blueprint)
        return
    if "TW701" in blueprint.lint.ignore:
        raise BlueprintError(
            "TW701 cannot be silenced for the whole blueprint: every pattern it silenced would get a policy "
            "reaching every tenant", path=("lint", "ignore", "TW701"),
            hint="remove it, and write `tenants: all` with a `reason:` on each pattern that must read across "
                 "tenants", code=ErrorCode.CONTRADICTION)
    for name, entity in sorted(blueprint.entities.items()):
        _check_entity(tenant, name, entity)
    for name, pattern in sorted(blueprint.access_patterns.items()):
        if pattern.tenants == "all" and pattern.where.get(tenant) == "=":
            raise BlueprintError(
                f"`{name}` binds `{tenant}` and says `tenants: all`", path=("access_patterns", name, "tenants"),
                hint="remove `tenants: all`: the pattern reads one tenant", code=ErrorCode.CONTRADICTION)
        if pattern.tenants == "all" and not (pattern.reason or "").strip():
            raise BlueprintError(
                f"`{name}` reads every tenant (`tenants: all`) without a reason",
                path=("access_patterns", name, "reason"),
                hint="say why in `reason:` (kept in reviews): its policy reaches every tenant's items",
                code=ErrorCode.MISSING_FIELD)


def _check_no_tenant(blueprint: Blueprint) -> None:
    for name, pattern in sorted(blueprint.access_patterns.items()):
        if pattern.tenants is not None:
            raise BlueprintError(
                f"`{name}` says `tenants: all`, but the blueprint has no `tenant`",
                path=("access_patterns", name, "tenants"),
                hint="remove it, or name the tenant attribute with a top-level `tenant:`",
                code=ErrorCode.CONTRADICTION)


def _check_entity(tenant: str, name: str, entity: EntitySpec) -> None:
    base: FieldPath = ("entities", name)
    spec = entity.attributes.get(tenant)
    if spec is None:
        raise BlueprintError(
            f"{name} has no `{tenant}`, the blueprint's tenant attribute", path=(*base, "attributes"),
            hint=f"declare `{tenant}: {{type: string, pattern: \"{TENANT_PATTERN}\"}}` on {name}: every item "
                 "belongs to one tenant", code=ErrorCode.MISSING_FIELD)
    _check_tenant_values(tenant, name, spec, (*base, "attributes", tenant))
    keys = [(("key", "pk"), entity.key.pk)] + [(("index_keys", index, "pk"), spec_.pk)
                                                for index, spec_ in sorted(entity.index_keys.items())]
    for path, text in keys:
        if not leads_with(text, tenant):
            raise BlueprintError(
                f"partition key `{text}` of {name} does not start with `{{{tenant}}}`: `dynamodb:LeadingKeys` "
                "cannot confine a role to one tenant's items", path=(*base, *path),
                hint=f"put the tenant first, e.g. `{_led(text, tenant)}`", code=ErrorCode.CONTRADICTION)


def _check_tenant_values(tenant: str, name: str, spec: AttributeSpec, path: FieldPath) -> None:
    if spec.type != "string" or spec.is_optional:
        raise BlueprintError(
            f"`{tenant}` of {name} is {'optional' if spec.is_optional else 'a ' + spec.type}: the tenant must be a "
            "string every item has", path=path, hint=f"declare `{tenant}: {{type: string, pattern: "
            f"\"{TENANT_PATTERN}\"}}`", code=ErrorCode.CONTRADICTION)
    admitted = _admitted(spec)
    if admitted is not None:
        raise BlueprintError(
            f"`{tenant}` of {name}: {admitted}, so one tenant's policy could match another tenant's keys",
            path=path, hint=f"declare `pattern: \"{TENANT_PATTERN}\"` (no '{SEPARATOR}', '*' or '?') and refuse "
                            "other tenant ids where they are created", code=ErrorCode.CONTRADICTION)


# A tenant `pattern:` proven to admit none of FORBIDDEN: one character class of letters, digits, `_` and `.`
# (ranges within one kind: `0-a` would span `?`), an optional final `-`, and a count of at least one.
SAFE_PATTERN = re.compile(r"\^\[((?:[a-z]-[a-z]|[A-Z]-[A-Z]|[0-9]-[0-9]|[A-Za-z0-9_.])+-?)\]"
                          r"(?:\+|\{[1-9][0-9]*(?:,[0-9]*)?\})\$")


def _admitted(spec: AttributeSpec) -> str | None:
    """How a tenant id may hold a forbidden character, or None when its `values` or `pattern` exclude them."""
    if spec.values:
        bad = sorted(value for value in spec.values if any(c in value for c in FORBIDDEN))
        return f"the value {bad[0]!r} holds one of {' '.join(FORBIDDEN)}" if bad else None
    if spec.pattern is None:
        return "it declares no `pattern:` or `values:`, so an id may hold " + " ".join(FORBIDDEN)
    if SAFE_PATTERN.fullmatch(spec.pattern) is None:
        return (f"its `pattern:` {spec.pattern!r} is not one character class of letters, digits, `_`, `.` and `-` "
                f"with a count, the form that proves no id holds {' '.join(FORBIDDEN)}")
    return None


def _led(text: str, tenant: str) -> str:
    placeholder = "{" + tenant + "}"
    rest = [part for part in text.split(SEPARATOR) if part != placeholder]
    return SEPARATOR.join([placeholder, *rest])
