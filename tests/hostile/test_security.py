"""The security model (README "Security model"): blueprints and plans from other teams' pull requests
are untrusted. Each test here is one attack that worked before the model existed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tablewright.blueprint.load import load_blueprints
from tablewright.review.gate import gate
from tablewright.synth.output import MARKER, recover
from tests.conftest import ROOT
from tests.support.gate_support import NOW, TABLE, entry, plan, shop

PAYLOADS = ['${file("/proc/self/environ")}', "%{ if true }x%{ endif }", "${jsonencode(var.x)}"]


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def unescaped(text: str, payload: str) -> bool:
    """`payload` occurs in `text` where Terraform would evaluate it (not as `$${` / `%%{`)."""
    start = text.find(payload)
    while start != -1:
        if text[start - 1:start] not in ("$", "%"):
            return True
        start = text.find(payload, start + 1)
    return False


# --- Terraform expression injection ---------------------------------------------------------------

INJECTION_FIELDS = {
    "tag value": {"tags": {"service": "{payload}"}},
    "tag key": {"tags": {"{payload}": "x"}},
    "region": {"region": "{payload}"},
    "kms key arn": {"table": {"encryption": "customer_managed", "kms_key_arn": "{payload}"}},
    "backend bucket": {"terraform": {"backend": {"type": "s3", "bucket": "{payload}"}}},
    "backend key": {"terraform": {"backend": {"type": "s3", "bucket": "state-bucket", "key": "{payload}"}}},
    "backend region": {"terraform": {"backend": {"type": "s3", "bucket": "state-bucket", "region": "{payload}"}}},
    "backend lock table": {"terraform": {"backend": {"type": "s3", "bucket": "state-bucket",
                                                     "dynamodb_table": "{payload}"}}},
    "naming": {"naming": {"table": "{payload}"}},
    "notify": {"alarms": {"notify": ["{payload}"]}},
    "time zone": {"maintenance_window": {"timezone": "{payload}"}},
    "provider constraint": {"terraform": {"aws_provider": "{payload}"}},
    "enum value": {"entities": {"Order": {"attributes": {"status": {"type": "string", "values": ["{payload}"]}}}}},
}


def _filled(overlay, payload: str):
    return json.loads(json.dumps(overlay).replace("{payload}", payload.replace('"', '\\"')))


@pytest.mark.parametrize("field", sorted(INJECTION_FIELDS))
@pytest.mark.parametrize("payload", PAYLOADS, ids=["file", "directive", "jsonencode"])
def test_no_blueprint_string_reaches_terraform_as_an_expression(field, payload, tmp_path, run_cli):
    path = shop(tmp_path, **_filled(INJECTION_FIELDS[field], payload))
    code, _, stderr = run_cli("synth", path, "--out", tmp_path / "out", "--allow-lint-errors")
    if code == 2:  # refused at load: the field has a strict character set
        assert "Traceback" not in stderr and "\n  fix: " in stderr, stderr
        assert not (tmp_path / "out").exists()
        return
    assert code == 0, stderr
    for written in (tmp_path / "out" / "stacks").glob("*/cdk.tf.json"):
        for text in strings(json.loads(written.read_text())):
            assert not unescaped(text, payload.split("(")[0].split(" ")[0]), (field, text)


def test_free_text_that_never_reaches_terraform_is_accepted(tmp_path, run_cli):
    path = shop(tmp_path, description='Reads ${file("/etc/passwd")} and %{ if x }y%{ endif }', owner="team ${x}")
    code, _, stderr = run_cli("synth", path, "--out", tmp_path / "out")
    assert code == 0, stderr
    text = (tmp_path / "out" / "stacks" / "shop" / "cdk.tf.json").read_text()
    assert "/etc/passwd" not in text and "endif" not in text


# --- synth --out never deletes what it did not write ----------------------------------------------


@pytest.fixture
def clone(tmp_path, monkeypatch) -> Path:
    """A repository checkout to run synth in, with files synth must never touch."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "README.md").write_text("mine\n")
    shop(repo)
    (repo / "shared").mkdir()
    monkeypatch.chdir(repo)
    return repo


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(directory.rglob("*"))}


@pytest.mark.parametrize("target", [".", "..", "~", "/", "README.md", "shared", ".git"])
def test_synth_refuses_an_out_it_did_not_write(target, clone, run_cli):
    before = snapshot(clone.parent)
    code, stdout, stderr = run_cli("synth", "shop.yaml", "--out", os.path.expanduser(target))
    assert code == 2 and stdout == "", stderr
    assert stderr.startswith(f"error: --out {os.path.expanduser(target)}: ") and "\n  fix: " in stderr
    assert snapshot(clone.parent) == before


@pytest.mark.parametrize("target", ["/proc/tablewright-out", "/sys/tablewright-out", "x" * 300, "README.md/out"])
def test_an_out_the_file_system_refuses_is_the_users_error(target, clone, run_cli):
    """A virtual or read-only file system, a name too long, a file where a directory must be: exit 2, E604."""
    before = snapshot(clone.parent)
    code, stdout, stderr = run_cli("synth", "shop.yaml", "--out", target)
    assert code == 2 and stdout == "", stderr
    assert stderr.startswith(f"error: --out {target}: cannot be written: ") and stderr.rstrip().endswith(
        "fix: pass a path to a writable directory (default: cdktf.out)\n  docs: docs/reference/errors.md#e604")
    assert "[E604]" in stderr
    assert snapshot(clone.parent) == before


def test_synth_refuses_a_symbolic_link_as_out(clone, run_cli):
    (clone / "elsewhere").mkdir()
    (clone / "link").symlink_to(clone / "elsewhere")
    code, _, stderr = run_cli("synth", "shop.yaml", "--out", "link")
    assert code == 2 and "symbolic link" in stderr
    assert (clone / "link").is_symlink() and (clone / "elsewhere").is_dir()


def test_synth_replaces_its_own_output_and_leaves_nothing_behind(clone, run_cli):
    assert run_cli("synth", "shop.yaml", "--out", "out")[0] == 0
    assert (clone / "out" / MARKER).is_file()
    (clone / "out" / "stacks" / "old-stack").mkdir()
    code, _, stderr = run_cli("synth", "shop.yaml", "--out", "out")
    assert code == 0, stderr
    assert sorted(p.name for p in (clone / "out" / "stacks").iterdir()) == ["shop"]
    assert sorted(p.name for p in clone.iterdir()) == [".git", "README.md", "out", "shared", "shop.lock.json",
                                                       "shop.yaml"]


def test_a_run_killed_between_the_renames_is_recovered(clone, run_cli):
    assert run_cli("synth", "shop.yaml", "--out", "out")[0] == 0
    first = snapshot(clone / "out")
    (clone / "out").rename(clone / ".out.retired-999999")  # what a kill -9 after the first rename leaves
    (clone / ".out.staging-999998").mkdir()
    (clone / ".out.staging-999998" / MARKER).write_text("half written")
    recover(clone / "out")
    assert snapshot(clone / "out") == first
    assert sorted(p.name for p in clone.iterdir()) == [".git", "README.md", "out", "shared", "shop.lock.json",
                                                       "shop.yaml"]


def test_a_leftover_that_is_not_ours_is_left_alone(clone):
    stranger = clone / ".out.retired-999999"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("someone else's")
    recover(clone / "out")
    assert (stranger / "notes.txt").read_text() == "someone else's"


# --- production protection cannot be switched off by the pull request it is judged in ---------------

PROD = {"environments": {"dev": {}, "prod": {"production": True}}}


def _review(run_cli, base: Path, head: Path, *flags: str) -> dict:
    code, out, stderr = run_cli("review", "--base", base, "--head", head, "--env", "prod", "--format", "json", *flags)
    assert code == 0, stderr
    return json.loads(out)


def test_turning_production_and_its_protection_off_is_blocked(tmp_path, run_cli):
    base = shop(tmp_path, "base.yaml", **PROD)
    head = shop(tmp_path, "head.yaml", environments={"dev": {}, "prod": {
        "production": False, "table": {"deletion_protection": False, "point_in_time_recovery": False}}})
    review = _review(run_cli, base, head)
    assert review["verdict"] == "blocked"
    stack = review["stacks"][0]
    assert stack["production"] is True  # judged by the stricter side
    blocked = sorted(c["subject"] for c in stack["changes"] if c["cls"] == "blocked")
    assert blocked == ["production off", "table shop_main-prod: deletion protection off",
                       "table shop_main-prod: point-in-time recovery off"]


def test_turning_only_production_off_is_blocked_until_acknowledged(tmp_path, run_cli):
    base = shop(tmp_path, "base.yaml", **PROD)
    head = shop(tmp_path, "head.yaml", environments={"dev": {}, "prod": {"production": False}})
    assert _review(run_cli, base, head)["verdict"] == "blocked"
    acknowledged = _review(run_cli, base, head, "--allow-unprotect")
    assert acknowledged["verdict"] == "window"
    assert any(c["reason"].startswith("acknowledged (--allow-unprotect)") for c in acknowledged["stacks"][0]["changes"])
    assert _review(run_cli, base, head, "--allow-destroy")["verdict"] == "blocked"  # the wrong acknowledgement


# --- the gate: plans that are not this blueprint's, and what Tablewright does not write -------------

def _gate(tmp_path, the_plan: dict, *flags: str, **overlay):
    path = shop(tmp_path, **overlay)
    (tmp_path / "plan.json").write_text(json.dumps(the_plan))
    return path, tmp_path / "plan.json"


def test_the_gate_refuses_a_plan_for_another_table(tmp_path, run_cli):
    other = entry("aws_dynamodb_table.billing", ["delete"], {"name": "billing_main"}, None)
    path, plan_file = _gate(tmp_path, plan(other))
    code, _, stderr = run_cli("gate", "--plan", plan_file, "--blueprint", path, "--now", NOW.isoformat())
    assert code == 2
    assert "billing_main" in stderr and "[E701]" in stderr and "\n  fix: " in stderr


def test_the_gate_refuses_a_plan_that_also_manages_another_table(tmp_path, run_cli):
    other = entry("aws_dynamodb_table.billing", ["no-op"], {"name": "billing_main"}, {"name": "billing_main"})
    path, plan_file = _gate(tmp_path, plan(TABLE, other))
    code, _, stderr = run_cli("gate", "--plan", plan_file, "--blueprint", path, "--now", NOW.isoformat())
    assert code == 2 and "[E701]" in stderr


def _classified(tmp_path, *entries, production: bool = False, outputs=None):
    path = shop(tmp_path, production=production)
    [loaded] = load_blueprints(path)
    stack, decision = gate(plan(TABLE, *entries, outputs=outputs), loaded, NOW)
    return {c.address: c for c in stack.changes}, decision


def test_resources_tablewright_does_not_write_are_blocked(tmp_path):
    role = entry("aws_iam_role.admin", ["create"], None, {"name": "admin", "assume_role_policy": "{}"})
    changes, decision = _classified(tmp_path, role)
    assert changes["aws_iam_role.admin"].cls == "blocked" and not decision.passed
    assert "--allow-foreign" in decision.reason


def test_a_resource_policy_open_to_everyone_is_blocked(tmp_path):
    policy = json.dumps({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "dynamodb:*",
                                        "Resource": "*"}]})
    resource_policy = entry("aws_dynamodb_resource_policy.open", ["create"], None, {"policy": policy})
    topic_policy = entry("aws_sns_topic_policy.shop_alarms_policy", ["update"], {"policy": "{}"},
                         {"policy": json.dumps({"Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"},
                                                               "Action": "sns:Publish"}]})})
    changes, _ = _classified(tmp_path, resource_policy, topic_policy)
    assert changes["aws_dynamodb_resource_policy.open"].cls == "blocked"
    assert changes["aws_sns_topic_policy.shop_alarms_policy"].cls == "blocked"
    assert "any principal" in changes["aws_sns_topic_policy.shop_alarms_policy"].reason


def test_a_policy_change_waits_for_the_window_and_an_unknown_action_is_not_safe(tmp_path):
    policy = entry("aws_kms_key.shop_key", ["update"], {"policy": '{"Statement": []}'},
                   {"policy": '{"Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::1:root"}}]}'})
    forget = entry("aws_cloudwatch_metric_alarm.shop_x", ["forget"], {"alarm_name": "x"}, None)
    changes, _ = _classified(tmp_path, policy, forget)
    assert changes["aws_kms_key.shop_key"].cls == "window"
    assert changes["aws_cloudwatch_metric_alarm.shop_x"].cls == "window"


def test_deleting_a_customer_managed_key_in_production_is_blocked(tmp_path):
    key = entry("aws_kms_key.shop_key", ["delete"], {"description": "k"}, None)
    changes, _ = _classified(tmp_path, key, production=True)
    assert changes["aws_kms_key.shop_key"].cls == "blocked"
    assert changes["aws_kms_key.shop_key"].unblocked_by == "destroy"


def test_the_gate_judges_production_by_the_state_the_plan_starts_from(tmp_path):
    """The head blueprint says not production; the applied stack's `tablewright` output says it was."""
    outputs = {"tablewright": {"actions": ["update"], "before": {"production": True}, "after": {"production": False}}}
    pitr_off = entry("aws_dynamodb_table.shop", ["update"],
                     {"name": "shop_main", "point_in_time_recovery": [{"enabled": True}]},
                     {"name": "shop_main", "point_in_time_recovery": [{"enabled": False}]})
    path = shop(tmp_path, production=False)
    [loaded] = load_blueprints(path)
    stack, decision = gate(plan(pitr_off, outputs=outputs), loaded, NOW)
    blocked = sorted(c.subject for c in stack.changes if c.cls == "blocked")
    assert blocked == ["production off", "table shop_main: point-in-time recovery off"]
    assert not decision.passed


# --- git revisions are never options -------------------------------------------------------------


@pytest.fixture
def repository(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shop(tmp_path)
    for command in (["init", "-q"], ["add", "shop.yaml"],
                    ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]):
        subprocess.run(["git", *command], cwd=tmp_path, check=True)
    return tmp_path


@pytest.mark.parametrize("command", [
    ["lint", "shop.yaml", "--against=--output=out:y"],
    ["review", "--base=--output=out:shop.yaml", "--head", "shop.yaml"],
    ["review", "--base", "HEAD:shop.yaml", "--head=--output=out:y"],
    ["lint", "shop.yaml", "--against", "HEAD..HEAD:shop.yaml"],
])
def test_a_revision_cannot_smuggle_a_git_option(command, repository, run_cli):
    code, _, stderr = run_cli(*command)
    assert code == 2 and "[E601]" in stderr and "\n  fix: " in stderr, stderr
    assert not (repository / "out").exists()


def test_a_git_ref_base_cannot_extend_outside_its_snapshot(repository, run_cli):
    text = (repository / "shop.yaml").read_text()
    (repository / "shop.yaml").write_text("extends: ../../../../../../etc/hostname.yaml\n" + text)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "x"], cwd=repository,
                   check=True)
    code, _, stderr = run_cli("review", "--base", "HEAD:shop.yaml", "--head", "shop.yaml")
    assert code == 2 and "HEAD:shop.yaml:1:" in stderr and "/tmp/tablewright-" not in stderr, stderr


# --- extends stays inside the repository ---------------------------------------------------------


@pytest.mark.parametrize("target", ["/etc/passwd", "../../../../../../../etc/passwd", "/proc/self/status"])
def test_extends_cannot_read_files_outside_the_repository(target, repository, run_cli):
    text = (repository / "shop.yaml").read_text()
    (repository / "shop.yaml").write_text(f"extends: {target}\n" + text)
    code, _, stderr = run_cli("lint", "shop.yaml")
    assert code == 2 and "shop.yaml:1:" in stderr and "[E400]" in stderr
    assert "root:" not in stderr and "State:" not in stderr


def test_the_bundled_blueprints_stay_inside_the_repository():
    for path in sorted((ROOT / "blueprints").glob("*.yaml")):
        assert load_blueprints(path)


# --- documentation and the example pipeline --------------------------------------------------------


def test_only_the_main_jobs_of_the_workflow_init_writes_get_cloud_credentials():
    from tests.end_to_end.test_ci_workflows import example

    workflow = yaml.safe_load(example("github-actions.yml"))
    assert "id-token" not in workflow["permissions"]
    jobs = workflow["jobs"]
    assert jobs["plan"]["permissions"]["id-token"] == jobs["apply"]["permissions"]["id-token"] == "write"
    assert {jobs["plan"]["if"], jobs["apply"]["needs"]} == {
        "github.event_name != 'pull_request' && github.ref == 'refs/heads/main'", "plan"}
    assert "id-token" not in jobs["review"]["permissions"]
    review_steps = json.dumps(jobs["review"]["steps"])
    # the tool the base branch pins reviews the pull request's blueprints
    assert "pip install -r base/requirements-tablewright.txt" in review_steps
    assert "configure-aws-credentials" not in review_steps
    checkouts = [step["with"] for step in jobs["review"]["steps"]
                 if step.get("uses", "").startswith("actions/checkout")]
    assert {"path": "base", "ref": "${{ github.base_ref }}", "persist-credentials": False} in checkouts
