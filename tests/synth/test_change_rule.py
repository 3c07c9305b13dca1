"""The change rule: CloudTrail samples against the synthesized rule's event pattern (moto's EventBridge
pattern matcher, in-process), what `explain` says it watches, and the trail a stack can create."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from moto.events.models import EventPattern

from tablewright.blueprint.load import load_blueprint
from tablewright.monitoring.changes import AUTOSCALER_ROLE, RESOURCE_EVENTS, TABLE_EVENTS, event_pattern, trail_name
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.conftest import BUNDLED

SAMPLES = Path(__file__).parents[1] / "data" / "cloudtrail"
# Every sample (tests/data/cloudtrail/README.md says where each shape comes from) and whether the rule of
# the table prod-crm_main must report it.
EXPECTED = {
    "autoscaler-updatetable": False,  # Application Auto Scaling scaling the table: never a page
    "autoscaler-updatetable-gsi": False,  # ... or one of its GSIs
    "autoscaler-describetable": False,
    "human-updatetable-by-name": True,
    "human-updatetable-by-arn": True,  # an IAM user, passing the table's ARN as TableName
    "console-updatetable-name-in-response-only": True,
    "tagresource": True,
    "putresourcepolicy-on-stream": True,
    "deletetable": True,  # the root user
    "other-table-updatetable": False,
    "other-table-tagresource-by-arn": False,
}


def sample(name: str) -> dict:
    return json.loads((SAMPLES / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def crm_prod(tmp_path_factory) -> dict:
    [written] = synthesize(build_stacks([load_blueprint(BUNDLED[0], "prod")]), tmp_path_factory.mktemp("rule") / "out")
    return json.loads(written.read_text())


def test_the_synthesized_rule_matches_exactly_the_changes_people_make(crm_prod):
    rule = crm_prod["resource"]["aws_cloudwatch_event_rule"]["crm_changes"]
    pattern = EventPattern.load(rule["event_pattern"])
    assert sorted(path.stem for path in SAMPLES.glob("*.json")) == sorted(EXPECTED)
    assert {name: pattern.matches_event(sample(name)) for name in EXPECTED} == EXPECTED


def test_the_autoscaler_is_left_out_by_its_role_and_nothing_else():
    """The same pattern without its caller clause reports the autoscaler's UpdateTable: the clause is what
    keeps it out (and the matcher really evaluates it). Keeping the clause, a person's call made through a
    role of the same name outside the service-linked path still matches."""
    pattern = event_pattern("prod-crm_main")
    assert not EventPattern.load(json.dumps(pattern)).matches_event(sample("autoscaler-updatetable"))
    without = copy.deepcopy(pattern)
    del without["detail"]["userIdentity"]
    assert EventPattern.load(json.dumps(without)).matches_event(sample("autoscaler-updatetable"))
    impostor = sample("human-updatetable-by-name")
    issuer = impostor["detail"]["userIdentity"]["sessionContext"]["sessionIssuer"]
    issuer["arn"] = f"arn:aws:iam::111122223333:role/{AUTOSCALER_ROLE}"
    issuer["userName"] = AUTOSCALER_ROLE
    assert EventPattern.load(json.dumps(pattern)).matches_event(impostor)


@pytest.mark.parametrize("table", ["prod-crm_main", "a.b-c_d"])
def test_table_names_match_by_name_or_arn_in_any_partition_and_never_a_prefix(table):
    pattern = EventPattern.load(json.dumps(event_pattern(table)))
    event = sample("human-updatetable-by-name")
    for name, matches in ((table, True), (f"arn:aws-cn:dynamodb:cn-north-1:111122223333:table/{table}", True),
                          (f"arn:aws:dynamodb:eu-west-1:444455556666:table/{table}", True),
                          (f"x{table}", False), (f"{table}x", False),
                          (f"arn:aws:dynamodb:us-east-1:111122223333:table/x{table}", False)):
        event["detail"]["requestParameters"]["tableName"] = name
        event["detail"]["responseElements"]["tableDescription"]["tableName"] = name.rsplit("/", 1)[-1]
        assert pattern.matches_event(event) is matches, name


def test_every_watched_call_and_no_read(crm_prod):
    pattern = EventPattern.load(crm_prod["resource"]["aws_cloudwatch_event_rule"]["crm_changes"]["event_pattern"])
    by_name, by_arn = sample("human-updatetable-by-name"), sample("tagresource")
    for event_name in TABLE_EVENTS:
        by_name["detail"]["eventName"] = event_name
        assert pattern.matches_event(by_name), event_name
    for event_name in RESOURCE_EVENTS:
        by_arn["detail"]["eventName"] = event_name
        assert pattern.matches_event(by_arn), event_name
    for event_name in ("DescribeTable", "ListTagsOfResource", "GetResourcePolicy", "PutItem", "CreateBackup"):
        by_name["detail"]["eventName"] = by_arn["detail"]["eventName"] = event_name
        assert not pattern.matches_event(by_name) and not pattern.matches_event(by_arn), event_name


def test_explain_lists_what_the_rule_watches_and_needs(run_cli):
    code, out, _ = run_cli("explain", BUNDLED[0], "--env", "prod")
    section = " ".join(out.split("Change detection (EventBridge rule on CloudTrail)")[1].split())  # lines wrap
    assert code == 0 and "UpdateTable" in section and "TagResource" in section and "by name or ARN" in section
    assert f"Ignores Application Auto Scaling's capacity changes (UpdateTable by the service-linked role " \
           f"{AUTOSCALER_ROLE})" in section
    assert "Needs a CloudTrail trail logging management events in us-east-1" in section
    assert "Terraform cannot check it" in section
    code, out, _ = run_cli("explain", BUNDLED[0], "--env", "prod", "--format", "json")
    [data] = json.loads(out)
    assert data["change_detection"]["event_pattern"] == event_pattern("prod-crm_main")


def trail_blueprint(write_blueprint, extra: str = "") -> Path:
    text = BUNDLED[0].read_text().replace("maintenance_window:", f"change_rules: {{trail: create}}\n{extra}"
                                                                  "maintenance_window:")
    return write_blueprint(text, "crm.yaml")


def test_trail_create_adds_a_private_single_region_trail_for_management_writes(write_blueprint, tmp_path, run_cli):
    path = trail_blueprint(write_blueprint)
    [written] = synthesize(build_stacks([load_blueprint(path, "prod")]), tmp_path / "out")
    config = json.loads(written.read_text())
    [trail] = config["resource"]["aws_cloudtrail"].values()
    name = trail_name("prod-crm_main")
    assert (trail["name"], trail["is_multi_region_trail"], trail["enable_log_file_validation"]) == (name, False, True)
    assert trail["event_selector"] == [{"include_management_events": True, "read_write_type": "WriteOnly"}]
    assert trail["s3_bucket_name"] == "${aws_s3_bucket.crm_trail.id}"
    assert trail["depends_on"] == ["aws_s3_bucket_policy.crm_trail_policy"]
    private = config["resource"]["aws_s3_bucket_public_access_block"]["crm_trail_private"]
    assert all(private[flag] for flag in ("block_public_acls", "block_public_policy", "ignore_public_acls",
                                          "restrict_public_buckets"))
    statements = config["data"]["aws_iam_policy_document"]["crm_trail_bucket_policy"]["statement"]
    assert [s["sid"] for s in statements] == ["AWSCloudTrailAclCheck", "AWSCloudTrailWrite"]
    for statement in statements:  # only this trail may write: aws:SourceArn names it
        [source] = [c for c in statement["condition"] if c["variable"] == "aws:SourceArn"]
        assert source["values"][0].endswith(f":trail/{name}")
        assert statement["principals"] == [{"identifiers": ["cloudtrail.amazonaws.com"], "type": "Service"}]
    code, out, _ = run_cli("explain", path, "--env", "prod")
    assert code == 0 and f"this stack creates the trail `{name}`" in " ".join(out.split())  # lines wrap at 100
    code, out, _ = run_cli("capacity", path, "--env", "prod")
    assert code == 0 and "CloudTrail trail" in out and "free if it is the first trail" in " ".join(out.split())


def test_without_trail_create_no_trail_is_written(crm_prod):
    assert not {"aws_cloudtrail", "aws_s3_bucket"} & crm_prod["resource"].keys()


def test_trail_names_follow_cloudtrails_rules():
    for table in ("prod-crm_main", "_x.y--z_", "a" * 255):
        name = trail_name(table)
        assert 3 <= len(name) <= 128 and name[0].isalnum() and name[-1].isalnum(), name
        assert "--" not in name and all(c.isalnum() or c == "-" for c in name), name
