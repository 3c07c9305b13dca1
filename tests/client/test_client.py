"""`client`: the generated data-access modules. The Python one is imported and run against the embedded
DynamoDB (moto, in-process); both are type-checked strictly (mypy, tsc). The TypeScript one runs against the
emulator server in tests/client/test_client_typescript.py (the slow tier)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from tablewright.blueprint.language import AttributeSpec
from tablewright.client.model import client_of
from tablewright.design.locked import DESIGN_TAG, design_digest
from tablewright.synth.synth import synthesize
from tablewright.verify.client import client_checks
from tablewright.verify.samples import generate_samples
from tablewright.verify.tables import create_table_request
from tests.conftest import ROOT
from tests.support.client_support import BLUEPRINTS, dynamodb, module_text, python_module, run_tsc, stacks_of

MOMENT = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)


@pytest.fixture
def aws(monkeypatch):
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        yield dynamodb()


def table_of(aws, path: Path, scratch: Path, environment: str | None = None, suffix: str = "") -> str:
    """Create the table the stack's synthesized Terraform declares (its tags too); returns its name."""
    (written,) = synthesize(stacks_of(path, environment)[:1], scratch / "out")
    request = create_table_request(json.loads(written.read_text()))
    request["TableName"] += suffix
    aws.create_table(**request)
    return request["TableName"]


# -- generated code is typed strictly ------------------------------------------------------------------------


def test_generated_python_passes_mypy_strict(tmp_path):
    for name, path in BLUEPRINTS.items():
        (tmp_path / f"{name}_client.py").write_text(module_text(path))
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "."], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"no issues found in {len(BLUEPRINTS)} source files" in done.stdout


def test_generated_typescript_passes_tsc_strict(tmp_path):
    for name, path in BLUEPRINTS.items():
        (tmp_path / f"{name}_client.ts").write_text(module_text(path, "typescript"))
    done = run_tsc(tmp_path, "*.ts")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sum(line.endswith("_client.ts") for line in done.stdout.splitlines()) == len(BLUEPRINTS)


# -- verify --client -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BLUEPRINTS))
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
    wrong = text.replace("return items[:wanted], _key_of(items[wanted - 1], page_keys)",
                         "return items[:wanted], _key_of(items[wanted - 2], page_keys)")
    assert wrong != text
    failures = _checks(aws, tmp_path, path, wrong)
    assert "pages of 2 repeat an item" in failures["order_with_items()"]


def test_verify_client_fails_a_count_that_reads_one_shard(aws, tmp_path):
    path = ROOT / "tests/data/blueprints/features.yaml"
    text = module_text(path)
    wrong = text.replace("    total = 0\n    for body in bodies:", "    total = 0\n    for body in bodies[:1]:")
    assert wrong != text
    failures = _checks(aws, tmp_path, path, wrong)
    assert failures["events_counted()"].startswith("events_counted(): with ")
    assert "counted" in failures["events_counted()"] and failures["readings()"] is None


def test_verify_client_fails_a_batch_get_that_returns_the_items_out_of_order(aws, tmp_path):
    path = ROOT / "tests/data/blueprints/features.yaml"
    text = module_text(path)
    wrong = text.replace("return [found[text] for text in (json.dumps(key, sort_keys=True) for key in unique) "
                         "if text in found]", "return list(found.values())[::-1]")
    assert wrong != text
    failures = _checks(aws, tmp_path, path, wrong)
    assert "orders_batch(): with 25 keys: item 1 differs" in failures["orders_batch()"]
    assert failures["orders_batch()"] is not None and failures["readings()"] is None


class _Throttled:
    """A low-level client whose BatchGetItem answers half of the keys and leaves the rest unprocessed."""

    def __init__(self, table: str) -> None:
        self.table, self.requests = table, []

    def batch_get_item(self, RequestItems):  # boto3's spelling
        keys = RequestItems[self.table]["Keys"]
        self.requests.append(len(keys))
        done, left = keys[:max(1, len(keys) // 2)], keys[max(1, len(keys) // 2):]
        return {"Responses": {self.table: list(reversed(done))},
                "UnprocessedKeys": {self.table: {**RequestItems[self.table], "Keys": left}} if left else {}}


def test_a_batch_get_sends_100_keys_a_request_and_the_unprocessed_ones_again(monkeypatch):
    features = python_module(BLUEPRINTS["features"])
    monkeypatch.setattr(features.time, "sleep", lambda seconds: None)
    keys = [{"PK": {"S": f"CUSTOMER#c{n % 150}"}, "SK": {"S": "ORDER#o"}} for n in range(160)]  # 150 distinct
    client = _Throttled("t")
    found = features._batch_get(client, "t", {}, keys, ("PK", "SK"))
    assert found == keys[:150]  # each key once, in the order asked, whatever order the answers came in
    # 100 keys, then what each answer left (half of them, rounded down, answered), then the other 50 keys.
    assert client.requests == [100, 50, 25, 13, 7, 4, 2, 1, 50, 25, 13, 7, 4, 2, 1]


# -- what the generated code writes and reads, against the documented rules ----------------------------------


def test_key_builders_follow_the_key_templates_and_encodings():
    kitchen = python_module(BLUEPRINTS["client"])
    # Padded to `width: 3`; epoch milliseconds of 2024-03-01T09:30Z are 1,709,285,400 s x 1000.
    assert kitchen.ticket_gsi1_key(assignee="ann", status="OPEN", priority=7) == {
        "GSI1PK": "TICKET#ann#OPEN", "GSI1SK": "007"}
    assert kitchen._TICKET.stored["openedAt"](MOMENT) == {"N": "1709285400000"}
    # strftime `%Y%m%d%H%M` inside a key; a day bucket of the timestamp.
    assert kitchen.comment_table_key(projectId="p", ticketId="t", commentId="c") == {
        "PK": "PROJECT#p", "SK": "COMMENT#t#c"}
    assert kitchen._COMMENT.stored["at"](MOMENT) == {"S": "202403010930"}
    assert kitchen.reading_table_key(sensorId="s-1", at=MOMENT) == {
        "PK": "SENSOR#s-1#2024-03-01", "SK": "2024-03-01T09:30:00Z"}
    # The shard: SHA-256 of the shard-by values' key text joined by '#', first 8 hex digits, modulo the shards.
    features = python_module(BLUEPRINTS["features"])
    (shard_by,) = {k.shard_by for e in client_of(stacks_of(BLUEPRINTS["features"]), "").entities
                   if e.name == "Event" for k in e.keys if k.index == "table"}
    values = {"kind": "A", "at": MOMENT, "eventId": "e-9"}
    text = "#".join({"kind": "A", "at": "2024-03-01T09:30:00Z", "eventId": "e-9"}[a] for a in shard_by)
    shard = str(int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 5)
    assert features.event_table_key(**values)["PK"] == f"EVENT#A#{shard}"
    with pytest.raises(ValueError, match="contains the key separator"):
        kitchen.ticket_table_key(projectId="p#1", ticketId="t")
    with pytest.raises(ValueError, match="more than 3 digits"):
        kitchen.ticket_gsi1_key(assignee="ann", status="OPEN", priority=1000)


def _ticket(**changes):
    return {"ticketId": "t-1", "projectId": "p-1", "assignee": "ann", "status": "OPEN", "priority": 5,
            "from": "web", "openedAt": MOMENT, "dueOn": date(2024, 3, 9), "labels": {"b", "a"}, "votes": {3, 1},
            "meta": {"k": "v"}, "history": ["x"], "blob": b"\x01", "urgent": True, **changes}


def gsi2_key(kitchen, values):
    """A ticket's GSI2 key (its builder takes every attribute the key is made of)."""
    (keys,) = [k for k in kitchen._TICKET.indexes if k.names[0] == "GSI2PK"]
    return keys.build(values)


def test_pages_follow_tokens_without_a_repeat_or_a_gap(aws, tmp_path):
    orders = python_module(BLUEPRINTS["orders"], "dev")
    table = orders.OrdersTable(aws, table_of(aws, BLUEPRINTS["orders"], tmp_path, "dev"))
    for number in range(7):
        table.put_order({"orderId": f"o-{number}", "userId": "u-1", "status": "PAID", "totalCents": number,
                         "orderedAt": datetime(2024, 3, 1 + number, tzinfo=UTC)})
    window = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC))
    pages, token = [], None
    while True:
        page = table.user_orders_by_date(userId="u-1", orderedAt=window, limit=2, start=token)
        pages.append([item["orderId"] for item in page.items])
        token = page.next
        if token is None:
            break
    assert pages == [["o-6", "o-5"], ["o-4", "o-3"], ["o-2", "o-1"], ["o-0"]]  # newest first, 4 pages of 2
    assert [i["orderId"] for i in table.user_orders_by_date(userId="u-1", orderedAt=window).items] == [
        f"o-{n}" for n in range(6, -1, -1)]  # the pattern's limit of 25 holds all 7
    with pytest.raises(ValueError, match="not a page token of this read"):
        table.user_orders_by_date(userId="u-1", orderedAt=window, start="bm90IGEgdG9rZW4")


def test_a_value_holding_a_placeholder_stays_as_it_is(aws, tmp_path):
    orders = python_module(BLUEPRINTS["orders"], "dev")
    table = orders.OrdersTable(aws, table_of(aws, BLUEPRINTS["orders"], tmp_path, "dev"))
    tricky = "{orderedAt.to}"
    table.put_order({"orderId": "o-1", "userId": tricky, "status": "PAID", "totalCents": 1, "orderedAt": MOMENT})
    window = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC))
    assert [o["orderId"] for o in table.user_orders_by_date(userId=tricky, orderedAt=window).items] == ["o-1"]


def test_sharded_reads_merge_every_shard_in_order_across_pages(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    table = kitchen.ClientKitchenTable(aws, table_of(aws, BLUEPRINTS["client"], tmp_path))
    for number in range(9):
        table.put_ticket(_ticket(ticketId=f"t-{number}", openedAt=datetime(2024, 3, 1, number, tzinfo=UTC)))
    assert len({gsi2_key(kitchen, _ticket(ticketId=f"t-{n}"))["GSI2PK"] for n in range(9)}) == 3
    seen, token = [], None
    for _ in range(10):
        page = table.tickets_by_status(status="OPEN", limit=4, start=token)
        seen.append([item["ticketId"] for item in page.items])
        token = page.next
        if token is None:
            break
    assert seen == [["t-8", "t-7", "t-6", "t-5"], ["t-4", "t-3", "t-2", "t-1"], ["t-0"]]


def test_updates_rewrite_index_keys_leave_sparse_indexes_and_move_items(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    name = table_of(aws, BLUEPRINTS["client"], tmp_path)
    table = kitchen.ClientKitchenTable(aws, name)
    table.put_ticket(_ticket())
    key = {"projectId": "p-1", "ticketId": "t-1"}

    def stored(ticket_id: str = "t-1"):
        return aws.get_item(TableName=name, Key={"PK": {"S": "PROJECT#p-1"}, "SK": {"S": f"TICKET#{ticket_id}"}}
                            ).get("Item")

    table.update_ticket(key, {"status": "DONE"})  # GSI1 and GSI2 keys hold the status: both rewritten
    item = stored()
    assert item["GSI1PK"] == {"S": "TICKET#ann#DONE"}
    assert item["GSI2PK"]["S"].startswith("TICKET#DONE#")
    assert [t["ticketId"] for t in table.tickets_of_assignee(assignee="ann", status="DONE").items] == ["t-1"]
    table.update_ticket(key, {"assignee": None})  # optional: the ticket leaves the sparse GSI1
    assert {"assignee", "GSI1PK", "GSI1SK"}.isdisjoint(stored())
    assert table.tickets_of_assignee(assignee="ann", status="DONE").items == []
    table.update_ticket(key, {"ticketId": "t-2"})  # a table key attribute: delete and put in one transaction
    assert stored() is None
    assert stored("t-2")["GSI2PK"]["S"] == gsi2_key(kitchen, _ticket(ticketId="t-2", status="DONE"))["GSI2PK"]
    assert table.ticket(projectId="p-1", ticketId="t-2")["priority"] == 5
    with pytest.raises(kitchen.ItemNotFound):
        table.update_ticket(key, {"status": "OPEN"})  # the item moved away: an index key change reads it first
    with pytest.raises(kitchen.ItemNotFound):
        table.update_ticket(key, {"urgent": False})  # no index key: the update's own condition finds it missing
    moved = {"projectId": "p-1", "ticketId": "t-2"}
    table.update_ticket(moved, {"ticketId": "t-2", "urgent": False})  # the key as it is: no move, an update
    assert stored("t-2")["urgent"] == {"BOOL": False}
    table.put_comment({"projectId": "p-1", "ticketId": "t-2", "commentId": "c-1", "at": MOMENT, "body": "hi"})
    aws.put_item(TableName=name, Item={"PK": {"S": "PROJECT#p-1"}, "SK": {"S": "TICKET#t-9"},
                                       "_entity": {"S": "Comment"}})
    with pytest.raises(ClientError, match="ConditionalCheckFailed"):  # never over another entity's item
        table.put_ticket(_ticket(ticketId="t-9"))
    with pytest.raises(ClientError, match="ConditionalCheckFailed"):
        table.delete_ticket({"projectId": "p-1", "ticketId": "t-9"})
    activity = table.project_activity(projectId="p-1").items
    assert sorted(item["_entity"] for item in activity) == ["Comment", "Comment", "Ticket"]


def test_reads_hide_comments_past_their_ttl_now_or_as_of_a_given_time(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    table = kitchen.ClientKitchenTable(aws, table_of(aws, BLUEPRINTS["client"], tmp_path))
    now = datetime.now(UTC)
    for number, expires in enumerate([now - timedelta(days=1), now + timedelta(days=1), None]):
        comment = {"projectId": "p-1", "ticketId": "t-1", "commentId": f"c-{number}", "at": MOMENT, "body": "hi"}
        table.put_comment(comment if expires is None else {**comment, "expiresAt": expires})
    # c-0 expired yesterday (DynamoDB may not have deleted it yet); c-2 has no TTL and never expires.
    assert [c["commentId"] for c in table.comments_on_ticket(projectId="p-1", ticketId="t-1").items] == ["c-1", "c-2"]
    earlier = table.comments_on_ticket(projectId="p-1", ticketId="t-1", as_of=now - timedelta(days=2)).items
    assert [c["commentId"] for c in earlier] == ["c-0", "c-1", "c-2"]
    later = table.comments_on_ticket(projectId="p-1", ticketId="t-1", as_of=now + timedelta(days=2)).items
    assert [c["commentId"] for c in later] == ["c-2"]


def test_a_move_holds_only_if_the_item_is_unchanged_since_it_was_read(aws, tmp_path, monkeypatch):
    kitchen = python_module(BLUEPRINTS["client"])
    table = kitchen.ClientKitchenTable(aws, table_of(aws, BLUEPRINTS["client"], tmp_path))
    table.put_ticket(_ticket())
    key = {"projectId": "p-1", "ticketId": "t-1"}
    read = kitchen._current(aws, table.table_name, kitchen._TICKET, key, None)
    table.update_ticket(key, {"priority": 9})  # a concurrent writer, between the move's read and its transaction
    monkeypatch.setattr(kitchen, "_current", lambda *args: read)
    with pytest.raises(ClientError, match="TransactionCanceled"):
        table.update_ticket(key, {"ticketId": "t-2"})
    monkeypatch.undo()
    assert table.ticket(projectId="p-1", ticketId="t-1")["priority"] == 9
    assert table.ticket(projectId="p-1", ticketId="t-2") is None


# -- staleness -----------------------------------------------------------------------------------------------


def test_the_table_tag_carries_the_design_digest_and_an_old_client_is_stale(aws, tmp_path, write_blueprint):
    original = BLUEPRINTS["orders"].read_text()
    old = write_blueprint(original, "orders.yaml")
    old_module = python_module(old, "dev")
    (config_path,) = synthesize(stacks_of(old, "dev"), tmp_path / "old")
    tags = json.loads(config_path.read_text())["resource"]["aws_dynamodb_table"]
    assert [t["tags"][DESIGN_TAG] for t in tags.values()] == [old_module.DESIGN_DIGEST]
    assert design_digest(stacks_of(old, "dev")[0].design) == old_module.DESIGN_DIGEST

    changed = original.replace('key: {pk: "PRODUCT#{productId}", sk: "DETAILS"}',
                               'key: {pk: "ITEM#{productId}", sk: "DETAILS"}')
    assert changed != original
    new = write_blueprint(changed, "orders.yaml")
    new_module = python_module(new, "dev")
    name = table_of(aws, new, tmp_path, "dev")
    assert new_module.DESIGN_DIGEST != old_module.DESIGN_DIGEST
    new_module.OrdersTable(aws, name).check_design()
    with pytest.raises(old_module.StaleDesign, match=f"carries design {new_module.DESIGN_DIGEST}, this module was "
                                                     f"generated for design {old_module.DESIGN_DIGEST}"):
        old_module.OrdersTable(aws, name).check_design()
    aws.untag_resource(ResourceArn=aws.describe_table(TableName=name)["Table"]["TableArn"], TagKeys=[DESIGN_TAG])
    with pytest.raises(new_module.StaleDesign, match=f"carries no {DESIGN_TAG} tag"):
        new_module.OrdersTable(aws, name).check_design()


def test_the_digest_ignores_table_names_and_yaml_order(write_blueprint):
    dev, prod = (stacks_of(BLUEPRINTS["orders"], env)[0].design for env in ("dev", "prod"))
    assert dev.blueprint.table.name != prod.blueprint.table.name
    assert design_digest(dev) == design_digest(prod)
    body = """\
        blueprint: shop
        version: 1.0.0
        table: {name: shop_main}
        entities:
          User:
            attributes: {userId: string, name: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
          Cart:
            attributes: {cartId: string, userId: string}
            key: {pk: "CART#{cartId}", sk: "CART"}
        access_patterns:
          user: {entity: User, where: {userId: "="}}
          carts_of_user: {entity: Cart, where: {userId: "="}}
    """
    reordered = """\
        access_patterns:
          carts_of_user: {entity: Cart, where: {userId: "="}}
          user: {entity: User, where: {userId: "="}}
        entities:
          Cart:
            key: {sk: "CART", pk: "CART#{cartId}"}
            attributes: {userId: string, cartId: string}
          User:
            attributes: {name: string, userId: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
        table: {name: shop_main}
        version: 1.0.0
        blueprint: shop
    """
    first = module_text(write_blueprint(textwrap.dedent(body), "a/shop.yaml"))
    second = module_text(write_blueprint(textwrap.dedent(reordered), "b/shop.yaml"))
    assert first.replace("a/shop.yaml", "b/shop.yaml") == second
    assert first == module_text(write_blueprint(textwrap.dedent(body), "a/shop.yaml"))


# -- the command ---------------------------------------------------------------------------------------------


def test_client_command_writes_one_module_per_blueprint(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "keep.py").write_text("mine")
    code, out, err = run_cli("client", str(BLUEPRINTS["orders"]), str(BLUEPRINTS["crm"]), "--lang", "python",
                             "--out", "app")
    assert code == 0, err
    assert out.splitlines() == ["wrote app/crm_client.py", "wrote app/orders_client.py"]
    assert (tmp_path / "app" / "keep.py").read_text() == "mine"
    assert "2 python client module(s) written into app, from 4 stack(s) of 2 blueprint(s) designed" in err
    code, out, err = run_cli("client", str(BLUEPRINTS["orders"]), "--lang", "typescript", "--out", "app")
    assert code == 0 and out == "wrote app/orders_client.ts\n"


@pytest.mark.parametrize(("arguments", "message"), [
    (["--lang", "java", "--out", "app"], "argument --lang: invalid choice: 'java'"),
    (["--lang", "python", "--out", "../elsewhere"], "--out ../elsewhere is outside the working directory"),
    (["--lang", "python", "--out", "."], "--out . is the working directory"),
])
def test_bad_arguments_exit_2_and_write_nothing(arguments, message, run_cli, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, _, err = run_cli("client", str(BLUEPRINTS["orders"]), *arguments)
    assert code == 2 and message in err and "Traceback" not in err
    assert list(tmp_path.rglob("*client*")) == []


def test_a_blueprint_with_lint_errors_gets_no_client(run_cli, write_blueprint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent("""\
        blueprint: hot
        version: 1.0.0
        table: {name: hot_main}
        entities:
          Event:
            attributes: {kind: {type: string, values: [A]}, at: timestamp}
            key: {pk: "EVENT#{kind}", sk: "{at}"}
            writes_per_second: 5000
        access_patterns:
          events: {entity: Event, where: {kind: "="}}
    """))
    code, _, err = run_cli("client", str(path), "--lang", "python", "--out", "app")
    assert code == 2 and "[E502]" in err
    assert not (tmp_path / "app").exists()


@pytest.mark.parametrize(("snippet", "line", "clash"), [
    ("  put_user: {entity: User, where: {userId: \"=\"}}\n", 9, "`self.put_user` twice: for access_patterns.put_user"),
    ("  check_design: {entity: User, where: {userId: \"=\"}}\n", 9, "`self.check_design` twice"),
])
def test_generated_names_that_collide_are_located_errors(snippet, line, clash, run_cli, write_blueprint, tmp_path,
                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent("""\
        blueprint: names
        version: 1.0.0
        table: {name: names_main}
        entities:
          User:
            attributes: {userId: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
        access_patterns:
    """) + snippet)
    code, _, err = run_cli("client", str(path), "--lang", "python", "--out", "app")
    assert code == 2 and clash in err and f"blueprint.yaml:{line}:" in err, err
    assert not (tmp_path / "app").exists()


@pytest.mark.parametrize(("entity", "languages"), [
    ("Page", ("python", "typescript")),  # the page type of both
    ("ValueError", ("python",)),  # a Python builtin
    ("Record", ("typescript",)),  # a TypeScript global type
    ("Date", ("typescript",)),
])
def test_an_entity_named_like_what_the_module_uses_is_refused(entity, languages, run_cli, write_blueprint, tmp_path,
                                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent(f"""\
        blueprint: pages
        version: 1.0.0
        table: {{name: pages_main}}
        entities:
          {entity}:
            attributes: {{pageId: string}}
            key: {{pk: "PAGE#{{pageId}}", sk: "PAGE"}}
        access_patterns:
          page: {{entity: {entity}, where: {{pageId: "="}}}}
    """))
    for language in ("python", "typescript"):
        code, _, err = run_cli("client", str(path), "--lang", language, "--out", "app")
        if language in languages:
            assert code == 2 and f"`{entity}` twice: for entities.{entity} and the generated module's own" in err
            assert "blueprint.yaml:5:" in err
        else:
            assert code == 0, err


def test_two_attributes_that_become_one_parameter_are_refused(run_cli, write_blueprint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent("""\
        blueprint: legs
        version: 1.0.0
        table: {name: legs_main}
        entities:
          Leg:
            attributes: {tripId: string, from: string, from_: string}
            key: {pk: "TRIP#{tripId}", sk: "LEG#{from}#{from_}"}
        access_patterns:
          leg: {entity: Leg, where: {tripId: "=", from: "=", from_: "="}}
    """))
    code, _, err = run_cli("client", str(path), "--lang", "python", "--out", "app")
    assert code == 2 and "`leg_table_key(from_)` twice" in err and "[E402]" in err, err
    code, _, err = run_cli("verify", str(path), "--client")
    assert code == 2 and "[E402]" in err and "Traceback" not in err


def test_a_typescript_method_named_constructor_is_refused(run_cli, write_blueprint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent("""\
        blueprint: ctor
        version: 1.0.0
        table: {name: ctor_main}
        entities:
          User:
            attributes: {userId: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
        access_patterns:
          constructor: {entity: User, where: {userId: "="}}
    """))
    code, _, err = run_cli("client", str(path), "--lang", "typescript", "--out", "app")
    assert code == 2 and "`this.constructor` twice" in err and "blueprint.yaml:9:" in err, err
    assert run_cli("client", str(path), "--lang", "python", "--out", "app")[0] == 0


def test_a_link_planted_in_the_output_directory_is_not_followed(run_cli, tmp_path, monkeypatch):
    work = tmp_path / "work"
    (work / "app").mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    monkeypatch.chdir(work)
    for name in (f".orders_client.py.{os.getpid()}", ".orders_client.py.tmp"):
        (work / "app" / name).symlink_to(victim)
    code, _, err = run_cli("client", str(BLUEPRINTS["orders"]), "--lang", "python", "--out", "app")
    assert code == 0, err
    written = work / "app" / "orders_client.py"
    assert not written.is_symlink() and written.read_text().startswith('"""Data access for blueprint `orders`')
    assert victim.read_text() == "untouched"
    assert oct(written.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_environments_with_different_designs_need_env(run_cli, write_blueprint, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_blueprint(textwrap.dedent("""\
        blueprint: split
        version: 1.0.0
        table: {name: split_main}
        environments:
          dev: {}
          prod:
            entities:
              User: {key: {pk: "U#{userId}", sk: "PROFILE"}}
        entities:
          User:
            attributes: {userId: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
        access_patterns:
          user: {entity: User, where: {userId: "="}}
    """))
    code, _, err = run_cli("client", str(path), "--lang", "python", "--out", "app")
    if code == 2 and "[E401]" in err:
        pytest.skip("environments cannot override entity keys")
    assert code == 2 and "the environments of split differ in design" in err, err
    code, _, err = run_cli("client", str(path), "--env", "prod", "--lang", "python", "--out", "app")
    assert code == 0, err
    assert '"U#"' not in (tmp_path / "app" / "split_client.py").read_text()
    assert '"PK": "#".join(["U", _text(userId)])' in (tmp_path / "app" / "split_client.py").read_text()


# -- the guide's worked examples -----------------------------------------------------------------------------

GUIDE = ROOT / "docs" / "guides" / "application-clients.md"


def _block(language: str) -> str:
    """The code of the guide's worked example in `language` (its section's one block)."""
    heading = {"python": "## Python, worked example", "ts": "## TypeScript, worked example"}[language]
    section = GUIDE.read_text().split(heading)[1].split("\n## ")[0]
    (block,) = [part.split("\n", 1)[1] for part in section.split("```")[1:] if part.startswith(language + "\n")]
    return block


def test_the_python_example_of_the_guide_runs(aws, tmp_path, monkeypatch):
    package = tmp_path / "app" / "db"
    package.mkdir(parents=True)
    for directory in (tmp_path / "app", package):
        (directory / "__init__.py").write_text("")
    (package / "orders_client.py").write_text(module_text(BLUEPRINTS["orders"]))
    table_of(aws, BLUEPRINTS["orders"], tmp_path, "prod")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [name for name in sys.modules if name == "app" or name.startswith("app.")]:
        monkeypatch.delitem(sys.modules, name)
    scope: dict[str, object] = {}
    exec(compile(_block("python"), str(GUIDE), "exec"), scope)
    page = scope["page"]  # one order: the first page is the last
    assert [(item["orderId"], item["status"]) for item in page.items] == [("o-1", "PAID")] and page.next is None
    assert scope["profile"] is None


def test_the_typescript_example_of_the_guide_type_checks(tmp_path):
    lines = _block("ts").splitlines()
    imports = [line for line in lines if line.startswith("import ")]
    body = [line for line in lines if not line.startswith("import ")]
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "orders_client.ts").write_text(module_text(BLUEPRINTS["orders"], "typescript"))
    (tmp_path / "main.ts").write_text("\n".join([*imports, "", "export async function main(): Promise<void> {",
                                                 *body, "}", ""]))
    done = run_tsc(tmp_path, "main.ts")
    assert done.returncode == 0, done.stdout + done.stderr


def test_attribute_names_like_builtins_keywords_and_locals_still_type_check_and_verify(write_blueprint, run_cli,
                                                                                      tmp_path):
    path = write_blueprint(textwrap.dedent('''\
        blueprint: awkward
        version: 1.0.0
        description: 'Quotes """ and */ and a \\\\ backslash in a description'
        table: {name: awkward_main}
        indexes:
          GSI1: {shards: 2}
        entities:
          Thing:
            attributes:
              str: {type: string, pattern: "^[a-z0-9-]+$"}
              date: {type: string, pattern: "^[a-z0-9-]+$"}
              values: {type: string, pattern: "^[a-z0-9-]+$"}
              self: {type: string, pattern: "^[a-z0-9-]+$"}
              limit: {type: number, width: 4}
              class: {type: string, values: ["A", "B"]}
              Number: timestamp
              cast: {type: string, pattern: "^[a-z0-9-]+$"}
              Page: {type: string, values: ["P1", "P2"]}
              bytes: {type: timestamp, format: epoch_seconds}
            key: {pk: "THING#{str}", sk: "{date}"}
          Item:
            attributes: {itemId: string, cast: string}
            key: {pk: "ITEM#{itemId}", sk: "ITEM"}
        access_patterns:
          import: {entity: Thing, where: {str: "=", date: "="}}
          str: {entity: Thing, where: {cast: "="}, filter: {Page: "=", bytes: ">"}}
          item: {entity: Item, where: {itemId: "="}}
          things_of_class:
            description: 'a "docstring" with """ quotes """ and */ comment ends'
            entity: Thing
            where: {class: "=", values: "="}
            order_by: limit
            limit: 3
          thing: {entity: Thing, where: {str: "=", date: "="}}
          things_by_self: {entity: Thing, where: {self: "="}, filter: {limit: ">"}}
    '''), "awkward.yaml")
    (tmp_path / "awkward_client.py").write_text(module_text(path))
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "awkward_client.py"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    code, out, err = run_cli("verify", str(path), "--client", "--format", "json")
    assert code == 0, out + err
    (result,) = json.loads(out)
    assert {check["result"] for check in result["client"]} == {"PASS"} and len(result["client"]) == 9
    (tmp_path / "awkward_client.ts").write_text(module_text(path, "typescript"))
    done = run_tsc(tmp_path, "awkward_client.ts")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("tags", "message"), [
    ({"tablewright:design": "0123456789abcdef"}, "tag key 'tablewright:design' is Tablewright's own"),
    ({f"team{n}": "x" for n in range(49)}, "49 tags; AWS allows 50 per resource and Tablewright adds 2"),
])
def test_the_tags_tablewright_adds_are_reserved(tags, message, write_blueprint, run_cli):
    path = write_blueprint(textwrap.dedent("""\
        blueprint: tagged
        version: 1.0.0
        table: {name: tagged_main}
        entities:
          User:
            attributes: {userId: string}
            key: {pk: "USER#{userId}", sk: "PROFILE"}
        access_patterns:
          user: {entity: User, where: {userId: "="}}
    """) + "tags: " + json.dumps(tags) + "\n")
    code, _, err = run_cli("lint", str(path))
    assert code == 2 and message in err and "[E302]" in err, err


PARITY = """\
    blueprint: parity
    version: 1.0.0
    table: {name: parity_main}
    entities:
      Measure:
        attributes:
          id: string
          amount: number
          at: {type: timestamp, format: epoch_seconds}
          ms: {type: timestamp, format: epoch_millis}
          day: {type: timestamp, format: "%Y%j"}
        key: {pk: "M#{id}#{at:month}", sk: "{amount}#{at}#{ms}#{day}"}
      Weekly:
        attributes: {id: string, at: timestamp}
        key: {pk: "W#{id}#{at:week}", sk: "{at}"}
      Hourly:
        attributes: {id: string, at: timestamp}
        key: {pk: "H#{id}#{at:hour}", sk: "{at}"}
    access_patterns:
      measure: {entity: Measure, where: {id: "=", at: "=", amount: "=", ms: "=", day: "="}}
      weekly: {entity: Weekly, where: {id: "=", at: "="}}
      hourly: {entity: Hourly, where: {id: "=", at: "="}}
"""
AMOUNTS = [0, 7, -5, 0.1, 1.5, -0.25, 1e21, 1e-7, 123456789.25, 2**53 - 1, 1.2345678901234567e25]
MOMENTS = ["1969-12-31T23:59:59.500000+00:00", "1960-06-15T12:00:00+00:00", "2024-03-01T09:30:00+00:00",
           "2038-01-19T03:14:08+00:00"]
# ISO weeks at year ends: 2024-12-30 is in 2025-W01, 2021-01-03 in 2020-W53, 2026-12-31 in 2026-W53.
WEEK_EDGES = ["2024-12-30T00:00:00+00:00", "2021-01-03T23:59:59+00:00", "2026-12-31T12:00:00+00:00",
              "2027-01-04T00:00:00+00:00", "2016-01-01T00:00:00+00:00"]


def test_the_typescript_key_builders_write_what_the_python_ones_write(write_blueprint, tmp_path):
    """Numbers without exponents (as Python's Decimal), epochs before 1970 truncated toward zero and signed
    before the padding, day-of-year strftime: the same key text in both languages, so both find one item."""
    path = write_blueprint(textwrap.dedent(PARITY), "parity.yaml")
    python = python_module(path)
    cases = [(amount, moment) for amount in AMOUNTS for moment in MOMENTS]
    expected = [python.measure_table_key(id="m", amount=amount, at=datetime.fromisoformat(moment),
                                         ms=datetime.fromisoformat(moment), day=datetime.fromisoformat(moment))
                for amount, moment in cases]
    (tmp_path / "parity_client.ts").write_text(module_text(path, "typescript"))
    done = run_tsc(tmp_path, "parity_client.ts", out_dir="build")
    assert done.returncode == 0, done.stdout + done.stderr
    moments = MOMENTS + WEEK_EDGES
    expected += [builder(id="m", at=datetime.fromisoformat(moment)) for moment in moments
                 for builder in (python.weekly_table_key, python.hourly_table_key)]
    script = ("const m = require('./build/parity_client.js'); const [cases, moments] = JSON.parse(process.argv[1]);"
              "console.log(JSON.stringify(cases.map(([amount, at]) => m.measureTableKey({id: 'm', amount,"
              " at: new Date(at), ms: new Date(at), day: new Date(at)})).concat(moments.flatMap((at) =>"
              " [m.weeklyTableKey({id: 'm', at: new Date(at)}), m.hourlyTableKey({id: 'm', at: new Date(at)})]))));")
    done = subprocess.run(["node", "-e", script, json.dumps([cases, moments])], cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected
    weeks = [key["PK"] for key in expected[len(cases)::2][len(MOMENTS):]]
    assert weeks == ["W#m#2025-W01", "W#m#2020-W53", "W#m#2026-W53", "W#m#2027-W01", "W#m#2015-W53"]
    # 1969-12-31T23:59:59.5Z: -0.5 s truncates to 0 s; -500 ms is signed, then padded to 13 characters.
    first = expected[AMOUNTS.index(1e21) * len(MOMENTS)]["SK"]
    assert first == "1000000000000000000000#0000000000#-000000000500#1969365"


# -- values, tokens and keys at their edges ------------------------------------------------------------------


def test_maps_and_lists_keep_every_value_type_they_can_hold(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    name = table_of(aws, BLUEPRINTS["client"], tmp_path)
    table = kitchen.ClientKitchenTable(aws, name)
    meta = {"n": None, "s": {"b", "a"}, "ns": {2, 1}, "b": b"\x01\x02", "l": [None, 1, "x", {"deep": True}]}
    table.put_ticket(_ticket(meta=meta))
    stored = aws.get_item(TableName=name, Key={"PK": {"S": "PROJECT#p-1"}, "SK": {"S": "TICKET#t-1"}})["Item"]
    assert stored["meta"] == {"M": {"n": {"NULL": True}, "s": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2"]},
                                    "b": {"B": b"\x01\x02"}, "l": {"L": [{"NULL": True}, {"N": "1"}, {"S": "x"},
                                                                         {"M": {"deep": {"BOOL": True}}}]}}}
    assert table.ticket(projectId="p-1", ticketId="t-1")["meta"] == meta
    with pytest.raises(ValueError, match="is not a value DynamoDB stores in a map or list"):
        table.put_ticket(_ticket(meta={"when": MOMENT}))


def test_epoch_milliseconds_are_exact(aws, tmp_path):
    """2004-09-18T13:12:28.120Z: 1,095,513,148 s since 1970 (calendar.timegm) and 120 ms; float arithmetic on
    `timestamp() * 1000` gives ...119."""
    import calendar

    moment = datetime(2004, 9, 18, 13, 12, 28, 120000, tzinfo=UTC)
    millis = calendar.timegm(moment.timetuple()) * 1000 + 120
    assert millis == 1095513148120
    kitchen = python_module(BLUEPRINTS["client"])
    assert kitchen._TICKET.stored["openedAt"](moment) == {"N": str(millis)}
    assert kitchen._TICKET.read["openedAt"]({"N": str(millis)}) == moment
    from tablewright.blueprint.encoding import stored_value

    assert stored_value(AttributeSpec(type="timestamp", format="epoch_millis"), moment) == {"N": str(millis)}


def test_a_token_continues_only_the_call_that_returned_it(aws, tmp_path):
    orders = python_module(BLUEPRINTS["orders"], "dev")
    table = orders.OrdersTable(aws, table_of(aws, BLUEPRINTS["orders"], tmp_path, "dev"))
    for number in range(3):
        for user in ("u-1", "u-2"):
            table.put_order({"orderId": f"{user}-{number}", "userId": user, "status": "PAID", "totalCents": 1,
                             "orderedAt": datetime(2024, 3, 1 + number, tzinfo=UTC)})
    window = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC))
    token = table.user_orders_by_date(userId="u-1", orderedAt=window, limit=1).next
    assert token is not None
    assert [o["orderId"] for o in table.user_orders_by_date(userId="u-1", orderedAt=window, start=token).items] == [
        "u-1-1", "u-1-0"]
    for start, arguments in ((token, {"userId": "u-2", "orderedAt": window}),
                             ("W3RydWVd", {"userId": "u-1", "orderedAt": window}),
                             ("not base64!", {"userId": "u-1", "orderedAt": window})):
        with pytest.raises(ValueError, match="not a page token of this read"):
            table.user_orders_by_date(**arguments, start=start)
    with pytest.raises(ValueError, match="a page holds at least 1 item"):
        table.user_orders_by_date(userId="u-1", orderedAt=window, limit=0)


def test_updates_take_only_the_table_key_from_the_key_given(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    name = table_of(aws, BLUEPRINTS["client"], tmp_path)
    table = kitchen.ClientKitchenTable(aws, name)
    stale = _ticket(assignee="bob")
    table.put_ticket(stale)
    table.update_ticket({"projectId": "p-1", "ticketId": "t-1"}, {"assignee": "amy"})
    table.update_ticket(stale, {"status": "DONE"})  # a whole, outdated item as the key: its assignee is not used
    assert [t["assignee"] for t in table.tickets_of_assignee(assignee="amy", status="DONE").items] == ["amy"]
    assert table.tickets_of_assignee(assignee="bob", status="DONE").items == []


def test_a_key_attribute_change_that_keeps_the_key_text_is_an_update(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    table = kitchen.ClientKitchenTable(aws, table_of(aws, BLUEPRINTS["client"], tmp_path))
    first = datetime(2024, 3, 1, 10, 0, 0, 100000, tzinfo=UTC)
    table.put_reading({"sensorId": "s", "at": first, "value": 1})
    # iso8601 keys hold whole seconds: .1 s and .4 s make the same key, so this is no move (a transaction on one
    # item twice, which DynamoDB refuses), but an update.
    table.update_reading({"sensorId": "s", "at": first}, {"at": first.replace(microsecond=400000), "value": 2})
    (reading,) = table.readings_between(sensorId="s", at=(first.replace(microsecond=0), first)).items
    assert reading["value"] == 2
