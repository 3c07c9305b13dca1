"""The command line as people meet it: every --help with its exit codes and an example, colour and progress on
a terminal only (NO_COLOR turns colour off), a summary line on stderr, text output within 100 columns."""

from __future__ import annotations

import argparse
import json
import os
import pty
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tablewright.cli import build_parser
from tablewright.report.tables import fit_lines, text_table
from tests.conftest import ROOT
from tests.support.design_helpers import OVERSIZED_ITEM

ESCAPE = "\033["


def subcommands() -> list[str]:
    [action] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(action.choices)


def test_every_command_is_enumerated():
    assert {"synth", "lint", "verify", "review", "gate", "new"} <= set(subcommands())


@pytest.mark.parametrize("command", [[], *([name] for name in subcommands())], ids=lambda c: " ".join(c) or "top")
def test_help_shows_the_exit_codes_and_an_example(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps to the terminal's width; the epilog is ours to keep within
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([*command, "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert max(map(len, text.splitlines())) <= 100
    codes = text.split("exit codes:\n")[1].split("\n\n")[0]
    assert codes.startswith("  0  ok\n  1  ") and "\n  2  bad input" in codes and "\n  3  internal error" in codes
    assert ("\n  4  with --detailed-exitcode" in codes) == ("--detailed-exitcode" in text.split("exit codes:")[0]
                                                          or not command)
    examples = text.split("examples:\n")[1].split("\n\n")[0].splitlines()
    assert examples and all(line.startswith("  ") for line in examples)
    if command:
        assert any(f"tablewright {command[0]}" in line for line in examples), examples


BAD = OVERSIZED_ITEM + 'access_patterns:\n  user: {entity: User, where: {userId: "="}}\n'


def run_in_terminal(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the CLI with stdout and stderr on a pseudo-terminal; returns (exit code, what the terminal got)."""
    master, slave = pty.openpty()
    environment = {key: value for key, value in os.environ.items() if key != "NO_COLOR"} | (env or {})
    process = subprocess.Popen([sys.executable, str(ROOT / "main.py"), *args], stdin=subprocess.DEVNULL,
                               stdout=slave, stderr=slave, cwd=ROOT, env=environment)
    os.close(slave)
    received = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        received += chunk
    os.close(master)
    return process.wait(timeout=120), received.decode()


def test_a_failing_lint_is_coloured_on_a_terminal_only(tmp_path):
    path = tmp_path / "traps.yaml"
    path.write_text(BAD)
    code, shown = run_in_terminal(["lint", str(path)])
    assert code == 1
    assert f"{ESCAPE}31merror{ESCAPE}0m TW303" in shown  # the finding's severity, red
    assert "0 error(s)" not in shown and "1 error(s), 0 warning(s) in 1 stack(s) of 1 blueprint(s) linted" in shown
    code, shown = run_in_terminal(["lint", str(path)], env={"NO_COLOR": "1"})
    assert code == 1 and "error TW303" in shown and ESCAPE not in shown
    piped = subprocess.run([sys.executable, "main.py", "lint", str(path)], cwd=ROOT, capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "NO_COLOR"})
    assert piped.returncode == 1 and "error TW303" in piped.stdout
    assert ESCAPE not in piped.stdout + piped.stderr


def test_a_bad_blueprint_is_a_red_error_on_a_terminal(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(BAD.replace("sk: PROFILE", "sk: PROFILE, nope: 1"))
    code, shown = run_in_terminal(["explain", str(path)])
    assert code == 2 and shown.startswith(f"{ESCAPE}31merror{ESCAPE}0m: {path}:7:")
    code, shown = run_in_terminal(["explain", str(path)], env={"NO_COLOR": "1"})
    assert code == 2 and shown.startswith(f"error: {path}:7:") and ESCAPE not in shown


@pytest.mark.terraform  # several CLI runs on a pseudo-terminal: 2 s, the slow tier's
def test_progress_on_a_terminal_for_several_blueprints_and_never_when_piped(tmp_path):
    good = BAD.replace("    item_bytes: 500000\n", "")
    paths = []
    for number in range(6):
        paths.append(tmp_path / f"svc{number}.yaml")
        paths[-1].write_text(good.replace("traps", f"svc{number}"))
    arguments = ["lint", *map(str, paths)]
    code, shown = run_in_terminal(arguments, env={"NO_COLOR": "1"})
    assert code == 0
    assert "\rlint reading 1/6 blueprints" in shown and "\rlint reading 6/6 blueprints\r\033[K" in shown
    assert "\rlint designing 1/6 stacks" in shown and "\rlint designing 6/6 stacks\r\033[K" in shown
    code, shown = run_in_terminal(["synth", *map(str, paths), "--out", str(tmp_path / "out")], env={"NO_COLOR": "1"})
    assert code == 0 and "\rsynth writing 6 stack(s)\033[K" in shown and "6 stack(s) synthesized" in shown
    piped = subprocess.run([sys.executable, "main.py", *arguments], cwd=ROOT, capture_output=True, text=True)
    assert piped.returncode == 0 and "\r" not in piped.stderr and "blueprints\n" not in piped.stdout
    assert piped.stderr == "0 error(s), 0 warning(s) in 6 stack(s) of 6 blueprint(s) linted\n"
    code, shown = run_in_terminal(arguments[:3], env={"NO_COLOR": "1"})  # two blueprints: done before it is read
    assert code == 0 and "\r" not in shown.replace("\r\n", "\n")


# --- summaries -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "summary"), [
    (["lint"], "0 error(s), 0 warning(s) in 4 stack(s) of 2 blueprint(s) linted"),
    (["lint", "--format", "sarif"], "0 error(s), 0 warning(s) in 4 stack(s) of 2 blueprint(s) linted"),
    (["capacity", "--format", "json"], "4 stack(s) of 2 blueprint(s) estimated"),
    (["explain", "--env", "prod"], "2 stack(s) of 2 blueprint(s) explained"),
    (["list", "--format", "json"], "2 blueprint(s), 1 shared base(s), 0 invalid in blueprints"),
])
def test_each_command_ends_with_a_summary_on_stderr(command, summary, run_cli):
    code, out, err = run_cli(*command)
    assert code == 0 and err.splitlines()[-1] == summary
    assert summary not in out
    if "json" in command or "sarif" in command:
        json.loads(out)  # stdout stays the machine-readable document, nothing else


def test_synth_says_how_many_stacks_and_locks(tmp_path, run_cli):
    code, _, err = run_cli("synth", ROOT / "blueprints" / "orders.yaml", "--out", tmp_path / "out", "--locked")
    assert code == 0
    assert err.splitlines()[-1] == f"1 blueprint(s), 2 stack(s) synthesized, 0 lock(s) written into {tmp_path}/out"


# --- width ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["list"], ["capacity"], ["explain"], ["verify"]], ids=lambda c: c[0])
def test_text_output_of_the_bundled_blueprints_fits_in_100_columns(command, run_cli):
    code, out, _ = run_cli(*command)
    assert code == 0
    wide = [line for line in out.splitlines() if len(line) > 100]
    assert not wide, wide


def test_a_wide_table_wraps_its_widest_cells_and_else_is_one_block_per_row():
    rows = [["short", "a " * 60, "x"]]
    table = text_table(["One", "Two", "Three"], rows, width=40).splitlines()
    assert all(len(line) <= 40 for line in table) and len(table) > 3
    assert table[2].split()[0] == "short" and table[2].split()[-1] == "x"  # the first line of the row
    assert sum(line.split().count("a") for line in table[2:]) == 60 and all("short" not in line for line in table[3:])
    unbreakable = text_table(["Key", "Other"], [["K" * 30, "O" * 30]], width=40)
    assert unbreakable == f"Key:   {'K' * 30}\nOther: {'O' * 30}"
    assert text_table(["A", "B"], [["1", "2"]]) == "A  B\n-  -\n1  2"


def test_long_lines_wrap_under_their_own_indentation():
    text = "  " + " ".join(["word"] * 30)
    assert fit_lines(text, 40).splitlines()[1].startswith("    word")
    assert all(len(line) <= 40 for line in fit_lines(text, 40).splitlines())
    assert fit_lines(textwrap.dedent("short\n"), 40) == "short\n"


def test_the_package_keeps_its_entry_point():
    assert "tablewright = \"tablewright.cli:main\"" in (ROOT / "pyproject.toml").read_text()
    cli = ROOT / "modules" / "tablewright" / "cli"
    assert all(len(path.read_text().splitlines()) <= 500 for path in cli.glob("*.py"))
    assert Path(ROOT / "modules" / "tablewright" / "cli" / "__init__.py").is_file()
