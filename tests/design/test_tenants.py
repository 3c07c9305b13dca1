"""Tenants (`tenant:`): partition keys lead with the tenant, unscoped patterns are reported, and each
pattern's IAM policy confines it with `dynamodb:LeadingKeys` (evaluated in tests/hostile/test_tenant_policies.py)."""

from __future__ import annotations

import textwrap

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.constructs.access import access_output, policy_statements
from tablewright.stacks.stack import build_stacks
from tests.conftest import ROOT

TENANTS = ROOT / "tests/data/blueprints/tenants.yaml"


def _design(path=TENANTS):
    return build_stacks([load_blueprint(path)])[0].design


def test_planned_partition_keys_lead_with_the_tenant():
    design = _design()
    gsi_keys = {pattern: design.plan(pattern).shape.pk.text for pattern in ("my_issues", "project_titles")}
    assert gsi_keys == {"my_issues": "{tenantId}#ISSUE#{assignee}#{status}",
                        "project_titles": "{tenantId}#ISSUE#{status}"}
    # The cross-tenant pattern gets an index of its own: a tenant's reads never share its key.
    assert design.plan("every_open_issue").index not in {design.plan(p).index for p in gsi_keys}


def test_each_pattern_gets_a_policy_confined_to_the_callers_tenant():
    design = _design()
    [read] = policy_statements(design, design.plan("my_issues"))
    assert read.actions == ["dynamodb:Query"]
    assert read.resources == ["${aws_dynamodb_table.tenants.arn}/index/GSI2"]
    conditions = {c.variable: (c.test, c.values) for c in read.condition or []}
    assert conditions["dynamodb:LeadingKeys"] == ("ForAllValues:StringLike", ["&{aws:PrincipalTag/tenantId}#ISSUE#*"])
    assert conditions["dynamodb:Attributes"] == ("ForAllValues:StringEquals", [
        "GSI2PK", "GSI2SK", "PK", "SK", "issueId", "status", "title"])
    assert conditions["dynamodb:Select"] == ("StringEqualsIfExists", ["SPECIFIC_ATTRIBUTES"])
    # The keys-only index lacks `title`: a BatchGetItem on the table, confined by the table's key.
    query, follow_up = policy_statements(design, design.plan("project_titles"))
    assert query.resources == ["${aws_dynamodb_table.tenants.arn}/index/GSI3"]
    assert follow_up.actions == ["dynamodb:BatchGetItem"] and follow_up.resources == [
        "${aws_dynamodb_table.tenants.arn}"]
    assert follow_up.condition[0].values == ["&{aws:PrincipalTag/tenantId}#PROJECT#*"]
    [count] = policy_statements(design, design.plan("open_count"))
    assert {c.variable: c.values for c in count.condition}["dynamodb:Select"] == ["COUNT"]
    # A pattern that says it reads every tenant (`tenants: all`) has no LeadingKeys condition.
    [dashboard] = policy_statements(design, design.plan("every_open_issue"))
    assert "dynamodb:LeadingKeys" not in {c.variable for c in dashboard.condition or []}
    assert sorted(access_output(design)) == sorted(design.blueprint.access_patterns)


def test_blueprints_without_tenants_get_no_policies():
    assert access_output(build_stacks([load_blueprint(ROOT / "blueprints/orders.yaml", "dev")])[0].design) is None


CROSS_TENANT = """    tenants: all
    reason: the operators' dashboard reads every tenant
"""


def test_a_pattern_of_every_tenant_is_an_error(write_blueprint, run_cli):
    text = TENANTS.read_text()
    assert CROSS_TENANT in text
    code, out, _ = run_cli("lint", write_blueprint(text.replace(CROSS_TENANT, "")))
    assert code == 1
    assert ("error TW701: `every_open_issue` reads Issue of every tenant (no `tenantId: \"=\"` in `where`): its "
            "policy cannot confine a role to one tenant") in out
    code, out, _ = run_cli("lint", write_blueprint(text))
    assert code == 0 and "TW701" not in out


def test_a_scoped_read_never_uses_a_key_other_tenants_share(write_blueprint, run_cli, tmp_path):
    """Once the cross-tenant index is locked, a new pattern it could serve (its sort key is the tenant) gets a
    tenant-led key of its own: on that index its policy could not confine it."""
    text = TENANTS.read_text().replace("    order_by: assignee\n    returns: [issueId]\n    tenants: all",
                                       "    order_by: tenantId\n    returns: [issueId]\n    tenants: all")
    path = write_blueprint(text)
    assert run_cli("synth", path, "--out", tmp_path / "out")[0] == 0  # writes the design lock
    write_blueprint(text.replace("access_patterns:\n", "access_patterns:\n  by_status: {entity: Issue, where: "
                                 "{tenantId: \"=\", status: \"=\"}, returns: [issueId]}\n"))
    design = build_stacks([load_blueprint(path)])[0].design
    assert design.plan("every_open_issue").shape.pk.text == "ISSUE#{status}"
    assert design.plan("by_status").shape.pk.text.startswith("{tenantId}#ISSUE#")
    assert design.plan("by_status").index != design.plan("every_open_issue").index


@pytest.mark.parametrize("old, new, words", [
    ('    attributes: {tenantId: {type: string, pattern: "^[a-z0-9-]+$"}, projectId: string, name: string}',
     "    attributes: {projectId: string, name: string}", "Project has no `tenantId`, the blueprint's tenant"),
    ('      tenantId: {type: string, pattern: "^[a-z0-9-]+$"}\n', "      tenantId: {type: string, optional: true}\n",
     "`tenantId` of Issue is optional: the tenant must be a string every item has"),
    ('key: {pk: "{tenantId}#PROJECT#{projectId}", sk: "PROJECT"}', 'key: {pk: "PROJECT#{projectId}", sk: "PROJECT"}',
     "partition key `PROJECT#{projectId}` of Project does not start with `{tenantId}`"),
    # A literal before the tenant: a tenant named `PROJECT` would match every tenant's projects.
    ('key: {pk: "{tenantId}#PROJECT#{projectId}", sk: "PROJECT"}', 'key: {pk: "PROJECT#{tenantId}#{projectId}", '
     'sk: "PROJECT"}', "partition key `PROJECT#{tenantId}#{projectId}` of Project does not start with `{tenantId}`"),
    # Tenant ids that could hold the separator or a wildcard: `acme`'s `acme#*` would match `acme#x`'s keys.
    ('{tenantId: {type: string, pattern: "^[a-z0-9-]+$"}, projectId', '{tenantId: string, projectId',
     "`tenantId` of Project: it declares no `pattern:` or `values:`, so an id may hold # * ?"),
    # Patterns that admit a forbidden character: `****#*` would match every tenant's keys, `0-a` spans `?`.
    *[('{tenantId: {type: string, pattern: "^[a-z0-9-]+$"}, projectId', '{tenantId: {type: string, pattern: '
       f'"{pattern}"}}, projectId', f"`tenantId` of Project: its `pattern:` '{pattern}' is not one character class")
      for pattern in ("^[^#]+$", "^[a-z0-9*]{4,}$", "^[0-a]+$", "^[a-z]{3,}.*$", "^[a-z]*$")],
    # A malformed key is reported as such (no internal error from the tenant check).
    ('key: {pk: "{tenantId}#PROJECT#{projectId}", sk: "PROJECT"}', 'key: {pk: "{tenantId}#P{projectId}", '
     'sk: "PROJECT"}', "entities.Project.key.pk"),
    ('{tenantId: {type: string, pattern: "^[a-z0-9-]+$"}, projectId', '{tenantId: {type: string, values: [a, "b?"]}, '
     'projectId', "`tenantId` of Project: the value 'b?' holds one of # * ?"),
    ("    tenants: all\n    reason: the operators' dashboard reads every tenant\n", "    tenants: all\n",
     "`every_open_issue` reads every tenant (`tenants: all`) without a reason"),
    ("  issue: {entity: Issue, where:", "  issue: {tenants: all, reason: x, entity: Issue, where:",
     "`issue` binds `tenantId` and says `tenants: all`"),
    ("version: 1.0.0\n", "version: 1.0.0\nlint: {ignore: {TW701: the dashboard}}\n",
     "TW701 cannot be silenced for the whole blueprint"),
    ("version: 1.0.0\n", "version: 1.0.0\nenvironments: {dev: {tenant: projectId}}\n",
     "`tenant` cannot be set per environment"),
    ("tenant: tenantId\n", "", "`every_open_issue` says `tenants: all`, but the blueprint has no `tenant`"),
])
def test_entities_that_do_not_name_their_tenant_first_are_refused(old, new, words, write_blueprint, run_cli):
    text = TENANTS.read_text()
    assert old in text
    code, out, err = run_cli("explain", write_blueprint(text.replace(old, new)))
    assert code == 2 and out == "" and "Traceback" not in err
    assert words in err, err


def test_an_extending_blueprint_cannot_drop_or_change_the_tenant(write_blueprint, run_cli):
    write_blueprint(TENANTS.read_text(), "base.yaml")
    for value in ("null", "projectId"):
        code, _, err = run_cli("explain", write_blueprint(f"extends: base.yaml\ntenant: {value}\n", "child.yaml"))
        assert code == 2 and "`tenant` is `tenantId` in " in err and "base.yaml:6:" in err, err
    assert run_cli("explain", write_blueprint("extends: base.yaml\ntenant: tenantId\n", "child.yaml"))[0] == 0


def test_a_scoped_read_never_uses_an_index_a_lock_shares_with_cross_tenant_keys(write_blueprint, run_cli, tmp_path):
    """A lock written before `tenant:` holds GSI1 with a tenant-led key and a cross-tenant one: a tenant's read
    of GSI1 would reach every tenant's reports (a tenant named `REPORT`), so it gets an index of its own."""
    before = textwrap.dedent("""\
        blueprint: mixed
        version: 1.0.0
        table: {name: mixed_main}
        entities:
          Doc:
            attributes: {tenantId: {type: string, pattern: "^[A-Za-z0-9_.-]+$"}, docId: string, folder: string}
            key: {pk: "{tenantId}#DOC#{docId}", sk: "DOC"}
            index_keys: {GSI1: {pk: "{tenantId}#{folder}", sk: "{docId}"}}
          Report:
            attributes: {tenantId: {type: string, pattern: "^[A-Za-z0-9_.-]+$"}, reportId: string, kind: string,
                         status: string}
            key: {pk: "{tenantId}#REPORT#{reportId}", sk: "REPORT"}
        access_patterns:
          docs_in_folder: {entity: Doc, where: {tenantId: "=", folder: "="}, returns: [docId]}
          reports_by_kind: {entity: Report, where: {kind: "=", status: "="}, returns: [reportId]}
        """)
    path = write_blueprint(before)
    assert run_cli("synth", path, "--out", tmp_path / "out")[0] == 0
    design = build_stacks([load_blueprint(path)])[0].design
    assert (design.plan("docs_in_folder").index, design.plan("reports_by_kind").index) == ("GSI1", "GSI1")
    after = before.replace("table:", "tenant: tenantId\ntable:").replace(
        '    index_keys: {GSI1: {pk: "{tenantId}#{folder}", sk: "{docId}"}}\n', "").replace(
        "returns: [reportId]}", "returns: [reportId], tenants: all, reason: the operators' report}")
    write_blueprint(after)
    design = build_stacks([load_blueprint(path)])[0].design
    assert design.plan("reports_by_kind").index == "GSI1"
    scoped = design.plan("docs_in_folder")
    assert scoped.index != "GSI1" and scoped.shape.pk.text.startswith("{tenantId}#")


def test_the_fix_puts_the_tenant_first(write_blueprint, run_cli):
    text = TENANTS.read_text().replace('key: {pk: "{tenantId}#PROJECT#{projectId}", sk: "PROJECT"}',
                                       'key: {pk: "PROJECT#{projectId}#{tenantId}", sk: "PROJECT"}')
    code, _, err = run_cli("explain", write_blueprint(textwrap.dedent(text)))
    assert code == 2 and "put the tenant first, e.g. `{tenantId}#PROJECT#{projectId}`" in err
    fixed = text.replace("PROJECT#{projectId}#{tenantId}", "{tenantId}#PROJECT#{projectId}")
    assert run_cli("explain", write_blueprint(fixed))[0] == 0
