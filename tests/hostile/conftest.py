"""Fixtures of the hostile-input tests: `synth_good`, an earlier good synthesis, and `refuse`, which runs `synth --out`
on a bad blueprint over one and checks the contract (tests/support/hostile_support.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.hostile_support import (
    GOOD,
    Bad,
    assert_refused,
    assert_unchanged,
    git,
    lay_out,
    run_slow,
    snapshot,
)


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
