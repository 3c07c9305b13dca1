"""Hostile and careless inputs (the security issue): what Tablewright must do with each.

Every bad input meets one contract (`assert_refused`): exit 2, never a traceback or an internal error;
stderr's first line is `error: ...`, located `file:line:column` when the problem is in a file (the line
marked `# <-` in the case); a `  fix:` line follows; a `synth --out DIR` over an earlier good synthesis
leaves DIR, and everything around it, unchanged byte for byte. Command-line problems name the option.
A value that is accepted must reach Terraform inert (`$${`, `%%{`).

These tests define the target behaviour; many fail on the code they were written against.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import resource
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tablewright.cli import main
from tests.conftest import ROOT, TEST_BLUEPRINTS
from tests.support.gate_support import TABLE, entry, plan

MAIN = ROOT / "main.py"
SHOP = TEST_BLUEPRINTS / "shop.yaml"
SHOP_TEXT = SHOP.read_text()
PLATFORM_BASE = ROOT / "blueprints" / "shared" / "platform-base.yaml"
MARK = "# <-"
SLOW_SECONDS = 60
SCRATCH_PREFIXES = ("tablewright-review-", "tablewright-old-", f"{tempfile.gettempdir()}/tablewright-")

Result = tuple[int, str, str]


# The contract ------------------------------------------------------------------------------------


LOCATED = re.compile(r"error: (?P<file>.+?):(?P<line>\d+):(?P<column>\d+): ")


def marked_lines(text: str) -> list[int]:
    return [number for number, line in enumerate(text.splitlines(), start=1) if MARK in line]


def assert_refused(result: Result, *, where: dict[str, list[int]] | None = None, option: str | None = None,
                   mentions: tuple[str, ...] = (), absent: tuple[str, ...] = ()) -> str:
    """Exit 2 with one clear message: `error: ` first, then a `  fix: ` line. `where` maps the file names
    the error may be in to the lines it may point at; `option` is the command-line option it must name;
    `mentions`: the first line names at least one of these. Returns the first line."""
    code, _, err = result
    for crash in ("Traceback", "internal error"):
        assert crash not in err, err[-3000:]
    assert code == 2, f"exit {code}; stderr: {err[-3000:]}"
    lines = err.splitlines()
    assert lines and lines[0].startswith("error: "), err[:2000]
    first = lines[0]
    own = []  # the first error's lines, up to the next error
    for line in lines[1:]:
        if line.startswith("error: "):
            break
        own.append(line)
    assert any(line.startswith("  fix: ") for line in own), f"no `  fix:` line after the error: {err[:2000]}"
    if where is not None:
        assert_located(first, where)
    if option is not None:
        assert option in first, f"the error does not name {option}: {first}"
    if mentions:
        assert any(word in first for word in mentions), f"none of {mentions} in: {first}"
    for word in absent:
        assert word not in err, f"{word!r} in stderr: {err[:2000]}"
    return first


def assert_located(first: str, where: dict[str, list[int]]) -> None:
    match = LOCATED.match(first)
    assert match, f"no file:line:column in: {first}"
    file, line = match["file"], int(match["line"])
    names = [name for name in where if file == name or file.endswith(("/" + name, ":" + name))]  # or REV:path
    assert names, f"error in {file}, expected one of {sorted(where)}: {first}"
    assert line in where[names[0]], f"line {line}, expected one of {where[names[0]]}: {first}"


def assert_no_scratch_paths(err: str) -> None:
    for prefix in SCRATCH_PREFIXES:
        assert prefix not in err, f"a scratch directory leaks into the message: {err[:2000]}"


# Files and snapshots -----------------------------------------------------------------------------


def lay_out(directory: Path, files: dict[str, str], links: dict[str, str] | None = None) -> None:
    """Write `files` (lone surrogates become raw bytes) and create symlinks `name -> target`."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
    for name, target in (links or {}).items():
        (directory / name).symlink_to(target)


def snapshot(directory: Path) -> dict[str, tuple]:
    """Every entry under `directory`: directories, symlinks (not followed), file contents (large or
    special files by size and kind only, so a FIFO or a sparse 2 GB file is never read)."""
    found: dict[str, tuple] = {}
    for root, dirs, files in os.walk(directory, followlinks=False):
        for name in dirs + files:
            path = Path(root) / name
            info = path.lstat()
            relative = str(path.relative_to(directory))
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[relative] = ("dir",)
            elif stat.S_ISREG(info.st_mode) and info.st_size <= 10_000_000:
                found[relative] = ("file", path.read_bytes())
            else:
                found[relative] = ("special", stat.S_IFMT(info.st_mode), info.st_size, info.st_mtime_ns)
    return found


def assert_unchanged(before: dict[str, tuple], after: dict[str, tuple]) -> None:
    removed = sorted(before.keys() - after.keys())
    added = sorted(after.keys() - before.keys())
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    assert not (removed or added or changed), f"removed {removed[:10]}, added {added[:10]}, changed {changed[:10]}"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main",
                    *args], cwd=repo, check=True, capture_output=True)


def git_repo(directory: Path, committed: dict[str, str]) -> Path:
    lay_out(directory, committed)
    git(directory, "init", "-q")
    git(directory, "add", "-A")
    git(directory, "commit", "-qm", "blueprints", "--allow-empty")
    return directory


# Running the CLI ---------------------------------------------------------------------------------


def _limit_memory() -> None:
    """Subprocesses get 1 GiB of data: reading a 2 GB input, rather than refusing it, fails."""
    resource.setrlimit(resource.RLIMIT_DATA, (1 << 30, 1 << 30))


def run_slow(*args: object, cwd: Path | None = None) -> Result:
    """`tablewright ARGS` in a subprocess; fails the test if it runs longer than SLOW_SECONDS."""
    process = subprocess.Popen([sys.executable, str(MAIN), *map(str, args)], cwd=cwd or Path.cwd(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_limit_memory,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=SLOW_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(f"still running after {SLOW_SECONDS} s: {' '.join(map(str, args))[:200]}")
    return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


@pytest.fixture
def synth_good(tmp_path: Path, run_cli) -> Callable[[Path], None]:
    """An earlier good synthesis into `out` (of a blueprint outside the directory under test)."""

    def synth(out: Path) -> None:
        good = tmp_path / "earlier" / "shop.yaml"
        lay_out(good.parent, {good.name: GOOD})
        code, _, err = run_cli("synth", good, "--out", out)
        assert code == 0, err
        assert (out / "stacks" / "shop" / "cdk.tf.json").is_file()

    return synth


@pytest.fixture
def refuse(tmp_path: Path, run_cli, synth_good, monkeypatch) -> Callable[..., None]:
    """Lay a case out in `ws/` beside an earlier synthesis in `ws/cdktf.out`, run `synth --out` over it
    and check the contract; nothing anywhere under the test's directory may change."""

    def check(case: Bad, *, slow: bool = False, repository: bool = False) -> None:
        workspace = tmp_path / "ws"
        workspace.mkdir()
        if repository:
            git(workspace, "init", "-q")
        lay_out(workspace, {"shop.yaml": case.text, **case.others}, case.links)
        out = workspace / "cdktf.out"
        synth_good(out)
        monkeypatch.chdir(workspace)
        before = snapshot(tmp_path)
        run = run_slow if slow else run_cli
        result = run("synth", workspace / "shop.yaml", "--out", out)
        assert_refused(result, where=case.expected(), absent=case.absent)
        assert_unchanged(before, snapshot(tmp_path))

    return check


# Blueprints --------------------------------------------------------------------------------------

GOOD = """\
blueprint: shop
version: 1.0.0
table:
  name: shop_main
entities:
  User:
    attributes:
      userId: string
      name: string
      visits: number
    key: {pk: "USER#{userId}", sk: PROFILE}
access_patterns:
  user_profile:
    entity: User
    where: {userId: "="}
"""


def insert(after: str, *lines: str, text: str = GOOD) -> str:
    """`text` with `lines` inserted after the line `after`, which occurs once."""
    assert text.count(after + "\n") == 1, after
    return text.replace(after + "\n", after + "\n" + "".join(line + "\n" for line in lines), 1)


def replace(old: str, new: str, text: str = GOOD) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new, 1)


def top(*lines: str, text: str = GOOD) -> str:
    return insert("version: 1.0.0", *lines, text=text)


def table(*lines: str, text: str = GOOD) -> str:
    return insert("  name: shop_main", *lines, text=text)


def attributes(*lines: str, text: str = GOOD) -> str:
    return insert("      visits: number", *lines, text=text)


def entity(*lines: str, text: str = GOOD) -> str:
    return insert('    key: {pk: "USER#{userId}", sk: PROFILE}', *lines, text=text)


def pattern(*lines: str, text: str = GOOD) -> str:
    return insert('    where: {userId: "="}', *lines, text=text)


def q(text: str) -> str:
    """A single-quoted YAML scalar."""
    return "'" + text.replace("'", "''") + "'"


def s3_backend(field_name: str, value: str) -> str:
    defaults = {"type": "s3", "bucket": "tablewright-state", "region": "eu-west-1"}
    lines = ["terraform:", "  backend:"]
    for name, setting in {**defaults, field_name: value}.items():
        lines.append(f"    {name}: {setting}" + (f"  {MARK}" if name == field_name else ""))
    return top(*lines)


@dataclass(frozen=True)
class Bad:
    """A bad blueprint `shop.yaml`: the offending line(s) end with `# <-`, in it or in one of `others`
    (files beside it); `links` are symlinks beside it; `absent`: words stderr must not contain."""

    id: str
    text: str
    others: dict[str, str] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    absent: tuple[str, ...] = ()

    def expected(self) -> dict[str, list[int]]:
        files = {"shop.yaml": self.text, **self.others}
        where = {name: marked_lines(text) for name, text in files.items() if marked_lines(text)}
        assert where, f"{self.id}: no line is marked"
        return where


def ids(cases: list) -> list[str]:
    return [case.id if isinstance(case, Bad) else case[0] for case in cases]


# Terraform expression injection ------------------------------------------------------------------

DOLLAR = '${file("/proc/self/environ")}'
PERCENT = "%{ if true }x%{ endif }"
TOPIC = "arn:aws:sns:us-east-1:111122223333:"
WINDOW = ("maintenance_window:", "  days: daily", "  start: '02:00'", "  duration: 2h", "  timezone: UTC")

# Fields AWS restricts (tag characters, regions, ARNs, bucket and table names, IANA zones, version
# constraints): an interpolation there is refused at the line that holds it.
INTERPOLATION_REFUSED = [
    Bad("tag-key-dollar", top(f"tags: {{{q(DOLLAR)}: x}}  {MARK}")),
    Bad("tag-value-dollar", top(f"tags: {{service: {q(DOLLAR)}}}  {MARK}")),
    Bad("tag-key-percent", top(f"tags: {{{q(PERCENT)}: x}}  {MARK}")),
    Bad("tag-value-percent", top(f"tags: {{service: {q(PERCENT)}}}  {MARK}")),
    Bad("required-tag-dollar", top(f"required_tags: [{q(DOLLAR)}]  {MARK}", f"tags: {{{q(DOLLAR)}: x}}  {MARK}")),
    Bad("region-dollar", top(f"region: {q(DOLLAR)}  {MARK}")),
    Bad("region-percent", top(f"region: {q(PERCENT)}  {MARK}")),
    Bad("kms-key-arn-dollar", table("  encryption: customer_managed",
                                    f"  kms_key_arn: {q('arn:aws:kms:eu-west-1:111122223333:key/' + DOLLAR)}  {MARK}")),
    Bad("backend-bucket-dollar", s3_backend("bucket", q(DOLLAR))),
    Bad("backend-region-percent", s3_backend("region", q(PERCENT))),
    Bad("backend-lock-table-dollar", s3_backend("dynamodb_table", q(DOLLAR))),
    Bad("naming-table-dollar", top(f"naming: {{table: {q(DOLLAR + '-{table}')}}}  {MARK}")),
    Bad("naming-table-percent", top(f"naming: {{table: {q(PERCENT + '{table}')}}}  {MARK}")),
    Bad("notify-arn-dollar", top("alarms:", f"  notify: [{q(TOPIC + DOLLAR)}]  {MARK}")),
    Bad("notify-arn-percent", top("alarms:", f"  notify: [{q(TOPIC + PERCENT)}]  {MARK}")),
    Bad("window-timezone-dollar", top(*WINDOW[:-1], f"  timezone: {q(DOLLAR)}  {MARK}")),
    Bad("window-duration-percent", top(*WINDOW[:3], f"  duration: {q(PERCENT)}  {MARK}", WINDOW[4])),
    Bad("aws-provider-constraint-dollar", top("terraform:", f"  aws_provider: {q(DOLLAR)}  {MARK}")),
    Bad("tag-value-newline", top(f'tags: {{service: "shop\\nx"}}  {MARK}')),
    Bad("tag-value-right-to-left-override", top(f'tags: {{service: "shop\\u202egpj.exe"}}  {MARK}')),
    Bad("tag-value-300-characters", top(f"tags: {{service: {'x' * 300}}}  {MARK}")),
]


@pytest.mark.parametrize("case", INTERPOLATION_REFUSED, ids=ids(INTERPOLATION_REFUSED))
def test_interpolation_in_restricted_fields_is_refused(case, refuse):
    refuse(case)


UNESCAPED = re.compile(r"(?<![$%])[$%]\{(?=file\(| if true | endif )")


def strings_in(value: Any):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
    elif isinstance(value, str):
        yield value


def unescaped_payloads(out: Path) -> list[str]:
    """Strings of every synthesized Terraform file holding the payload without the `$$`/`%%` escape."""
    configs = sorted(out.rglob("*.tf.json"))
    assert configs, f"nothing synthesized in {out}"
    return [f"{path.relative_to(out)}: {text[:200]}" for path in configs
            for text in strings_in(json.loads(path.read_text())) if UNESCAPED.search(text)]


# Free text (descriptions, reasons, the state key): refused, or written escaped.
INTERPOLATION_IN_TEXT = [
    Bad("description-dollar", top(f"description: {q(DOLLAR)}  {MARK}")),
    Bad("owner-percent", top(f"owner: {q(PERCENT)}  {MARK}")),
    Bad("backend-key-dollar", s3_backend("key", q("state/" + DOLLAR + "/terraform.tfstate"))),
    Bad("backend-key-percent", s3_backend("key", q("state/" + PERCENT + "/terraform.tfstate"))),
    Bad("attribute-description-dollar", attributes(f"      note: {{type: string, description: {q(DOLLAR)}}}  {MARK}")),
    Bad("pattern-description-percent", pattern(f"    description: {q(PERCENT)}  {MARK}")),
    Bad("lint-ignore-reason-dollar", top("lint:", f"  ignore: {{TW101: {q(DOLLAR)}}}  {MARK}")),
    Bad("scan-reason-percent", GOOD + "  export:\n    entity: User\n    scan: allowed\n"
                                      f"    reason: {q(PERCENT)}  {MARK}\n"),
]


@pytest.mark.parametrize("case", INTERPOLATION_IN_TEXT, ids=ids(INTERPOLATION_IN_TEXT))
def test_interpolation_in_free_text_is_refused_or_escaped(case, tmp_path, run_cli):
    lay_out(tmp_path, {"shop.yaml": case.text})
    out = tmp_path / "cdktf.out"
    result = run_cli("synth", tmp_path / "shop.yaml", "--out", out)
    if result[0] == 0:
        assert unescaped_payloads(out) == []
    else:
        assert_refused(result, where=case.expected())


def test_accepted_free_text_reaches_terraform_inert(tmp_path, run_cli):
    text = top(f"description: {q(DOLLAR)}", f"owner: {q(PERCENT)}", "tags: {service: shop}")
    text = attributes(f"      note: {{type: string, description: {q(DOLLAR + PERCENT)}}}", text=text)
    lay_out(tmp_path, {"shop.yaml": text})
    out = tmp_path / "cdktf.out"
    code, _, err = run_cli("synth", tmp_path / "shop.yaml", "--out", out)
    assert code == 0, err
    assert unescaped_payloads(out) == []


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


# Production protection cannot be switched off through review/gate ---------------------------------

PROD_BASE = SHOP_TEXT + "environments:\n  dev: {}\n  prod: {production: true}\n"
PRODUCTION_BYPASS = [
    ("overlay-turns-everything-off", "environments:\n  dev: {}\n  prod:\n    production: false\n"
                                     "    table: {deletion_protection: false, point_in_time_recovery: false}\n"),
    ("overlay-only-flips-production", "environments:\n  dev: {}\n  prod: {production: false}\n"),
    ("production-environment-loses-its-overlay", "environments:\n  dev: {}\n  prod: {}\n"),
]


@pytest.mark.parametrize("name, environments", PRODUCTION_BYPASS, ids=ids(PRODUCTION_BYPASS))
def test_review_blocks_turning_production_protection_off(name, environments, tmp_path, run_cli):
    lay_out(tmp_path, {"base.yaml": PROD_BASE, "head.yaml": SHOP_TEXT + environments})
    code, out, err = run_cli("review", "--base", tmp_path / "base.yaml", "--head", tmp_path / "head.yaml",
                             "--format", "json")
    assert code == 0, err
    assert json.loads(out)["verdict"] == "blocked"


def test_gate_blocks_a_plan_that_strips_protection_from_a_table_that_had_it(tmp_path, run_cli):
    """The head blueprint says the prod table is no longer production; the plan shows what it loses."""
    before = {**TABLE_BEFORE, "name": "shop_main-prod"}
    plan = copy.deepcopy(VALID_PLAN)
    first_entry(plan)["change"].update(before=before, after={
        **before, "deletion_protection_enabled": False, "point_in_time_recovery": [{"enabled": False}]})
    lay_out(tmp_path, {"plan.json": json.dumps(plan), "head.yaml": SHOP_TEXT + PRODUCTION_BYPASS[0][1]})
    code, out, err = run_cli("gate", "--plan", tmp_path / "plan.json", "--blueprint", tmp_path / "head.yaml",
                             "--env", "prod", "--now", "2026-12-01T02:30:00Z", "--format", "json")  # in the window
    assert code == 1, err
    assert json.loads(out)["verdict"] == "blocked"


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


# extends outside the repository root -------------------------------------------------------------

UP = "../" * 16
EXTENDS_OUTSIDE = [
    Bad("absolute-etc-passwd", f"extends: /etc/passwd  {MARK}\n" + GOOD, absent=("root:x", "/bin/")),
    Bad("relative-etc-passwd", f"extends: {UP}etc/passwd  {MARK}\n" + GOOD, absent=("root:x", "/bin/")),
    Bad("proc-self-status", f"extends: /proc/self/status  {MARK}\n" + GOOD, absent=("Pid:", "VmRSS", "Uid:")),
    Bad("symlink-inside-to-etc-passwd", f"extends: shared/base.yaml  {MARK}\n" + GOOD,
        others={"shared/.keep": ""}, links={"shared/base.yaml": "/etc/passwd"}, absent=("root:x", "/bin/")),
    Bad("second-entry-of-a-list", f"extends: [shared/base.yaml, /etc/passwd]  {MARK}\n" + GOOD,
        others={"shared/base.yaml": "tags: {team: shop}\n"}, absent=("root:x", "/bin/")),
    Bad("a-real-blueprint-outside", f"extends: {PLATFORM_BASE}  {MARK}\n" + GOOD),
    Bad("extended-file-reaches-out", "extends: shared/base.yaml\n" + GOOD,
        others={"shared/base.yaml": f"extends: {UP}etc/passwd  {MARK}\n"}, absent=("root:x", "/bin/")),
]


@pytest.mark.parametrize("case", EXTENDS_OUTSIDE, ids=ids(EXTENDS_OUTSIDE))
def test_extends_outside_the_repository_is_refused(case, refuse):
    refuse(case, repository=True)


# Unbounded work: each finishes quickly with a clear error (in a subprocess, 60 s, 1 GiB) -----------


def diamond(files: int) -> dict[str, str]:
    """d01 extends d02 and d03, d02 extends d03 and d04, ...: one extends line per file, marked."""
    result = {}
    for number in range(1, files + 1):
        parents = [f"d{n:02d}.yaml" for n in (number + 1, number + 2) if n <= files]
        result[f"d{number:02d}.yaml"] = (f"extends: [{', '.join(parents)}]  {MARK}\n" if parents else "") + \
            f"tags: {{layer{number}: x}}\n"
    return result


def chain(files: int) -> dict[str, str]:
    return {f"c{n:04d}.yaml": f"extends: c{n + 1:04d}.yaml  {MARK}\n" if n < files else "tags: {end: x}\n"
            for n in range(1, files + 1)}


PATTERNS_1000 = replace("access_patterns:\n", f"access_patterns:  {MARK}\n") + "".join(
    f'  p{n:04d}: {{entity: User, where: {{userId: "="}}, rps: 1}}  {MARK}\n' for n in range(1000))


def numbers(field_name: str, place: Callable[[str], str]) -> list[Bad]:
    values = {"5000-digit-integer": "9" * 5000, "1e999": "1e999", "inf": ".inf", "nan": ".nan"}
    return [Bad(f"{field_name}-{label}", place(value)) for label, value in values.items()]


UNBOUNDED = [
    Bad("diamond-of-19-extends", f"extends: d01.yaml  {MARK}\n" + GOOD, others=diamond(19)),
    Bad("chain-of-2000-extends", f"extends: c0001.yaml  {MARK}\n" + GOOD, others=chain(2000)),
    Bad("backend-key-format-spec", s3_backend("key", q("x/{blueprint:>999999999}"))),
    Bad("naming-format-spec", top(f'naming: {{table: "{{table:>99999}}"}}  {MARK}')),
    Bad("1000-access-patterns-on-one-entity", PATTERNS_1000),
    Bad("49000-unknown-keys-under-20-environments",  # composition was quadratic: over 30 minutes
        top("environments: {" + ", ".join(f"e{n}: {{}}" for n in range(20)) + "}")
        + "".join(f"k{n}: 1  {MARK}\n" for n in range(49_000))),
    Bad("100000-nested-lists", top("tags: " + "[" * 100_000 + "]" * 100_000 + f"  {MARK}")),
    Bad("version-with-5000-digits", replace("version: 1.0.0", f"version: 1{'0' * 5000}.0.0  {MARK}")),
    Bad("pattern-of-1000-nested-groups", attributes(f"      code: {{type: string, pattern: "
                                                    f"'{'(' * 1000}a{')' * 1000}'}}  {MARK}")),
    Bad("pattern-too-large-to-compile", attributes("      code: {type: string, pattern: '(?:(?:.{100}){100}){100}'}"
                                                   f"  {MARK}")),
    *numbers("rps", lambda v: pattern(f"    rps: {v}  {MARK}")),
    *numbers("writes-per-second", lambda v: entity(f"    writes_per_second: {v}  {MARK}")),
    *numbers("alarm-threshold", lambda v: top("alarms:", f"  throttles: {{threshold: {v}}}  {MARK}")),
]


@pytest.mark.parametrize("case", UNBOUNDED, ids=ids(UNBOUNDED))
def test_unbounded_work_is_refused_quickly(case, refuse):
    refuse(case, slow=True)


# What a user keeps: keys DynamoDB would refuse, data migrations that say nothing true -----------------

WITH_TTL = table("  ttl_attribute: expiresAt", text=attributes("      expiresAt: {type: number, expiry: true}"))
KEPT = [
    Bad("key-template-of-5000-characters", replace('    key: {pk: "USER#{userId}", sk: PROFILE}',
                                                    f'    key: {{pk: "USER#{{userId}}", sk: {"P" * 5000}}}  {MARK}')),
    Bad("sort-key-literal-over-1024-bytes", replace('    key: {pk: "USER#{userId}", sk: PROFILE}',
                                                     f'    key: {{pk: "USER#{{userId}}", sk: {"P" * 1100}}}  {MARK}')),
    Bad("partition-key-literal-over-2048-bytes", replace('    key: {pk: "USER#{userId}", sk: PROFILE}',
                                                          f'    key: {{pk: "{"U" * 2100}#{{userId}}", sk: PROFILE}}'
                                                          f"  {MARK}")),
    Bad("removal-of-an-entity-still-declared", top("migrations:", f"  - entity: User  {MARK}", "    removal: delete",
                                                   "    reason: gone")),
    Bad("rename-from-an-entity-still-declared", top("migrations:", "  - entity: User",
                                                    f"    renamed_from: User  {MARK}", "    reason: r")),
    Bad("removal-that-expires-without-ttl", top("migrations:", "  - entity: Gone", f"    removal: expire  {MARK}",
                                                "    reason: r")),
    Bad("removal-with-a-strategy", top("migrations:", "  - entity: Gone", "    removal: keep",
                                       f"    strategy: backfill  {MARK}", "    reason: r", text=WITH_TTL)),
    Bad("recovery-days-without-recovery", table("  point_in_time_recovery: false",
                                                f"  point_in_time_recovery_days: 7  {MARK}")),
    Bad("recovery-days-over-35", table(f"  point_in_time_recovery_days: 36  {MARK}")),
]


@pytest.mark.parametrize("case", KEPT, ids=ids(KEPT))
def test_what_would_lose_or_strand_data_is_refused(case, refuse):
    refuse(case)


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


# Patterns that backtrack for hours in Python's `re` on the three-character values lint probes with.
CATASTROPHIC_PATTERNS = ["(?:.?){3000}X", "(?:(?:.?){30}){30}X", "(a|a|aa)*(a|a|aa)*$X", "(?:.*){50}"]


@pytest.mark.parametrize("regex", CATASTROPHIC_PATTERNS)
def test_a_catastrophic_pattern_does_not_hang_lint_or_synth(regex, tmp_path):
    """`name` is followed by more key components, so TW203 asks whether its pattern lets '#' in."""
    text = replace('    key: {pk: "USER#{userId}", sk: PROFILE}', '    key: {pk: "USER#{userId}", sk: "N#{name}#P"}',
                   replace("      name: string", f"      name: {{type: string, pattern: {q(regex)}}}"))
    (tmp_path / "shop.yaml").write_text(text)
    code, out, err = run_slow("lint", tmp_path / "shop.yaml", "--format", "json", cwd=tmp_path)
    assert code == 0, err
    warned = [f["code"] for f in json.loads(out)[0]["findings"]]
    assert ("TW203" in warned) == (regex == "(?:.*){50}")  # the only one that matches values with a '#'

    assert run_slow("synth", tmp_path / "shop.yaml", "--out", tmp_path / "out", cwd=tmp_path)[0] == 0


def test_a_sparse_2gb_blueprint_is_refused_by_its_size(tmp_path, synth_good, monkeypatch):
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as handle:
        handle.truncate(2 * 1024**3)
    synth_good(tmp_path / "cdktf.out")
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    assert_refused(run_slow("synth", huge, "--out", tmp_path / "cdktf.out"), where={"huge.yaml": [1]})
    assert_unchanged(before, snapshot(tmp_path))


SPECIAL_FILES = [
    ("dev-zero", lambda tmp: Path("/dev/zero")),
    ("fifo", lambda tmp: (os.mkfifo(tmp / "pipe.yaml"), tmp / "pipe.yaml")[1]),
    ("directory", lambda tmp: (tmp / "dir.yaml").mkdir() or tmp / "dir.yaml"),
]


@pytest.mark.parametrize("name, make", SPECIAL_FILES, ids=ids(SPECIAL_FILES))
def test_a_blueprint_that_is_not_a_regular_file_is_refused(name, make, tmp_path):
    path = make(tmp_path)
    first = assert_refused(run_slow("lint", path, cwd=tmp_path))
    assert path.name in first


# Two stacks, one physical table ------------------------------------------------------------------

ENVIRONMENTS = ("environments:", "  dev: {}", "  prod: {production: true}")
SHARED_TABLE = [
    Bad("naming-table-only", top(f"naming: {{table: '{{table}}'}}  {MARK}", *ENVIRONMENTS)),
    Bad("naming-blueprint-only", top(f"naming: {{table: '{{blueprint}}-main'}}  {MARK}", *ENVIRONMENTS)),
    Bad("overlays-pick-the-same-name", top("environments:", f"  dev: {{naming: {{table: 'x-{{table}}'}}}}  {MARK}",
                                           f"  prod: {{naming: {{table: 'x-{{table}}'}}}}  {MARK}")),
]


@pytest.mark.parametrize("case", SHARED_TABLE, ids=ids(SHARED_TABLE))
def test_two_environments_cannot_manage_the_same_table(case, refuse):
    refuse(case)


# Crashes that must become located errors ---------------------------------------------------------

ENUM_WITH_HASH = replace('    key: {pk: "USER#{userId}", sk: PROFILE}',
                         f'    key: {{pk: "USER#{{userId}}", sk: "TIER#{{tier}}"}}  {MARK}',
                         attributes(f'      tier: {{type: string, values: ["GOLD#1", SILVER]}}  {MARK}'))
TWO_PATTERNS = '  by_name:\n    entity: User\n    where: {name: "="}\n  by_visits:\n    entity: User\n' \
               '    where: {visits: "="}\n'

CRASHES = [
    Bad("naming-unbalanced-open-brace", top(f'naming: {{table: "{{table"}}  {MARK}')),
    Bad("naming-unbalanced-close-brace", top(f'naming: {{table: "table}}"}}  {MARK}')),
    Bad("backend-key-unknown-placeholder", s3_backend("key", q("x/{nope}/terraform.tfstate"))),
    Bad("backend-key-positional-placeholder", s3_backend("key", q("x/{}/terraform.tfstate"))),
    Bad("backend-key-attribute-access", s3_backend("key", q("x/{blueprint.__class__.__mro__}/state"))),
    Bad("backend-key-unbalanced-brace", s3_backend("key", q("x/{blueprint/terraform.tfstate"))),
    Bad("enum-value-with-hash-in-a-key", ENUM_WITH_HASH),
    Bad("index-names-collide-after-normalisation", entity(
        "    index_keys:",
        f'      By_Name: {{pk: "NAME#{{name}}", sk: "{{userId}}"}}  {MARK}',
        f'      by_name: {{pk: "VISITS#{{visits}}", sk: "{{userId}}"}}  {MARK}') + TWO_PATTERNS),
    Bad("declared-gsi1-beside-planned-GSI1", entity(
        "    index_keys:", f'      gsi1: {{pk: "NAME#{{name}}", sk: "{{userId}}"}}  {MARK}') + TWO_PATTERNS),
    Bad("extends-symlink-loop", f"extends: loop.yaml  {MARK}\n" + GOOD, links={"loop.yaml": "loop.yaml"}),
    Bad("extends-two-symlinks-in-a-loop", f"extends: a.yaml  {MARK}\n" + GOOD, links={"a.yaml": "b.yaml",
                                                                                        "b.yaml": "a.yaml"}),
    Bad("extends-a-directory", f"extends: shared  {MARK}\n" + GOOD, others={"shared/x.yaml": "tags: {a: b}\n"}),
    Bad("nul-byte", top(f"description: shop\x00keeper  {MARK}"),
        absent=("special characters are not allowed", "<unicode string>")),
    Bad("escape-byte-in-a-tag", top(f"tags: {{service: shop\x1b[31m}}  {MARK}"),
        absent=("special characters are not allowed", "<unicode string>")),
    Bad("invalid-utf8", top(f"description: caf\udce9  {MARK}")),
    # Line breaks to YAML, not to editors or to error locations: refused where they stand.
    Bad("line-separator-in-a-comment", top(f"description: shop  {MARK} note\u2028more")),
    Bad("paragraph-separator-in-a-comment", top(f"description: shop  {MARK} note\u2029more")),
    Bad("next-line-character-in-a-comment", top(f"description: shop  {MARK} note\x85more")),
    Bad("lone-carriage-return-in-a-comment", top(f"description: shop  {MARK} a\rb")),
    Bad("byte-order-mark-after-the-start", top(f"\ufeffdescription: shop  {MARK}")),
    Bad("window-timezone-300-characters", top(*WINDOW[:-1], f"  timezone: {'x' * 300}  {MARK}")),
    Bad("window-timezone-path", top(*WINDOW[:-1], f"  timezone: ../../../../etc/passwd  {MARK}")),
    Bad("window-on-no-day", top(WINDOW[0], f"  days: []  {MARK}", *WINDOW[2:])),  # looped to date.max
    Bad("pattern-of-no-entity", replace("    entity: User", f"    entity: []  {MARK}")),  # IndexError
]


@pytest.mark.parametrize("case", CRASHES, ids=ids(CRASHES))
def test_crash_becomes_a_located_error(case, refuse):
    refuse(case)


# Accepted today though wrong ---------------------------------------------------------------------

PROVISIONED = ("  billing: provisioned", "  capacity:")
STRFTIME_HASH = replace('    key: {pk: "USER#{userId}", sk: PROFILE}',
                        f'    key: {{pk: "USER#{{userId}}", sk: "AT#{{at}}"}}  {MARK}',
                        attributes(f"      at: {{type: timestamp, format: '%Y#%m#%d'}}  {MARK}"))

ACCEPTED_WRONG = [
    Bad("limit-true", pattern(f"    limit: true  {MARK}")),
    Bad("negative-latency-threshold", top("alarms:", f"  latency: {{operations: {{GetItem: -5}}}}  {MARK}")),
    Bad("23-digit-capacity", table(*PROVISIONED, f"    read: {{min: 1, max: 12345678901234567890123}}  {MARK}",
                                   "    write: {min: 1, max: 10}")),
    Bad("region-path", top(f"region: ../../etc  {MARK}")),
    Bad("region-not-a-region", top(f"region: Europe  {MARK}")),
    Bad("kms-key-arn-not-an-arn", table("  encryption: customer_managed", f"  kms_key_arn: not an arn  {MARK}")),
    Bad("strftime-format-with-hash", STRFTIME_HASH),
    Bad("extends-inside-an-environment", top("environments:", "  dev:", f"    extends: other.yaml  {MARK}",
                                             "  prod: {production: true}"), others={"other.yaml": "tags: {a: b}\n"}),
    Bad("environments-inside-an-environment", top("environments:", "  dev:", f"    environments: {{qa: {{}}}}  {MARK}",
                                                  "  prod: {production: true}")),
    Bad("type-error-has-a-fix", pattern(f"    rps: fast  {MARK}")),
    Bad("range-error-has-a-fix", table(*PROVISIONED, "    read: {min: 1, max: 10}", "    write: {min: 1, max: 10}",
                                       f"    target_utilization: 95  {MARK}")),
    Bad("limit-float", pattern(f"    limit: 2.5  {MARK}")),
    Bad("pattern-with-look-around", attributes(f"      code: {{type: string, pattern: '(?=a)b'}}  {MARK}")),
    # Digits of other scripts and line separators: Python's `\d` and `\s` admit them, Terraform does not.
    Bad("region-arabic-indic-digit", top(f"region: eu-west-\u0661  {MARK}")),
    Bad("backend-region-arabic-indic-digit", s3_backend("region", "eu-west-\u0661")),
    Bad("aws-provider-arabic-indic-digits", top("terraform:", f"  aws_provider: '>= \u0666.\u0661\u0661'  {MARK}")),
    Bad("aws-provider-line-separator", top("terraform:", f'  aws_provider: ">= 6.11\\u2028"  {MARK}')),
    Bad("window-start-arabic-indic-digit", top(*WINDOW[:2], f"  start: '0\u0662:00'  {MARK}", *WINDOW[3:])),
]


@pytest.mark.parametrize("case", ACCEPTED_WRONG, ids=ids(ACCEPTED_WRONG))
def test_wrong_value_is_refused_with_a_fix(case, refuse):
    refuse(case)


# The plan gate -----------------------------------------------------------------------------------

TABLE_BEFORE = {"name": "shop_main", "hash_key": "PK", "range_key": "SK", "billing_mode": "PROVISIONED",
                "attribute": [{"name": "PK", "type": "S"}, {"name": "SK", "type": "S"}], "stream_enabled": False,
                "point_in_time_recovery": [{"enabled": True}], "deletion_protection_enabled": True}
VALID_PLAN = {  # a window change: the stream is turned on
    "format_version": "1.2", "terraform_version": "1.11.0", "planned_values": {"root_module": {}},
    "resource_changes": [{
        "address": "aws_dynamodb_table.shop", "mode": "managed", "type": "aws_dynamodb_table", "name": "shop",
        "change": {"actions": ["update"], "before": TABLE_BEFORE,
                   "after": {**TABLE_BEFORE, "stream_enabled": True, "stream_view_type": "NEW_AND_OLD_IMAGES"},
                   "after_unknown": {}},
    }],
}


def plan_with(change: Callable[[dict], Any]) -> str:
    plan = copy.deepcopy(VALID_PLAN)
    change(plan)
    return json.dumps(plan)


def first_entry(plan: dict) -> dict:
    return plan["resource_changes"][0]


def with_prior_state(value: str) -> str:
    """The valid plan with `value` (JSON text, valid or not) in its prior state."""
    return json.dumps(VALID_PLAN)[:-1] + ', "prior_state": {"x": ' + value + "}}"


NESTED = "[" * 100_000 + "]" * 100_000
PLAN_SHAPES = [
    ("resource-changes-a-dict", plan_with(lambda p: p.update(resource_changes={"a": first_entry(p)}))),
    ("resource-changes-a-string", plan_with(lambda p: p.update(resource_changes="all"))),
    ("entry-a-string", plan_with(lambda p: p.update(resource_changes=["aws_dynamodb_table.shop"]))),
    ("actions-null", plan_with(lambda p: first_entry(p)["change"].update(actions=None))),
    ("actions-a-number", plan_with(lambda p: first_entry(p)["change"].update(actions=7))),
    ("entry-without-address", plan_with(lambda p: first_entry(p).pop("address"))),
    ("entry-without-type", plan_with(lambda p: first_entry(p).pop("type"))),
    ("entry-without-change", plan_with(lambda p: first_entry(p).pop("change"))),
    ("change-a-list", plan_with(lambda p: first_entry(p).update(change=[]))),
    ("before-a-string", plan_with(lambda p: first_entry(p)["change"].update(before="shop_main"))),
    ("after-a-list", plan_with(lambda p: first_entry(p)["change"].update(after=[1, 2]))),
    ("address-a-number", plan_with(lambda p: first_entry(p).update(address=42))),
    ("top-level-list", json.dumps([VALID_PLAN])),
    ("top-level-string", '"terraform plan"'),
    ("top-level-null", "null"),
    ("deeply-nested-json", NESTED),
    ("deeply-nested-resource-changes", json.dumps({**VALID_PLAN, "resource_changes": []})[:-1].replace(
        '"resource_changes": []', '"resource_changes": ' + NESTED) + "}"),
    ("invalid-utf8", '{"format_version": "caf\udce9"}'),
    # Strict JSON: what parsers resolve differently (or not at all) is refused, wherever it is.
    ("duplicate-top-level-key", json.dumps(VALID_PLAN)[:-1] + ', "resource_changes": []}'),
    ("duplicate-key-in-prior-state", json.dumps(VALID_PLAN)[:-1] + ', "prior_state": {"a": 1, "a": 2}}'),
    ("duplicate-key-in-an-entry", json.dumps(VALID_PLAN).replace('"name": "shop", ', '"name": "shop", "name": "x", ')),
    ("nan", with_prior_state("NaN")),
    ("infinity", with_prior_state("Infinity")),
    ("minus-infinity", with_prior_state("-Infinity")),
    ("number-of-5000-digits", with_prior_state("9" * 5000)),
    ("number-beyond-a-double", with_prior_state("1e999")),
    ("format-version-2", plan_with(lambda p: p.update(format_version="2.0"))),
    ("format-version-a-number", plan_with(lambda p: p.update(format_version=1.2))),
    ("planned-values-a-list", plan_with(lambda p: p.update(planned_values=[]))),
    ("output-changes-a-list", plan_with(lambda p: p.update(output_changes=[]))),
    ("output-change-a-string", plan_with(lambda p: p.update(output_changes={"tablewright": "x"}))),
    ("output-change-without-actions", plan_with(lambda p: p.update(output_changes={"x": {"before": 1}}))),
    ("resource-drift-an-object", plan_with(lambda p: p.update(resource_drift={"a": 1}))),
    ("resource-drift-entry-a-string", plan_with(lambda p: p.update(resource_drift=["aws_dynamodb_table.shop"]))),
    ("trailing-garbage", json.dumps(VALID_PLAN) + " x"),
    ("two-documents", json.dumps(VALID_PLAN) + json.dumps(VALID_PLAN)),
    ("byte-order-mark", "\ufeff" + json.dumps(VALID_PLAN)),
    ("truncated", json.dumps(VALID_PLAN)[:-40]),
    ("empty", ""),
]


@pytest.mark.parametrize("name, text", PLAN_SHAPES, ids=ids(PLAN_SHAPES))
def test_gate_refuses_a_malformed_plan(name, text, tmp_path, run_cli):
    lay_out(tmp_path, {"plan.json": text})
    result = run_cli("gate", "--plan", tmp_path / "plan.json", "--blueprint", SHOP, "--now", "2026-12-01T12:00:00Z")
    assert_refused(result, mentions=("plan.json", "--plan"))


def test_gate_refuses_a_2gb_plan_without_reading_it(tmp_path):
    plan = tmp_path / "plan.json"
    with plan.open("wb") as handle:
        handle.truncate(2 * 1024**3)
    result = run_slow("gate", "--plan", plan, "--blueprint", SHOP, "--now", "2026-12-01T12:00:00Z", cwd=tmp_path)
    assert_refused(result, mentions=("plan.json", "--plan"))


GATE_NOW = [
    ("end-of-year-9999", "9999-12-31T23:59:59+00:00"),
    ("start-of-year-1", "0001-01-01T00:00:00+00:00"),
    ("year-1-east-of-utc", "0001-01-01T00:00:00+14:00"),
]


@pytest.mark.parametrize("name, now", GATE_NOW, ids=ids(GATE_NOW))
def test_gate_refuses_a_time_it_cannot_compute_with(name, now, tmp_path, run_cli):
    lay_out(tmp_path, {"plan.json": json.dumps(VALID_PLAN)})
    assert_refused(run_cli("gate", "--plan", tmp_path / "plan.json", "--blueprint", SHOP, "--now", now),
                   option="--now")


# Paths given on the command line -----------------------------------------------------------------


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


# HTML in the review Markdown ---------------------------------------------------------------------

HTML_TAGS = [
    ("tag-value-img", f"tags: {{service: '<img src=https://x>'}}  {MARK}"),
    ("tag-key-closes-details", f"tags: {{service: shop, '</details>': x}}  {MARK}"),
    ("tag-value-script", f"tags: {{service: shop, note: '<script>alert(1)</script>'}}  {MARK}"),
]


@pytest.mark.parametrize("name, tags", HTML_TAGS, ids=ids(HTML_TAGS))
def test_review_markdown_never_carries_raw_html_from_a_blueprint(name, tags, tmp_path, run_cli):
    from markdown_it import MarkdownIt

    head = replace("tags: {service: shop}", tags, SHOP_TEXT)
    lay_out(tmp_path, {"head.yaml": head})
    result = run_cli("review", "--base", SHOP, "--head", tmp_path / "head.yaml", "--format", "markdown")
    if result[0] != 0:
        assert_refused(result, where={"head.yaml": marked_lines(head)})
        return
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(result[1])
    for element in ("<img", "<script"):
        assert element not in html, f"raw {element} from the blueprint in the review"
    assert html.count("<details") == html.count("</details>"), "a </details> from the blueprint closes a section"


OWN_TAGS = {"<details>", "</details>", "<summary>", "</summary>"}


def raw_html(markdown: str) -> list[str]:
    """What a GitHub-like renderer (CommonMark with tables, raw HTML on) would pass through as HTML or load
    as an image, besides the review's own <details> and <summary>."""
    from markdown_it import MarkdownIt

    found = []
    for token in MarkdownIt("commonmark", {"html": True}).enable("table").parse(markdown):
        for child in [token, *(token.children or [])]:
            if child.type == "image":
                found.append(f"image {child.attrs.get('src')}")
            elif child.type in ("html_inline", "html_block"):
                found += [tag for tag in re.findall(r"</?[A-Za-z][^>]*>", child.content) if tag not in OWN_TAGS
                          and not tag.startswith("<summary>")]
    return found


def review_with_scan_reason(reason: str, tmp_path: Path, run_cli) -> tuple[int, str, str]:
    """`review` of the shop with a scan pattern added whose `reason` is the given text."""
    head = SHOP_TEXT.replace("access_patterns:\n", "access_patterns:\n  export_all:\n    entity: Order\n"
                             "    filter: {total: \"=\"}\n    scan: allowed\n"
                             f"    reason: {json.dumps(reason)}\n")
    lay_out(tmp_path, {"head.yaml": head})
    return run_cli("review", "--base", SHOP, "--head", tmp_path / "head.yaml")


def gate_markdown(the_plan: dict[str, Any], tmp_path: Path, run_cli) -> tuple[int, str, str]:
    """The gate's Markdown verdict on `the_plan` for the shop, inside its window."""
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(the_plan))
    return run_cli("gate", "--plan", plan_file, "--blueprint", SHOP, "--now", "2026-12-01T02:30:00Z",
                   "--format", "markdown")


# The security review's payloads: a code span the sanitizer paired differently from the renderer.
SCAN_REASONS = [
    ("backslash-escaped-backticks", '\\`<img src="https://attacker.example/pixel.png?a=1" width=600>\\` and '
                                    '\\`<a href="https://attacker.example">approve</a>\\`'),
    ("one-backtick-paired-across-cells", 'nightly ` <img src="https://attacker.example/cell.png">'),
    ("image-in-a-code-span", "`![x](https://attacker.example/i.png)` ![y](https://attacker.example/j.png)"),
]


@pytest.mark.parametrize("name, reason", SCAN_REASONS, ids=ids(SCAN_REASONS))
def test_review_markdown_has_no_raw_html_whatever_the_backticks(name, reason, tmp_path, run_cli):
    code, out, err = review_with_scan_reason(reason, tmp_path, run_cli)
    assert code == 0, err
    assert "TW305" in out and "attacker.example" in out  # the reason is there, inert
    assert raw_html(out) == []


def test_gate_markdown_has_no_raw_html_from_plan_values(tmp_path, run_cli):
    description = ("\\`<img src=//attacker.example/g.png>\\`\n</details>\n"
                   "<details>\n![x](//attacker.example/h.png)")
    alarm = entry("aws_cloudwatch_metric_alarm.shop_throttles", ["update"], {"alarm_description": "ok"},
                  {"alarm_description": description})
    code, out, err = gate_markdown(plan(TABLE, alarm), tmp_path, run_cli)
    assert code == 0, err
    assert "attacker.example" in out and raw_html(out) == []
    assert out.count("<details>") == out.count("</details>") == 1  # only the folded safe changes


# Outside code, GitHub makes these notify someone or link somewhere (mentions, e-mail, issue references, URLs).
ACTIVE_TEXT = re.compile(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9]|[A-Za-z0-9]@[A-Za-z0-9]|(?<![&\w])#[0-9]|GH-[0-9]|"
                         r"[A-Za-z]+://|(?i:www)\.")
MENTIONS = "ping @octocat and @acme/security, mail ops@example.com, see #1234, GH-99, owner/repo#7"
LINKS = "[approve](https://attacker.example/ok) https://attacker.example/x www.attacker.example javascript://x"
# The same, assembled by the renderer from character references and backslash escapes.
ENCODED = ("&#x40;org/team &commat;octocat &num;123 &#x23;12 https&#x3a;//attacker.example https&colon;//e.com "
           "www&period;attacker.example a&#x40;b.com GH&#x2d;12 https:\\//e.com")


def active(markdown: str) -> list[str]:
    """Links, and text GitHub would turn into mentions, references or links, as the renderer sees the comment."""
    from markdown_it import MarkdownIt

    found = []
    for token in MarkdownIt("commonmark", {"html": True}).enable("table").parse(markdown):
        children = token.children or []
        found += [f"link {child.attrs.get('href')}" for child in children if child.type == "link_open"]
        # The text as the reader sees it: escapes and character references decoded, adjacent pieces joined.
        found += ACTIVE_TEXT.findall("".join(child.content for child in children
                                             if child.type in ("text", "text_special")))
    return found


def test_review_markdown_makes_no_mention_or_link_from_blueprint_text(tmp_path, run_cli):
    code, out, err = review_with_scan_reason(MENTIONS + " " + LINKS + " " + ENCODED, tmp_path, run_cli)
    assert code == 0, err
    assert "octocat" in out and "attacker.example" in out  # the text is there, inert
    assert active(out) == []
    assert active(MENTIONS + " " + LINKS) and len(active(ENCODED)) >= 8  # the check finds them in the raw text


def test_gate_markdown_makes_no_mention_or_link_from_plan_values(tmp_path, run_cli):
    tags = {"@octocat": "x", "owner": "ops@example.com", "see #12": "www.attacker.example"}
    alarm = entry("aws_cloudwatch_metric_alarm.shop_throttles", ["update"], {"alarm_description": "ok", "tags": {}},
                  {"alarm_description": LINKS, "tags": tags})
    table = entry("aws_dynamodb_table.shop", ["update"], {"name": "shop_main", "tags": {}},
                  {"name": "shop_main", "tags": tags})
    code, out, err = gate_markdown(plan(table, alarm), tmp_path, run_cli)
    assert code == 0, err
    assert "octocat" in out and "attacker.example" in out
    assert active(out) == []


# Fuzz: mutated blueprints meet the contract ------------------------------------------------------

FUZZ_BASE: dict[str, Any] = {
    **yaml.safe_load(SHOP_TEXT),
    "description": "Orders and customers",
    "owner": "team-shop",
    "region": "us-east-1",
    "tags": {"service": "shop", "owner": "team-shop"},
    "required_tags": ["service"],
    "naming": {"table": "{env}-{table}"},
    "terraform": {"aws_provider": "~> 5.100", "backend": {
        "type": "s3", "bucket": "tablewright-state", "region": "eu-west-1",
        "key": "tablewright/{blueprint}/{env}/terraform.tfstate"}},
    "lint": {"hot_key_warning": 0.5, "ignore": {"TW101": "few values, read nightly"}},
    "traffic": {"peak_factor": 3},
    "environments": {"dev": {"table": {"billing": "on_demand", "capacity": None}}, "prod": {"production": True}},
}
PAYLOADS = [DOLLAR, PERCENT, "#", "{}", "{", "}", "{nope}", "{table:>99999}", "{blueprint.__class__}", "a#b", "",
            " ", "null", "~", ".inf", ".nan", "1e999", "../../etc", "/etc/passwd", "<img src=https://x>",
            "</details>", "\u202e", "\x00", "日本語", "GSI1", "gsi1", "PK", "-", "--output=out", "HEAD:x", "x" * 300]
FRAGMENTS = ["{", "}", "#", "${", "%{", "{}", "{nope}", ":>99999", "\x00", "\u202e", "../", "<", " ", "-"]
HOSTILE_VALUES = st.one_of(
    st.sampled_from(PAYLOADS),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([10**400, -(10**30), 0, -1, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.booleans(),
    st.none(),
    st.lists(st.one_of(st.integers(-5, 5), st.text(max_size=5)), max_size=3),
    st.dictionaries(st.text(max_size=8), st.one_of(st.integers(-5, 5), st.text(max_size=5)), max_size=3),
)
HOSTILE_KEYS = st.one_of(st.sampled_from([*PAYLOADS, "extends", "environments", "production", "__class__"]),
                         st.text(max_size=20))


def paths_in(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, item in node.items():
            found += paths_in(item, (*prefix, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found += paths_in(item, (*prefix, index))
    return found


def node_at(document: Any, path: tuple) -> Any:
    for step in path:
        document = document[step]
    return document


@st.composite
def mutated_blueprints(draw) -> dict[str, Any]:
    """The fuzz base with 1-4 mutations: fragments spliced into text, hostile values, deletions,
    unknown fields, renamed keys, scalars wrapped in lists or mappings."""
    document = copy.deepcopy(FUZZ_BASE)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = paths_in(document)
        texts = [p for p in paths if isinstance(node_at(document, p), str)]  # templates, names: the likely traps
        path = draw(st.sampled_from(paths + texts * 2))
        parent, key = node_at(document, path[:-1]), path[-1]
        operation = draw(st.sampled_from(["splice", "splice", "splice", "payload", "payload", "value", "delete",
                                          "unknown", "rename", "list", "mapping"]))
        if operation == "splice" and isinstance(parent[key], str):
            text, at = parent[key], draw(st.integers(min_value=0, max_value=len(parent[key])))
            parent[key] = text[:at] + draw(st.sampled_from(FRAGMENTS)) + text[at:]
        elif operation == "payload":
            parent[key] = draw(st.sampled_from(PAYLOADS))
        elif operation == "value":
            parent[key] = draw(HOSTILE_VALUES)
        elif operation == "delete":
            del parent[key]
        elif operation == "unknown" and isinstance(parent, dict):
            parent[draw(HOSTILE_KEYS)] = draw(HOSTILE_VALUES)
        elif operation == "rename" and isinstance(parent, dict):
            parent[draw(HOSTILE_KEYS)] = parent.pop(key)
        elif operation == "list":
            parent[key] = [parent[key]]
        elif operation == "mapping":
            parent[key] = {"value": parent[key]}
    return document


@contextlib.contextmanager
def time_limit(seconds: float):
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def quietly(*args: object) -> Result:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), time_limit(20):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_the_fuzz_base_is_a_good_blueprint(tmp_path, run_cli):
    lay_out(tmp_path, {"fuzz.yaml": yaml.safe_dump(FUZZ_BASE, sort_keys=False)})
    code, _, err = run_cli("lint", tmp_path / "fuzz.yaml")
    assert code == 0, err


@settings(max_examples=200, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(document=mutated_blueprints(), output=st.sampled_from(["text", "json", "sarif"]))
def test_fuzzed_blueprints_meet_the_contract(document, output):
    with tempfile.TemporaryDirectory(prefix="hostile-fuzz-") as scratch:
        path = Path(scratch) / "fuzz.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
        lines = path.read_text().count("\n") + 1
        for args in (("lint", path, "--format", output), ("explain", path)):
            code, out, err = quietly(*args)
            event(f"{args[0]} exit {code}")
            assert code in ((0, 1, 2) if args[0] == "lint" else (0, 2)), (args[0], code, err[-2000:])
            if code == 2:
                first = assert_refused((code, out, err))
                match = LOCATED.match(first)
                assert match, f"{args[0]}: no file:line:column in: {first}"
                if match["file"].endswith("fuzz.yaml"):
                    assert 1 <= int(match["line"]) <= lines, first


# Fuzz: every string a fuzzed blueprint synthesizes is inert --------------------------------------

# Spliced into names, templates, tags, descriptions, values and state keys: interpolations, their
# escapes, half of one, quotes, backslashes, newlines, unicode, and a well-formed reference (to a
# resource no stack declares) that a missing escape would make Terraform evaluate.
INJECTIONS = ["${", "%{", "$${", "%%{", "$$${", "%$${", "$%{", "}", "{}", "${x}", "%{x}", DOLLAR, PERCENT,
              "${aws_dynamodb_table.fuzz.name}", "${data.aws_region.current.name}", '"', "'", "\\", "\\${",
              "\n", "\r\n", "\t", "日本語", "\u202e", "é", "😀", "#", ":", "/", "-", "_", " "]
INJECTION_TEXT = st.text(alphabet=st.sampled_from([*"${}%\"'\\\n #:/-_ aZ9", "é", "日"]), min_size=1, max_size=12)

SYNTH_BASE: dict[str, Any] = copy.deepcopy(FUZZ_BASE)
SYNTH_BASE["entities"]["Customer"]["description"] = "A customer"
SYNTH_BASE["entities"]["Customer"]["attributes"]["note"] = {"type": "string", "description": "Free text"}
SYNTH_BASE["access_patterns"]["customer"]["description"] = "The profile page"

# Where Terraform starts a template sequence, as HCL's scanner reads left to right: `$${` and `%%{` are
# escapes, every other `${` or `%{` is evaluated (written here independently of modules/tablewright/constructs).
TEMPLATE_START = re.compile(r"\$\$\{|%%\{|\$\{|%\{")
NAME = r"[a-z0-9_]+"
# The expressions Tablewright writes, whole (to the closing brace), each referring to an address.
OWN_EXPRESSION = re.compile("|".join([
    rf"\$\{{(?P<resource>(?:data\.)?aws_{NAME}\.{NAME})(?:\[0\])?\.{NAME}\}}",
    rf"\$\{{max\(try\(local\.(?P<local>{NAME})\[\"[A-Za-z0-9_.-]+\"\]\.(?:read|write)_capacity, 0\), \d+\)\}}",
    rf"\$\{{try\(contains\((?P<tables>data\.aws_dynamodb_tables\.{NAME})\.names, \"[A-Za-z0-9_.-]+\"\), false\)"
    r" \? 1 : 0\}",
    rf"\$\{{\{{ for g in try\((?P<live>data\.aws_dynamodb_table\.{NAME})\[0\]\.global_secondary_index, \[\]\)"
    r" : g\.name => g \}\}",
]))


def declared(config: dict[str, Any]) -> set[str]:
    """Every address a stack declares: resources, data sources (`data.` first) and locals (`local.`)."""
    found = {f"{kind}.{name}" for kind, named in config.get("resource", {}).items() for name in named}
    found |= {f"data.{kind}.{name}" for kind, named in config.get("data", {}).items() for name in named}
    return found | {f"local.{name}" for name in config.get("locals", {})}


def evaluated_foreign(config: dict[str, Any]) -> list[str]:
    """Every template sequence Terraform would evaluate in `config` that is not one of Tablewright's
    expressions about an address the same stack declares."""
    addresses, foreign = declared(config), []
    for text in strings_in(config):
        position = 0
        while (found := TEMPLATE_START.search(text, position)) is not None:
            position = found.end()
            if found.group() in ("$${", "%%{"):
                continue
            own = OWN_EXPRESSION.match(text, found.start())
            names = [] if own is None else [name for name in own.groupdict().values() if name]
            if own is None or any(("local." + name if own["local"] == name else name) not in addresses
                                  for name in names):
                foreign.append(text[:200])
            else:
                position = own.end()
    return foreign


def test_the_inert_check_sees_an_unescaped_interpolation():
    config = {"resource": {"aws_dynamodb_table": {"shop": {"name": "x"}}},
              "locals": {"shop_live_gsis": "${{ for g in try(data.aws_dynamodb_table.shop_live[0]"
                                            ".global_secondary_index, []) : g.name => g }}"},
              "data": {"aws_dynamodb_table": {"shop_live": {"name": "x"}}},
              "output": {"fine": "${aws_dynamodb_table.shop.name}", "escaped": "$${x} %%{ if } $${aws_x.y.z}",
                         "capacity": '${max(try(local.shop_live_gsis["GSI1"].read_capacity, 0), 10)}'}}
    assert evaluated_foreign(config) == []
    for bad in ("${x}", "%{ if true }", "$${x} ${x}", "%${x}", "$%{x}", "${aws_dynamodb_table.fuzz.name}",
                "${aws_dynamodb_table.shop.name} ${file(\"/etc/passwd\")}", "${aws_dynamodb_table.shop.name"):
        assert evaluated_foreign({**config, "tags": {"t": bad}}) == [bad], bad


FREE_TEXT = {"description", "owner", "reason"}
NAMED = {"entities", "attributes", "access_patterns", "tags", "environments"}  # mappings of the user's names
# Harmless in most restricted fields (tag values, names): synthesis goes on with the other injections.
BENIGN = st.sampled_from(["_", "-", ".", ":", "/", "=", "+", "@", " ", "9", "Z", "x"])


def free_text(path: tuple) -> bool:
    """Text any character may go into (descriptions, reasons, enum values)."""
    return path[-1] in FREE_TEXT or "values" in path or path[:2] == ("lint", "ignore")


@st.composite
def injected_blueprints(draw) -> dict[str, Any]:
    """The synthesis base with 1-3 injections into its strings, or into the user's names (entities,
    attributes, patterns, tags, environments); most go into free text, which must never reach Terraform
    evaluated, the others into names or any string, most harmless so that synthesis still runs."""
    document = copy.deepcopy(SYNTH_BASE)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = paths_in(document)
        texts = [p for p in paths if isinstance(node_at(document, p), str)]
        names = [p for p in paths if len(p) > 1 and p[-2] in NAMED]
        free = [p for p in texts if free_text(p)]
        where = draw(st.sampled_from(["free", "free", "free", "names", "texts"]))
        path = draw(st.sampled_from({"free": free, "names": names, "texts": texts}[where]))
        parent, key = node_at(document, path[:-1]), path[-1]
        hostile = st.one_of(st.sampled_from(INJECTIONS), INJECTION_TEXT)
        injection = draw(hostile if where == "free" else st.one_of(hostile, BENIGN, BENIGN, BENIGN))
        into_name = path in names and (path not in texts or draw(st.booleans()))
        old = key if into_name else parent[key]
        at = draw(st.integers(min_value=0, max_value=len(old)))
        new = old[:at] + injection + old[at:] if draw(st.booleans()) else injection
        if into_name:
            parent[new] = parent.pop(key)
        else:
            parent[key] = new
    return document


@example(document=SYNTH_BASE)
@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(document=injected_blueprints())
def test_fuzzed_blueprints_synthesize_inert(document):
    """A blueprint with interpolations, escapes, quotes, newlines or unicode in its strings is refused
    (exit 2, located) or synthesized; then no string of any synthesized file is evaluated by Terraform
    but Tablewright's own references."""
    with tempfile.TemporaryDirectory(prefix="hostile-synth-fuzz-") as scratch:
        path, out = Path(scratch) / "fuzz.yaml", Path(scratch) / "cdktf.out"
        path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
        code, stdout, err = quietly("synth", path, "--out", out, "--allow-lint-errors")
        event(f"synth exit {code}")
        assert code in (0, 2), (code, err[-2000:])
        if code == 2:
            assert LOCATED.match(assert_refused((code, stdout, err))), err[:2000]
            return
        assert "Traceback" not in err and "error" not in err, err[-2000:]
        configs = sorted(out.rglob("*.tf.json"))
        assert len(configs) == len(document.get("environments") or {None: None}), stdout
        for config in configs:
            assert evaluated_foreign(json.loads(config.read_text())) == [], config.relative_to(out)
