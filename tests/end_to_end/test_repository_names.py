"""Stack names, Terraform states and physical table names belong to one blueprint of the repository, whatever subset
a command loads: a new blueprint `crm-prod` beside blueprint `crm` with environment `prod` (the same stack, its
directory and local state), or two blueprints deploying one table, is E402 naming both files, with `--changed-since`
too, and nothing is written. On a git repository of three blueprints (tests/support/repository.py)."""

from __future__ import annotations

import pytest
import yaml

from tablewright.errors import EXIT_BAD_INPUT
from tests.support.review_corpus import BASE, merged


def add(repo, name: str, **overlay: object) -> str:
    """A new blueprint under blueprints/ (the shop, with `overlay`), not committed: the pull request's change."""
    path = repo.root / "blueprints" / f"{name}.yaml"
    path.write_text(yaml.safe_dump(merged(yaml.safe_load(BASE.read_text()), overlay), sort_keys=False))
    return f"blueprints/{name}.yaml"


SAME_STACK = {"blueprint": "crm-prod", "table": {"name": "crm_prod_copy"}}  # crm.yaml's prod stack is `crm-prod`
SAME_TABLE = {"blueprint": "shop2"}  # the shop's table, shop_main


@pytest.mark.parametrize("command", [["synth", "--out", "cdktf.out"], ["review"]])
@pytest.mark.parametrize(("overlay", "problem", "other"), [
    (SAME_STACK, "stack `crm-prod` is also made by blueprints/crm.yaml (environment `prod`)", "blueprint"),
    (SAME_TABLE, "table shop_main is also managed by blueprints/shop.yaml", "table"),
])
def test_a_blueprint_sharing_a_stack_or_table_with_another_is_refused_in_a_changed_since_run(
        repo, run_cli, command, overlay, problem, other):
    new = add(repo, str(overlay["blueprint"]), **overlay)
    code, out, err = run_cli(*command, "--changed-since", "main")
    assert code == EXIT_BAD_INPUT, out + err
    assert problem in err and "[E402]" in err and f"{new}:" in err and "Traceback" not in err
    assert err.count("error:") == 1
    assert not (repo.root / "cdktf.out").exists()


def test_every_command_checks_the_blueprints_it_is_named_against_the_rest_of_the_repository(repo, run_cli):
    new = add(repo, "shop2", **SAME_TABLE)
    for command in (["lint", new], ["synth", new, "--out", "cdktf.out"], ["synth", "--out", "cdktf.out"]):
        code, _, err = run_cli(*command)
        assert code == EXIT_BAD_INPUT and "table shop_main is also managed by blueprints/shop.yaml" in err, command
    assert not (repo.root / "cdktf.out").exists()
    code, _, err = run_cli("lint", "blueprints/shop.yaml")  # the other one, named alone, is refused too
    assert code == EXIT_BAD_INPUT and f"table shop_main is also managed by {new}" in err


def test_blueprints_of_distinct_names_tables_and_states_pass_and_a_broken_other_blueprint_is_a_note(repo, run_cli):
    add(repo, "shop2", blueprint="shop2", table={"name": "shop2_main"})
    (repo.root / "blueprints" / "broken.yaml").write_text("blueprint: [\n")
    code, out, err = run_cli("lint", "blueprints/shop2.yaml")
    assert code == 0, out + err
    assert "note: blueprints/broken.yaml does not load" in err
