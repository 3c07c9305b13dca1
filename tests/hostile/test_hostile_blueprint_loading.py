"""Hostile blueprint files, refused before they cost anything: `extends` reaching outside the repository (/etc/passwd,
/proc, a symlink), unbounded work (extends diamonds and chains, huge numbers, deep nesting, tens of thousands of
keys, regexes too large to compile), catastrophic regexes in lint and synth, a sparse 2 GB file, and files that are
not regular files. The slow ones run in a subprocess limited to 60 s and 1 GiB (`run_slow`). The contract:
tests/support/hostile_support.py."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.hostile_support import (
    GOOD,
    MARK,
    PLATFORM_BASE,
    Bad,
    assert_refused,
    assert_unchanged,
    attributes,
    entity,
    ids,
    pattern,
    q,
    replace,
    run_slow,
    s3_backend,
    snapshot,
    top,
)

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


# The largest (49,000 findings to report, 4 s) runs in the slow tier; every other case in the fast one.
SLOW_TIER = {"49000-unknown-keys-under-20-environments"}


@pytest.mark.parametrize("case", [pytest.param(case, id=case.id, marks=[pytest.mark.terraform] * (case.id in SLOW_TIER))
                                  for case in UNBOUNDED])
def test_unbounded_work_is_refused_quickly(case, refuse):
    refuse(case, slow=True)


# Patterns that backtrack for hours in Python's `re` on the three-character values lint probes with.
CATASTROPHIC_PATTERNS = ["(?:.?){3000}X", "(?:(?:.?){30}){30}X", "(a|a|aa)*(a|a|aa)*$X", "(?:.*){50}"]


# Each case runs lint and synth in subprocesses (1.3 s): the fast tier keeps the one that matches '#', the slow tier
# runs them all.
@pytest.mark.parametrize("regex", [pytest.param(regex, marks=[pytest.mark.terraform] * (regex != "(?:.*){50}"))
                                   for regex in CATASTROPHIC_PATTERNS])
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
