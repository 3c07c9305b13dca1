"""The lint command and engine: `lint.ignore` silences a code and counts it, exit codes and `--strict`, SARIF, `synth`
(and `cdktf synth`, through cdktf.json) refusing lint errors, a broken cdktf.json, and the bundled blueprints, which
lint clean."""

from __future__ import annotations

import json
import textwrap

import pytest

from tablewright import cli
from tablewright.blueprint.load import load_blueprints
from tablewright.design.designer import design
from tablewright.lint.findings import RULES
from tests.conftest import BUNDLED
from tests.support.design_helpers import OVERSIZED_ITEM, blueprint
from tests.support.lint_support import lint

# --- engine, CLI, formats ---------------------------------------------------------------------------


def test_ignored_codes_are_counted_not_shown():
    ticket = {"attributes": {"customerId": "string", "status": {"type": "string", "values": ["OPEN", "DONE"]}},
              "key": {"pk": "CUSTOMER#{customerId}", "sk": "TICKET#{status}"}}
    found, suppressed = lint(design(blueprint({"Ticket": ticket}, {}, lint={"ignore": {"TW201": "legacy"}})))
    assert "TW201" not in {f.code for f in found}
    assert suppressed == (("TW201", "legacy", 1),)


def test_bundled_blueprints_have_no_errors_or_warnings(run_cli):
    code, out, _ = run_cli("lint", "--strict")
    assert code == 0, out
    for stack in ("crm-dev", "crm-prod", "orders-dev", "orders-prod"):
        assert f"{stack}: 0 error(s), 0 warning(s)" in out


def test_cli_exit_codes_and_strict(write_blueprint, run_cli):
    path = write_blueprint(textwrap.dedent("""\
        blueprint: traps
        version: 1.0.0
        table: {name: traps_main}
        entities:
          Post:
            attributes: {title: string, at: timestamp}
            key: {pk: "POST", sk: "{title}#{at}"}
        """))
    code, out, _ = run_cli("lint", path)
    assert code == 0 and "warning TW203" in out and f"{path}:6:" in out
    code, _, _ = run_cli("lint", path, "--strict")
    assert code == 1


def test_sarif_output(run_cli, write_blueprint):
    path = write_blueprint(textwrap.dedent("""\
        blueprint: traps
        version: 1.0.0
        table: {name: traps_main}
        entities:
          Score:
            attributes: {gameId: string, points: number}
            key: {pk: "GAME#{gameId}", sk: "S#{points}"}
        access_patterns:
          top: {entity: Score, where: {gameId: "="}, order: desc, order_by: points, limit: 3}
        """))
    code, out, _ = run_cli("lint", path, "--format", "sarif")
    assert code == 1
    sarif = json.loads(out)
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    run = sarif["runs"][0]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == set(RULES)
    [result] = [r for r in run["results"] if r["ruleId"] == "TW202"]
    assert result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 6  # the attribute `points`, which needs `width:`
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "TW202"


def test_synth_refuses_lint_errors_unless_allowed(write_blueprint, run_cli, tmp_path, monkeypatch):
    path = write_blueprint(OVERSIZED_ITEM)
    code, _, stderr = run_cli("synth", path, "--out", tmp_path / "out")
    assert code == 2 and "lint TW303" in stderr and ":8:" in stderr
    assert not (tmp_path / "out").exists()
    code, _, _ = run_cli("synth", path, "--out", tmp_path / "out", "--allow-lint-errors")
    assert code == 0
    # `cdktf synth` (no arguments: the blueprints cdktf.json lists) refuses them as `synth` does.
    config = tmp_path / "cdktf.json"
    config.write_text(json.dumps({"context": {"blueprints": [str(path)]}}))
    monkeypatch.setattr(cli.project, "CDKTF_JSON", config)
    monkeypatch.setenv("CDKTF_OUTDIR", str(tmp_path / "app-out"))
    code, _, stderr = run_cli()
    assert code == 2 and "lint TW303" in stderr and not (tmp_path / "app-out").exists()


@pytest.mark.parametrize("config", ['{"context": {"blueprints": "blueprints/orders.yaml"}}',
                                    '{"context": {"blueprints": []}}', '{"context": {"blueprints": [7]}}'])
def test_a_broken_cdktf_json_is_one_error_with_the_fix(config, tmp_path, monkeypatch, run_cli):
    (tmp_path / "cdktf.json").write_text(config)
    monkeypatch.setattr(cli.project, "CDKTF_JSON", tmp_path / "cdktf.json")
    code, _, stderr = run_cli()
    assert code == 2 and "cdktf.json: `context.blueprints` must list the blueprint files" in stderr, stderr
    assert "[E605]" in stderr and "fix: " in stderr


def test_cdktf_json_that_is_not_json_is_one_error(tmp_path, monkeypatch, run_cli):
    (tmp_path / "cdktf.json").write_text('{"context": {"blueprints": ["a.yaml",]}}')
    monkeypatch.setattr(cli.project, "CDKTF_JSON", tmp_path / "cdktf.json")
    code, _, stderr = run_cli()
    assert code == 2 and "cdktf.json is not valid JSON" in stderr and "[E605]" in stderr, stderr


@pytest.mark.parametrize("path", BUNDLED, ids=[p.stem for p in BUNDLED])
def test_bundled_findings_are_the_expected_notes(path):
    for loaded in load_blueprints(path):
        found, _ = lint(design(loaded.blueprint))
        assert all(f.severity == "info" for f in found)
