"""The review comment of a blueprint with environments: headed by the worst verdict and the month's cost change,
production in full and every other environment as its differences from production; the JSON keeps them all."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tablewright.report.review import render_markdown
from tablewright.review.review import build_review
from tests.conftest import ROOT
from tests.review.test_review_markdown import rendered
from tests.support.review_corpus import BASE, merged

IDENTITY = ("-c", "user.name=Tablewright Tests", "-c", "user.email=tests@example.com")
# A representative change to each bundled blueprint: one access pattern more, so a new GSI (a window change) with
# its alarms and autoscaling, a backfill, a design lock change and a new request, in dev and in prod.
NEW_PATTERNS = {
    "crm.yaml": '  tickets_by_subject:\n    entity: Ticket\n    where: {subject: "="}\n    rps: 5\n',
    "orders.yaml": ('  orders_by_status:\n    entity: Order\n    where: {status: "="}\n    order_by: orderedAt\n'
                    '    rps: 5\n'),
}
# Bytes of the comment for that change before environments other than production were shown as differences
# (commit e210bf4), measured in a git repository holding a copy of blueprints/ with the change uncommitted:
#   tablewright review --base HEAD:blueprints/crm.yaml --head blueprints/crm.yaml --format markdown | wc -c
#   tablewright review --base HEAD:blueprints/orders.yaml --head blueprints/orders.yaml --format markdown | wc -c
#   tablewright review blueprints/crm.yaml blueprints/orders.yaml --changed-since main | wc -c
BEFORE = {"crm.yaml": 25_735, "orders.yaml": 19_934, "comment": 46_339}
STACK_FIELDS = {"application", "capacity", "changes", "counts", "data_changes", "design", "lint", "lock_diff",
                "maintenance_window", "production", "simulation", "stack", "warnings"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENTITY, *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A copy of blueprints/ committed on `main`, the working directory."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "blueprints", root / "blueprints")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "bundled blueprints")
    monkeypatch.chdir(root)
    return root


def add_patterns(root: Path) -> None:
    """The representative change, written as the measurement above wrote it (the new pattern first)."""
    for name, pattern in NEW_PATTERNS.items():
        path = root / "blueprints" / name
        path.write_text(path.read_text().replace("access_patterns:\n", "access_patterns:\n" + pattern, 1))


def overlay(root: Path, name: str, change: dict) -> None:
    path = root / "blueprints" / name
    path.write_text(yaml.safe_dump(merged(yaml.safe_load(path.read_text()), change), sort_keys=False))


def test_the_bundled_blueprints_comment_is_at_most_half_its_former_size(repo, run_cli):
    add_patterns(repo)
    for name in NEW_PATTERNS:
        code, out, err = run_cli("review", "--base", f"HEAD:blueprints/{name}", "--head", f"blueprints/{name}")
        assert code == 0, err
        assert "`tickets_by_subject` added" in out or "`orders_by_status` added" in out
        assert len(out.encode()) <= BEFORE[name] / 2 + _newer_rules(out), (name, len(out.encode()))
    code, out, err = run_cli("review", "blueprints/crm.yaml", "blueprints/orders.yaml", "--changed-since", "main")
    assert code == 0, err
    assert len(out.encode()) <= BEFORE["comment"] / 2 + _newer_rules(out), len(out.encode())


def _newer_rules(out: str) -> int:
    """Bytes of the findings of rules the measured comments had no rule for (TW330, the Contributor Insights cost
    note the platform base's accessed-keys mode gets): content, not format."""
    return sum(len(line.encode()) + 1 for line in out.splitlines() if "| TW330 |" in line or "without TW330" in line)


def test_the_headline_is_the_worst_verdict_and_the_months_cost_change_of_every_stack(repo, run_cli):
    add_patterns(repo)  # window in every stack
    overlay(repo, "orders.yaml", {"table": {"name": "orders_core"}})  # blocked in every orders stack
    code, out, err = run_cli("review", "blueprints/crm.yaml", "blueprints/orders.yaml", "--changed-since", "main")
    assert code == 0, err
    page = rendered(out)
    assert page.headings[0] == "Tablewright review"
    assert page.paragraphs[0].startswith("**BLOCKED: a change would lose data or protection**")
    data = json.loads(run_cli("review", "blueprints/crm.yaml", "blueprints/orders.yaml", "--changed-since", "main",
                              "--format", "json")[1])
    stacks = [stack for entry in data["blueprints"] for stack in entry["stacks"]]
    before = round(sum(stack["capacity"]["before"]["total"] for stack in stacks), 2)
    after = round(sum(stack["capacity"]["after"]["total"] for stack in stacks), 2)
    assert len(stacks) == 4 and after > before > 0
    assert page.paragraphs[1] == (f"**Monthly cost: ${before:,.2f} -> ${after:,.2f} (+${after - before:,.2f})** "
                                  "over 4 stack(s) (priced lines)")
    # The blueprint that blocks comes first, production in full before its other environment.
    summaries = [s for s in page.summaries if s.startswith(("crm-", "orders-"))]
    assert [s.split(":")[0] for s in summaries] == ["orders-prod (production)", "orders-dev", "crm-prod (production)",
                                                    "crm-dev"]
    assert summaries[1].endswith("; differences from orders-prod") and ";" not in summaries[0]


def test_a_cost_that_falls_is_said_with_a_minus(tmp_path):
    head = tmp_path / "head.yaml"
    head.write_text(yaml.safe_dump(merged(yaml.safe_load(BASE.read_text()), {"access_patterns": {"order_by_id": None}}),
                                   sort_keys=False))
    review = build_review(str(BASE), str(head))
    [stack] = review.stacks
    assert stack.cost_before is not None and stack.cost_after is not None
    before, after = stack.cost_before.total, stack.cost_after.total
    assert after < before
    assert rendered(render_markdown(review)).paragraphs[1] == (
        f"**Monthly cost: ${before:,.2f} -> ${after:,.2f} (-${before - after:,.2f})** over 1 stack(s) (priced lines)")


def test_a_change_only_outside_production_is_still_shown(repo, run_cli):
    overlay(repo, "crm.yaml", {"environments": {"dev": {"table": {"stream": "new_image"}}}})
    code, out, err = run_cli("review", "--base", "HEAD:blueprints/crm.yaml", "--head", "blueprints/crm.yaml")
    assert code == 0, err
    page = rendered(out)
    assert page.paragraphs[0].startswith("**WINDOW: apply only inside the maintenance window** (0 blocked, 1 window")
    assert [h for h in page.headings if " blocked, " in h] == ["`crm-prod` (production): 0 blocked, 0 window, 0 safe",
                                  "`crm-dev`: 0 blocked, 1 window, 0 safe; differences from `crm-prod`"]
    [difference] = [table for table in page.tables if table.header[0] == "Difference"]
    assert not difference.collapsed
    [row] = difference.rows
    assert row[:5] == ["only in `crm-dev`", "**window**", "update", "table dev-crm_main: stream off -> NEW_IMAGE",
                       "`aws_dynamodb_table.crm`"]
    assert "No Terraform changes." in page.paragraphs


def test_an_environment_like_the_one_in_full_is_said_to_be_the_same(tmp_path):
    """No environment is production: the first by name is shown in full, the other is the same but for its name."""
    two = merged(yaml.safe_load(BASE.read_text()), {"environments": {"blue": {}, "green": {}}})
    base, head = tmp_path / "base.yaml", tmp_path / "head.yaml"
    base.write_text(yaml.safe_dump(two, sort_keys=False))
    head.write_text(yaml.safe_dump(merged(two, {"table": {"stream": "new_and_old_images"}}), sort_keys=False))
    page = rendered(render_markdown(build_review(str(base), str(head))))
    assert [h for h in page.headings if " blocked, " in h] == ["`shop-blue`: 0 blocked, 1 window, 0 safe",
                                  "`shop-green`: 0 blocked, 1 window, 0 safe; differences from `shop-blue`"]
    assert page.paragraphs[-1] == "The same as `shop-blue`."


def test_the_json_keeps_every_environment_in_full(repo, run_cli):
    add_patterns(repo)
    code, out, err = run_cli("review", "--base", "HEAD:blueprints/crm.yaml", "--head", "blueprints/crm.yaml",
                             "--format", "json")
    assert code == 0, err
    dev, prod = json.loads(out)["stacks"]
    assert (dev["stack"], prod["stack"]) == ("crm-dev", "crm-prod")
    for stack, table in ((dev, "dev-crm_main"), (prod, "prod-crm_main")):
        assert set(stack) == STACK_FIELDS
        assert len(stack["changes"]) == sum(stack["counts"].values()) > 0
        assert stack["design"]["table"] == table and stack["lock_diff"] and stack["data_changes"]
        assert stack["application"] and stack["lint"]
        assert stack["capacity"]["before"]["lines"] and stack["capacity"]["after"]["total"] > 0
    # What the Markdown folds into crm-dev's differences is all in its JSON: changes it shares with production too.
    subjects = {change["subject"] for change in dev["changes"]}
    assert {"GSI GSI3", "alarms: crm_gsi3_read_throttles", "alarms: crm_gsi3_read_max_throughput_throttles"} <= subjects
    assert "alarms: crm_gsi3_read_utilization" in {change["subject"] for change in prod["changes"]}


def test_changes_are_compared_across_environments_by_what_they_do_not_by_the_tables_name():
    from tablewright.review.classified import Change, Class
    from tablewright.review.environments import change_differences
    from tablewright.review.review import StackReview

    def change(table: str, cls: Class = "safe", address: str = "aws_dynamodb_table.t") -> Change:
        return Change(address=address, action="update", category="capacity",
                      subject=f"table {table}: on-demand maximum", cls=cls, reason=f"read 10 -> 20 on {table}")

    prod = StackReview("s-prod", True, [change("prod-t", "window"), change("prod-t", address="aws_x.only_prod")],
                       tables=("prod-t",))
    dev = StackReview("s-dev", False, [change("dev-t"), change("dev-t", address="aws_x.only_prod")],
                      tables=("dev-t",))
    [differs] = change_differences(dev, prod)  # the same change on aws_x.only_prod, its table's name aside
    assert (differs.how, differs.change.cls, differs.change.subject) == ("differs", "safe", "table dev-t: on-demand "
                                                                                            "maximum")
    lone = StackReview("s-lone", False, [], tables=("lone-t",))
    assert [(d.how, d.change.address) for d in change_differences(lone, prod)] == [
        ("not here", "aws_dynamodb_table.t"), ("not here", "aws_x.only_prod")]


def test_the_comments_diagrams_keep_their_arrows(repo, run_cli):
    """The comment sanitizes untrusted text, not a diagram's syntax: its arrows stay `-->`."""
    add_patterns(repo)
    code, out, err = run_cli("review", "blueprints/crm.yaml", "blueprints/orders.yaml", "--changed-since", "main")
    assert code == 0, err
    diagrams = [block.split("```", 1)[0] for block in out.split("```mermaid\n")[1:]]
    assert diagrams and all("-->" in diagram for diagram in diagrams)
    assert "&gt;" not in "".join(diagrams)
