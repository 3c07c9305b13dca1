"""The design lock: blueprint evolutions each with the lock diff, the review class and the gate's exit a
reviewer must get. The base is the review corpus's shop with its lock written by `synth`; each head is
what its author commits after running `synth` (the blueprint and the updated lock). The slow tier plans
every head against the base applied to the emulator and runs the gate on the real plan."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tablewright.blueprint.load import load_blueprints
from tablewright.review.review import build_review
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import write_locks
from tests.conftest import ROOT
from tests.support.review_corpus import BASE as SHOP
from tests.support.review_corpus import merged
from tests.support.terraform_support import uses_terraform

INSIDE, OUTSIDE = "2026-12-01T02:30:00+00:00", "2026-12-01T12:00:00+00:00"  # the shop's window: daily 02:00 UTC, 2h
BASE_OVERLAY = {"access_patterns": {"order_by_id": {"entity": "Order", "where": {"orderId": "="}, "rps": 40,
                                                    "returns": ["placedAt", "total"]}}}
BY_STATUS = {"entity": "Order", "where": {"status": "="}, "order_by": "placedAt", "rps": 5, "returns": ["total"]}
INVOICE = {"attributes": {"invoiceId": "string", "customerId": "string", "amount": "number"},
           "key": {"pk": "CUSTOMER#{customerId}", "sk": "INVOICE#{invoiceId}"}, "writes_per_second": 1}
NEW_ORDER_KEY = {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{placedAt}#{orderId}"}
OLD_ORDER_KEY = {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{orderId}"}


@dataclass(frozen=True)
class Evolution:
    name: str
    overlay: dict[str, Any]
    lock_diff: tuple[str, ...]  # the start of every line of the lock diff, in order
    verdict: str  # of the review
    passes: tuple[bool, bool]  # the gate on the real plan: (inside the window, outside)
    blocked: tuple[str, ...] = ()  # words of each blocked change's subject
    transform: str = ""  # "reverse": the YAML written in reverse order


def reverse(value: Any) -> Any:
    return {k: reverse(value[k]) for k in reversed(list(value))} if isinstance(value, dict) else value


EVOLUTIONS = [
    Evolution("add_pattern_named_first", {"access_patterns": {"aaa_orders_by_status": BY_STATUS}},
              ("GSI2 added", "Order on GSI2: (not on it)"), "window", (True, False)),
    Evolution("add_pattern_named_last", {"access_patterns": {"zzz_orders_by_status": BY_STATUS}},
              ("GSI2 added", "Order on GSI2: (not on it)"), "window", (True, False)),
    Evolution("rename_pattern", {"access_patterns": {"order_by_id": None, "lookup_order": {
        "entity": "Order", "where": {"orderId": "="}, "rps": 40, "returns": ["placedAt", "total"]}}},
              (), "safe", (True, True)),
    Evolution("reorder_the_yaml", {}, (), "safe", (True, True), transform="reverse"),
    Evolution("remove_pattern", {"access_patterns": {"order_by_id": None}},
              ("GSI1: global GSI1PK/GSI1SK, INCLUDE (placedAt, total), active -> global GSI1PK/GSI1SK, INCLUDE "
               "(placedAt, total), retiring",), "safe", (True, True)),
    Evolution("retire_an_index", {"access_patterns": {"order_by_id": None}, "indexes": {"GSI1": {"remove": True}}},
              ("GSI1 removed", "Order on GSI1: "), "window", (True, False)),
    Evolution("add_entity", {"entities": {"Invoice": INVOICE}, "access_patterns": {
        "customer_invoices": {"entity": "Invoice", "where": {"customerId": "="}, "rps": 2}}},
              ("Invoice on table: (not on it)",), "safe", (True, True)),
    Evolution("add_returns_attribute",
              {"access_patterns": {"order_by_id": {"returns": ["placedAt", "total", "status"]}}},
              ("GSI1: global GSI1PK/GSI1SK, INCLUDE (placedAt, total), active -> global GSI1PK/GSI1SK, INCLUDE "
               "(placedAt, total), retiring", "GSI2 added: global GSI1PK/GSI1SK, INCLUDE (placedAt, status, total)",
               "Order on GSI2: (not on it)"), "window", (True, False)),
    Evolution("add_returns_attribute_in_place", {
        "access_patterns": {"order_by_id": {"returns": ["placedAt", "total", "status"]}},
        "indexes": {"GSI1": {"rebuild": "in_place"}}},
              ("GSI1: global GSI1PK/GSI1SK, INCLUDE (placedAt, total), active -> global GSI1PK/GSI1SK, INCLUDE "
               "(placedAt, status, total), active",), "window", (True, False)),
    Evolution("add_pattern_an_index_already_serves", {"access_patterns": {"order_total": {
        "entity": "Order", "where": {"orderId": "="}, "rps": 3, "returns": ["total"]}}},
              (), "safe", (True, True)),
    Evolution("change_table_key", {"entities": {"Order": {"key": NEW_ORDER_KEY}}},
              ("Order on table: CUSTOMER#{customerId} / ORDER#{orderId} in PK/SK",), "blocked", (False, False),
              blocked=("Order keys on the table",)),
    Evolution("change_table_key_declared", {"entities": {"Order": {"key": NEW_ORDER_KEY}}, "migrations": [
        {"entity": "Order", "from": OLD_ORDER_KEY, "to": NEW_ORDER_KEY, "reason": "orders sort by time"}]},
              ("Order on table: CUSTOMER#{customerId} / ORDER#{orderId} in PK/SK",), "window", (True, False)),
    Evolution("change_index_key", {"entities": {"Order": {"index_keys": {"GSI1": {"pk": "ORDERID#{orderId}",
                                                                                    "sk": "{customerId}"}}}}},
              ("Order on GSI1: ORDER#{orderId} / {customerId} in GSI1PK/GSI1SK",), "blocked", (False, False),
              blocked=("Order keys on GSI1",)),
    Evolution("shard_the_table_key", {"entities": {"Order": {"key": {**OLD_ORDER_KEY, "shards": 4}}}},
              ("Order on table: CUSTOMER#{customerId} / ORDER#{orderId} in PK/SK",), "blocked", (False, False),
              blocked=("Order keys on the table",)),
    Evolution("change_capacity", {"table": {"capacity": {"read": {"min": 20, "max": 400}}}}, (), "safe",
              (True, True)),
    Evolution("add_a_second_index_and_rebuild_nothing", {"access_patterns": {
        "orders_by_status": BY_STATUS,
        "customers_by_email": {"entity": "Customer", "where": {"email": "="}, "rps": 1}}},
              ("GSI2 added", "Customer on GSI2: (not on it)", "Order on GSI2: (not on it)"), "window", (True, False)),
]


def write(directory: Path, name: str, data: dict[str, Any]) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def shop_data() -> dict[str, Any]:
    return merged(yaml.safe_load(SHOP.read_text()), BASE_OVERLAY)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    """The base with its lock; each head with the lock its author's `synth` wrote (starting from the base's)."""
    directory = tmp_path_factory.mktemp("lock-corpus")
    base = write(directory, "shop", shop_data())
    write_locks(build_stacks(load_blueprints(base)))
    heads = {}
    for evolution in EVOLUTIONS:
        data = merged(shop_data(), evolution.overlay)
        head = write(directory, evolution.name, reverse(data) if evolution.transform == "reverse" else data)
        lock = json.loads((directory / "shop.lock.json").read_text())
        (directory / f"{evolution.name}.lock.json").write_text(json.dumps(lock))  # same blueprint name: shop
        write_locks(build_stacks(load_blueprints(head)))
        heads[evolution.name] = head
    return base, heads


def lock_diff(review) -> list[str]:
    [stack] = review.stacks
    return [line.split(": ", 1)[1] if line.startswith("default: ") else line for line in stack.lock_diff]


def test_the_corpus_covers_every_kind_of_evolution():
    assert len(EVOLUTIONS) >= 15
    assert {e.verdict for e in EVOLUTIONS} == {"safe", "window", "blocked"}


@pytest.mark.parametrize("evolution", EVOLUTIONS, ids=[e.name for e in EVOLUTIONS])
def test_each_evolution_has_its_lock_diff_and_review_class(evolution, corpus):
    base, heads = corpus
    review = build_review(str(base), str(heads[evolution.name]))
    diff = lock_diff(review)
    assert len(diff) == len(evolution.lock_diff), diff
    for line, expected in zip(diff, evolution.lock_diff, strict=False):
        assert line.startswith(expected), (line, expected)
    assert review.verdict == evolution.verdict, [(c.cls, c.subject) for c in review.changes if c.cls != "safe"]
    blocked = sorted(c.subject for c in review.changes if c.cls == "blocked")
    assert len(blocked) == len(evolution.blocked) and all(
        words in subject for words, subject in zip(sorted(evolution.blocked), blocked, strict=False)), blocked


def test_adding_a_pattern_with_any_name_never_changes_an_existing_index(corpus, tmp_path):
    base, _ = corpus
    shutil.copy(base.with_name("shop.lock.json"), tmp_path / "shop.lock.json")
    for name in ("a", "aaaa_first", "m_middle", "order_by_id2", "zzzz_last"):
        for pattern in (BY_STATUS, {"entity": "Customer", "where": {"email": "="}, "rps": 1},
                        {"entity": "Order", "where": {"orderId": "="}, "returns": ["status"], "rps": 1}):
            data = merged(shop_data(), {"access_patterns": {name: pattern}})
            head = write(tmp_path, "shop", data)
            review = build_review(str(base), str(head))
            for line in lock_diff(review):
                assert "removed" not in line and not line.startswith("Order on GSI1"), (name, pattern, line)
                if line.startswith("GSI1:"):  # at most retiring (a successor took its patterns), never re-keyed
                    was, now = line.removeprefix("GSI1: ").split(" -> ")
                    assert (was, now) == (was, was.replace(", active", ", retiring")), (name, pattern, line)


def test_synth_locked_passes_on_its_lock_and_fails_on_a_drifted_design(corpus, tmp_path, run_cli):
    base, _ = corpus
    shutil.copy(base, tmp_path / "shop.yaml")
    shutil.copy(base.with_name("shop.lock.json"), tmp_path / "shop.lock.json")
    code, _, stderr = run_cli("synth", tmp_path / "shop.yaml", "--out", tmp_path / "out", "--locked")
    assert code == 0, stderr
    data = merged(shop_data(), {"access_patterns": {"orders_by_status": BY_STATUS}})
    write(tmp_path, "shop", data)
    before = (tmp_path / "shop.lock.json").read_text()
    code, out, stderr = run_cli("synth", tmp_path / "shop.yaml", "--out", tmp_path / "out2", "--locked")
    assert code == 2 and out == "" and not (tmp_path / "out2").exists()
    assert "differs from its lock shop.lock.json: default: GSI2 added" in stderr and "[E404]" in stderr
    assert "run `tablewright synth" in stderr and (tmp_path / "shop.lock.json").read_text() == before
    code, out, _ = run_cli("synth", tmp_path / "shop.yaml", "--out", tmp_path / "out2")
    assert code == 0 and "shop.lock.json (the design lock" in out
    assert run_cli("synth", tmp_path / "shop.yaml", "--out", tmp_path / "out2", "--locked")[0] == 0


def test_removing_an_index_that_still_serves_a_pattern_is_refused(corpus, tmp_path, run_cli):
    base, _ = corpus
    shutil.copy(base.with_name("shop.lock.json"), tmp_path / "shop.lock.json")
    head = write(tmp_path, "shop", merged(shop_data(), {"indexes": {"GSI1": {"remove": True}}}))
    code, _, stderr = run_cli("explain", head)
    assert code == 2 and "GSI1 still serves order_by_id" in stderr and "[E501]" in stderr


def test_a_lock_that_is_not_valid_is_a_located_error(corpus, tmp_path, run_cli):
    base, _ = corpus
    shutil.copy(base, tmp_path / "shop.yaml")
    lock = json.loads(base.with_name("shop.lock.json").read_text())
    lock["environments"]["default"]["indexes"]["GSI1"]["projection"]["type"] = "EVERYTHING"
    (tmp_path / "shop.lock.json").write_text(json.dumps(lock, indent=2))
    code, _, stderr = run_cli("explain", tmp_path / "shop.yaml")
    assert code == 2 and "shop.lock.json:" in stderr and "[E403]" in stderr and "fix: restore" in stderr


@uses_terraform
@pytest.fixture(scope="module")
def real_plans(corpus, tmp_path_factory):
    from tests.support.emulator import Emulator
    from tests.support.plans import PlanBuilder

    base, heads = corpus
    with Emulator() as emulator:
        builder = PlanBuilder(emulator, tmp_path_factory.mktemp("lock-plans"), base)
        return builder.plan_all(heads)


@pytest.mark.terraform
@pytest.mark.parametrize("evolution", EVOLUTIONS, ids=[e.name for e in EVOLUTIONS])
def test_the_gate_decides_each_evolution_from_the_real_plan(evolution, corpus, real_plans, tmp_path, run_cli):
    _, heads = corpus
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(real_plans[evolution.name]))
    for now, passes in zip((INSIDE, OUTSIDE), evolution.passes, strict=False):
        code, out, stderr = run_cli("gate", "--plan", plan, "--blueprint", heads[evolution.name], "--now", now,
                                    "--format", "json")
        assert code == (0 if passes else 1), (now, stderr, out[-2000:])
        decision = json.loads(out)
        assert decision["verdict"] == evolution.verdict or (evolution.verdict, decision["verdict"]) == (
            "safe", "safe"), decision["verdict"]
        blocked = [c["subject"] for c in decision["changes"] if c["cls"] == "blocked"]
        assert len(blocked) == len(evolution.blocked), blocked


@pytest.mark.terraform
def test_an_undeclared_key_change_is_blocked_from_a_plan_with_no_resource_changes(corpus, real_plans):
    plan = real_plans["change_table_key"]
    acting = [c for c in plan["resource_changes"] if c["change"]["actions"] not in (["no-op"], ["read"])]
    # Terraform sees no change of the table's schema, only its design tag (what a generated client checks)...
    assert [(c["type"], c["change"]["actions"]) for c in acting] == [("aws_dynamodb_table", ["update"])]
    before, after = acting[0]["change"]["before"], acting[0]["change"]["after"]
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert "tags" in changed and changed <= {"tags", "tags_all"}
    assert {k for k in before["tags"].keys() | after["tags"].keys()
            if before["tags"].get(k) != after["tags"].get(k)} == {"tablewright:design"}
    assert plan["output_changes"]["tablewright"]["actions"] == ["update"]  # ...but the recorded keys change


# --- a lock edited by hand: refused when read, located, with the way back --------------------------

BUNDLED = ROOT / "blueprints"


def _bundled_copy(tmp_path: Path, edit) -> Path:
    """The bundled blueprints in a scratch directory, `edit` applied to every environment of orders' lock."""
    shutil.copytree(BUNDLED, tmp_path / "blueprints")
    lock_file = tmp_path / "blueprints" / "orders.lock.json"
    lock = json.loads(lock_file.read_text())
    for entry in lock["environments"].values():
        edit(entry)
    lock_file.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")
    return tmp_path / "blueprints" / "orders.yaml"


def _rename_index(entry: dict[str, Any], old: str = "GSI1", new: str = "gsi1") -> None:
    entry["indexes"] = {new if name == old else name: index for name, index in entry["indexes"].items()}


def test_an_index_renamed_in_the_lock_alone_is_refused(tmp_path, run_cli):
    """`GSI1` renamed `gsi1` under `indexes` while the entities' keys still say GSI1: `synth --locked` would
    otherwise deploy another index. Refused when the lock is read, by every command, nothing written."""
    blueprint = _bundled_copy(tmp_path, _rename_index)
    lock_text = blueprint.with_name("orders.lock.json").read_text()
    out = tmp_path / "cdktf.out"
    for args in (("synth", blueprint, "--locked", "--out", out), ("synth", blueprint, "--out", out),
                 ("explain", blueprint), ("lint", blueprint)):
        code, _, stderr = run_cli(*args)
        first = stderr.splitlines()[0]
        assert code == 2 and "orders.lock.json:" in first and "[E403]" in first, (args, stderr)
        assert "the design lock is not consistent" in first and "`Order` has keys on index `GSI1`" in first
        assert "(they list: gsi1)" in first
        assert "fix: the lock is written by `tablewright synth`" in stderr and "from git" in stderr
    line = int(first.split("orders.lock.json:")[1].split(":")[0])
    assert '"GSI1"' in lock_text.splitlines()[line - 1]  # the entity's key on GSI1
    assert not out.exists() and blueprint.with_name("orders.lock.json").read_text() == lock_text


def _both_renamed(entry: dict[str, Any]) -> None:
    _rename_index(entry)
    for locked in entry["entities"].values():
        locked["keys"] = {"gsi1" if name == "GSI1" else name: key for name, key in locked["keys"].items()}


def _case_twins(entry: dict[str, Any]) -> None:
    entry["indexes"]["Gsi1"] = entry["indexes"]["GSI1"]


def _sort_key_dropped(entry: dict[str, Any]) -> None:
    entry["entities"]["Order"]["keys"]["GSI1"].pop("sk")


def _encoding_dropped(entry: dict[str, Any]) -> None:
    entry["entities"]["Order"]["encodings"].pop("orderedAt")


def _index_named_table(entry: dict[str, Any]) -> None:
    entry["indexes"]["table"] = entry["indexes"]["GSI1"]


def _table_keys_dropped(entry: dict[str, Any]) -> None:
    entry["entities"]["Order"]["keys"].pop("table")


def _local_index_elsewhere(entry: dict[str, Any]) -> None:
    entry["indexes"]["LSI1"] = {**entry["indexes"]["GSI1"], "type": "local", "partition_key": "GSI1PK"}


def _sort_key_is_the_partition_key(entry: dict[str, Any]) -> None:
    entry["indexes"]["GSI1"]["sort_key"] = entry["indexes"]["GSI1"]["partition_key"]


def _global_index_made_local(entry: dict[str, Any]) -> None:
    entry["indexes"]["GSI1"].update(type="local", partition_key=entry.get("partition_key", "PK"))


INCONSISTENT = [
    (_both_renamed, "`gsi1` looks like a planned index name"),
    (_case_twins, "index names `GSI1` and `Gsi1` differ only in case or punctuation"),
    (_sort_key_dropped, "`Order` has no sort key template on GSI1, whose sort key is GSI1SK"),
    (_encoding_dropped, "`Order`'s keys on GSI1 use `orderedAt`, which its `encodings` do not list"),
    (_index_named_table, "an index cannot be named `table`"),
    (_table_keys_dropped, "`Order` has no keys on the table"),
    (_local_index_elsewhere, "local index `LSI1` has partition key `GSI1PK`, the table `PK`"),
    (_sort_key_is_the_partition_key, "index `GSI1`'s sort key is its partition key `GSI1PK`"),
    (_global_index_made_local, "a local index shares the table's partition key"),
]


@pytest.mark.parametrize("where", ["beside", "outside the repository"])
def test_a_lock_that_is_a_symbolic_link_is_refused_before_anything_is_written(where, tmp_path, run_cli):
    """Every command reads the lock it would write: a link (to another blueprint's lock, or out of the
    repository) is refused when the blueprint loads, so `synth` neither replaces its output nor writes
    through the link."""
    blueprint = _bundled_copy(tmp_path / "repo", lambda entry: None)
    (tmp_path / "repo" / ".git").mkdir()
    lock = blueprint.with_name("orders.lock.json")
    target = blueprint.with_name("elsewhere.lock.json") if where == "beside" else tmp_path / "outside.lock.json"
    lock.rename(target)
    lock.symlink_to(target)
    out = tmp_path / "cdktf.out"
    for args in (("synth", blueprint, "--out", out), ("synth", blueprint, "--locked", "--out", out),
                 ("explain", blueprint)):
        code, _, stderr = run_cli(*args)
        assert code == 2 and "orders.lock.json:1:1: " in stderr and "is not a regular file [E403]" in stderr, stderr
    assert not out.exists() and lock.is_symlink()


@pytest.mark.parametrize("edit, problem", INCONSISTENT, ids=[edit.__name__.strip("_") for edit, _ in INCONSISTENT])
def test_an_inconsistent_lock_is_a_located_error(edit, problem, tmp_path, run_cli):
    blueprint = _bundled_copy(tmp_path, edit)
    code, _, stderr = run_cli("synth", blueprint, "--locked", "--out", tmp_path / "cdktf.out")
    assert code == 2 and "orders.lock.json:" in stderr and "[E403]" in stderr, stderr
    assert problem in stderr.splitlines()[0] and "restore orders.lock.json from git" in stderr


def test_every_lock_synth_writes_is_consistent(corpus):
    from tablewright.blueprint.lock import inconsistency, read_lock

    base, heads = corpus
    paths = [*sorted(BUNDLED.glob("*.lock.json")), base.with_name("shop.lock.json"),
             *(head.with_name(f"{head.stem}.lock.json") for head in heads.values())]
    for path in paths:
        found = read_lock(path)
        assert found is not None, path
        assert all(inconsistency(entry) is None for entry in found.environments.values()), path


def test_a_lock_is_read_by_the_json_parser_only_as_synth_writes_it():
    from tablewright.blueprint.lock import as_synth_writes
    from tablewright.blueprint.yamlsource import parse_yaml

    written = (BUNDLED / "orders.lock.json").read_text()
    assert as_synth_writes(written) == parse_yaml(written, "orders.lock.json")[0]
    # Each of these the YAML reader refuses or may read otherwise: left to it, which locates the problem.
    for text in (f"\t{written}", f"{written}\t\n", written.replace('"blueprint":', '"blueprint"\n:'),
                 written.replace("{", "{ ", 1), '{"a": 1, "a": 2}', '{"a": "\\u0000"}', '{"a": NaN}',
                 '{"a": 1e400}', '{\n  "a": [\n    1,\n  ]\n}\n', "a: 1"):
        assert as_synth_writes(text) is None, text


# --- lint --against designs the head as the review does --------------------------------------------


def test_lint_against_uses_the_bases_lock_when_the_head_has_none(tmp_path, run_cli):
    """The head re-keys Order on the table and has no lock yet: designed afresh, its GSI1 keys would differ
    too (a TW401 the review, which lends the head the base's lock, does not report)."""
    (tmp_path / "base").mkdir()
    (tmp_path / "head").mkdir()
    base = write(tmp_path / "base", "shop", shop_data())
    write_locks(build_stacks(load_blueprints(base)))
    head = write(tmp_path / "head", "shop", merged(shop_data(), {"entities": {"Order": {"key": NEW_ORDER_KEY}}}))
    assert not head.with_name("shop.lock.json").exists()
    code, out, stderr = run_cli("lint", head, "--against", base, "--format", "json")
    assert code == 1, stderr
    linted = [f["message"] for result in json.loads(out) for f in result["findings"] if f["code"] == "TW401"]
    review = build_review(str(base), str(head))
    reviewed = [f.finding.message for stack in review.stacks for f in stack.lint.findings if f.finding.code == "TW401"]
    assert len(linted) == len(reviewed) == 1 and "on the table" in linted[0], (linted, reviewed)
    assert linted == reviewed


@pytest.mark.parametrize("text, problem", [("", "the file is empty"), ("[" * 70 + "]" * 70, "nesting deeper than 64"),
                                           ('{"lock_version": 1,', "invalid YAML")])
def test_a_lock_that_cannot_be_read_is_a_lock_error_with_the_locks_way_back(text, problem, tmp_path, run_cli):
    blueprint = _bundled_copy(tmp_path, lambda entry: None)
    blueprint.with_name("orders.lock.json").write_text(text)
    code, _, stderr = run_cli("explain", blueprint)
    assert code == 2 and "orders.lock.json:1:" in stderr and "the design lock cannot be read: " in stderr, stderr
    assert problem in stderr and "[E403]" in stderr and "restore orders.lock.json from git" in stderr
    assert "blueprint:" not in stderr and "extends" not in stderr  # no blueprint's fix for a lock


def test_a_reformatted_lock_is_told_apart_from_a_changed_design(tmp_path, run_cli):
    blueprint = _bundled_copy(tmp_path, lambda entry: None)
    lock = blueprint.with_name("orders.lock.json")
    lock.write_text(json.dumps(json.loads(lock.read_text())))  # the same design on one line
    code, _, stderr = run_cli("synth", blueprint, "--locked", "--out", tmp_path / "out")
    assert code == 2 and "holds the design of" in stderr and "but not as synth writes it [E404]" in stderr, stderr
    assert "undo the blueprint change" not in stderr and not (tmp_path / "out").exists()
