"""What the hostile-input tests (tests/hostile/test_hostile_*.py) share: the contract, files and runs, the blueprint
they spoil.

Every bad input meets one contract (`assert_refused`): exit 2, never a traceback or an internal error; stderr's first
line is `error: ...`, located `file:line:column` when the problem is in a file (the line marked `# <-` in the case);
a `  fix:` line follows; a `synth --out DIR` over an earlier good synthesis leaves DIR, and everything around it,
unchanged byte for byte (the `refuse` fixture, tests/hostile/conftest.py). Command-line problems name the option. A
value that is accepted must reach Terraform inert (`$${`, `%%{`).

These tests define the target behaviour; many failed on the code they were written against.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, TEST_BLUEPRINTS

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


# Payloads several surfaces use: Terraform template sequences, a window, deep nesting --------------

DOLLAR = '${file("/proc/self/environ")}'
PERCENT = "%{ if true }x%{ endif }"
WINDOW = ("maintenance_window:", "  days: daily", "  start: '02:00'", "  duration: 2h", "  timezone: UTC")


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


NESTED = "[" * 100_000 + "]" * 100_000
