"""checkov (`--framework terraform_json`, offline) on the production synthesis of every bundled blueprint,
plus a customer-managed-key variant: no DynamoDB check fails, and every other failure is one of the
deliberate skips the README lists (same ids, same resources)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.conftest import BUNDLED, ROOT, bundled_stacks
from tests.support.terraform_support import missing_tool, slow_tier_only

pytestmark = pytest.mark.terraform  # checkov: the slow tier

DYNAMODB_CHECKS = {
    "CKV_AWS_28": "point-in-time recovery",
    "CKV_AWS_119": "encrypted with a customer-managed KMS key",
    "CKV2_AWS_16": "autoscaling wired to the table",
}
# Identity-policy checks that misread KMS key policies: in a key policy, `Resource: "*"` is the key itself.
KEY_POLICY_CHECKS = {"CKV_AWS_109", "CKV_AWS_111", "CKV_AWS_356"}


def checkov_executable() -> str:
    slow_tier_only("checkov")
    beside_python = Path(sys.executable).parent / "checkov"
    found = str(beside_python) if beside_python.exists() else shutil.which("checkov")
    if found is None:
        missing_tool("checkov is not installed (pip install -e '.[test]')")
    return found


def run_checkov(directory: Path) -> dict:
    env = dict(os.environ, BC_SKIP_MAPPING="TRUE", CKV_SKIP_PACKAGE_UPDATE_CHECK="TRUE", LOG_LEVEL="ERROR")
    result = subprocess.run(
        [checkov_executable(), "--directory", str(directory), "--framework", "terraform_json", "--skip-download",
         "--output", "json", "--compact"],
        env=env, capture_output=True, text=True,
    )
    assert result.returncode in (0, 1), result.stderr  # 1: some check failed
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def production(tmp_path_factory) -> tuple[dict, dict[str, str]]:
    """checkov's report over every production stack, and each stack's table encryption."""
    work = tmp_path_factory.mktemp("checkov")
    shutil.copytree(ROOT / "blueprints" / "shared", work / "shared")
    shutil.copy(ROOT / "blueprints" / "crm.yaml", work / "crm.yaml")
    (work / "crm-cmk.yaml").write_text("extends: crm.yaml\nblueprint: crm-cmk\ntable: {encryption: customer_managed}\n")
    loaded = [s for s in bundled_stacks() if s.blueprint.production] + [load_blueprint(work / "crm-cmk.yaml", "prod")]
    assert len(loaded) == len(BUNDLED) + 1, "every bundled blueprint has a production environment"
    synthesize(build_stacks(loaded), work / "cdktf.out")
    encryption = {s.stack_name: s.blueprint.table.encryption for s in loaded}
    return run_checkov(work / "cdktf.out" / "stacks"), encryption


def stack_of(check: dict) -> str:
    return Path(check["file_path"]).parent.name


def deliberate_skip(check: dict, encryption: dict[str, str]) -> str | None:
    """The README's reason for a failed check, or None when nothing excuses it."""
    if check["check_id"] == "CKV_AWS_119" and encryption[stack_of(check)] != "customer_managed":
        return "the blueprint chose `encryption: aws_owned` or `aws_managed`"
    if check["check_id"] in KEY_POLICY_CHECKS and check["resource"].endswith("_key_policy"):
        return "a KMS key policy's `Resource: \"*\"` means the key it is attached to"
    return None


def test_no_dynamodb_check_fails_and_every_other_failure_is_a_documented_skip(production):
    report, encryption = production
    failed = report["results"]["failed_checks"]
    unexplained = [(stack_of(c), c["check_id"], c["resource"]) for c in failed if not deliberate_skip(c, encryption)]
    assert unexplained == []
    assert report["summary"]["parsing_errors"] == 0


def test_every_dynamodb_check_ran_on_every_table(production):
    report, encryption = production
    passed = {(stack_of(c), c["check_id"]) for c in report["results"]["passed_checks"]}
    for stack, key in encryption.items():
        expected = set(DYNAMODB_CHECKS) if key == "customer_managed" else set(DYNAMODB_CHECKS) - {"CKV_AWS_119"}
        assert {check for (where, check) in passed if where == stack} >= expected, stack


def test_the_key_policy_skip_covers_only_key_policies(production):
    report, _ = production
    flagged = {c["resource"] for c in report["results"]["failed_checks"] if c["check_id"] in KEY_POLICY_CHECKS}
    assert flagged and all(resource.endswith("_key_policy") for resource in flagged)
    policies = {c["resource"] for c in report["results"]["passed_checks"] if c["check_id"] in KEY_POLICY_CHECKS}
    assert any(resource.endswith("_topic_policy") for resource in policies)  # other documents are still checked
