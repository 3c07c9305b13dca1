"""Terraform state and working files survive synthesis: the local state lives beside the output, and what
synth did not write in a stack directory (`.terraform`, `.terraform.lock.hcl`, a saved plan, an older state
file) is moved into the new output; a stack directory synth would drop that holds any of it is refused."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tablewright.constructs.state import local_state_path
from tablewright.synth.output import MARKER, recover
from tests.conftest import ROOT
from tests.support.emulator import Emulator
from tests.support.terraform_support import terraform, terraform_environment

STACK = "orders-prod"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A repository with the bundled orders blueprint (and its shared base), synthesized once into cdktf.out."""
    (tmp_path / ".git").mkdir()
    shutil.copytree(ROOT / "blueprints", tmp_path / "blueprints")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() and not p.is_symlink() else b"<dir>"
            for p in sorted(directory.rglob("*"))}


def terraform_files(stack_dir: Path) -> dict[str, bytes]:
    """What `terraform init`, `plan -out` and an older Tablewright leave in a stack directory."""
    (stack_dir / ".terraform" / "providers").mkdir(parents=True)
    files = {".terraform/terraform.tfstate": b'{"backend": "local"}\n', ".terraform.lock.hcl": b"# lock\n",
             "terraform.orders-prod.tfstate": b'{"version": 4, "serial": 7}\n', "plan.tfplan": b"PK\x03\x04"}
    for name, content in files.items():
        (stack_dir / name).write_bytes(content)
    (stack_dir / ".terraform" / "providers" / "link").symlink_to("/nonexistent")
    return files


def test_the_local_state_lives_beside_the_output(project, run_cli):
    assert run_cli("synth", "blueprints/orders.yaml")[0] == 0
    for stack in ("orders-dev", "orders-prod"):
        config = json.loads((project / "cdktf.out" / "stacks" / stack / "cdk.tf.json").read_text())
        path = config["terraform"]["backend"]["local"]["path"]
        assert path == local_state_path(stack) == f"../../../terraform-state/{stack}.tfstate"
        # Terraform resolves it from the stack directory: outside everything synth replaces.
        resolved = (project / "cdktf.out" / "stacks" / stack / path).resolve()
        assert resolved == project / "terraform-state" / f"{stack}.tfstate"
        assert not resolved.is_relative_to(project / "cdktf.out")


def test_terraform_files_in_a_stack_directory_survive_synth(project, run_cli):
    assert run_cli("synth", "blueprints/orders.yaml")[0] == 0
    stack_dir = project / "cdktf.out" / "stacks" / STACK
    files = terraform_files(stack_dir)
    (project / "cdktf.out" / "notes.txt").write_text("mine\n")
    (stack_dir / "cdk.tf.json").write_text("{}")  # synth's own file: rewritten

    code, stdout, stderr = run_cli("synth", "blueprints/orders.yaml")
    assert code == 0, stderr
    for name, content in files.items():
        assert (stack_dir / name).read_bytes() == content, name
    assert (stack_dir / ".terraform" / "providers" / "link").is_symlink()
    assert (project / "cdktf.out" / "notes.txt").read_text() == "mine\n"
    assert json.loads((stack_dir / "cdk.tf.json").read_text())["resource"], "the synthesis is new"
    assert "kept 5 file(s) synth did not write, in place: cdktf.out/notes.txt, " in stdout
    # The state an older version kept inside the stack directory: how to move it where the stack now looks.
    assert (f"note: cdktf.out/stacks/{STACK}/terraform.orders-prod.tfstate is Terraform state kept where earlier "
            f"versions wrote it; the stack's state is now terraform-state/{STACK}.tfstate: run `terraform init "
            f"-migrate-state` in cdktf.out/stacks/{STACK} to move it there") in stderr
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".cdktf.out")) == []


def test_synth_refuses_to_drop_a_stack_directory_holding_terraform_files(project, run_cli):
    assert run_cli("synth", "blueprints/orders.yaml")[0] == 0
    terraform_files(project / "cdktf.out" / "stacks" / STACK)
    before = snapshot(project)
    code, stdout, stderr = run_cli("synth", "blueprints/orders.yaml", "--env", "dev")
    assert code == 2 and stdout == "", stderr
    assert stderr.startswith(f"error: --out cdktf.out: stack {STACK} is not in this synthesis, and its directory "
                             f"holds what synth did not write (cdktf.out/stacks/{STACK}/.terraform, ")
    assert "[E603]" in stderr and "\n  fix: synthesize that stack too" in stderr
    assert snapshot(project) == before  # nothing deleted, nothing written (the lock included)


def test_an_empty_directory_of_a_dropped_stack_goes(project, run_cli):
    assert run_cli("synth", "blueprints/orders.yaml")[0] == 0
    assert run_cli("synth", "blueprints/orders.yaml", "--env", "dev")[0] == 0
    assert sorted(p.name for p in (project / "cdktf.out" / "stacks").iterdir()) == ["orders-dev"]


def test_a_run_killed_after_moving_the_users_files_puts_them_back(project, run_cli):
    """A kill between moving `.terraform` into the staging directory and the swap: the next run moves it back."""
    assert run_cli("synth", "blueprints/orders.yaml")[0] == 0
    out = project / "cdktf.out"
    staging = project / ".cdktf.out.staging-999999"
    shutil.copytree(out, staging)
    files = terraform_files(staging / "stacks" / STACK)
    recover(out)
    assert not staging.exists()
    for name, content in files.items():
        assert (out / "stacks" / STACK / name).read_bytes() == content, name
    assert (out / MARKER).is_file()


def test_cdktf_synth_refuses_to_let_the_cdktf_cli_drop_a_stack_holding_state(project, run_cli, monkeypatch):
    """Under `cdktf synth` the CLI deletes the stack directories the app no longer writes: the app refuses first."""
    (project / "cdktf.json").write_text(json.dumps({"app": "python3 main.py",
                                                    "context": {"blueprints": ["blueprints/orders.yaml"]}}))
    orphan = project / "cdktf.out" / "stacks" / "retired-prod"
    orphan.mkdir(parents=True)
    (orphan / "terraform.retired-prod.tfstate").write_text("{}")
    monkeypatch.setenv("CDKTF_OUTDIR", str(project / "cdktf.out"))
    code, _, stderr = run_cli()
    assert code == 2, stderr
    assert "stack retired-prod is not in this synthesis" in stderr and "[E603]" in stderr
    assert (orphan / "terraform.retired-prod.tfstate").read_text() == "{}"


# --- the slow tier: real Terraform, real state ------------------------------------------------------


def _apply(stack_dir: Path, emulator: Emulator, env: dict[str, str]) -> None:
    (stack_dir / "provider_override.tf.json").write_text(json.dumps(emulator.provider_override()))
    terraform(["init", "-input=false"], stack_dir, env)
    terraform(["apply", "-input=false", "-auto-approve"], stack_dir, env)


def _plan_exit_code(stack_dir: Path, env: dict[str, str]) -> int:
    return terraform(["plan", "-input=false", "-detailed-exitcode"], stack_dir, env, check=False).returncode


@pytest.mark.terraform
def test_applied_state_survives_synth_and_the_next_plan_is_empty(project, run_cli):
    """Apply where the README says, synthesize again, plan again without `terraform init`: nothing to do."""
    assert run_cli("synth", "blueprints/orders.yaml", "--env", "prod")[0] == 0
    stack_dir = project / "cdktf.out" / "stacks" / STACK
    env = terraform_environment(project)
    with Emulator() as emulator:
        _apply(stack_dir, emulator, env)
        state = project / "terraform-state" / f"{STACK}.tfstate"
        applied = json.loads(state.read_text())
        assert any(r["type"] == "aws_dynamodb_table" for r in applied["resources"])
        lock_file = (stack_dir / ".terraform.lock.hcl").read_bytes()

        code, _, stderr = run_cli("synth", "blueprints/orders.yaml", "--env", "prod")
        assert code == 0, stderr
        assert json.loads(state.read_text()) == applied
        assert (stack_dir / ".terraform.lock.hcl").read_bytes() == lock_file
        assert _plan_exit_code(stack_dir, env) == 0


@pytest.mark.terraform
def test_state_an_older_version_kept_in_the_stack_directory_moves_with_migrate_state(project, run_cli):
    """The state of a stack synthesized before the state moved out (path `terraform.<stack>.tfstate`) is kept by
    synth, and `terraform init -migrate-state`, as synth's note says, carries it to the new place."""
    assert run_cli("synth", "blueprints/orders.yaml", "--env", "prod")[0] == 0
    stack_dir = project / "cdktf.out" / "stacks" / STACK
    config_file = stack_dir / "cdk.tf.json"
    config = json.loads(config_file.read_text())
    config["terraform"]["backend"]["local"]["path"] = f"terraform.{STACK}.tfstate"  # as earlier versions wrote
    config_file.write_text(json.dumps(config))
    env = terraform_environment(project)
    with Emulator() as emulator:
        _apply(stack_dir, emulator, env)
        old = json.loads((stack_dir / f"terraform.{STACK}.tfstate").read_text())

        code, _, stderr = run_cli("synth", "blueprints/orders.yaml", "--env", "prod")
        assert code == 0 and "terraform init -migrate-state" in stderr, stderr
        terraform(["init", "-input=false", "-migrate-state", "-force-copy"], stack_dir, env)
        moved = json.loads((project / "terraform-state" / f"{STACK}.tfstate").read_text())
        assert moved["resources"] == old["resources"] and moved["lineage"] == old["lineage"]
        assert _plan_exit_code(stack_dir, env) == 0
    assert os.path.exists(stack_dir / ".terraform")


def test_a_run_killed_between_the_renames_keeps_the_users_files(project, run_cli):
    """Killed after moving `.terraform` into staging and retiring the old output, before the new one is in place:
    the next run restores the output, then moves the files back into it."""
    assert run_cli("synth", "blueprints/orders.yaml")[0] == 0
    out = project / "cdktf.out"
    staging = project / ".cdktf.out.staging-999999"
    shutil.copytree(out, staging)
    files = terraform_files(staging / "stacks" / STACK)
    out.rename(project / ".cdktf.out.retired-999999")
    recover(out)
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".cdktf.out")) == []
    for name, content in files.items():
        assert (out / "stacks" / STACK / name).read_bytes() == content, name


def test_a_user_file_where_synth_writes_its_own_is_refused_or_kept(project, run_cli):
    """`stacks` as a file: synth would write its directory there, so it refuses (E603) and deletes nothing; a file
    beside the stack directories is the user's, and kept."""
    assert run_cli("synth", "blueprints/orders.yaml")[0] == 0
    out = project / "cdktf.out"
    (out / "stacks" / "notes-prod").write_text("mine\n")
    assert run_cli("synth", "blueprints/orders.yaml")[0] == 0
    assert (out / "stacks" / "notes-prod").read_text() == "mine\n"
    shutil.rmtree(out / "stacks")
    (out / "stacks").write_text("mine too\n")
    code, _, err = run_cli("synth", "blueprints/orders.yaml")
    assert code == 2 and "cdktf.out/stacks is not what synth writes there" in err and "[E603]" in err, err
    assert (out / "stacks").read_text() == "mine too\n"


def test_a_staging_leftover_holding_the_users_files_becomes_the_output(project):
    """No output in place, a killed run's staging holding a state file: it is put in place, not deleted."""
    staging = project / ".cdktf.out.staging-999999"
    (staging / "stacks" / STACK).mkdir(parents=True)
    (staging / MARKER).write_text("")
    (staging / "stacks" / STACK / "terraform.tfstate").write_text("precious\n")
    recover(project / "cdktf.out")
    assert (project / "cdktf.out" / "stacks" / STACK / "terraform.tfstate").read_text() == "precious\n"


@pytest.mark.parametrize("link", ["output", "stacks"])
def test_cdktf_synth_refuses_stack_directories_reached_through_a_link(project, run_cli, monkeypatch, link):
    """The cdktf CLI deletes the stack directories it no longer writes through symbolic links: the app refuses
    before it can, when the output or its `stacks` is a link."""
    (project / "cdktf.json").write_text(json.dumps({"app": "python3 main.py",
                                                    "context": {"blueprints": ["blueprints/orders.yaml"]}}))
    elsewhere = project / "elsewhere"
    (elsewhere / "stacks" / "retired-prod").mkdir(parents=True)
    (elsewhere / "stacks" / "retired-prod" / "terraform.tfstate").write_text("precious\n")
    if link == "output":
        (project / "cdktf.out").symlink_to(elsewhere)
    else:
        (project / "cdktf.out").mkdir()
        (project / "cdktf.out" / "stacks").symlink_to(elsewhere / "stacks")
    monkeypatch.setenv("CDKTF_OUTDIR", str(project / "cdktf.out"))
    code, _, stderr = run_cli()
    assert code == 2 and "[E603]" in stderr, stderr
    assert (elsewhere / "stacks" / "retired-prod" / "terraform.tfstate").read_text() == "precious\n"
