"""Hostile output paths: `synth --out` never replaces or deletes what it did not write (`.`, an empty string, a foreign
directory, a file, the home directory, an ancestor, symlinks, `/`); `new --dir`, `schema --out` and `adopt --name`
write nothing through a file, a dangling symlink or a name that is a path. The contract:
tests/support/hostile_support.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.hostile_support import (
    GOOD,
    PLATFORM_BASE,
    assert_refused,
    assert_unchanged,
    ids,
    lay_out,
    replace,
    snapshot,
)

# synth --out never deletes what it did not write -------------------------------------------------


def out_dot(tmp: Path, monkeypatch) -> tuple[Path, str]:
    work = tmp / "work"
    lay_out(work, {".git/HEAD": "ref: refs/heads/main\n", "notes.txt": "mine", "src/app.py": "print(1)\n"})
    return work, "."


def out_empty(tmp: Path, monkeypatch) -> tuple[Path, str]:
    work, _ = out_dot(tmp, monkeypatch)
    return work, ""


def out_foreign_directory(tmp: Path, monkeypatch) -> tuple[Path, str]:
    lay_out(tmp / "build", {"keep.txt": "mine", "nested/deep.bin": "\x00\x01"})
    return tmp, "build"


def out_file(tmp: Path, monkeypatch) -> tuple[Path, str]:
    lay_out(tmp, {"report.txt": "not a directory"})
    return tmp, "report.txt"


def out_under_a_file(tmp: Path, monkeypatch) -> tuple[Path, str]:
    lay_out(tmp, {"report.txt": "not a directory"})
    return tmp, "report.txt/cdktf.out"


def out_home(tmp: Path, monkeypatch) -> tuple[Path, str]:
    home = tmp / "home"
    lay_out(home, {".bashrc": "export A=1\n", ".ssh/config": "Host *\n", "notes.txt": "mine"})
    monkeypatch.setenv("HOME", str(home))
    return tmp, str(home)


def out_ancestor(tmp: Path, monkeypatch) -> tuple[Path, str]:
    lay_out(tmp / "a", {"a.txt": "mine", "b/b.txt": "mine", "b/c/c.txt": "mine"})
    return tmp / "a" / "b" / "c", ".."


def out_symlink_to_earlier_output(tmp: Path, monkeypatch) -> tuple[Path, str]:
    lay_out(tmp, {}, {"cdktf.out": "real.out"})
    return tmp, "cdktf.out"


def out_symlink_to_foreign_directory(tmp: Path, monkeypatch) -> tuple[Path, str]:
    lay_out(tmp / "mine", {"keep.txt": "mine"})
    lay_out(tmp, {}, {"cdktf.out": "mine"})
    return tmp, "cdktf.out"


OUT_TARGETS = [
    ("dot-in-a-repository", out_dot),
    ("empty-string", out_empty),
    ("non-empty-directory-not-written-by-tablewright", out_foreign_directory),
    ("existing-file", out_file),
    ("path-under-a-file", out_under_a_file),
    ("home-directory", out_home),
    ("ancestor-of-cwd", out_ancestor),
    ("symlink-to-an-earlier-output", out_symlink_to_earlier_output),
    ("symlink-to-a-directory", out_symlink_to_foreign_directory),
]


@pytest.mark.parametrize("name, setup", OUT_TARGETS, ids=ids(OUT_TARGETS))
def test_synth_never_replaces_what_it_did_not_write(name, setup, tmp_path, run_cli, synth_good, monkeypatch):
    tree = tmp_path / "tree"
    synth_good(tree / "real.out")
    cwd, out = setup(tree, monkeypatch)
    lay_out(tmp_path, {"shop.yaml": GOOD})
    monkeypatch.chdir(cwd)
    before = snapshot(tree)
    assert_refused(run_cli("synth", tmp_path / "shop.yaml", "--out", out), option="--out")
    assert_unchanged(before, snapshot(tree))


def test_synth_out_root_is_refused_before_touching_anything(tmp_path, run_cli, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError(f"synth --out / tried to move or delete {args[:2]}")

    real_mkdir = os.mkdir

    def mkdir_below_root_only(path, *args, **kwargs):
        if Path(path).absolute() != Path("/") and Path(path).absolute().parent == Path("/"):
            raise AssertionError(f"synth --out / tried to create {path}")
        return real_mkdir(path, *args, **kwargs)

    lay_out(tmp_path, {"shop.yaml": GOOD})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "mkdir", mkdir_below_root_only)
    for owner, name in [(os, "rename"), (os, "replace"), (os, "rmdir"), (os, "unlink"), (os, "remove"),
                        (Path, "rename"), (Path, "replace"), (Path, "rmdir"), (Path, "unlink")]:
        monkeypatch.setattr(owner, name, forbidden)
    monkeypatch.setattr("shutil.rmtree", forbidden)
    assert_refused(run_cli("synth", tmp_path / "shop.yaml", "--out", "/"), option="--out")


def test_synth_replaces_its_own_earlier_output_and_leaves_nothing_beside_it(tmp_path, run_cli):
    lay_out(tmp_path / "src", {"shop.yaml": GOOD, "other.yaml": replace("blueprint: shop", "blueprint: other")})
    out = tmp_path / "site" / "cdktf.out"
    code, _, err = run_cli("synth", tmp_path / "src" / "shop.yaml", "--out", out)
    assert code == 0, err
    code, _, err = run_cli("synth", tmp_path / "src" / "other.yaml", "--out", out)
    assert code == 0, err
    assert sorted(p.name for p in (out / "stacks").iterdir()) == ["other"]  # replaced, not merged
    assert sorted(p.name for p in out.parent.iterdir()) == ["cdktf.out"]  # no .staging-*/.retired-* leftovers


# new --dir and schema --out: a file or a dangling symlink -----------------------------------------


def test_new_refuses_a_dir_that_is_a_file(tmp_path, run_cli):
    lay_out(tmp_path, {"blueprints": "not a directory"})
    result = run_cli("new", "billing", "--dir", tmp_path / "blueprints", "--base", PLATFORM_BASE)
    assert_refused(result, option="--dir")
    assert (tmp_path / "blueprints").read_text() == "not a directory"


def test_new_does_not_write_through_a_dangling_symlink(tmp_path, run_cli):
    lay_out(tmp_path / "elsewhere", {})
    lay_out(tmp_path / "blueprints", {}, {"b.yaml": str(tmp_path / "elsewhere" / "target.yaml")})
    assert_refused(run_cli("new", "b", "--dir", tmp_path / "blueprints", "--base", PLATFORM_BASE))
    assert not (tmp_path / "elsewhere" / "target.yaml").exists()
    assert (tmp_path / "blueprints" / "b.yaml").is_symlink()


def test_schema_refuses_an_out_that_is_a_file(tmp_path, run_cli):
    lay_out(tmp_path, {"schema": "not a directory"})
    assert_refused(run_cli("schema", "--out", tmp_path / "schema"), option="--out")
    assert (tmp_path / "schema").read_text() == "not a directory"


# adopt --name: a name that is a path --------------------------------------------------------------

ADOPT_NAMES = ["../outside", "/tmp/tablewright-adopt-victim", "a/../../b", "UPPER", "x" * 64, "with space"]


@pytest.mark.parametrize("name", ADOPT_NAMES)
def test_adopt_writes_nothing_anywhere_for_a_name_that_is_a_path(name, tmp_path, run_cli, monkeypatch):
    described = {"Table": {"TableName": "t", "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}],
                           "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}],
                           "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"}},
                 "ResponseMetadata": {"RequestId": "r"}}
    lay_out(tmp_path / "work", {"table.json": json.dumps(described), "outside.yaml": "mine\n"})
    monkeypatch.chdir(tmp_path / "work")
    before = snapshot(tmp_path)
    for out in ([], ["--out", "-"]):
        assert_refused(run_cli("adopt", "table.json", f"--name={name}", *out), mentions=("--name",))
    assert_unchanged(before, snapshot(tmp_path))
    assert not Path("/tmp/tablewright-adopt-victim.yaml").exists()
