"""One least-privilege IAM policy per access pattern, for the application's roles (tenant blueprints).

Each policy allows the pattern's own request (GetItem, BatchGetItem, Query or Scan on its table or index, and the
follow-up BatchGetItem on the table), confined with DynamoDB's condition keys
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html; on a
global secondary index, LeadingKeys is the index's partition key):

- `dynamodb:LeadingKeys`: the partition key must start as the pattern's key template does, up to its first
  placeholder after the tenant, with the caller's tenant in the tenant's place: the principal tag named like
  the tenant attribute
  (`aws:PrincipalTag/tenantId`, set as a session tag when the application assumes its role);
- `dynamodb:Attributes` and `dynamodb:Select`: only the attributes the pattern returns (a count:
  `Select: COUNT` only). A pattern that returns every attribute is not confined by attribute.
"""

from __future__ import annotations

from tablewright.blueprint.templates import SEPARATOR, KeyTemplate
from tablewright.constructs.naming import logical_id
from tablewright.constructs.resources import IamPolicyDocumentData, PolicyCondition, PolicyStatement
from tablewright.constructs.table import table_ref
from tablewright.constructs.terraform import Block, data_source
from tablewright.design.cookbook import read_attributes
from tablewright.design.design import TABLE, QueryPlan, TableDesign

ACCESS_OUTPUT = "access_policies"


def tenant_tag(tenant: str) -> str:
    """The caller's tenant in a policy: `&{...}` is aws_iam_policy_document's spelling of an IAM policy
    variable `${...}` that Terraform does not interpolate."""
    return "&{aws:PrincipalTag/" + tenant + "}"


def leading_keys(pk: KeyTemplate, tenant: str) -> list[str] | None:
    """The partition keys a tenant may read (a StringLike pattern): the tenant and the literal text that follows
    it in the template, then anything (`acme#ISSUE#*`); None when the key does not start with the tenant.
    Tenant ids hold no separator or wildcard (checked when the blueprint loads), so `acme#*` matches none of
    `acme2`'s keys."""
    if pk.segments[0].attribute != tenant:
        return None
    literals = []
    for segment in pk.segments[1:]:
        if segment.literal is None:
            break
        literals.append(segment.literal)
    lead = SEPARATOR.join([tenant_tag(tenant), *literals])
    return [lead + SEPARATOR + "*"] if 1 + len(literals) < len(pk.segments) else [lead]


def _conditions(design: TableDesign, plan: QueryPlan, pks: list[KeyTemplate],
                attributes: tuple[str, ...] | None) -> list[PolicyCondition]:
    tenant = design.blueprint.tenant
    assert tenant is not None
    conditions = []
    # Never on a Scan: it sends no partition key, and ForAllValues over no values is true.
    leading = [leading_keys(pk, tenant) for pk in pks] if plan.operation != "Scan" else [None]
    if None not in leading:
        values = sorted({value for found in leading if found for value in found})
        conditions.append(PolicyCondition(test="ForAllValues:StringLike", variable="dynamodb:LeadingKeys",
                                          values=values))
    if plan.count:
        conditions.append(PolicyCondition(test="StringEquals", variable="dynamodb:Select", values=["COUNT"]))
    elif attributes is not None:
        conditions += [PolicyCondition(test="ForAllValues:StringEquals", variable="dynamodb:Attributes",
                                       values=list(attributes)),
                       PolicyCondition(test="StringEqualsIfExists", variable="dynamodb:Select",
                                       values=["SPECIFIC_ATTRIBUTES"])]
    return conditions


def _read_attributes(design: TableDesign, plan: QueryPlan) -> tuple[str, ...] | None:
    """What the request may name: what it projects, what its filter reads, and every key attribute of the
    table and the index (the generated clients project them, to end a page on any item)."""
    pattern = design.blueprint.access_patterns[plan.pattern]
    if pattern.returns is None:
        return None
    filtered = {*pattern.filter, *([plan.hides_expired] if plan.hides_expired else [])}
    return tuple(sorted({*read_attributes(plan), *filtered, *plan.table_keys.names, *plan.keys.names}))


def policy_statements(design: TableDesign, plan: QueryPlan) -> list[PolicyStatement]:
    table_arn = table_ref(design, "arn")
    resource = table_arn if plan.index == TABLE else f"{table_arn}/index/{plan.index}"
    statements = [PolicyStatement(sid="Read", actions=[f"dynamodb:{plan.sent_operation}"], resources=[resource],
                                  condition=_conditions(design, plan, [plan.shape.pk],
                                                        _read_attributes(design, plan)) or None)]
    if plan.follow_up is not None:
        table_pks = [design.shapes[entity][TABLE].pk for entity in plan.entities]
        fetched = tuple(sorted({*plan.follow_up.attributes, *plan.table_keys.names}))
        statements.append(PolicyStatement(sid="FollowUp", actions=["dynamodb:BatchGetItem"], resources=[table_arn],
                                          condition=_conditions(design, plan, table_pks, fetched) or None))
    return statements


def policy_address(design: TableDesign, pattern: str) -> str:
    return logical_id(design.blueprint.blueprint, "access", pattern)


def access_policies(design: TableDesign) -> list[Block]:
    """The policy documents of a tenant blueprint's patterns; none without `tenant`."""
    if design.blueprint.tenant is None:
        return []
    return [data_source(IamPolicyDocumentData(statement=policy_statements(design, plan)),
                        policy_address(design, plan.pattern))
            for plan in sorted(design.plans, key=lambda plan: plan.pattern)]


def access_output(design: TableDesign) -> dict[str, str] | None:
    """The `access_policies` output: each pattern's policy JSON, for the application's roles."""
    if design.blueprint.tenant is None:
        return None
    address = IamPolicyDocumentData.terraform_type
    return {plan.pattern: f"${{data.{address}.{policy_address(design, plan.pattern)}.json}}"
            for plan in sorted(design.plans, key=lambda plan: plan.pattern)}
