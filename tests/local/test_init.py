"""`tablewright init`: an infrastructure repository that works on any machine (cdktf.json runs the installed tool,
the schema is the repository's own, state stays out of git and lock files in), that never overwrites a user's
file, and whose platform base holds placeholders lint points at (TW602)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tablewright.errors import EXIT_BAD_INPUT
from tablewright.scaffold import Choices, project_files
from tests.conftest import ROOT

WRITTEN = {"cdktf.json", "requirements-tablewright.txt", ".gitignore", "blueprints/shared/platform-base.yaml",
           "schema/blueprint.schema.json", "schema/blueprint-base.schema.json", ".github/workflows/tablewright.yml"}


def files_under(root: Path) -> dict[str, str]:
    return {str(path.relative_to(root)): path.read_text() for path in sorted(root.rglob("*")) if path.is_file()}


def test_init_writes_a_repository_and_a_second_run_changes_nothing(tmp_path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("init")
    assert code == 0, err
    assert set(files_under(tmp_path)) == WRITTEN
    assert "7 file(s) written, 0 already as init writes them, 0 left as they are" in out
    before = files_under(tmp_path)
    code, out, _ = run_cli("init")
    assert code == 0 and "0 file(s) written, 7 already as init writes them" in out
    assert files_under(tmp_path) == before


def test_cdktf_runs_the_installed_tool_and_the_pin_is_this_version(tmp_path, run_cli):
    from importlib import metadata

    assert run_cli("init", tmp_path / "infra")[0] == 0
    config = json.loads((tmp_path / "infra" / "cdktf.json").read_text())
    assert config["app"] == "tablewright" and config["language"] == "python" and config["projectId"] == "infra"
    pins = [line for line in (tmp_path / "infra" / "requirements-tablewright.txt").read_text().splitlines()
            if line and not line.startswith("#")]
    assert pins == [f"tablewright=={metadata.version('tablewright')}"]


def test_every_blueprint_names_the_repositorys_own_schema(tmp_path, run_cli, monkeypatch):
    """Never a path into the installed package: the schema is in the repository, relative to each file."""
    monkeypatch.chdir(tmp_path)
    assert run_cli("init")[0] == 0 and run_cli("new", "payments")[0] == 0
    for path, schema in (("blueprints/payments.yaml", "../schema/blueprint.schema.json"),
                         ("blueprints/shared/platform-base.yaml", "../../schema/blueprint-base.schema.json")):
        first = (tmp_path / path).read_text().splitlines()[0]
        assert first == f"# yaml-language-server: $schema={schema}"
        assert (tmp_path / path).parent.joinpath(schema).resolve().is_file()


def git_ignored(root: Path, *paths: str) -> set[str]:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    done = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=root, capture_output=True, text=True)
    return set(done.stdout.split())


def test_the_gitignore_keeps_state_out_and_each_stacks_lock_file_in(tmp_path, run_cli):
    assert run_cli("init", tmp_path)[0] == 0
    kept = "cdktf.out/stacks/payments-dev/.terraform.lock.hcl"
    ignored = ["cdktf.out/stacks/payments-dev/cdk.tf.json", "cdktf.out/stacks/payments-dev/.terraform/x",
               "terraform-state/payments-dev.tfstate", "cdktf.out/stacks/payments-dev/.tablewright-local/s.tfstate",
               "cdktf.out/manifest.json", "cdktf.out/stacks/payments-dev/plan.tfplan"]
    assert git_ignored(tmp_path, kept, *ignored) == set(ignored)


def test_init_refuses_to_overwrite_a_file_and_writes_nothing(tmp_path, run_cli):
    (tmp_path / ".gitignore").write_text("node_modules/\n")
    code, out, err = run_cli("init", tmp_path)
    assert code == EXIT_BAD_INPUT and out == ""
    assert "[E611]" in err and ".gitignore" in err and "--skip-existing" in err and "Traceback" not in err
    assert files_under(tmp_path) == {".gitignore": "node_modules/\n"}


def test_skip_existing_writes_the_rest_and_says_what_an_existing_file_lacks(tmp_path, run_cli):
    (tmp_path / ".gitignore").write_text("node_modules/\n.terraform/\n")
    code, out, _ = run_cli("init", tmp_path, "--skip-existing")
    assert code == 0
    assert (tmp_path / ".gitignore").read_text() == "node_modules/\n.terraform/\n"
    [line] = [line for line in out.splitlines() if line.startswith("left as it is:")]
    assert "cdktf.out/**" in line and "*.tfstate" in line and ".terraform/;" not in line
    assert set(files_under(tmp_path)) == WRITTEN


def test_init_never_writes_through_a_link(tmp_path, run_cli):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "cdktf.json").symlink_to(tmp_path / "elsewhere" / "target.json")
    code, _, _err = run_cli("init", tmp_path / "repo", "--skip-existing")
    assert code == 0 and not (tmp_path / "elsewhere" / "target.json").exists()


@pytest.mark.parametrize(("arguments", "problem"), [
    (["--backend", "s3"], "--backend s3 needs --state-bucket"),
    (["--backend", "s3", "--state-bucket", "Bad_Bucket"], "is not an S3 bucket name"),
    (["--backend", "s3", "--state-bucket", "a..b"], "is not an S3 bucket name"),
    (["--state-bucket", "acme-state"], "--state-bucket and --state-region go with --backend s3"),
    (["--region", "moon-1"], "is not an AWS region"),
    (["--ci", "jenkins"], "invalid choice: 'jenkins'"),
])
def test_bad_choices_are_refused_before_anything_is_written(tmp_path, run_cli, arguments, problem):
    code, out, err = run_cli("init", tmp_path / "repo", *arguments)
    assert code == EXIT_BAD_INPUT and out == "" and problem in err and "Traceback" not in err
    assert not (tmp_path / "repo").exists()


def test_a_team_backend_locks_its_state_in_s3_and_synthesizes(tmp_path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_cli("init", "--backend", "s3", "--state-bucket", "acme-tf-state", "--state-region", "eu-west-1",
                   "--region", "eu-west-1", "--ci", "gitlab")[0] == 0
    base = yaml.safe_load((tmp_path / "blueprints/shared/platform-base.yaml").read_text())
    assert base["terraform"]["backend"] == {"type": "s3", "bucket": "acme-tf-state", "region": "eu-west-1",
                                            "use_lockfile": True}
    assert base["region"] == "eu-west-1" and (tmp_path / ".gitlab-ci.yml").is_file()
    assert not (tmp_path / ".github").exists()
    assert run_cli("new", "payments")[0] == 0
    code, _, err = run_cli("synth", "--env", "dev")
    assert code == 0, err
    config = json.loads((tmp_path / "cdktf.out/stacks/payments-dev/cdk.tf.json").read_text())
    backend = config["terraform"]["backend"]["s3"]
    assert backend["use_lockfile"] is True and backend["bucket"] == "acme-tf-state"
    assert config["terraform"]["required_version"] == ">= 1.10"  # use_lockfile's first Terraform
    assert backend["key"] == "tablewright/payments/dev/terraform.tfstate" and "dynamodb_table" not in backend


def test_the_platform_bases_placeholders_are_what_lint_points_at(tmp_path, run_cli, monkeypatch):
    """dev passes (a trial against `tablewright local` needs no decision); production names each placeholder's
    file and line: the base's topic (TW602) and the scaffold's cost center (TW601)."""
    monkeypatch.chdir(tmp_path)
    assert run_cli("init")[0] == 0 and run_cli("new", "payments")[0] == 0
    assert run_cli("lint", "--env", "dev", "--strict")[0] == 0
    code, out, _ = run_cli("lint", "--env", "prod")
    assert code == 1
    base = (tmp_path / "blueprints/shared/platform-base.yaml").read_text().splitlines()
    [topic_line] = [number for number, line in enumerate(base, 1) if "111122223333" in line and "notify" in line]
    assert re.search(rf"blueprints/shared/platform-base.yaml:{topic_line}:\d+: error TW602: `alarms.notify.0`", out)
    assert "error TW601: tag `cost-center`" in out


def test_what_init_writes_is_the_same_for_the_same_choices():
    choices = Choices(project="infra", version="1.2.3", region="eu-west-1", backend="local", ci="github")
    assert project_files(choices) == project_files(choices)
    assert not any("@" + token + "@" in text for text in project_files(choices).values()
                   for token in ("REGION", "PROJECT", "REQUIREMENT", "BACKEND"))


def test_a_local_state_with_ci_is_said_to_need_a_remote_one(tmp_path, run_cli):
    code, _, err = run_cli("init", tmp_path / "trial")
    assert code == 0 and "with the local state it finds none" in err and "--backend s3" in err
    code, _, err = run_cli("init", tmp_path / "team", "--backend", "s3", "--state-bucket", "acme-tf-state")
    assert code == 0 and "local state" not in err


def test_a_new_pin_makes_every_blueprint_changed(tmp_path, run_cli, monkeypatch):
    """Upgrading Tablewright (requirements-tablewright.txt) may design every table anew: all are reviewed."""
    monkeypatch.chdir(tmp_path)
    identity = ["-c", "user.name=T", "-c", "user.email=t@example.com"]
    assert run_cli("init", "--ci", "none")[0] == 0 and run_cli("new", "payments")[0] == 0
    subprocess.run(["git", "init", "-q", "-b", "main"], check=True)
    subprocess.run(["git", *identity, "add", "-A"], check=True)
    subprocess.run(["git", *identity, "commit", "-qm", "scaffold"], check=True)
    pin = tmp_path / "requirements-tablewright.txt"
    pin.write_text(pin.read_text().replace("tablewright==", "tablewright==9.") + "\n")
    code, out, err = run_cli("synth", "--env", "dev", "--changed-since", "main")
    assert code == 0, err
    assert "1 of 1 blueprint(s)" in out and "Tablewright itself changed (requirements-tablewright.txt)" in out


def test_a_terraformrc_of_ones_own_is_used_as_it_is(tmp_path, monkeypatch):
    from tablewright.local.terraform import chosen_mirror

    monkeypatch.delenv("TF_CLI_CONFIG_FILE", raising=False)
    monkeypatch.delenv("TABLEWRIGHT_PROVIDER_MIRROR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".terraformrc").write_text('plugin_cache_dir = "/tmp/cache"\n')
    assert chosen_mirror() is None
    mirror = tmp_path / "mirror"
    (mirror / "registry.terraform.io/hashicorp/aws").mkdir(parents=True)
    monkeypatch.setenv("TABLEWRIGHT_PROVIDER_MIRROR", str(mirror))
    assert chosen_mirror() == mirror  # named: it wins


def test_local_takes_dev_by_default_and_the_one_stack_of_a_blueprint_without_environments(tmp_path, monkeypatch):
    """`tablewright local` with no --env: the `dev` stack of a blueprint that declares environments, the only one of
    a blueprint that declares none (it used to refuse that blueprint for lacking `dev`)."""
    import argparse

    from tablewright.cli.workspace_commands import _local_stacks
    from tests.support.gate_support import shop

    plain = shop(tmp_path)
    chosen = _local_stacks(argparse.Namespace(env=None, blueprints=[str(plain), str(ROOT / "blueprints" / "crm.yaml")],
                                              command="local"))
    assert sorted(stack.stack_name for stack in chosen) == ["crm-dev", "shop"]
    prod = _local_stacks(argparse.Namespace(env="prod", blueprints=[str(ROOT / "blueprints" / "crm.yaml")],
                                            command="local"))
    assert [stack.stack_name for stack in prod] == ["crm-prod"]
