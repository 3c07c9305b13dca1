"""The package users install. Fast tier: the wheel holds the `tablewright` package with every data file it reads
at run time, nothing named `modules`, the command, and dependency ranges. Slow tier: the wheel installed into a
fresh venv outside the repository, then a user's whole journey in an empty git repository: init, new, lint,
synth, terraform validate, local, apply to it, an empty re-plan, review --plan, gate, client, and the client's
check_design, one write and one read against local; no override file left behind."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.emulator import read_exports
from tests.support.terraform_support import find_mirror, missing_tool
from tests.support.wheel_support import Installed, build_wheel

# What the package reads with `files()` or `Path(__file__).parent`, by path in the wheel.
DATA_FILES = {"tablewright/py.typed", "tablewright/capacity/prices.json", "tablewright/client/typescript_runtime.ts",
              "tablewright/client/typescript_runtime_entities.ts",
              "tablewright/scaffold/files/cdktf.json", "tablewright/scaffold/files/gitignore",
              "tablewright/scaffold/files/platform-base.yaml", "tablewright/scaffold/files/github-workflow.yml",
              "tablewright/scaffold/files/gitlab-ci.yml", "tablewright/scaffold/files/requirements-tablewright.txt"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("dist"))


def test_the_wheel_holds_the_package_and_every_data_file_and_nothing_named_modules(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tops = {name.split("/")[0] for name in names}
    assert tops == {"tablewright", wheel.name.split("-py3")[0] + ".dist-info"}
    assert names >= DATA_FILES
    sources = {str(path.relative_to(ROOT / "modules")) for path in (ROOT / "modules" / "tablewright").rglob("*.py")}
    assert sources <= names  # every module, the client runtimes read as text included
    read_at_run_time = {str(path.relative_to(ROOT / "modules"))
                        for pattern in ("*.json", "*.ts", "scaffold/files/*")
                        for path in (ROOT / "modules" / "tablewright").rglob(pattern)}
    assert read_at_run_time <= names


def test_the_wheel_gives_the_command_and_ranges_not_pins(wheel):
    archive = zipfile.ZipFile(wheel)
    info = wheel.name.split("-py3")[0] + ".dist-info"
    assert "tablewright = tablewright.cli:main" in archive.read(f"{info}/entry_points.txt").decode()
    metadata = Parser().parsestr(archive.read(f"{info}/METADATA").decode())
    required = [line for line in metadata.get_all("Requires-Dist") if "extra ==" not in line]
    assert required and not [line for line in required if "==" in line]
    assert all(re.search(r">=[\d.]+", line) for line in required if not line.startswith("tzdata")), required


def test_the_readmes_commands_install_the_exact_set_ci_tests():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"<!-- setup:(?:run|test) -->\n```sh\n(.*?)\n```", readme, re.DOTALL)
    assert len(commands) == 2 and all("-c constraints.txt" in command for command in commands)
    pinned = {line.split("==")[0].lower() for line in (ROOT / "constraints.txt").read_text().splitlines()
              if "==" in line}
    assert {"cdktf", "constructs", "jsii", "pydantic", "moto", "boto3", "pytest", "cdktn"} <= pinned


# The installed wheel, as a user runs it -------------------------------------------------------------------------


def run(installed: Installed, cwd: Path, *command: str, env: dict[str, str], check: int | None = 0,
        **options: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(command), cwd=cwd, env=env, capture_output=True, text=True, **options)
    assert check is None or done.returncode == check, f"{command}: {done.returncode}\n{done.stdout}{done.stderr}"
    return done


@pytest.mark.terraform
def test_a_users_journey_with_the_installed_wheel(installed_tool, tmp_path):
    mirror = find_mirror()
    if mirror is None:
        missing_tool("no hashicorp/aws provider mirror (set TABLEWRIGHT_PROVIDER_MIRROR)")
    identity = {f"GIT_{who}_{what}": value for who in ("AUTHOR", "COMMITTER")
                for what, value in (("NAME", "A User"), ("EMAIL", "user@example.com"))}
    env = installed_tool.environment(TABLEWRIGHT_PROVIDER_MIRROR=str(mirror), HOME=str(tmp_path / "home"), **identity)
    env.pop("TF_CLI_CONFIG_FILE", None)
    repository = tmp_path / "infra"
    repository.mkdir()

    def tw(*arguments: str, check: int | None = 0, cwd: Path = repository) -> subprocess.CompletedProcess[str]:
        return run(installed_tool, cwd, "tablewright", *arguments, env=env, check=check)

    def git(*arguments: str) -> None:
        run(installed_tool, repository, "git", *arguments, env=env)

    git("init", "-q", "-b", "main")
    tw("init")
    git("add", "-A")
    git("commit", "-qm", "scaffold")
    git("checkout", "-q", "-b", "payments")
    tw("new", "payments")
    assert "0 error(s), 0 warning(s)" in tw("lint", "--env", "dev").stderr
    tw("synth", "--env", "dev", cwd=repository / "blueprints")  # from a subdirectory: the root's output
    stack = repository / "cdktf.out/stacks/payments-dev"
    tw("terraform", "payments-dev", "--", "init", "-backend=false", "-input=false")
    assert "The configuration is valid." in tw("terraform", "payments-dev", "--", "validate", "-no-color").stdout

    local = subprocess.Popen(["tablewright", "local", "--empty", "--port", "0"], cwd=repository, env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        exports = read_exports(local)
        endpoint = ["terraform", "payments-dev", "--endpoint", exports["AWS_ENDPOINT_URL"], "--"]
        tw(*endpoint, "init", "-input=false", "-reconfigure")
        tw(*endpoint, "plan", "-input=false", "-out=plan.tfplan")
        plan = tw(*endpoint, "show", "-json", "plan.tfplan").stdout
        (repository / "plan.json").write_text(plan)
        assert json.loads(plan)["resource_changes"]
        tw(*endpoint, "apply", "-input=false", "plan.tfplan")
        tw(*endpoint, "plan", "-input=false", "-detailed-exitcode")  # exit 0: nothing changes after the apply
        review = tw("review", "--changed-since", "main", "--env", "dev", "--plan", "payments-dev=plan.json").stdout
        assert "`blueprints/payments.yaml`" in review and "Plan: 15 to add, 0 to change, 0 to destroy" in review
        gate = tw("gate", "--plan", "plan.json", "--env", "dev", "--now", "2026-12-07T02:30:00+00:00")
        assert gate.stdout.startswith("gate PASS for payments-dev")
        tw("client", "--env", "dev", "--lang", "python", "--out", "app")
        application = """
import boto3, payments_client as db
from datetime import datetime, timezone
table = db.PaymentsTable(boto3.client("dynamodb"), db.TABLE_NAMES["dev"])
table.check_design()
table.put_item({"itemId": "a-1", "title": "first", "createdAt": datetime(2026, 12, 5, tzinfo=timezone.utc)})
print(table.item_by_id(itemId="a-1"))
"""
        done = run(installed_tool, repository / "app", "python", "-c", application, env={**env, **exports})
        assert done.stdout == ("{'title': 'first', 'createdAt': datetime.datetime(2026, 12, 5, 0, 0, "
                               "tzinfo=datetime.timezone.utc)}\n")
        local.send_signal(signal.SIGTERM)
        assert local.wait(timeout=30) == 0
    finally:
        if local.poll() is None:
            local.kill()
    assert not list(stack.glob("*override*"))
    assert not (repository / "terraform-state").exists()  # the emulator's state stays beside the stack
