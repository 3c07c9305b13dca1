"""The guide "Evolving a design" shows what the commands print on the bundled CRM and its next version
(examples/evolving/crm.yaml): each output block is the command's output now."""

from __future__ import annotations

from tests.conftest import ROOT

GUIDE = (ROOT / "docs" / "guides" / "evolving-a-design.md").read_text()
NEXT, NOW = "examples/evolving/crm.yaml", "blueprints/crm.yaml"


def test_the_guide_shows_the_migrate_plan_of_the_example(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli("migrate", "plan", NEXT, "--against", NOW, "--env", "prod", "--max-wcu", "100")
    assert code == 0, err
    assert f"```text\n{out}```" in GUIDE


def test_the_guide_shows_the_lint_and_the_review_of_the_example(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli("lint", NEXT, "--against", NOW, "--env", "prod")
    [finding] = [line + "\n" + out.split(line + "\n")[1].split("\n")[0] for line in out.splitlines() if "TW404" in line]
    assert finding in GUIDE
    code, out, err = run_cli("review", "--base", NOW, "--head", NEXT, "--env", "prod")
    assert code == 0, err
    data = out.split("#### Data already in the table\n\n")[1].split("\n\n")[0]
    assert f"```text\n{data}\n```" in GUIDE
