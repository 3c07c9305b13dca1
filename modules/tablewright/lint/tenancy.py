"""Tenant isolation (`tenant:`): a pattern must read one tenant's items, or no policy can confine it."""

from __future__ import annotations

from collections.abc import Iterator

from tablewright.lint.findings import Context, Issue, rule


@rule("TW701", "Access pattern not scoped to one tenant",
      "Bind the tenant with `=` in the pattern's `where`; a pattern that must read across tenants (an operators' "
      "report) says so with `tenants: all` and a `reason:`, and its policy then reaches every tenant. TW701 cannot "
      "be silenced in `lint.ignore`: it would silence every pattern, those a later blueprint adds included.",
      why="In a tenant blueprint, a pattern whose key condition does not bind the tenant (or a Scan) reads every "
          "tenant's items, and its IAM policy cannot confine it with `dynamodb:LeadingKeys`",
      severity="error")
def pattern_not_scoped_to_one_tenant(ctx: Context) -> Iterator[Issue]:
    blueprint = ctx.design.blueprint
    tenant = blueprint.tenant
    if tenant is None:
        return
    for plan in ctx.design.plans:
        pattern = blueprint.access_patterns[plan.pattern]
        if pattern.tenants == "all" or (plan.operation != "Scan" and pattern.where.get(tenant) == "="):
            continue
        how = "a Scan of the whole table" if plan.operation == "Scan" else f"no `{tenant}: \"=\"` in `where`"
        yield Issue(
            "error",
            f"`{plan.pattern}` reads {', '.join(plan.entities)} of every tenant ({how}): its policy cannot "
            f"confine a role to one tenant",
            f"add `{tenant}: \"=\"` to `where`, or write `tenants: all` and a `reason:` if it must read across "
            "tenants",
            ("access_patterns", plan.pattern, "where"),
        )
