"""The generated TypeScript client, compiled by tsc and run by Node against the emulator server (moto on
127.0.0.1): every check `verify --client` makes of the Python client, and `checkDesign()` on a stale table."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import boto3
import pytest

from tablewright.client.model import client_of
from tablewright.design.locked import DESIGN_TAG
from tablewright.stacks.stack import Stack
from tablewright.synth.synth import synthesize
from tablewright.verify.client import client_checks
from tablewright.verify.samples import generate_samples
from tablewright.verify.tables import create_table_request
from tests.support.client_support import (
    BLUEPRINTS,
    StaleDesignInNode,
    TypeScriptTable,
    module_text,
    python_module,
    run_tsc,
    stacks_of,
)
from tests.support.emulator import Emulator

pytestmark = pytest.mark.terraform
CASES = {"orders": "dev", "features": None, "client": None}  # bundled; sharded; sparse with every type


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, Path]:
    """Each case's module, compiled to CommonJS."""
    scratch = tmp_path_factory.mktemp("typescript")
    for name, environment in CASES.items():
        (scratch / f"{name}_client.ts").write_text(module_text(BLUEPRINTS[name], "typescript", environment))
    done = run_tsc(scratch, "*.ts", out_dir="build")
    assert done.returncode == 0, done.stdout + done.stderr
    return {name: scratch / "build" / f"{name}_client.js" for name in CASES}


def _table(emulator: Emulator, stack: Stack, scratch: Path) -> tuple[Any, str]:
    """The stack's table as its synthesized Terraform declares it (tags included), on the emulator: (a boto3
    client of the emulator, the table's name)."""
    (written,) = synthesize([stack], scratch / "out")
    request = create_table_request(json.loads(written.read_text()))
    client = boto3.client("dynamodb", endpoint_url=emulator.endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    client.create_table(**request)
    return client, request["TableName"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_typescript_client_passes_every_check_against_the_emulator(name, compiled, tmp_path):
    stack = stacks_of(BLUEPRINTS[name], CASES[name])[0]
    with Emulator() as emulator:
        client, table_name = _table(emulator, stack, tmp_path)
        table = TypeScriptTable(compiled[name], client_of([stack], ""), emulator.endpoint, table_name)
        try:
            checks = client_checks(client, stack.design, table.client, table, table_name,
                                   generate_samples(stack.design), StaleDesignInNode)
        finally:
            table.close()
    assert {check.name: check.failure for check in checks if check.failure} == {}
    assert len(checks) == 3 + len(stack.design.plans)


def test_check_design_in_typescript_rejects_a_table_of_another_design(compiled, tmp_path):
    stack = stacks_of(BLUEPRINTS["orders"], "dev")[0]
    with Emulator() as emulator:
        client, table_name = _table(emulator, stack, tmp_path)
        arn = client.describe_table(TableName=table_name)["Table"]["TableArn"]
        client.tag_resource(ResourceArn=arn, Tags=[{"Key": DESIGN_TAG, "Value": "0123456789abcdef"}])
        table = TypeScriptTable(compiled["orders"], client_of([stack], ""), emulator.endpoint, table_name)
        try:
            with pytest.raises(StaleDesignInNode, match="carries design 0123456789abcdef, this module was generated"):
                table.check_design()
        finally:
            table.close()


TEXTS = ["\uff5e", "\U0001F600", "a", "\uff01", "\U0001F601", "z", "\ue000", "\U00010000"]


def test_typescript_merges_shards_in_dynamodbs_order_of_text(write_blueprint, tmp_path):
    """DynamoDB orders strings by UTF-8 bytes (code points); JavaScript's `<` by UTF-16 units, which differ for
    U+E000-U+FFFF against characters beyond U+FFFF. Both clients must page a sharded read alike."""
    path = write_blueprint(textwrap.dedent("""\
        blueprint: rooms
        version: 1.0.0
        table: {name: rooms_main}
        entities:
          Msg:
            attributes: {room: string, text: string, msgId: string}
            key: {pk: "ROOM#{room}", sk: "{text}#{msgId}", shards: 3, shard_by: [msgId]}
        access_patterns:
          messages: {entity: Msg, where: {room: "="}}
    """), "rooms.yaml")
    stack = stacks_of(path)[0]
    (tmp_path / "ts").mkdir()
    (tmp_path / "ts" / "rooms_client.ts").write_text(module_text(path, "typescript"))
    done = run_tsc(tmp_path / "ts", "*.ts", out_dir="build")
    assert done.returncode == 0, done.stdout + done.stderr
    python = python_module(path)
    with Emulator() as emulator:
        client, table_name = _table(emulator, stack, tmp_path)
        table = TypeScriptTable(tmp_path / "ts" / "build" / "rooms_client.js", client_of([stack], ""),
                                emulator.endpoint, table_name)
        try:
            for number, text in enumerate(TEXTS * 2):
                table.put_msg({"room": "r", "text": text, "msgId": f"m{number:02d}"})
            reference = python.RoomsTable(client, table_name)
            everything = [m["msgId"] for m in reference.messages(room="r", limit=None).items]
            assert everything == [m["msgId"] for m in table.messages(room="r", limit=None).items]
            for size in (1, 2, 3):
                walked, token = [], None
                while True:
                    page = table.messages(room="r", limit=size, start=token)
                    walked += [m["msgId"] for m in page.items]
                    if (token := page.next) is None:
                        break
                assert walked == everything, size
        finally:
            table.close()
    by_text = sorted(range(16), key=lambda n: (TEXTS * 2)[n].encode("utf-8"))
    assert [(TEXTS * 2)[int(m[1:])] for m in everything] == [(TEXTS * 2)[n] for n in by_text]


def test_old_clients_are_stale_against_a_table_of_the_changed_design_on_the_emulator(write_blueprint, tmp_path):
    """A key template changes (Product's partition key): the table the new blueprint synthesizes carries the new
    digest, and the clients generated before, Python and TypeScript, refuse it; the new ones accept it."""
    original = BLUEPRINTS["orders"].read_text()
    old = write_blueprint(original, "orders.yaml")
    old_python = python_module(old, "dev")
    (tmp_path / "ts").mkdir()
    (tmp_path / "ts" / "orders_client.ts").write_text(module_text(old, "typescript", "dev"))
    done = run_tsc(tmp_path / "ts", "*.ts", out_dir="build")
    assert done.returncode == 0, done.stdout + done.stderr
    new = write_blueprint(original.replace('key: {pk: "PRODUCT#{productId}", sk: "DETAILS"}',
                                           'key: {pk: "ITEM#{productId}", sk: "DETAILS"}'), "orders.yaml")
    new_python = python_module(new, "dev")
    assert new_python.DESIGN_DIGEST != old_python.DESIGN_DIGEST
    stack = stacks_of(new, "dev")[0]
    with Emulator() as emulator:
        client, table_name = _table(emulator, stack, tmp_path)
        new_python.OrdersTable(client, table_name).check_design()
        with pytest.raises(old_python.StaleDesign, match=f"carries design {new_python.DESIGN_DIGEST}"):
            old_python.OrdersTable(client, table_name).check_design()
        table = TypeScriptTable(tmp_path / "ts" / "build" / "orders_client.js", client_of(stacks_of(old, "dev"), ""),
                                emulator.endpoint, table_name)
        try:
            with pytest.raises(StaleDesignInNode, match=f"this module was generated for design "
                                                        f"{old_python.DESIGN_DIGEST}"):
                table.check_design()
        finally:
            table.close()
