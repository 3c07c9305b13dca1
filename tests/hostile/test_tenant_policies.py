"""The IAM policies of a tenant blueprint, as Terraform renders them, judged by an IAM policy simulator.

`synth` writes each access pattern's policy as an `aws_iam_policy_document`; `terraform validate` accepts the
stack, and the real provider renders the documents offline (a configuration of only those data sources, the
table's ARN filled in). @cloud-copilot/iam-simulate (tests/support/evaluate_policy.mjs) then evaluates requests built
from each pattern's own cookbook request: the caller's tenant gets in, another tenant's key does not.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.blueprint.templates import KeyTemplate
from tablewright.design.cookbook import follow_up_request, request
from tablewright.design.design import TABLE, QueryPlan
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.conftest import ROOT
from tests.support.terraform_support import missing_tool, terraform, terraform_environment, validate

pytestmark = pytest.mark.terraform

BLUEPRINT = ROOT / "tests/data/blueprints/tenants.yaml"
EVALUATE = ROOT / "tests/support/evaluate_policy.mjs"
TABLE_ARN = "arn:aws:dynamodb:us-east-1:111122223333:table/tenants_main"
OURS, THEIRS = "acme", "globex"
CROSS_TENANT_INDEX = "GSI1"  # every_open_issue's: keys without the tenant


@pytest.fixture(scope="module")
def design():
    return build_stacks([load_blueprint(BLUEPRINT)])[0].design


@pytest.fixture(scope="module")
def policies(tmp_path_factory, design) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("tenants")
    env = terraform_environment(root)
    [written] = synthesize(build_stacks([load_blueprint(BLUEPRINT)]), root / "out")
    validate(written.parent, env)
    stack = json.loads(written.read_text())
    documents = {name: body for name, body in stack["data"]["aws_iam_policy_document"].items() if "_access_" in name}
    render = root / "render"
    render.mkdir()
    # Only the policy documents, with the table's ARN in place of its reference: rendered by the provider
    # without AWS (no resource, no credentials checked).
    (render / "main.tf.json").write_text(json.dumps({
        "terraform": {"required_providers": {"aws": stack["terraform"]["required_providers"]["aws"]}},
        "provider": {"aws": [{"region": "us-east-1", "access_key": "test", "secret_key": "test",
                              "skip_credentials_validation": True, "skip_requesting_account_id": True,
                              "skip_metadata_api_check": True}]},
        "data": {"aws_iam_policy_document": json.loads(
            json.dumps(documents).replace("${aws_dynamodb_table.tenants.arn}", TABLE_ARN))},
        "output": {"policies": {"value": stack["output"]["access_policies"]["value"]}},
    }))
    terraform(["init", "-input=false"], render, env)
    terraform(["apply", "-auto-approve", "-input=false"], render, env)
    rendered = json.loads(terraform(["output", "-json", "policies"], render, env).stdout)
    return {pattern: json.loads(text) for pattern, text in rendered.items()}


def decide(policy: dict[str, Any], requests: list[dict[str, Any]]) -> list[str]:
    if shutil.which("node") is None or not (ROOT / "node_modules/@cloud-copilot/iam-simulate").is_dir():
        missing_tool("Node.js and @cloud-copilot/iam-simulate (`npm ci`) evaluate the policies")
    done = subprocess.run(["node", str(EVALUATE)], input=json.dumps({"policy": policy, "requests": requests}),
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def partition_key(pk: KeyTemplate, tenant: str) -> str:
    """A partition key of the template, `tenant`'s, with `x` for every other value."""
    return pk.render({s.placeholder: tenant if s.attribute == "tenantId" else "x" for s in pk.segments
                      if s.literal is None})


def _attributes(body: dict[str, Any]) -> list[str]:
    names = body.get("ExpressionAttributeNames", {})
    projection = body.get("ProjectionExpression")
    return [names[name.strip()] for name in projection.split(",")] if projection else []


def read_request(plan: QueryPlan, tenant: str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """The IAM request of the pattern's own cookbook request, for `tenant`'s partition key."""
    body = request(plan, "tenants_main")
    if plan.batch:
        body = body["RequestItems"]["tenants_main"]
    attributes = _attributes(body) + list(extra)
    select = body.get("Select") or ("SPECIFIC_ATTRIBUTES" if attributes else "ALL_ATTRIBUTES")
    resource = TABLE_ARN if plan.index == TABLE else f"{TABLE_ARN}/index/{plan.index}"
    context: dict[str, Any] = {"aws:PrincipalTag/tenantId": OURS, "dynamodb:Select": select,
                               "dynamodb:LeadingKeys": [partition_key(plan.shape.pk, tenant)]}
    if attributes:
        context["dynamodb:Attributes"] = attributes
    return {"action": f"dynamodb:{plan.sent_operation}", "resource": resource, "context": context}


@pytest.mark.parametrize("pattern", ["issue", "my_issues", "project_titles", "open_count", "project_board",
                                     "issue_titles"])
def test_a_pattern_reads_its_callers_tenant_and_no_other(pattern, design, policies):
    plan = design.plan(pattern)
    ours = read_request(plan, OURS)
    # Tenants whose ids start as ours does, or name a literal of the keys: none is matched by `acme#*`.
    theirs = [read_request(plan, tenant) for tenant in (THEIRS, OURS + "2", "project", "issue")]
    assert design.plan("every_open_issue").index == CROSS_TENANT_INDEX
    elsewhere = {**ours, "resource": f"{TABLE_ARN}/index/{CROSS_TENANT_INDEX}"}
    written = {**ours, "action": "dynamodb:PutItem", "resource": TABLE_ARN}
    untagged = {**ours, "context": {k: v for k, v in ours["context"].items() if k != "aws:PrincipalTag/tenantId"}}
    assert decide(policies[pattern], [ours, *theirs, elsewhere, written, untagged]) == [
        "Allowed"] + ["ImplicitlyDenied"] * 7


def test_a_batch_with_one_key_of_another_tenant_is_denied(design, policies):
    plan = design.plan("issue_titles")
    mixed = read_request(plan, OURS)
    ours = mixed["context"]["dynamodb:LeadingKeys"]
    mixed["context"] = {**mixed["context"], "dynamodb:LeadingKeys": [*ours, partition_key(plan.shape.pk, THEIRS)]}
    assert decide(policies["issue_titles"], [read_request(plan, OURS), mixed]) == ["Allowed", "ImplicitlyDenied"]


def test_only_the_returned_attributes_may_be_read(design, policies):
    plan = design.plan("my_issues")
    more = read_request(plan, OURS, extra=("assignee",))
    everything = read_request(plan, OURS)
    everything["context"] = {**everything["context"], "dynamodb:Select": "ALL_ATTRIBUTES"}
    del everything["context"]["dynamodb:Attributes"]
    assert decide(policies["my_issues"], [more, everything]) == ["ImplicitlyDenied", "ImplicitlyDenied"]


def test_a_count_may_only_count(design, policies):
    plan = design.plan("open_count")
    items = read_request(plan, OURS)
    items["context"] = {**items["context"], "dynamodb:Select": "ALL_PROJECTED_ATTRIBUTES"}
    assert decide(policies["open_count"], [items]) == ["ImplicitlyDenied"]


def test_the_follow_up_fetches_the_callers_tenant_only(design, policies):
    plan = design.plan("project_titles")
    assert plan.follow_up is not None
    table_pk = design.shapes["Issue"][TABLE].pk
    fetched = follow_up_request(plan, "tenants_main")["RequestItems"]["tenants_main"]
    def batch_get(tenant: str) -> dict[str, Any]:
        return {"action": "dynamodb:BatchGetItem", "resource": TABLE_ARN,
                "context": {"aws:PrincipalTag/tenantId": OURS, "dynamodb:Attributes": _attributes(fetched),
                            "dynamodb:Select": "SPECIFIC_ATTRIBUTES",
                            "dynamodb:LeadingKeys": [partition_key(table_pk, tenant)]}}
    assert decide(policies["project_titles"], [batch_get(OURS), batch_get(THEIRS)]) == [
        "Allowed", "ImplicitlyDenied"]


def test_a_pattern_of_every_tenant_is_not_confined(design, policies):
    plan = design.plan("every_open_issue")
    assert decide(policies["every_open_issue"], [read_request(plan, OURS), read_request(plan, THEIRS)]) == [
        "Allowed", "Allowed"]


def test_the_evaluator_is_not_a_rubber_stamp(policies):
    """A policy without the LeadingKeys condition lets another tenant in: the simulator judges conditions."""
    loose = json.loads(json.dumps(policies["issue"]))
    for statement in loose["Statement"]:
        statement.pop("Condition", None)
    request = {"action": "dynamodb:GetItem", "resource": TABLE_ARN,
               "context": {"aws:PrincipalTag/tenantId": OURS, "dynamodb:LeadingKeys": [f"{THEIRS}#PROJECT#x"]}}
    assert decide(loose, [request]) == ["Allowed"]
    assert decide(policies["issue"], [request]) == ["ImplicitlyDenied"]
