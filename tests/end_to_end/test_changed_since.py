"""`synth --changed-since REV` synthesizes only the blueprints a change affects: a changed file, a changed shared base
or design lock; committed, staged and untracked changes, counted from where the branch began; a change to Tablewright
itself affects them all. Nothing changed leaves an empty output; a bad revision is one located error. On a git
repository of three blueprints (tests/support/repository.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tablewright.blueprint.changed import reasons_for
from tablewright.errors import EXIT_BAD_INPUT
from tests.support.review_corpus import BASE


def stacks_in(out: Path) -> list[str]:
    return sorted(path.name for path in (out / "stacks").iterdir())


# synth --changed-since ---------------------------------------------------------------------------------------


def test_synth_changed_since_synthesizes_exactly_the_changed_blueprint(repo, run_cli):
    repo.edit("shop.yaml", "tags: {service: shop}", "tags: {service: shop, team: checkout}")
    code, out, err = run_cli("synth", *repo.blueprints, "--changed-since", "main", "--out", "cdktf.out")
    assert code == 0, err
    assert stacks_in(repo.root / "cdktf.out") == ["shop"]
    assert "1 of 3 blueprint(s)" in out and "blueprints/shop.yaml: changed" in out
    assert "wrote cdktf.out/stacks/shop/cdk.tf.json" in out


def test_a_changed_shared_base_affects_every_blueprint_that_extends_it(repo, run_cli):
    repo.edit("shared/platform-base.yaml", "hot_key_warning: 0.5", "hot_key_warning: 0.6")
    code, out, err = run_cli("synth", *repo.blueprints, "--changed-since", "main", "--out", "cdktf.out")
    assert code == 0, err
    assert stacks_in(repo.root / "cdktf.out") == ["crm-dev", "crm-prod", "orders-dev", "orders-prod"]
    assert "blueprints/crm.yaml: extends blueprints/shared/platform-base.yaml, which changed" in out
    assert "blueprints/shop.yaml" not in out


def test_a_changed_design_lock_affects_its_blueprint(repo, run_cli):
    lock = repo.root / "blueprints" / "orders.lock.json"
    lock.write_text(lock.read_text() + "\n")
    code, out, _ = run_cli("synth", *repo.blueprints, "--changed-since", "main", "--out", "cdktf.out")
    assert code == 0 and stacks_in(repo.root / "cdktf.out") == ["orders-dev", "orders-prod"]
    assert "blueprints/orders.yaml: its design lock orders.lock.json changed" in out


def test_committed_staged_and_untracked_changes_all_count(repo, run_cli):
    repo.git("checkout", "-q", "-b", "feature")
    repo.edit("crm.yaml", "version: 1.0.0", "version: 1.0.1")
    repo.commit("crm: a new version")  # committed on the branch
    repo.edit("orders.yaml", "version: 1.0.0", "version: 1.0.1")
    repo.git("add", "blueprints/orders.yaml")  # staged only
    new = repo.root / "blueprints" / "new.yaml"
    new.write_text(BASE.read_text().replace("blueprint: shop", "blueprint: newshop")
                   .replace("name: shop_main", "name: newshop_main"))  # untracked
    code, out, err = run_cli("synth", *repo.blueprints, "blueprints/new.yaml", "--changed-since", "main",
                             "--out", "cdktf.out")
    assert code == 0, err
    assert stacks_in(repo.root / "cdktf.out") == ["crm-dev", "crm-prod", "newshop", "orders-dev", "orders-prod"]
    assert "3 of 4 blueprint(s)" in out


def test_changes_are_counted_from_where_the_branch_began(repo, run_cli):
    """Like a pull request's diff: a change made on main after the branch began is not the branch's."""
    repo.git("checkout", "-q", "-b", "feature")
    repo.edit("shop.yaml", "version: 1.0.0", "version: 1.0.1")
    repo.commit("shop on the branch")
    repo.git("checkout", "-q", "main")
    repo.edit("crm.yaml", "version: 1.0.0", "version: 1.0.1")
    repo.commit("crm on main")
    repo.git("checkout", "-q", "feature")
    code, out, _ = run_cli("synth", *repo.blueprints, "--changed-since", "main", "--out", "cdktf.out")
    assert code == 0 and stacks_in(repo.root / "cdktf.out") == ["shop"]
    merge_base = repo.git("merge-base", "main", "feature").strip()
    assert f"(merge base {merge_base[:12]})" in out


def test_nothing_changed_leaves_an_empty_output_so_no_stale_stack_is_planned(repo, run_cli):
    assert run_cli("synth", *repo.blueprints, "--out", "cdktf.out")[0] == 0
    assert len(stacks_in(repo.root / "cdktf.out")) == 5
    repo.commit("shop's design lock")
    code, out, _ = run_cli("synth", *repo.blueprints, "--changed-since", "HEAD", "--out", "cdktf.out")
    assert code == 0 and "0 of 3 blueprint(s)" in out
    assert stacks_in(repo.root / "cdktf.out") == []


@pytest.mark.parametrize(("revision", "problem"), [
    ("nope", "`nope` is not a commit in this repository"),
    ("--output=/tmp/x", "is not a git revision"),
    ("main..HEAD", "is not a git revision"),
    ("main HEAD", "is not a git revision"),
])
def test_a_bad_revision_is_one_located_error(repo, run_cli, revision, problem):
    code, out, err = run_cli("synth", *repo.blueprints, f"--changed-since={revision}", "--out", "cdktf.out")
    assert code == EXIT_BAD_INPUT and out == "" and not (repo.root / "cdktf.out").exists()
    [error, fix, docs] = err.strip().splitlines()
    assert docs == "  docs: docs/reference/errors.md#e601"
    assert problem in error and error.endswith("[E601]") and fix.strip().startswith("fix: ")


def test_a_change_to_tablewright_itself_affects_every_blueprint(tmp_path):
    blueprint = tmp_path / "shop.yaml"
    shutil.copy(BASE, blueprint)
    tool = tmp_path / "tool"
    changed = frozenset({tmp_path / "tool" / "modules" / "synth" / "synth.py"})
    assert reasons_for(blueprint, changed) == ()
    [reason] = reasons_for(blueprint, changed, [tool])
    assert reason.startswith("Tablewright itself changed (") and "synth.py" in reason
