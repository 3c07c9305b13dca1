"""docs/getting-started.md, run as a user would: every `sh` block in order, in one shell, in an empty directory
outside the repository, with the installed wheel on PATH; each block must succeed, and what a block prints must
match the `text` block after it. In the expected text a line `...` stands for any lines, and `...` inside a line
for any text. A block after `<!-- getting-started: not run ... -->` (the install) is replaced by the test's own
install of the wheel it built."""

from __future__ import annotations

import re
import socket
import subprocess
from dataclasses import dataclass

import pytest

from tests.conftest import ROOT
from tests.support.terraform_support import find_mirror, missing_tool

PAGE = ROOT / "docs" / "getting-started.md"
NOT_RUN = "<!-- getting-started: not run"
DOCUMENTED_PORT = "4566"  # the page's port; the test serves on a free one
FENCE = re.compile(r"^(<!--[^\n]*-->\n)?```(sh|text)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)

pytestmark = pytest.mark.terraform  # Terraform, the emulator and the installed wheel: the slow tier


@dataclass
class Step:
    commands: str
    expected: str | None  # None: only its success is checked


def steps(page: str) -> list[Step]:
    """The page's `sh` blocks (those marked not run left out), each with the `text` block that follows it."""
    found: list[Step] = []
    previous_end, previous_ran = -1, False
    for match in FENCE.finditer(page):
        comment, kind, body = match.groups()
        if kind == "sh":
            previous_ran = not (comment or "").startswith(NOT_RUN)
            if previous_ran:
                found.append(Step(body, None))
        elif previous_ran and not page[previous_end:match.start()].strip():  # right after a block that ran
            found[-1].expected = body
            previous_ran = False
        previous_end = match.end()
    return found


def matches(expected: str, actual: str) -> bool:
    """`actual` as `expected` shows it: a line `...` is any lines, `...` within a line any text."""
    pattern = []
    for line in expected.rstrip("\n").split("\n"):
        if line == "...":
            pattern.append(r"(?:[^\n]*\n)*?")
        else:
            pattern.append(".*?".join(map(re.escape, line.split("..."))) + r"\n")
    return re.fullmatch("".join(pattern), actual.rstrip("\n") + "\n", re.DOTALL) is not None


def test_the_matcher_takes_elisions_and_sees_a_difference():
    assert matches("a\n...\nd\n", "a\nb\nc\nd\n") and matches("a\n...\n", "a\n")
    assert matches("gate FAIL ...; opens ...\n", "gate FAIL for x; opens 2026-12-08\n")
    assert not matches("a\nd\n", "a\nb\nd\n") and not matches("Plan: 15 to add\n", "Plan: 16 to add\n")


def test_the_page_has_its_steps_and_their_outputs():
    found = steps(PAGE.read_text())
    assert len(found) >= 12 and sum(step.expected is not None for step in found) >= 10
    assert "pip install" not in "".join(step.commands for step in found)  # the install is the test's own


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_getting_started_page_runs_as_it_reads(installed_tool, tmp_path):
    mirror = find_mirror()
    if mirror is None:
        missing_tool("no hashicorp/aws provider mirror (set TABLEWRIGHT_PROVIDER_MIRROR)")
    port = str(free_port())
    page = (PAGE.read_text().replace(DOCUMENTED_PORT, port)
            .replace("tablewright local ", f"tablewright local --port {port} "))
    script, outputs = ["set -e"], []  # a command that fails stops the page there
    for number, step in enumerate(steps(page)):
        commands, output = tmp_path / f"step-{number}.sh", tmp_path / f"step-{number}.out"
        commands.write_text(step.commands)
        outputs.append((step, output))
        script.append(f". {commands} > {output} 2>&1")  # sourced: `cd`, exports and jobs carry on
    identity = {f"GIT_{who}_{what}": value for who in ("AUTHOR", "COMMITTER")
                for what, value in (("NAME", "Getting Started"), ("EMAIL", "reader@example.com"))}
    env = installed_tool.environment(TABLEWRIGHT_PROVIDER_MIRROR=str(mirror), HOME=str(tmp_path / "home"),
                                     **identity)
    env.pop("TF_CLI_CONFIG_FILE", None)
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env, capture_output=True, text=True,
                          timeout=900)
    ran = [(step, output.read_text()) for step, output in outputs if output.exists()]
    assert done.returncode == 0, f"this step failed:\n{ran[-1][0].commands}\n{ran[-1][1]}{done.stderr}"
    for step, actual in ran:
        if step.expected is not None:
            assert matches(step.expected, actual), f"$ {step.commands}\nexpected:\n{step.expected}\ngot:\n{actual}"
    subprocess.run(["pkill", "-f", f"tablewright local.*{port}"], check=False)  # should the page stop too late
