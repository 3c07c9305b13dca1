"""Hostile paths and revisions the CLI reads: git revisions that look like options (`--output=...`, `-p`, longer than a
file name may be); errors in a blueprint read from a git revision or an extended file, which name the user's paths
and never a scratch directory; `lint --against` searching a tree of symlink loops and deep nesting for the blueprints
that extend it; `list` on what is not a directory. The contract: tests/support/hostile_support.py."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from tests.support.hostile_support import (
    GOOD,
    MARK,
    NESTED,
    SHOP_TEXT,
    assert_no_scratch_paths,
    assert_refused,
    git_repo,
    ids,
    lay_out,
    marked_lines,
    replace,
)

# git option injection ----------------------------------------------------------------------------

GIT_OPTION_INJECTION = [
    ("lint-against-output-option", ("lint", "shop.yaml", "--against=--output=out:y"), "--against"),
    ("review-base-output-option", ("review", "--base=--output=out:y", "--head", "shop.yaml"), "--base"),
    ("review-head-output-option", ("review", "--base", "shop.yaml", "--head=--output=out:y"), "--head"),
    ("lint-against-ref-starting-with-dash", ("lint", "shop.yaml", "--against=-p:shop.yaml"), "--against"),
    ("review-base-ref-starting-with-dash", ("review", "--base=--no-index:shop.yaml", "--head", "shop.yaml"), "--base"),
    # Longer than a file name may be: checking whether it is a file raised ENAMETOOLONG (exit 3).
    ("lint-against-300-character-revision", ("lint", "shop.yaml", "--against", "A" * 300 + ":shop.yaml"), "--against"),
    ("review-base-300-character-revision", ("review", "--base", "A" * 300 + ":shop.yaml", "--head", "shop.yaml"),
     "--base"),
]


@pytest.mark.parametrize("name, args, option", GIT_OPTION_INJECTION, ids=ids(GIT_OPTION_INJECTION))
def test_git_revisions_that_look_like_options_are_refused(name, args, option, tmp_path, run_cli, monkeypatch):
    repo = git_repo(tmp_path / "repo", {"shop.yaml": SHOP_TEXT})
    monkeypatch.chdir(repo)
    before = sorted(p.name for p in repo.iterdir())
    assert_refused(run_cli(*args), option=option)
    assert sorted(p.name for p in repo.iterdir()) == before  # no `out`, no `out:y`
    assert not (tmp_path / "out").exists()


# review and lint --against name the user's paths, never a scratch directory ----------------------

BROKEN = replace("  billing: provisioned\n", f"  billing: reserved  {MARK}\n", SHOP_TEXT)
BROKEN_BASE = f"tags: {{team: shop}}\nlint: {{hot_key_warning: 7}}  {MARK}\n"
LIST_DOC = f"- shop  {MARK}\n- orders\n"
EXTENDING = "extends: shared/base.yaml\n" + SHOP_TEXT


@dataclass(frozen=True)
class Sides:
    id: str
    committed: dict[str, str]
    working: dict[str, str]  # written after the commit (the working tree)
    args: tuple[str, ...]
    marked: dict[str, str] = field(default_factory=dict)  # name -> the text holding the `# <-` line
    mentions: tuple[str, ...] = ()


GITREF_SIDES = [
    Sides("head-gitref-broken", {"shop.yaml": SHOP_TEXT, "broken.yaml": BROKEN}, {},
          ("review", "--base", "shop.yaml", "--head", "HEAD:broken.yaml"), {"broken.yaml": BROKEN}),
    Sides("head-path-broken", {"shop.yaml": SHOP_TEXT}, {"broken.yaml": BROKEN},
          ("review", "--base", "shop.yaml", "--head", "broken.yaml"), {"broken.yaml": BROKEN}),
    Sides("base-gitref-extended-file-broken", {"shop.yaml": EXTENDING, "shared/base.yaml": BROKEN_BASE},
          {"shared/base.yaml": "tags: {team: shop}\n"}, ("review", "--base", "HEAD:shop.yaml", "--head", "shop.yaml"),
          {"shared/base.yaml": BROKEN_BASE}),
    Sides("lint-against-gitref-broken", {"shop.yaml": SHOP_TEXT, "broken.yaml": BROKEN}, {},
          ("lint", "shop.yaml", "--against", "HEAD:broken.yaml"), {"broken.yaml": BROKEN}),
    Sides("base-gitref-is-a-list", {"shop.yaml": SHOP_TEXT, "list.yaml": LIST_DOC}, {},
          ("review", "--base", "HEAD:list.yaml", "--head", "shop.yaml"), {"list.yaml": LIST_DOC}),
    Sides("lint-against-gitref-is-a-list", {"shop.yaml": SHOP_TEXT, "list.yaml": LIST_DOC}, {},
          ("lint", "shop.yaml", "--against", "HEAD:list.yaml"), {"list.yaml": LIST_DOC}),
    Sides("base-gitref-names-a-tree", {"blueprints/shop.yaml": SHOP_TEXT}, {},
          ("review", "--base", "HEAD:blueprints", "--head", "blueprints/shop.yaml"),
          mentions=("--base", "HEAD:blueprints")),
    Sides("base-gitref-missing-path", {"shop.yaml": SHOP_TEXT}, {},
          ("review", "--base", "HEAD:nope.yaml", "--head", "shop.yaml"), mentions=("--base", "HEAD:nope.yaml")),
]


@pytest.mark.parametrize("case", GITREF_SIDES, ids=[case.id for case in GITREF_SIDES])
def test_review_and_lint_errors_name_the_users_paths(case, tmp_path, run_cli, monkeypatch):
    repo = git_repo(tmp_path / "repo", case.committed)
    lay_out(repo, case.working)
    monkeypatch.chdir(repo)
    result = run_cli(*case.args)
    where = {name: marked_lines(text) for name, text in case.marked.items()}
    assert_refused(result, where=where or None, mentions=case.mentions)
    assert_no_scratch_paths(result[2])


def test_lint_against_with_a_removed_pattern_reports_it(tmp_path, run_cli, monkeypatch):
    removed = '  order_by_id: {entity: Order, where: {orderId: "="}, rps: 40}\n'
    names_it = "access_patterns:\n" + removed
    lay_out(tmp_path, {
        "old.yaml": SHOP_TEXT,
        "shop.yaml": replace(removed, "", SHOP_TEXT),
        "teams/child.yaml": "extends: ../shop.yaml\nblueprint: child\n" + names_it,
        "teams/ring-a.yaml": "extends: ring-b.yaml\n" + names_it,
        "teams/ring-b.yaml": "extends: [ring-a.yaml, ../shop.yaml]\n" + names_it,
        "teams/self.yaml": "extends: self.yaml\n" + names_it,
        "teams/dangling.yaml": "extends: nowhere/missing.yaml\n" + names_it,
        "teams/deep.yaml": "tags: " + NESTED + "\n",  # every *.yaml around is read in search of extenders
    }, {"teams/loop.yaml": "loop.yaml"})
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("lint", "shop.yaml", "--against", "old.yaml")
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    assert code == 1, err
    assert "TW402" in out and "child.yaml" in out


# list: what is not a directory, symlink loops -----------------------------------------------------

LIST_TARGETS = [
    ("missing-directory", lambda tmp: tmp / "nope"),
    ("directory-is-a-symlink-loop", lambda tmp: (lay_out(tmp, {}, {"loop": "loop"}), tmp / "loop")[1]),
    ("directory-is-a-file", lambda tmp: (lay_out(tmp, {"shop.yaml": GOOD}), tmp / "shop.yaml")[1]),
]


@pytest.mark.parametrize("name, make", LIST_TARGETS, ids=ids(LIST_TARGETS))
def test_list_refuses_what_is_not_a_directory(name, make, tmp_path, run_cli):
    directory = make(tmp_path)
    assert_refused(run_cli("list", directory), mentions=(directory.name,))


def test_list_survives_symlink_loops_inside_the_directory(tmp_path, run_cli):
    lay_out(tmp_path / "catalog", {"shop.yaml": GOOD},
            {"up": "..", "self": "self", "x.yaml": "../a", "nested": "."})
    lay_out(tmp_path, {}, {"a": "b", "b": "a"})
    code, out, err = run_cli("list", tmp_path / "catalog", "--format", "json")
    if code == 0:
        files = [entry["file"] for entry in json.loads(out)]
        assert any(f.endswith("shop.yaml") for f in files) and any(f.endswith("x.yaml") for f in files), files
        assert "Traceback" not in err
    else:
        assert_refused((code, out, err), mentions=("x.yaml", "self"))
