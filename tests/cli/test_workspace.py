"""Living in one's own repository: every command works from any directory of it (the root found from cdktf.json,
else blueprints/, or --root), paths typed are relative to where they were typed, mistakes get "did you mean" and
their command's own help, `--version`; and the refusals of `local` and `terraform` that start nothing."""

from __future__ import annotations

import json
import os
import socket
from importlib import metadata
from pathlib import Path

import pytest

from tablewright.cli.paths import find_root
from tablewright.errors import EXIT_BAD_INPUT


@pytest.fixture
def project(tmp_path, run_cli, monkeypatch) -> Path:
    """An initialised repository with one blueprint, synthesized for dev; the working directory is a subdirectory."""
    root = tmp_path / "infra"
    assert run_cli("init", root)[0] == 0
    monkeypatch.chdir(root)
    assert run_cli("new", "payments")[0] == 0
    (root / "services" / "api").mkdir(parents=True)
    monkeypatch.chdir(root / "services" / "api")
    return root


def refused(run_cli, *args: str) -> str:
    code, out, err = run_cli(*args)
    assert code == EXIT_BAD_INPUT and out == "" and "Traceback" not in err, (code, out, err)
    [error, fix, docs] = err.strip().splitlines()[-3:]
    assert error.startswith("error: ") and fix.startswith("  fix: ") and docs.startswith("  docs: "), err
    return err


def test_version_is_the_installed_distributions(run_cli, capsys):
    with pytest.raises(SystemExit) as exited:
        run_cli("--version")
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"tablewright {metadata.version('tablewright')}\n"


def test_commands_run_in_the_project_from_a_subdirectory(project, run_cli):
    code, _out, err = run_cli("synth", "--env", "dev")
    assert code == 0, err
    assert "note: in the project ../.." in err
    assert (project / "cdktf.out/stacks/payments-dev/cdk.tf.json").is_file()  # the root's output, not here
    assert not (project / "services/api/cdktf.out").exists()
    assert Path.cwd() == project / "services" / "api"  # put back afterwards


def test_paths_typed_are_relative_to_where_they_were_typed(project, run_cli):
    code, _, err = run_cli("lint", "../../blueprints/payments.yaml", "--env", "dev")
    assert code == 0, err
    code, _out, _ = run_cli("client", "../../blueprints/payments.yaml", "--env", "dev", "--lang", "python",
                           "--out", "db")
    assert code == 0 and (project / "services/api/db/payments_client.py").is_file()


def test_root_names_the_project_from_anywhere(project, run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_cli("lint", "--root", str(project), "--env", "dev")
    assert code == 0 and "1 stack(s) of 1 blueprint(s) linted" in err
    assert "--root nowhere: no such directory" in refused(run_cli, "lint", "--root", "nowhere")


def test_the_root_is_cdktf_json_first_then_blueprints_and_never_above_the_repository(tmp_path):
    (tmp_path / "outer" / "blueprints").mkdir(parents=True)
    repository = tmp_path / "outer" / "repo"
    (repository / ".git").mkdir(parents=True)
    (repository / "blueprints" / "team").mkdir(parents=True)
    assert find_root(repository / "blueprints" / "team") == repository
    (repository / "blueprints" / "team" / "cdktf.json").write_text("{}")
    assert find_root(repository / "blueprints" / "team") == repository / "blueprints" / "team"
    (tmp_path / "lonely" / ".git").mkdir(parents=True)
    assert find_root(tmp_path / "lonely") is None  # outer/blueprints is beyond the repository


@pytest.mark.parametrize(("arguments", "message", "fix"), [
    (["lnt"], "invalid choice: 'lnt'", "did you mean lint or client? see `tablewright --help`"),
    (["lint", "--formt", "json"], "unrecognized arguments: --formt", "did you mean --format? see `tablewright lint"
                                                                      " --help`"),
    (["lint", "--format", "jsn"], "invalid choice: 'jsn'", "did you mean json? see `tablewright lint --help`"),
    (["synth", "--chnaged-since", "main"], "unrecognized arguments: --chnaged-since",
     "did you mean --changed-since?"),
    (["gate"], "the following arguments are required: --plan", "see `tablewright gate --help`"),
    (["lint", "--", "x"], "unrecognized arguments: -- x", "see `tablewright lint --help`"),
])
def test_mistakes_get_the_closest_name_and_their_commands_own_help(project, run_cli, arguments, message, fix):
    err = refused(run_cli, *arguments)
    assert message in err and fix in err


def test_a_mistyped_path_gets_the_nearest_names(project, run_cli):
    err = refused(run_cli, "lint", "../../blueprints/paymnts.yaml")  # said from the root the command runs in
    assert "file not found: blueprints/paymnts.yaml" in err and "did you mean blueprints/payments.yaml?" in err
    assert "did you mean cdktf.json?" in refused(run_cli, "gate", "--plan", "../../cdktf.jsn")


def test_terraform_refuses_an_unknown_stack_with_the_nearest_name(project, run_cli):
    assert "run `tablewright synth` first" in refused(run_cli, "terraform", "payments-dev", "--", "plan")
    assert run_cli("synth", "--env", "dev")[0] == 0
    err = refused(run_cli, "terraform", "paymnts-dev", "--", "plan")
    assert "no stack 'paymnts-dev'" in err and "did you mean payments-dev?" in err and "[E613]" in err
    for name in ("../payments-dev", "payments-dev/../payments-dev", "PAYMENTS-DEV"):
        assert "[E613]" in refused(run_cli, "terraform", name, "--", "plan")


@pytest.mark.parametrize(("arguments", "problem"), [
    (["--endpoint", "http://10.0.0.8:4566", "--", "plan"], "is not the emulator's URL"),
    (["--endpoint", "https://127.0.0.1:4566", "--", "plan"], "is not the emulator's URL"),
    (["--endpoint", "http://127.0.0.1:4566/../x", "--", "plan"], "is not the emulator's URL"),
    (["--endpoint", "http://127.0.0.1:4566"], "no Terraform command after `--`"),
])
def test_terraform_refuses_an_endpoint_other_than_the_emulator_and_a_missing_command(project, run_cli, arguments,
                                                                                    problem):
    assert run_cli("synth", "--env", "dev")[0] == 0
    err = refused(run_cli, "terraform", "payments-dev", *arguments)
    assert problem in err
    assert not list((project / "cdktf.out/stacks/payments-dev").glob("*override*"))


def test_a_mirror_without_the_provider_is_refused_before_terraform_runs(project, run_cli, tmp_path, monkeypatch):
    assert run_cli("synth", "--env", "dev")[0] == 0
    monkeypatch.setenv("TABLEWRIGHT_PROVIDER_MIRROR", str(tmp_path))
    err = refused(run_cli, "terraform", "payments-dev", "--", "init")
    assert f"TABLEWRIGHT_PROVIDER_MIRROR={tmp_path} holds no registry.terraform.io/hashicorp/aws" in err
    assert "terraform providers mirror" in err and "[E614]" in err
    assert sorted(os.listdir(project / "cdktf.out/stacks/payments-dev")) == ["cdk.tf.json"]


def test_terraform_missing_from_path_is_one_located_error(project, run_cli, monkeypatch, tmp_path):
    assert run_cli("synth", "--env", "dev")[0] == 0
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("TABLEWRIGHT_PROVIDER_MIRROR", raising=False)
    assert "the Terraform CLI is not installed" in refused(run_cli, "terraform", "payments-dev", "--", "init")


@pytest.mark.parametrize(("arguments", "problem"), [
    (["--host", "0.0.0.0"], "--host 0.0.0.0: the emulator serves 127.0.0.1 only"),
    (["--host", "localhost"], "--host localhost: the emulator serves 127.0.0.1 only"),
    (["--port", "70000"], "--port 70000 is not a TCP port"),
    (["--items", "-1"], "--items -1 is out of range"),
    (["--empty", "--items", "3"], "--empty creates no table"),
])
def test_local_refuses_what_it_cannot_serve_before_anything_starts(project, run_cli, arguments, problem):
    err = refused(run_cli, "local", *arguments)
    assert problem in err


def test_local_on_a_busy_port_is_refused_and_leaves_nothing_running(project, run_cli):
    import threading

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        threads = threading.active_count()
        err = refused(run_cli, "local", "--empty", "--port", str(port))
        assert f"cannot serve on 127.0.0.1:{port}" in err and "pass another --port" in err and "[E612]" in err
        assert threading.active_count() == threads


def test_the_stack_directory_keeps_only_what_synth_and_terraform_write(project, run_cli):
    """No override or emulator state appears without `--endpoint`."""
    assert run_cli("synth", "--env", "dev")[0] == 0
    config = json.loads((project / "cdktf.out/stacks/payments-dev/cdk.tf.json").read_text())
    assert config["terraform"]["backend"] == {"local": {"path": "../../../terraform-state/payments-dev.tfstate"}}


def test_terraform_never_writes_through_a_link_or_into_a_file(project, run_cli, tmp_path):
    assert run_cli("synth", "--env", "dev")[0] == 0
    stack = project / "cdktf.out/stacks/payments-dev"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    endpoint = ["terraform", "payments-dev", "--endpoint", "http://127.0.0.1:4566", "--", "version"]
    (stack / "tablewright_local_override.tf.json").symlink_to(victim)
    assert "is not a file Tablewright wrote" in refused(run_cli, *endpoint)
    assert "is not a file Tablewright wrote" in refused(run_cli, "terraform", "payments-dev", "--", "version")
    (stack / "tablewright_local_override.tf.json").unlink()
    (stack / ".tablewright-local").symlink_to(tmp_path)
    assert "is not a directory of its own" in refused(run_cli, *endpoint)
    (stack / ".tablewright-local").unlink()
    (stack / ".tablewright-local").write_text("")
    assert "is not a directory of its own" in refused(run_cli, *endpoint)
    assert victim.read_text() == "precious\n" and sorted(os.listdir(tmp_path)) == ["infra", "victim.txt"]


def test_synth_drops_an_override_a_killed_run_left(project, run_cli):
    """Plain `terraform` in the stack would otherwise reach the emulator, with its state."""
    assert run_cli("synth", "--env", "dev")[0] == 0
    stack = project / "cdktf.out/stacks/payments-dev"
    (stack / "tablewright_local_override.tf.json").write_text("{}")
    (stack / ".terraform.lock.hcl").write_text("# kept\n")
    assert run_cli("synth", "--env", "dev")[0] == 0
    assert sorted(os.listdir(stack)) == [".terraform.lock.hcl", "cdk.tf.json"]


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:4566#${file(\"/etc/passwd\")}", "http://u:p@127.0.0.1:4566",
                                      "http://127.0.0.1:99999", "http://127.0.0.1:abc", "http://127.0.0.1:4566?",
                                      " http://127.0.0.1:4566", "http://127.0.0.1:4566\t", "http://127.0.0.1"])
def test_an_endpoint_is_refused_unless_it_is_only_the_emulators_port(endpoint):
    from tablewright.errors import TablewrightError
    from tablewright.local.terraform import check_endpoint

    with pytest.raises(TablewrightError, match="is not the emulator's URL"):
        check_endpoint(endpoint)
    assert check_endpoint("http://127.0.0.1:4566/") == "http://127.0.0.1:4566"


def test_init_never_writes_through_a_linked_folder(tmp_path, run_cli):
    outside = tmp_path / "outside"
    outside.mkdir()
    repository = tmp_path / "repo"
    (repository / "blueprints").mkdir(parents=True)
    (repository / "blueprints" / "shared").symlink_to(outside)
    err = refused(run_cli, "init", repository)
    assert "[E611]" in err and "blueprints/shared/platform-base.yaml" in err
    assert sorted(os.listdir(repository)) == ["blueprints"] and not os.listdir(outside)
    code, out, _ = run_cli("init", repository, "--skip-existing")
    assert code == 0 and "left as it is: " in out and not os.listdir(outside)
    assert (repository / "cdktf.json").is_file()


def test_a_failed_init_removes_what_it_wrote(tmp_path, run_cli, monkeypatch):
    """A write that fails half-way (a full disk) leaves no file and no folder of this run behind."""
    import errno

    from tablewright.cli import workspace_commands

    real_open = os.open

    def full_disk_at_the_schema(path, *args, **kwargs):
        if str(path).endswith("blueprint-base.schema.json"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(workspace_commands.os, "open", full_disk_at_the_schema)
    (tmp_path / "repo").mkdir()
    err = refused(run_cli, "init", tmp_path / "repo")
    assert "No space left on device" in err and "[E611]" in err
    assert os.listdir(tmp_path / "repo") == []


def test_init_with_root_scaffolds_that_root_and_says_the_way_from_here(tmp_path, run_cli, monkeypatch):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    monkeypatch.chdir(tmp_path / "y")
    code, out, _ = run_cli("init", "--root", "../x")
    assert code == 0 and (tmp_path / "x" / "cdktf.json").is_file() and not os.listdir(tmp_path / "y")
    code, out, _ = run_cli("init", "new")
    assert code == 0 and "  cd new " in out  # from where it was typed


def test_the_last_root_wins_and_an_empty_one_is_refused(project, run_cli, tmp_path):
    assert "--root is empty" in refused(run_cli, "lint", "--root=")
    assert run_cli("lint", "--env", "dev", "--root", "/nonexistent", "--root", str(project))[0] == 0
    assert "not a directory" in refused(run_cli, "lint", "--root", str(project / "cdktf.json"))


def test_a_reader_that_goes_away_ends_the_command_as_sigpipe_would(project):
    """`tablewright list | head -c 1`, once head has gone: no traceback, exit 141 as for a program SIGPIPE stops."""
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        done = subprocess.run([sys.executable, "-m", "tablewright", "list"], cwd=project, stdout=write,
                              stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert done.returncode == 141 and "Traceback" not in done.stderr and "internal error" not in done.stderr
