"""`tablewright local` (the emulator the tests use, shipped to users), `tablewright terraform --endpoint` against
it, and `tablewright.testing` for application tests: each run as a user runs it, in processes of their own."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import boto3
import pytest

from tablewright.synth.output import LOCAL_OVERRIDE_FILE
from tablewright.testing import fixture, local_aws
from tests.conftest import ROOT
from tests.support.emulator import read_exports
from tests.support.terraform_support import find_mirror, missing_tool

pytestmark = pytest.mark.terraform  # the emulator and the Terraform CLI: the slow tier

TOOL = [sys.executable, "-m", "tablewright"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The bundled blueprints, their base and locks, in a repository of their own."""
    root = tmp_path / "project"
    shutil.copytree(ROOT / "blueprints", root / "blueprints")
    (root / "cdktf.json").write_text(json.dumps({"language": "python", "app": "tablewright"}))
    return root


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def environment(**extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    return {**env, "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1", **extra}


@contextmanager
def local(project: Path, *arguments: str) -> Iterator[tuple[subprocess.Popen[str], dict[str, str]]]:
    """`tablewright local ARGS` running, and the variables of the export lines it printed first."""
    process = subprocess.Popen([*TOOL, "local", *arguments], cwd=project, env=environment(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        yield process, read_exports(process)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def client_of(exports: dict[str, str], service: str = "dynamodb"):
    return boto3.client(service, endpoint_url=exports["AWS_ENDPOINT_URL"], region_name=exports["AWS_REGION"],
                        aws_access_key_id=exports["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=exports["AWS_SECRET_ACCESS_KEY"])


def test_local_serves_the_environments_tables_as_designed_and_stops_on_sigterm(project):
    port = free_port()
    with local(project, "--env", "dev", "--items", "2", "--port", str(port)) as (process, exports):
        assert exports == {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "testing",
                           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
                           "AWS_DEFAULT_REGION": "us-east-1"}
        dynamodb = client_of(exports)
        assert sorted(dynamodb.list_tables()["TableNames"]) == ["dev-crm_main", "dev-orders_main"]
        synthesized = json.loads(subprocess.run(
            [*TOOL, "synth", "blueprints/orders.yaml", "--env", "dev", "--out", "out"], cwd=project, env=environment(),
            capture_output=True, text=True, check=True) and (project / "out/stacks/orders-dev/cdk.tf.json").read_text())
        [declared] = synthesized["resource"]["aws_dynamodb_table"].values()
        table = dynamodb.describe_table(TableName="dev-orders_main")["Table"]
        assert {key["AttributeName"]: key["KeyType"] for key in table["KeySchema"]} == {
            declared["hash_key"]: "HASH", declared["range_key"]: "RANGE"}
        assert sorted((index["IndexName"], index["Projection"]["ProjectionType"],
                       tuple(index["Projection"].get("NonKeyAttributes", ())))
                      for index in table["GlobalSecondaryIndexes"]) == sorted(
            (index["name"], index["projection_type"], tuple(index.get("non_key_attributes", ())))
            for index in declared["global_secondary_index"])
        assert table["StreamSpecification"]["StreamViewType"] == declared["stream_view_type"]
        tags = {tag["Key"]: tag["Value"] for tag in dynamodb.list_tags_of_resource(
            ResourceArn=table["TableArn"])["Tags"]}
        assert tags == declared["tags"] and "tablewright:design" in tags
        items = dynamodb.scan(TableName="dev-orders_main")["Items"]
        entities = [item["_entity"]["S"] for item in items]  # verify's samples, two of each entity
        assert sorted(entities) == sorted(2 * sorted(set(entities))) and len(set(entities)) >= 3
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    with socket.socket() as again:  # the port is free again
        again.bind(("127.0.0.1", port))


def test_the_generated_client_checks_its_design_writes_and_reads_on_local(project, tmp_path):
    out = project / "app"
    subprocess.run([*TOOL, "client", "blueprints/orders.yaml", "--env", "dev", "--lang", "python", "--out", "app"],
                   cwd=project, env=environment(), check=True, capture_output=True)
    with local(project, "blueprints/orders.yaml", "--port", str(free_port())) as (process, exports):
        script = """
import boto3, orders_client as db
table = db.OrdersTable(boto3.client("dynamodb"), db.TABLE_NAMES["dev"])
table.check_design()
print("design ok")
"""
        done = subprocess.run([sys.executable, "-c", script], cwd=out, env=environment(**exports),
                              capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout == "design ok\n", done.stderr
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0


@pytest.fixture
def terraform_env(tmp_path) -> dict[str, str]:
    mirror = find_mirror()
    if mirror is None or shutil.which("terraform") is None:
        missing_tool("Terraform and a provider mirror are needed")
    env = environment(TABLEWRIGHT_PROVIDER_MIRROR=str(mirror), TF_IN_AUTOMATION="1")
    env.pop("TF_CLI_CONFIG_FILE", None)
    return env


def tablewright(project: Path, env: dict[str, str], *arguments: str, check: bool = True,
                **options: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*TOOL, *arguments], cwd=project, env=env, capture_output=True, text=True, **options)
    assert not check or done.returncode == 0, f"{arguments}: {done.stdout[-3000:]}{done.stderr[-3000:]}"
    return done


def test_terraform_applies_to_local_and_replans_empty_leaving_no_override_and_no_real_state(project, terraform_env):
    stack = project / "cdktf.out/stacks/orders-dev"
    tablewright(project, terraform_env, "synth", "blueprints/orders.yaml", "--env", "dev")
    with local(project, "--empty", "--port", str(free_port())) as (_process, exports):
        endpoint = ["terraform", "orders-dev", "--endpoint", exports["AWS_ENDPOINT_URL"], "--"]
        tablewright(project, terraform_env, *endpoint, "init", "-input=false", "-no-color")
        tablewright(project, terraform_env, *endpoint, "apply", "-auto-approve", "-input=false", "-no-color")
        replan = tablewright(project, terraform_env, *endpoint, "plan", "-detailed-exitcode", "-input=false",
                             "-no-color", check=False)
        assert replan.returncode == 0, replan.stdout + replan.stderr
        assert "dev-orders_main" in client_of(exports).list_tables()["TableNames"]
        failed = tablewright(project, terraform_env, *endpoint, "apply", "no-such.tfplan", check=False)
        assert failed.returncode == 1 and "no-such.tfplan" in failed.stderr
    assert not (stack / LOCAL_OVERRIDE_FILE).exists()
    assert not (project / "terraform-state").exists()  # the stack's real (local) backend never saw the emulator
    assert (stack / ".tablewright-local" / "terraform.tfstate").is_file()
    assert (stack / ".terraform.lock.hcl").is_file() and not (stack / ".terraform").exists()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stopped_terraform_run_removes_its_override(project, terraform_env, stop):
    """A signal sent to `tablewright terraform` alone (a CI runner, `kill`) reaches Terraform, here waiting for a
    confirmation, once; when Terraform has stopped the override goes, and nothing is left running."""
    stack = project / "cdktf.out/stacks/orders-dev"
    tablewright(project, terraform_env, "synth", "blueprints/orders.yaml", "--env", "dev")
    with local(project, "--empty", "--port", str(free_port())) as (_, exports):
        endpoint = ["terraform", "orders-dev", "--endpoint", exports["AWS_ENDPOINT_URL"], "--"]
        tablewright(project, terraform_env, *endpoint, "init", "-input=false")
        running = subprocess.Popen([*TOOL, *endpoint, "apply", "-no-color"], cwd=project, env=terraform_env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (stack / LOCAL_OVERRIDE_FILE).exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(3)  # Terraform plans, then waits for "yes"
        running.send_signal(stop)
        running.communicate(timeout=120)
        assert running.returncode != 0
    assert not (stack / LOCAL_OVERRIDE_FILE).exists()
    left = subprocess.run(["pgrep", "-f", "terraform apply -no-color"], capture_output=True, text=True)
    assert not [pid for pid in left.stdout.split() if Path(f"/proc/{pid}/cwd").resolve() == stack]


ORDERS = fixture(str(ROOT / "blueprints" / "orders.yaml"), env="dev")


def test_the_pytest_fixture_gives_each_test_the_designed_table(ORDERS):
    dynamodb = ORDERS.client()
    name = ORDERS.table("orders")
    assert name == "dev-orders_main" and ORDERS.tables[0].items == 0
    assert dynamodb.describe_table(TableName=name)["Table"]["TableStatus"] == "ACTIVE"
    dynamodb.put_item(TableName=name, Item={"PK": {"S": "X"}, "SK": {"S": "Y"}})
    assert boto3.client("dynamodb").scan(TableName=name)["Count"] == 1  # the environment points at it


def test_a_fresh_table_per_test_and_nothing_left_after(ORDERS):
    assert ORDERS.client().scan(TableName=ORDERS.table("orders"))["Count"] == 0  # not the other test's item


def test_the_users_aws_configuration_and_proxies_never_reach_the_emulator(project, monkeypatch, tmp_path):
    """A profile that does not exist, a broken config file, a bad retry setting and a proxy: all set aside while
    the emulator runs (the CLI's and the library's), and put back afterwards."""
    broken = tmp_path / "config"
    broken.write_text("[profile x\nregion =")
    hostile = {"AWS_PROFILE": "nowhere", "AWS_CONFIG_FILE": str(broken), "AWS_MAX_ATTEMPTS": "abc",
               "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
    for name, value in hostile.items():
        monkeypatch.setenv(name, value)
    with local_aws(ROOT / "blueprints" / "orders.yaml", env="dev") as aws:
        assert aws.client().describe_table(TableName="dev-orders_main")["Table"]["TableStatus"] == "ACTIVE"
    assert {name: os.environ.get(name) for name in hostile} == hostile
    process = subprocess.Popen([*TOOL, "local", "--port", "0"], cwd=project, text=True, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**environment(), **hostile})
    try:
        first = process.stdout.readline() if process.stdout else ""
        assert first.startswith("export AWS_ENDPOINT_URL="), process.stderr.read() if process.stderr else ""
    finally:
        process.terminate()
        assert process.wait(timeout=30) == 0


def test_the_context_manager_loads_samples_and_puts_the_environment_back(monkeypatch):
    monkeypatch.setenv("AWS_PROFILE", "production")
    with local_aws(ROOT / "blueprints" / "crm.yaml", env="dev", items=1) as aws:
        assert "AWS_PROFILE" not in os.environ and os.environ["AWS_ENDPOINT_URL"] == aws.endpoint
        [created] = aws.tables
        assert created.table == aws.table("crm") == "dev-crm_main" and created.items >= 2
        assert aws.client().scan(TableName="dev-crm_main")["Count"] == created.items
        ttl = aws.client().describe_time_to_live(TableName="dev-crm_main")["TimeToLiveDescription"]
        assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expiresAt"}  # crm.yaml's ttl_attribute
    assert os.environ["AWS_PROFILE"] == "production" and "AWS_ENDPOINT_URL" not in os.environ


def test_the_client_guides_unit_test_passes_as_written(project):
    """docs/guides/application-clients.md's conftest.py and test module, with the generated client, run by pytest
    in the project as an application team would."""
    import re

    guide = (ROOT / "docs" / "guides" / "application-clients.md").read_text()
    section = guide.split("## Unit tests against a local table")[1].split("\n## ")[0]
    files = {match.group(1): match.group(0)[len("```python\n"):]
             for match in re.finditer(r"```python\n# (tests/\w+\.py)\n.*?(?=```)", section, re.DOTALL)}
    assert sorted(files) == ["tests/conftest.py", "tests/test_orders.py"]
    for name, text in files.items():
        (project / name).parent.mkdir(exist_ok=True)
        (project / name).write_text(text)
    tablewright(project, environment(), "client", "blueprints/orders.yaml", "--lang", "python", "--out", "app/db")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "tests"], cwd=project, env=environment(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
