"""Which blueprints a command takes when it is named none: every blueprint under blueprints/ (shared bases, which
name no `blueprint:`, left out), or the list in cdktf.json (`context.blueprints`), with a warning for each blueprint
it leaves out. `new` says how its blueprint is picked up. A pull request that adds a blueprint is reviewed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, TEST_BLUEPRINTS
from tests.support.gate_support import entry, plan

IDENTITY = ("-c", "user.name=Tablewright Tests", "-c", "user.email=tests@example.com")


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project with the bundled blueprints and no list in cdktf.json, committed in git."""
    shutil.copytree(ROOT / "blueprints", tmp_path / "blueprints")
    (tmp_path / "cdktf.json").write_text(json.dumps({"language": "python", "app": "tablewright"}))
    monkeypatch.chdir(tmp_path)
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "blueprints"]):
        subprocess.run(["git", *IDENTITY, *command], cwd=tmp_path, check=True, capture_output=True)
    return tmp_path


def stacks(out: Path) -> list[str]:
    return sorted(path.name for path in (out / "stacks").iterdir())


def new_blueprint(run_cli) -> str:
    """`new billing`, with the cost center filled in (lint refuses the scaffold's placeholder in production)."""
    code, out, err = run_cli("new", "billing")
    assert code == 0, err
    path = Path("blueprints/billing.yaml")
    path.write_text(path.read_text().replace("cost-center: set-me", "cost-center: cc-4711"))
    return out


def test_every_blueprint_under_blueprints_is_taken_and_a_new_one_too(project, run_cli):
    assert run_cli("synth", "--out", "out")[0] == 0
    assert stacks(project / "out") == ["crm-dev", "crm-prod", "orders-dev", "orders-prod"]
    said = new_blueprint(run_cli)
    assert ("synth, review --changed-since and gate take it with every blueprint under blueprints; commit it with "
            "its design lock") in said
    code, _, err = run_cli("synth", "--out", "out")
    assert code == 0, err
    assert stacks(project / "out") == ["billing-dev", "billing-prod", "crm-dev", "crm-prod", "orders-dev",
                                       "orders-prod"]


def test_a_pull_request_that_adds_a_blueprint_is_reviewed(project, run_cli):
    new_blueprint(run_cli)
    code, out, err = run_cli("review", "--changed-since", "main", "--format", "json")
    assert code == 0, err
    review = json.loads(out)
    assert [entry["blueprint"] for entry in review["blueprints"]] == ["blueprints/billing.yaml"]
    assert review["blueprints"][0]["base"] == "(new blueprint)"


def test_a_list_in_cdktf_json_is_taken_with_a_warning_for_what_it_leaves_out(project, run_cli):
    (project / "cdktf.json").write_text(json.dumps({"context": {"blueprints": ["blueprints/orders.yaml"]}}))
    said = new_blueprint(run_cli)
    assert ('cdktf.json lists the blueprints synth, review --changed-since and gate take: add '
            '"blueprints/billing.yaml"') in said
    code, _, err = run_cli("synth", "--out", "out")
    assert code == 0, err
    assert stacks(project / "out") == ["orders-dev", "orders-prod"]
    warned = sorted(line for line in err.splitlines() if line.startswith("warning: "))
    assert [line.split(" is a blueprint")[0] for line in warned] == ["warning: blueprints/billing.yaml",
                                                                     "warning: blueprints/crm.yaml"]
    assert "not synthesized, reviewed or gated; add it to the list" in warned[0]


def test_a_blueprint_outside_blueprints_is_named_on_the_command_line(project, run_cli):
    code, out, err = run_cli("new", "billing", "--dir", "services")
    assert code == 0, err
    assert "services/billing.yaml is outside blueprints: synth, review --changed-since and gate take it only when it" \
           " is named on the command line" in out


def test_no_blueprint_at_all_is_one_error(project, run_cli):
    shutil.rmtree(project / "blueprints")
    (project / "blueprints" / "shared").mkdir(parents=True)
    code, _, err = run_cli("synth", "--out", "out")
    assert code == 2 and "error: no blueprint under blueprints [E608]" in err
    assert "fix: write one with `tablewright new NAME`" in err


def test_the_gate_finds_the_stack_among_every_blueprint(project, run_cli):
    table = {"name": "prod-orders_main"}
    (project / "plan.json").write_text(json.dumps(plan(entry("aws_dynamodb_table.orders", ["no-op"], table, table))))
    code, out, err = run_cli("gate", "--plan", "plan.json", "--now", "2026-12-01T03:00:00Z")
    assert code == 0, err
    assert out.startswith("gate PASS for orders-prod")


def test_yml_blueprints_count_and_a_linked_directory_is_said(project, run_cli):
    text = (project / "blueprints" / "orders.yaml").read_text()
    (project / "blueprints" / "billing.yml").write_text(text.replace("blueprint: orders", "blueprint: billing")
                                                        .replace("name: orders_main", "name: billing_main"))
    (project / "elsewhere").mkdir()
    (project / "blueprints" / "linked").symlink_to(project / "elsewhere")
    code, _, err = run_cli("synth", "--out", "out")
    assert code == 0, err
    assert "billing-prod" in stacks(project / "out")
    assert "warning: blueprints/linked is a symbolic link to a directory: its blueprints are not taken" in err


def test_a_plan_given_for_another_stack_is_refused(project, run_cli):
    """`review --changed-since --plan STACK=PLAN` shows the plan under STACK: it must be that stack's."""
    (project / "blueprints" / "crm.yaml").write_text((project / "blueprints" / "crm.yaml").read_text()
                                                     .replace("version: 1.0.0", "version: 1.0.1"))
    table = {"name": "prod-crm_main"}
    (project / "plan.json").write_text(json.dumps(plan(entry("aws_dynamodb_table.crm", ["delete"], table, None))))
    code, _, err = run_cli("review", "--changed-since", "main", "--plan", "crm-dev=plan.json")
    assert code == 2 and "--plan crm-dev=...: the plan manages prod-crm_main, not the table of crm-dev" in err, err
    assert "[E701]" in err


def test_env_takes_the_default_blueprints_that_declare_it_and_names_the_others(project, run_cli):
    shutil.copy(TEST_BLUEPRINTS / "hot.yaml", "blueprints/audit.yaml")  # declares no environments
    code, _, err = run_cli("synth", "--env", "prod", "--out", "out")
    assert code == 0, err
    assert stacks(project / "out") == ["crm-prod", "orders-prod"]
    assert "note: 1 blueprint(s) without environment `prod` left out: blueprints/audit.yaml" in err
    subprocess.run(["git", *IDENTITY, "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", *IDENTITY, "commit", "-qm", "audit"], cwd=project, check=True)
    Path("blueprints/audit.yaml").write_text(Path("blueprints/audit.yaml").read_text() + "# changed\n")
    code, _, err = run_cli("synth", "--env", "prod", "--changed-since", "HEAD", "--out", "out")
    assert code == 0 and "without environment `prod` left out: blueprints/audit.yaml" in err, err
    code, _, err = run_cli("synth", "blueprints/audit.yaml", "--env", "prod", "--out", "out")  # named: refused
    assert code == 2 and "blueprints/audit.yaml has no environment `prod`" in err
    assert "it declares no environments: leave out --env for its one stack" in err
    code, _, err = run_cli("synth", "--env", "prd", "--out", "out")  # none declares it: refused
    assert code == 2 and "none of the 3 blueprint(s) declares environment `prd`" in err
    assert "the environments they declare: dev, prod" in err
