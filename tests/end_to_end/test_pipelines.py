"""Fitting the pipelines teams run: `--changed-since` (synthesize and review only what a change affects),
one sticky review comment for every blueprint of a pull request, the gate's versioned JSON and the Rego
policy that reads it, and exit codes. The CI workflows `init` writes: tests/test_ci_workflows.py."""

from __future__ import annotations

import copy
import json
import re
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator, FormatChecker
from markdown_it import MarkdownIt

from tablewright.blueprint.changed import reasons_for
from tablewright.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, EXIT_WINDOW
from tablewright.report.comment import MARKER, render_comment
from tablewright.review.pull import PlanSummary, summarize_plan
from tests.conftest import ROOT
from tests.review.test_review_markdown import rendered
from tests.support.plan_fixtures import plan_between, synthesis, write_plan
from tests.support.repository import Repository
from tests.support.review_corpus import BASE, CASES, Case, write_case
from tests.support.terraform_support import missing_tool

GATE_SCHEMA = json.loads((ROOT / "schema" / "gate.schema.json").read_text())
POLICY = ROOT / "examples" / "policy" / "tablewright.rego"


def case_named(name: str) -> Case:
    return next(case for case in CASES if case.name == name)


def stacks_in(out: Path) -> list[str]:
    return sorted(path.name for path in (out / "stacks").iterdir())


# synth --changed-since ---------------------------------------------------------------------------------------


def test_synth_changed_since_synthesizes_exactly_the_changed_blueprint(repo, run_cli):
    repo.edit("shop.yaml", "tags: {service: shop}", "tags: {service: shop, team: checkout}")
    code, out, err = run_cli("synth", *repo.blueprints, "--changed-since", "main", "--out", "cdktf.out")
    assert code == 0, err
    assert stacks_in(repo.root / "cdktf.out") == ["shop"]
    assert "1 of 3 blueprint(s)" in out and "blueprints/shop.yaml: changed" in out
    assert "wrote cdktf.out/stacks/shop/cdk.tf.json" in out


def test_a_changed_shared_base_affects_every_blueprint_that_extends_it(repo, run_cli):
    repo.edit("shared/platform-base.yaml", "hot_key_warning: 0.5", "hot_key_warning: 0.6")
    code, out, err = run_cli("synth", *repo.blueprints, "--changed-since", "main", "--out", "cdktf.out")
    assert code == 0, err
    assert stacks_in(repo.root / "cdktf.out") == ["crm-dev", "crm-prod", "orders-dev", "orders-prod"]
    assert "blueprints/crm.yaml: extends blueprints/shared/platform-base.yaml, which changed" in out
    assert "blueprints/shop.yaml" not in out


def test_a_changed_design_lock_affects_its_blueprint(repo, run_cli):
    lock = repo.root / "blueprints" / "orders.lock.json"
    lock.write_text(lock.read_text() + "\n")
    code, out, _ = run_cli("synth", *repo.blueprints, "--changed-since", "main", "--out", "cdktf.out")
    assert code == 0 and stacks_in(repo.root / "cdktf.out") == ["orders-dev", "orders-prod"]
    assert "blueprints/orders.yaml: its design lock orders.lock.json changed" in out


def test_committed_staged_and_untracked_changes_all_count(repo, run_cli):
    repo.git("checkout", "-q", "-b", "feature")
    repo.edit("crm.yaml", "version: 1.0.0", "version: 1.0.1")
    repo.commit("crm: a new version")  # committed on the branch
    repo.edit("orders.yaml", "version: 1.0.0", "version: 1.0.1")
    repo.git("add", "blueprints/orders.yaml")  # staged only
    new = repo.root / "blueprints" / "new.yaml"
    new.write_text(BASE.read_text().replace("blueprint: shop", "blueprint: newshop")
                   .replace("name: shop_main", "name: newshop_main"))  # untracked
    code, out, err = run_cli("synth", *repo.blueprints, "blueprints/new.yaml", "--changed-since", "main",
                             "--out", "cdktf.out")
    assert code == 0, err
    assert stacks_in(repo.root / "cdktf.out") == ["crm-dev", "crm-prod", "newshop", "orders-dev", "orders-prod"]
    assert "3 of 4 blueprint(s)" in out


def test_changes_are_counted_from_where_the_branch_began(repo, run_cli):
    """Like a pull request's diff: a change made on main after the branch began is not the branch's."""
    repo.git("checkout", "-q", "-b", "feature")
    repo.edit("shop.yaml", "version: 1.0.0", "version: 1.0.1")
    repo.commit("shop on the branch")
    repo.git("checkout", "-q", "main")
    repo.edit("crm.yaml", "version: 1.0.0", "version: 1.0.1")
    repo.commit("crm on main")
    repo.git("checkout", "-q", "feature")
    code, out, _ = run_cli("synth", *repo.blueprints, "--changed-since", "main", "--out", "cdktf.out")
    assert code == 0 and stacks_in(repo.root / "cdktf.out") == ["shop"]
    merge_base = repo.git("merge-base", "main", "feature").strip()
    assert f"(merge base {merge_base[:12]})" in out


def test_nothing_changed_leaves_an_empty_output_so_no_stale_stack_is_planned(repo, run_cli):
    assert run_cli("synth", *repo.blueprints, "--out", "cdktf.out")[0] == 0
    assert len(stacks_in(repo.root / "cdktf.out")) == 5
    repo.commit("shop's design lock")
    code, out, _ = run_cli("synth", *repo.blueprints, "--changed-since", "HEAD", "--out", "cdktf.out")
    assert code == 0 and "0 of 3 blueprint(s)" in out
    assert stacks_in(repo.root / "cdktf.out") == []


@pytest.mark.parametrize(("revision", "problem"), [
    ("nope", "`nope` is not a commit in this repository"),
    ("--output=/tmp/x", "is not a git revision"),
    ("main..HEAD", "is not a git revision"),
    ("main HEAD", "is not a git revision"),
])
def test_a_bad_revision_is_one_located_error(repo, run_cli, revision, problem):
    code, out, err = run_cli("synth", *repo.blueprints, f"--changed-since={revision}", "--out", "cdktf.out")
    assert code == EXIT_BAD_INPUT and out == "" and not (repo.root / "cdktf.out").exists()
    [error, fix, docs] = err.strip().splitlines()
    assert docs == "  docs: docs/reference/errors.md#e601"
    assert problem in error and error.endswith("[E601]") and fix.strip().startswith("fix: ")


def test_a_change_to_tablewright_itself_affects_every_blueprint(tmp_path):
    blueprint = tmp_path / "shop.yaml"
    shutil.copy(BASE, blueprint)
    tool = tmp_path / "tool"
    changed = frozenset({tmp_path / "tool" / "modules" / "synth" / "synth.py"})
    assert reasons_for(blueprint, changed) == ()
    [reason] = reasons_for(blueprint, changed, [tool])
    assert reason.startswith("Tablewright itself changed (") and "synth.py" in reason


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


# The gate's JSON, its schema and the Rego policy ---------------------------------------------------------------


MIGRATION = {"migrations": [  # the table's sort key, and GSI1's, which follows it
    {"entity": "Order", "index": "table", "from": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{orderId}"},
     "to": {"pk": "CUSTOMER#{customerId}", "sk": "ORDER#{placedAt}#{orderId}"},
     "reason": "orders list by time; the orders team runs the backfill"},
    {"entity": "Order", "index": "GSI1", "from": {"pk": "ORDER#{orderId}", "sk": "{customerId}"},
     "to": {"pk": "ORDER#{orderId}", "sk": "{customerId}#{placedAt}"}, "reason": "follows the table's key"}]}
GATE_CASES = {  # name: (corpus change, extra overlay, --now, decision)
    "window-closed": ("stream_on", {}, "2026-12-01T12:00:00Z", "wait"),
    "window-open": ("stream_on", {}, "2026-12-01T02:30:00Z", "apply"),
    "no-window": ("stream_on", {"maintenance_window": None}, "2026-12-01T02:30:00Z", "hold"),  # nor had the base
    "window-removed": ("stream_on", {"maintenance_window": None}, "2026-12-01T12:00:00Z", "wait"),  # the old one
    "blocked": ("rename_table", {}, "2026-12-01T02:30:00Z", "hold"),
    "safe": ("retag", {}, "2026-12-01T12:00:00Z", "apply"),
    "undeclared-migration": ("change_key_template", {}, "2026-12-01T02:30:00Z", "hold"),
    "declared-migration": ("change_key_template", MIGRATION, "2026-12-01T12:00:00Z", "wait"),
}


@pytest.fixture(scope="module")
def base_synthesis(tmp_path_factory) -> dict:
    return synthesis(BASE, None, tmp_path_factory.mktemp("base") / "out")


def gate_json(name: str, base: dict, tmp_path: Path, run_cli, *extra: str) -> tuple[int, dict]:
    """The gate's JSON on the plan from the base to the case. The window in force is the one the base's state
    records: for `no-window` the base has none either."""
    corpus, overlay, now, _ = GATE_CASES[name]
    case = case_named(corpus)
    if name == "no-window":
        base = synthesis(write_case(Case("base-no-window", overlay, "safe"), tmp_path), None, tmp_path / "base.out")
    head = write_case(Case(name, {**case.overlay, **overlay}, case.verdict), tmp_path)
    plan = write_plan(plan_between(base, synthesis(head, None, tmp_path / f"{name}.out")), tmp_path / f"{name}.json")
    code, out, err = run_cli("gate", "--plan", plan, head, "--now", now, "--format", "json", *extra)
    assert code != EXIT_BAD_INPUT, err
    return code, json.loads(out)


def strict(schema: dict) -> dict:
    """The schema with no room for undocumented fields: every object lists all of its properties."""
    result = copy.deepcopy(schema)

    def close(node):
        if isinstance(node, dict):
            if "properties" in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    close(result)
    return result


def test_the_gate_schema_is_a_valid_schema():
    Draft202012Validator.check_schema(GATE_SCHEMA)
    assert GATE_SCHEMA["properties"]["schema_version"] == {"const": 1, "description": GATE_SCHEMA["properties"][
        "schema_version"]["description"]}


@pytest.mark.parametrize("name", GATE_CASES)
def test_the_gate_json_validates_against_its_published_schema(name, base_synthesis, tmp_path, run_cli):
    code, document = gate_json(name, base_synthesis, tmp_path, run_cli)
    Draft202012Validator(GATE_SCHEMA, format_checker=FormatChecker()).validate(document)
    Draft202012Validator(strict(GATE_SCHEMA)).validate(document)  # and every field it writes is documented
    expected = GATE_CASES[name][3]
    assert document["decision"] == expected and document["passed"] is (expected == "apply")
    assert code == (EXIT_OK if expected == "apply" else EXIT_FAILED)
    assert datetime.fromisoformat(document["decided_at"]) == datetime.fromisoformat(GATE_CASES[name][2])
    if expected == "wait":
        assert document["window_open"] is False and datetime.fromisoformat(document["window_opens"]) > \
            datetime.fromisoformat(document["decided_at"])
    if name == "no-window":
        assert document["window_open"] is None and document["window_opens"] is None
    if name == "declared-migration":
        [data] = [d for d in document["data_changes"] if d["index"] == "table"]
        assert data["declared"]["strategy"] == "dual_write_backfill" and data["breaking"] is True


def test_the_strict_schema_catches_an_undocumented_field(base_synthesis, tmp_path, run_cli):
    _, document = gate_json("safe", base_synthesis, tmp_path, run_cli)
    document["changes"][0]["surprise"] = True
    Draft202012Validator(GATE_SCHEMA).validate(document)  # consumers: unknown fields are allowed
    with pytest.raises(Exception, match="surprise"):
        Draft202012Validator(strict(GATE_SCHEMA)).validate(document)


@pytest.mark.parametrize(("name", "detailed"), [("window-closed", EXIT_WINDOW), ("window-open", EXIT_OK),
                                                ("no-window", EXIT_FAILED), ("blocked", EXIT_FAILED),
                                                ("safe", EXIT_OK)])
def test_gate_detailed_exit_codes(name, detailed, base_synthesis, tmp_path, run_cli):
    assert gate_json(name, base_synthesis, tmp_path, run_cli, "--detailed-exitcode")[0] == detailed


def test_the_gate_picks_the_blueprint_whose_table_the_plan_manages(base_synthesis, tmp_path, run_cli):
    head = write_case(case_named("retag"), tmp_path)
    plan = write_plan(plan_between(base_synthesis, synthesis(head, None, tmp_path / "o")), tmp_path / "p.json")
    crm = ROOT / "blueprints" / "crm.yaml"
    code, out, _ = run_cli("gate", "--plan", plan, crm, "--blueprint", head, "--format", "json")
    assert code == 0 and json.loads(out)["stack"] == "shop"


def rego():
    try:
        import regopy
    except ImportError:
        missing_tool("regopy (a Rego interpreter, the `test` extra) is not installed")
    return regopy


def evaluate(policy: Path, document: dict) -> dict[str, list[str]]:
    """The policy's `deny` and `warn` on a gate document, by a Rego interpreter (rego-cpp, via regopy)."""
    interpreter = rego().Interpreter()
    interpreter.add_module("tablewright", policy.read_text())
    interpreter.set_input(document)
    found = {}
    for rule in ("deny", "warn"):
        [result] = interpreter.query(f"data.tablewright.{rule}").results
        [[messages]] = [result.expressions]
        found[rule] = sorted(messages)
    return found


@pytest.mark.parametrize("name", GATE_CASES)
def test_the_rego_policy_denies_what_the_gate_holds_back(name, base_synthesis, tmp_path, run_cli):
    _, document = gate_json(name, base_synthesis, tmp_path, run_cli)
    found = evaluate(POLICY, document)
    assert (found["deny"] == []) is document["passed"], found
    blocked = [c for c in document["changes"] if c["cls"] == "blocked"]
    assert len([m for m in found["deny"] if ": blocked: " in m]) == len(blocked)
    if name == "blocked":
        assert any("replace table shop_main" in m and "--allow-destroy lifts it" in m for m in found["deny"])
    if name == "window-closed":
        assert found["deny"] == [f"shop: 1 window change(s) and the maintenance window is closed: it opens "
                                 f"{document['window_opens']}"]
    if name == "no-window":
        assert found["deny"] == ["shop: 1 window change(s) and the maintenance window is not declared (add "
                                 "maintenance_window to the blueprint)"]
    assert len(found["warn"]) == document["counts"]["window"]


def test_the_rego_policy_refuses_a_schema_version_it_does_not_read(base_synthesis, tmp_path, run_cli):
    _, document = gate_json("safe", base_synthesis, tmp_path, run_cli)
    assert evaluate(POLICY, document)["deny"] == []
    document["schema_version"] = 2
    assert evaluate(POLICY, document)["deny"] == ["the gate's JSON has schema_version 2; this policy reads version 1"]


# Exit codes ------------------------------------------------------------------------------------------------


def test_the_docs_document_every_exit_code():
    page = (ROOT / "docs" / "reference" / "exit-codes.md").read_text()
    documented = {int(code) for code in re.findall(r"^\| `?(\d+)`? \|", page, re.MULTILINE)}
    assert documented == {EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_WINDOW, 130, 141}
    assert "--detailed-exitcode" in page
