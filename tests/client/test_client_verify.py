"""`verify --client`: it proves the generated Python module of every test blueprint against the embedded DynamoDB,
and fails a module broken on purpose (a wrong key prefix, pages that repeat an item, a count of one shard, a
batch get out of order)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablewright.client.model import client_of
from tablewright.verify.client import client_checks
from tablewright.verify.samples import generate_samples
from tests.conftest import ROOT
from tests.support.client_support import BLUEPRINTS, module_text, python_module, stacks_of, table_of

# Every case takes seconds against moto (the sparse design with every type and the sharded one 8 s each): the slow
# tier runs them all; the fast one checks each write and pattern of the bundled two through the request recording
# (tests/client/test_client_requests.py) and breaks features' module below.
HEAVY = {"client", "features", "crm", "orders"}


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.terraform) if name in HEAVY else name
                                  for name in sorted(BLUEPRINTS)])
def test_verify_client_passes_every_write_and_pattern(name, run_cli):
    code, out, err = run_cli("verify", str(BLUEPRINTS[name]), "--client", "--format", "json")
    assert code == 0, out + err
    for result in json.loads(out):
        checks = {check["check"]: check["result"] for check in result["client"]}
        patterns = {pattern["pattern"] for pattern in result["patterns"]}
        assert set(checks) == {"check_design()", "put_<entity>()", "update_<entity>() and delete_<entity>()",
                               *(f"{pattern}()" for pattern in patterns)}
        assert set(checks.values()) == {"PASS"}


def _checks(aws, tmp_path, path: Path, text: str) -> dict[str, str | None]:
    stack = stacks_of(path)[0]
    name = table_of(aws, path, tmp_path)
    module = python_module(path, text=text)
    table = module.__dict__[f"{stack.design.blueprint.blueprint.capitalize()}Table"](aws, name)
    checks = client_checks(aws, stack.design, client_of([stack], str(path)), table, name,
                           generate_samples(stack.design), module.StaleDesign)
    return {check.name: check.failure for check in checks}


def test_verify_client_fails_a_client_that_writes_a_wrong_key(aws, tmp_path):
    path = BLUEPRINTS["orders"]
    text = module_text(path, environment="dev")
    wrong = text.replace('"GSI1PK": "#".join(["ORDER", _text(userId)])', '"GSI1PK": "#".join(["ORDR", _text(userId)])')
    assert wrong != text
    failures = _checks(aws, tmp_path, path, wrong)
    assert failures["put_<entity>()"].startswith("put_order(): GSI1PK is {\"S\": \"ORDR#userId-")
    assert 'the design writes {"S": "ORDER#userId-' in failures["put_<entity>()"]


def test_verify_client_fails_pages_that_repeat_the_boundary_item(aws, tmp_path):
    path = BLUEPRINTS["orders"]
    text = module_text(path, environment="dev")
    wrong = text.replace("self.at[number] = _key_of(items[wanted - 1], page_keys)",
                         "self.at[number] = _key_of(items[wanted - 2], page_keys)")
    assert wrong != text
    failures = _checks(aws, tmp_path, path, wrong)
    assert "pages of 2 repeat an item" in failures["order_with_items()"]


def test_verify_client_fails_a_count_that_reads_one_shard(aws, tmp_path):
    path = ROOT / "tests/data/blueprints/features.yaml"
    text = module_text(path)
    wrong = text.replace("total = 0\n        for number in range(len(self.bodies)):",
                         "total = 0\n        for number in range(1):")
    assert wrong != text
    failures = _checks(aws, tmp_path, path, wrong)
    assert failures["events_counted()"].startswith("events_counted(): with ")
    assert "counted" in failures["events_counted()"] and failures["readings()"] is None


def test_verify_client_fails_a_batch_get_that_returns_the_items_out_of_order(aws, tmp_path):
    path = ROOT / "tests/data/blueprints/features.yaml"
    text = module_text(path)
    wrong = text.replace("return [found[text] for text in dict.fromkeys(texts) if text in found]",
                         "return list(found.values())[::-1]")
    assert wrong != text
    failures = _checks(aws, tmp_path, path, wrong)
    assert "orders_batch(): with 25 keys: item 1 differs" in failures["orders_batch()"]
    assert failures["orders_batch()"] is not None and failures["readings()"] is None
