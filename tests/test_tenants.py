"""Tenants (`tenant:`): partition keys lead with the tenant, unscoped patterns are reported, and each
pattern's IAM policy confines it with `dynamodb:LeadingKeys` (evaluated in tests/test_tenant_policies.py)."""

from __future__ import annotations

import textwrap

import pytest

from modules.blueprint.load import load_blueprint
from modules.constructs.access import access_output, policy_statements
from modules.stacks.stack import build_stacks
from tests.conftest import ROOT

TENANTS = ROOT / "tests/blueprints/tenants.yaml"


def _design(path=TENANTS):
    return build_stacks([load_blueprint(path)])[0].design


def test_planned_partition_keys_lead_with_the_tenant():
    design = _design()
    gsi_keys = {pattern: design.plan(pattern).shape.pk.text for pattern in ("my_issues", "project_titles")}
    assert gsi_keys == {"my_issues": "ISSUE#{tenantId}#{assignee}#{status}",
                        "project_titles": "ISSUE#{tenantId}#{status}"}
    # The cross-tenant pattern gets an index of its own: a tenant's reads never share its key.
    assert design.plan("every_open_issue").index not in {design.plan(p).index for p in gsi_keys}


def test_each_pattern_gets_a_policy_confined_to_the_callers_tenant():
    design = _design()
    [read] = policy_statements(design, design.plan("my_issues"))
    assert read.actions == ["dynamodb:Query"]
    assert read.resources == ["${aws_dynamodb_table.tenants.arn}/index/GSI2"]
    conditions = {c.variable: (c.test, c.values) for c in read.condition or []}
    assert conditions["dynamodb:LeadingKeys"] == ("ForAllValues:StringLike", ["ISSUE#&{aws:PrincipalTag/tenantId}#*"])
    assert conditions["dynamodb:Attributes"] == ("ForAllValues:StringEquals", [
        "GSI2PK", "GSI2SK", "PK", "SK", "issueId", "status", "title"])
    assert conditions["dynamodb:Select"] == ("StringEqualsIfExists", ["SPECIFIC_ATTRIBUTES"])
    # The keys-only index lacks `title`: a BatchGetItem on the table, confined by the table's key.
    query, follow_up = policy_statements(design, design.plan("project_titles"))
    assert query.resources == ["${aws_dynamodb_table.tenants.arn}/index/GSI3"]
    assert follow_up.actions == ["dynamodb:BatchGetItem"] and follow_up.resources == [
        "${aws_dynamodb_table.tenants.arn}"]
    assert follow_up.condition[0].values == ["&{aws:PrincipalTag/tenantId}#*"]
    [count] = policy_statements(design, design.plan("open_count"))
    assert {c.variable: c.values for c in count.condition}["dynamodb:Select"] == ["COUNT"]
    # A pattern lint was told may read every tenant has no LeadingKeys condition.
    [dashboard] = policy_statements(design, design.plan("every_open_issue"))
    assert "dynamodb:LeadingKeys" not in {c.variable for c in dashboard.condition or []}
    assert sorted(access_output(design)) == sorted(design.blueprint.access_patterns)


def test_blueprints_without_tenants_get_no_policies():
    assert access_output(build_stacks([load_blueprint(ROOT / "blueprints/orders.yaml", "dev")])[0].design) is None


def test_a_pattern_of_every_tenant_is_an_error(write_blueprint, run_cli):
    text = TENANTS.read_text().replace("  ignore: {TW701:", "  ignore: {TW999:")
    code, out, _ = run_cli("lint", write_blueprint(text))
    assert code == 1
    assert ("error TW701: `every_open_issue` reads Issue of every tenant (no `tenantId: \"=\"` in `where`): its "
            "policy cannot confine a role to one tenant") in out


@pytest.mark.parametrize("old, new, words", [
    ("    attributes: {tenantId: string, projectId: string, name: string}",
     "    attributes: {projectId: string, name: string}", "Project has no `tenantId`, the blueprint's tenant"),
    ("      tenantId: string\n      issueId", "      tenantId: {type: string, optional: true}\n      issueId",
     "`tenantId` of Issue is optional: the tenant must be a string every item has"),
    ('key: {pk: "{tenantId}#PROJECT#{projectId}", sk: "PROJECT"}', 'key: {pk: "PROJECT#{projectId}", sk: "PROJECT"}',
     "partition key `PROJECT#{projectId}` of Project does not lead with `tenantId`"),
])
def test_entities_that_do_not_name_their_tenant_first_are_refused(old, new, words, write_blueprint, run_cli):
    text = TENANTS.read_text()
    assert old in text
    code, out, err = run_cli("explain", write_blueprint(text.replace(old, new)))
    assert code == 2 and out == "" and "Traceback" not in err
    assert words in err, err


def test_the_fix_puts_the_tenant_first(write_blueprint, run_cli):
    text = TENANTS.read_text().replace('key: {pk: "{tenantId}#PROJECT#{projectId}", sk: "PROJECT"}',
                                       'key: {pk: "PROJECT#{projectId}#{tenantId}", sk: "PROJECT"}')
    code, _, err = run_cli("explain", write_blueprint(textwrap.dedent(text)))
    assert code == 2 and "put the tenant first, e.g. `{tenantId}#PROJECT#{projectId}`" in err
