"""Run the real Terraform CLI offline against the hashicorp/aws provider filesystem mirror.

The mirror is `TABLEWRIGHT_PROVIDER_MIRROR` when set, else found in the usual places. Tests that need
Terraform skip with the reason when it is missing, except under CI (`TABLEWRIGHT_REQUIRE_TOOLS=1`),
where a missing tool is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tablewright.errors import TablewrightError
from tablewright.local.terraform import MIRROR_ENV, PROVIDER, mirror_config
from tablewright.local.terraform import find_mirror as usual_mirror

_SEARCH_ROOTS = [Path("/opt"), Path("/usr/local"), Path("/usr/share"), Path.home()]


# The test being set up, run or torn down (tests/conftest.py sets it). The Terraform CLI, the emulator,
# checkov and the cdktf CLI belong to the slow tier: a test that reaches one of them must be marked.
current_test: pytest.Item | None = None


def slow_tier_only(what: str) -> None:
    """Fail the running test if it uses `what` but lacks the `terraform` marker (outside pytest: no-op)."""
    test = current_test
    if test is not None and test.get_closest_marker("terraform") is None:
        pytest.fail(f"{test.nodeid} runs {what}, which belongs to the slow tier: mark the test (or its module) "
                    "with @pytest.mark.terraform, or flag its fixture with @uses_terraform", pytrace=False)


def uses_terraform(fixture_function):
    """Flag a fixture that runs Terraform or the emulator: every test that requests it, directly or through
    other fixtures, gets the `terraform` marker (tests/conftest.py). Put it under `@pytest.fixture`."""
    fixture_function.tablewright_uses_terraform = True
    return fixture_function


def tools_required() -> bool:
    return os.environ.get("TABLEWRIGHT_REQUIRE_TOOLS") == "1"


def missing_tool(reason: str) -> None:
    if tools_required():
        pytest.fail(f"{reason} (required under CI: TABLEWRIGHT_REQUIRE_TOOLS=1)")
    pytest.skip(reason)


def find_mirror() -> Path | None:
    """The mirror `tablewright terraform` uses, else one found deeper in this machine's usual roots."""
    try:
        found = usual_mirror()
    except TablewrightError:  # TABLEWRIGHT_PROVIDER_MIRROR names a directory without the provider
        return None
    if found is not None or os.environ.get(MIRROR_ENV):
        return found
    for root in _SEARCH_ROOTS:
        for depth in range(1, 5):
            for match in root.glob("/".join(["*"] * depth) + f"/{PROVIDER}"):
                return Path(str(match)[: -len(str(PROVIDER)) - 1])
    return None


def terraform_environment(workdir: Path) -> dict[str, str]:
    """Environment for offline Terraform runs: a CLI config that installs providers from the mirror."""
    slow_tier_only("the Terraform CLI")
    if shutil.which("terraform") is None:
        missing_tool("the Terraform CLI is not installed")
    mirror = find_mirror()
    if mirror is None:
        missing_tool(f"no hashicorp/aws provider mirror found (set {MIRROR_ENV})")
    config = workdir / "terraform-cli.tfrc"
    config.write_text(mirror_config(mirror))
    env = dict(os.environ)
    env.update(TF_CLI_CONFIG_FILE=str(config), TF_IN_AUTOMATION="1", CHECKPOINT_DISABLE="1")
    return env


def stack_workdir(root: Path, stack: str) -> Path:
    """Where a test runs Terraform on a copy of stack `stack`: `root/out/stacks/<stack>`, laid out as synth writes
    it, so the local state (`../../../terraform-state/<stack>.tfstate`) lands in `root/terraform-state`."""
    return root / "out" / "stacks" / stack


def terraform(args: list[str], cwd: Path, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["terraform", *args, "-no-color"], cwd=cwd, env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"terraform {' '.join(args)} failed in {cwd}:\n{result.stdout}\n{result.stderr}")
    return result


def validate(stack_dir: Path, env: dict[str, str]) -> None:
    terraform(["init", "-input=false", "-backend=false"], stack_dir, env)
    terraform(["validate"], stack_dir, env)
