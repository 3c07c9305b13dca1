"""`review --changed-since`: one sticky pull request comment for every blueprint a change affects, as GitHub renders it
(the counts on top, the detail folded, each plan summarised in its stack, a hostile plan address kept in its block,
GitHub's size limit), its JSON, its arguments and its exit codes. The CI workflows `init` writes:
test_ci_workflows.py; the gate's JSON and the Rego policy: test_gate_json.py."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tablewright.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, EXIT_WINDOW
from tablewright.report.comment import MARKER, render_comment
from tablewright.review.pull import PlanSummary, summarize_plan
from tests.review.test_review_markdown import rendered
from tests.support.plan_fixtures import plan_between, synthesis, write_plan
from tests.support.repository import Repository
from tests.support.review_corpus import BASE

# review --changed-since: one comment ---------------------------------------------------------------------------


def three_kinds_of_change(repo: Repository) -> None:
    """orders: the table renamed (blocked); shop: a stream (window); the shared base retags crm (safe)."""
    repo.edit("orders.yaml", "name: orders_main", "name: orders_core")
    repo.overlay("shop.yaml", {"table": {"stream": "new_and_old_images"}})
    repo.edit("shared/platform-base.yaml", "managed-by: tablewright", "managed-by: tablewright-platform")


def html_depth(markdown: str) -> list[int]:
    """The <details> nesting after each HTML block of the rendered page (GitHub's CommonMark)."""
    depth, seen = 0, []
    for token in MarkdownIt("commonmark", {"html": True}).parse(markdown):
        if token.type == "html_block":
            depth += token.content.count("<details>") - token.content.count("</details>")
            seen.append(depth)
    return seen


def test_one_comment_with_every_stacks_counts_on_top_and_the_detail_folded(repo, run_cli):
    three_kinds_of_change(repo)
    code, out, err = run_cli("review", *repo.blueprints, "--changed-since", "main")
    assert code == 0, err
    assert out.splitlines()[0] == MARKER  # how a pipeline finds its comment again
    page = rendered(out)
    assert page.headings[0] == "Tablewright review"
    assert page.paragraphs[0].startswith("**BLOCKED: a change would lose data or protection**")
    assert "in 5 stack(s) of 3 blueprint(s) changed since `main`" in page.paragraphs[0]
    [counts] = [table for table in page.tables if table.header[:2] == ["Stack", "Blueprint"]]
    assert not counts.collapsed
    assert counts.header == ["Stack", "Blueprint", "Verdict", "Blocked", "Window", "Safe", "Plan"]
    by_stack = {row[0]: row[2:6] for row in counts.rows}
    assert [row[0] for row in counts.rows][:3] == ["`orders-dev`", "`orders-prod` (production)", "`shop`"]
    assert by_stack["`orders-prod` (production)"][:2] == ["**blocked**", "1"]
    assert by_stack["`shop`"][:3] == ["**window**", "0", "1"]
    assert by_stack["`crm-prod` (production)"][0] == "safe" and int(by_stack["`crm-prod` (production)"][3]) > 0
    # Every other table (the changes, lint, cost, design) is folded away, one summary per stack.
    assert all(table.collapsed for table in page.tables if table is not counts)
    assert {summary.split(":")[0] for summary in page.summaries} >= {
        "crm-dev", "crm-prod (production)", "orders-dev", "orders-prod (production)", "shop"}
    assert html_depth(out)[-1] == 0
    reasons = next(summary for summary in page.summaries if summary.startswith("Why these"))
    assert reasons == "Why these 3 blueprint(s)"
    assert "`blueprints/crm.yaml`: extends blueprints/shared/platform-base.yaml, which changed" in out


def test_the_comment_is_the_same_from_run_to_run(repo, run_cli):
    three_kinds_of_change(repo)
    first = run_cli("review", *repo.blueprints, "--changed-since", "main")[1]
    assert run_cli("review", *repo.blueprints, "--changed-since", "main")[1] == first


def test_a_new_blueprint_is_reviewed_against_nothing(repo, run_cli):
    shutil.copy(BASE, repo.root / "blueprints" / "fresh.yaml")
    repo.edit("fresh.yaml", "blueprint: shop", "blueprint: fresh")
    repo.edit("fresh.yaml", "name: shop_main", "name: fresh_main")
    code, out, _ = run_cli("review", "blueprints/fresh.yaml", "--changed-since", "main", "--format", "json")
    assert code == 0
    data = json.loads(out)
    [entry] = data["blueprints"]
    assert entry["base"] == "(new blueprint)" and entry["reasons"] == ["changed"]
    [stack] = entry["stacks"]
    assert stack["counts"]["blocked"] == 0 and {c["action"] for c in stack["changes"]} == {"create"}
    assert data["verdict"] == "safe" and data["unaffected"] == 0


def test_the_review_json_says_what_was_compared_and_why(repo, run_cli):
    three_kinds_of_change(repo)
    code, out, _ = run_cli("review", *repo.blueprints, "--changed-since", "main", "--format", "json")
    data = json.loads(out)
    merge_base = repo.git("rev-parse", "main").strip()
    assert code == 0 and data["since"] == "main" and data["merge_base"] == merge_base
    assert data["verdict"] == "blocked" and data["counts"]["blocked"] == 2
    bases = {entry["blueprint"]: entry["base"] for entry in data["blueprints"]}
    assert bases["blueprints/shop.yaml"] == f"{merge_base}:blueprints/shop.yaml"
    text = run_cli("review", *repo.blueprints, "--changed-since", "main", "--format", "text")[1]
    assert text.startswith("BLOCKED") and "== blueprints/shop.yaml: changed" in text


def test_each_plan_is_summarised_as_terraform_sees_it_folded_in_its_stack(repo, run_cli, tmp_path):
    repo.overlay("shop.yaml", {"table": {"stream": "new_and_old_images"}})
    repo.overlay("shop.yaml", {"alarms": {"latency": {"enabled": True, "operations": {"GetItem": 25}}}})
    before = synthesis(BASE, None, tmp_path / "before")
    after = synthesis(repo.root / "blueprints" / "shop.yaml", None, tmp_path / "after")
    plan = write_plan(plan_between(before, after), tmp_path / "shop.plan.json")
    code, out, err = run_cli("review", *repo.blueprints, "--changed-since", "main", "--plan", f"shop={plan}")
    assert code == 0, err
    summary = summarize_plan("shop", json.loads(plan.read_text()))
    added = summary.count("add")
    assert added >= 1 and summary.count("change") >= 1 and summary.count("destroy") == 0
    [row] = [row for row in rendered(out).tables[0].rows if row[0] == "`shop`"]
    assert row[-1] == f"+{added} ~{summary.count('change')} -0"
    headline = f"Terraform plan of shop: Plan: {added} to add, {summary.count('change')} to change, 0 to destroy."
    assert headline in rendered(out).summaries
    tokens = MarkdownIt("commonmark", {"html": True}).parse(out)
    [fence] = [token for token in tokens if token.type == "fence" and token.info == "diff"]
    assert fence.info == "diff"
    lines = fence.content.splitlines()
    assert "~ update aws_dynamodb_table.shop" in lines
    assert any(re.fullmatch(r"\+ create aws_cloudwatch_metric_alarm\.shop_\w*latency\w*", line) for line in lines)
    depth = 0  # the plan sits inside the stack's folded section
    for token in tokens:
        if token.type == "html_block":
            depth += token.content.count("<details>") - token.content.count("</details>")
        if token is fence:
            assert depth == 2


def test_a_directory_of_plans_names_each_by_its_stack(repo, run_cli, tmp_path):
    repo.overlay("shop.yaml", {"table": {"stream": "new_and_old_images"}})
    after = synthesis(repo.root / "blueprints" / "shop.yaml", None, tmp_path / "after")
    plans = tmp_path / "plans"
    plans.mkdir()
    write_plan(plan_between(synthesis(BASE, None, tmp_path / "before"), after), plans / "shop.json")
    (plans / "shop.gate.json").write_text("{}")  # not <stack>.json: left alone
    code, out, err = run_cli("review", *repo.blueprints, "--changed-since", "main", "--plan-dir", plans)
    assert code == 0, err
    assert "Terraform plan of shop: Plan: 0 to add, 1 to change, 0 to destroy." in rendered(out).summaries
    code, _, err = run_cli("review", *repo.blueprints, "--changed-since", "main", "--plan-dir", plans,
                           "--plan", f"shop={plans / 'shop.json'}")
    assert code == EXIT_BAD_INPUT and "two plans for stack `shop`" in err


def test_terraform_symbols_and_counts():
    entries = [(["create"], "a.new"), (["update"], "a.changed"), (["delete"], "a.gone"),
               (["delete", "create"], "a.replaced"), (["create", "delete"], "a.swapped"), (["no-op"], "a.same"),
               (["read"], "a.read"), (["forget"], "a.forgotten"), (["frobnicate"], "a.odd")]
    plan = {"resource_changes": [{"address": address, "mode": "managed", "change": {"actions": actions}}
                                 for actions, address in entries]
            + [{"address": "data.x.y", "mode": "data", "change": {"actions": ["read"]}}]}
    summary = summarize_plan("s", plan)
    assert [(c.symbol, c.action, c.address) for c in summary.changes] == [
        ("~", "update", "a.changed"), (".", "forget", "a.forgotten"), ("-", "destroy", "a.gone"),
        ("+", "create", "a.new"), ("?", "frobnicate", "a.odd"), ("-/+", "replace", "a.replaced"),
        ("+/-", "replace", "a.swapped")]
    assert summary.headline == "Plan: 3 to add, 1 to change, 3 to destroy."
    assert PlanSummary("s", ()).headline == "No changes."


def test_a_hostile_plan_cannot_break_out_of_its_block(repo, run_cli, tmp_path):
    """Plans are untrusted: an address with line breaks, backticks and HTML stays inside the code block."""
    repo.overlay("shop.yaml", {"table": {"stream": "new_and_old_images"}})
    plan = plan_between(None, synthesis(BASE, None, tmp_path / "s"))
    evil = 'aws_x.y["\n</details>\n```\n<img src=x onerror=alert(1)>\n![i](http://example.com/p.png)"]'
    plan["resource_changes"][0]["address"] = evil
    path = write_plan(plan, tmp_path / "plan.json")
    code, out, err = run_cli("review", *repo.blueprints, "--changed-since", "main", "--plan", f"shop={path}")
    assert code == 0, err
    assert all(depth >= 0 for depth in html_depth(out)) and html_depth(out)[-1] == 0
    tokens = MarkdownIt("commonmark", {"html": True}).parse(out)
    [fence] = [token for token in tokens if token.type == "fence" and token.info == "diff"]
    assert "</details>" in fence.content and "<img" not in out.replace(fence.content, "")
    assert not any(token.type == "html_inline" and "img" in token.content for token in tokens)


def test_a_comment_too_large_for_github_names_what_it_leaves_out(repo):
    from tablewright.review.pull import build_pull_review

    three_kinds_of_change(repo)
    pull = build_pull_review("main", [Path(p) for p in repo.blueprints])
    full = render_comment(pull)
    assert len(full) < 60_000 and "not detailed here" not in full
    short = render_comment(pull, limit=len(full) // 3)
    assert "not detailed here" in short and len(short) < len(full)
    left = re.search(r"\*\*(\d) stack\(s\) not detailed here\*\*.*: (.*)\. `review", short)
    assert left is not None
    named = re.findall(r"`([a-z-]+)`", left.group(2))
    assert len(named) == int(left.group(1)) >= 1
    counts = rendered(short).tables[0]
    assert len(counts.rows) == 5  # the table of counts always has every stack
    assert short.startswith(MARKER) and html_depth(short)[-1] == 0


def test_nothing_changed_is_a_short_comment(repo, run_cli):
    code, out, _ = run_cli("review", *repo.blueprints, "--changed-since", "main")
    assert code == 0 and out.startswith(MARKER + "\n## Tablewright review\n")
    assert "No blueprint changed since `main`" in out and "(3 unchanged): nothing to review." in out


@pytest.mark.parametrize(("arguments", "problem", "error_code"), [
    (["--base", "blueprints/shop.yaml"], "--base and --head together are both needed", "E600"),
    (["blueprints/shop.yaml", "--base", "a.yaml", "--head", "b.yaml"], "BLUEPRINT arguments go with --changed-since",
     "E600"),
    (["--changed-since", "main", "--base", "blueprints/shop.yaml"], "does not take --base or --head", "E600"),
    (["--base", "a.yaml", "--head", "b.yaml", "--plan", "shop=p.json"], "--plan and --plan-dir go with", "E600"),
    (["--base", "a.yaml", "--head", "b.yaml", "--plan-dir", "plans"], "--plan and --plan-dir go with", "E600"),
    (["--changed-since", "main", "--plan-dir", "nowhere"], "--plan-dir nowhere: not a directory", "E604"),
    (["--changed-since", "main", "--plan", "shop"], "--plan 'shop' is not STACK=PLAN.json", "E609"),
    (["--changed-since", "main", "--plan", "nowhere=plan.json"], "plan.json: no such file", "E604"),
])
def test_review_refuses_mixed_up_arguments(repo, run_cli, arguments, problem, error_code):
    code, out, err = run_cli("review", *arguments)
    assert code == EXIT_BAD_INPUT and out == "" and problem in err and f"[{error_code}]" in err


def test_a_plan_for_a_stack_the_review_does_not_have_is_refused(repo, run_cli, tmp_path):
    repo.overlay("shop.yaml", {"table": {"stream": "new_and_old_images"}})
    path = write_plan(plan_between(None, synthesis(BASE, None, tmp_path / "s")), tmp_path / "plan.json")
    code, out, err = run_cli("review", *repo.blueprints, "--changed-since", "main", "--plan", f"crm-prod={path}")
    assert code == EXIT_BAD_INPUT and out == ""
    assert "no stack `crm-prod` in this review" in err and "(shop)" in err


@pytest.mark.parametrize(("change", "expected"), [
    ({"table": {"name": "shop_orders"}}, EXIT_FAILED),  # blocked
    ({"table": {"stream": "new_and_old_images"}}, EXIT_WINDOW),
    ({"tags": {"team": "checkout"}}, EXIT_OK),
])
def test_review_detailed_exit_codes(repo, run_cli, change, expected):
    repo.overlay("shop.yaml", change)
    assert run_cli("review", *repo.blueprints, "--changed-since", "main")[0] == EXIT_OK  # the default
    assert run_cli("review", *repo.blueprints, "--changed-since", "main", "--detailed-exitcode")[0] == expected
    old = repo.root / "old.yaml"
    shutil.copy(BASE, old)
    code, _, _ = run_cli("review", "--base", old, "--head", "blueprints/shop.yaml", "--detailed-exitcode")
    assert code == expected
