"""The docs site: it builds strictly, its generated reference matches the code, every error code and lint rule has an
entry, the command lines it shows are valid (tests/end_to_end/test_getting_started.py runs the getting-started page)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tablewright.cli import build_parser
from tablewright.errors import CODE_DOCS, ErrorCode, TablewrightError, docs_anchor
from tablewright.lint.engine import RULES
from tests.conftest import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.md"


def sections(page: Path) -> dict[str, str]:
    """`## heading` -> the text under it, of one page."""
    found: dict[str, str] = {}
    for block in re.split(r"^## ", page.read_text(), flags=re.MULTILINE)[1:]:
        heading, _, body = block.partition("\n")
        found[heading.strip()] = body.strip()
    return found


def shell_blocks(text: str) -> list[str]:
    """The shell code blocks of a page, continuation lines joined."""
    blocks = re.findall(r"^```sh\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return [block.replace("\\\n", " ") for block in blocks]


# What the getting-started walk-through writes (tests/end_to_end/test_getting_started.py runs it), named on that page.
WRITTEN_BY_GETTING_STARTED = ["blueprints/payments.yaml", "blueprints/payments.lock.json"]


def test_the_reference_pages_are_generated_from_the_current_code():
    result = subprocess.run([sys.executable, "tools/reference.py", "--check"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.terraform
def test_the_check_sees_a_stale_page(tmp_path):
    """The staleness check itself: a generated page edited by hand is reported."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copytree(ROOT / "tools", copy / "tools", ignore=shutil.ignore_patterns("node_modules"))
    (copy / "docs" / "reference" / "lint.md").write_text("# edited by hand\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, str(copy / "tools" / "reference.py"), "--check"], cwd=copy, env=env,
                            capture_output=True, text=True, timeout=120)
    # the copy's tools/reference.py resolves its docs beside itself
    assert result.returncode == 1 and "reference/lint.md" in result.stderr


def test_error_codes_are_unique_and_each_has_a_docs_entry():
    values = [code.value for code in ErrorCode]
    assert len(values) == len(set(values)) == len(ErrorCode.__members__), "two names share a code"
    assert all(re.fullmatch(r"E\d{3}", value) for value in values)
    assert set(CODE_DOCS) == set(ErrorCode)
    entries = sections(DOCS / "reference" / "errors.md")
    assert set(entries) == set(values)
    for code in ErrorCode:
        assert "Why: " in entries[code.value] and "What to do: " in entries[code.value], code
        assert all(len(part) > 20 for part in (CODE_DOCS[code].why, CODE_DOCS[code].fix)), code


def test_every_lint_rule_has_a_docs_entry():
    entries = sections(DOCS / "reference" / "lint.md")
    assert set(entries) == set(RULES)
    for code, rule in RULES.items():
        assert rule.why and rule.help and rule.severity, code
        assert f"Why: {rule.why}" in entries[code] and f"What to do: {rule.help}" in entries[code]


def test_an_error_message_ends_with_the_anchor_of_its_code():
    error = TablewrightError("no such thing", code=ErrorCode.UNKNOWN_NAME, hint="write a known one")
    last = error.render().splitlines()[-1]
    assert last == "  docs: docs/reference/errors.md#e300" == f"  docs: {docs_anchor(ErrorCode.UNKNOWN_NAME)}"
    page, anchor = docs_anchor(ErrorCode.UNKNOWN_NAME).split("#")
    assert (ROOT / page).is_file() and f"## {anchor.upper()}" in (ROOT / page).read_text()


def test_an_unknown_code_is_refused():
    with pytest.raises(ValueError):
        TablewrightError("x", code="E999")


def test_the_readme_is_short_and_keeps_its_two_set_up_commands():
    text = README.read_text()
    assert len(text.splitlines()) < 200
    assert text.count("<!-- setup:run -->") == 1 and text.count("<!-- setup:test -->") == 1
    assert len(shell_blocks(text)) == 3  # the two set-up commands and the quick start


def documented_command_lines() -> list[tuple[str, list[str]]]:
    """Every `tablewright ...` line in a shell block of the README and the docs, without placeholders."""
    found = []
    for page in [README, *sorted(DOCS.rglob("*.md"))]:
        for block in shell_blocks(page.read_text()):
            for line in block.splitlines():
                line = line.split(" #")[0].strip()
                words = shlex.split(line) if re.search(r"(^|\s|/bin/)tablewright ", line) else []
                if not words or re.search(r"\[|\.\.\.|\b[A-Z]{2,}\b|<", line):
                    continue
                start = next(i for i, word in enumerate(words)
                             if word == "tablewright" or word.endswith("/bin/tablewright")) + 1
                end = next((i for i, word in enumerate(words[start:], start)
                            if word in ("&&", "||", "|", ";", "&", "--") or word.startswith(">")), len(words))
                found.append((f"{page.relative_to(ROOT)}: {line}", words[start:end]))
    return found


def test_every_guide_opens_with_a_runnable_example_and_every_concept_shows_one():
    """Docs that show, not only tell: a guide's first block after its title is a shell example."""
    for page in sorted((DOCS / "guides").glob("*.md")):
        title, _, body = page.read_text().partition("\n")
        first = body.lstrip("\n")
        assert title.startswith("# "), page.name
        assert first.startswith("```sh\n"), f"{page.name} does not open with a ```sh example"
    for page in sorted((DOCS / "concepts").glob("*.md")):
        assert "\n```" in page.read_text(), f"{page.name} shows no example"


def test_the_documented_command_lines_parse():
    lines = documented_command_lines()
    assert len(lines) >= 8
    parser = build_parser()
    for where, argv in lines:
        try:
            parser.parse_args(argv)
        except SystemExit as exited:  # --version and --help print and exit 0
            assert exited.code == 0, f"{where}: does not parse"
        except TablewrightError as error:
            raise AssertionError(f"{where}: does not parse ({error})") from None


def test_the_docs_name_only_modules_and_files_that_exist():
    from tests.contract.test_code_quality import missing_files, missing_modules

    for page in [README, *sorted(DOCS.rglob("*.md"))]:
        text = page.read_text()
        assert not missing_modules(text), f"{page}: {missing_modules(text)}"
        written = WRITTEN_BY_GETTING_STARTED if page.name == "getting-started.md" else []
        missing = [path for path in missing_files(text) if path not in written]
        assert not missing, f"{page}: {missing}"


@pytest.mark.terraform
def test_the_site_builds_strictly(tmp_path):
    """Every page in the nav, every link and anchor resolving: `mkdocs build --strict` fails on any warning."""
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "reference" / "errors" / "index.html").is_file()


@pytest.mark.terraform
def test_a_broken_link_fails_the_build(tmp_path):
    """The strict build itself: a page linking to a missing anchor does not build."""
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    page = tmp_path / "docs" / "index.md"
    page.write_text(page.read_text() + "\nSee [nothing](reference/errors.md#e999).\n")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode != 0 and "e999" in result.stderr
