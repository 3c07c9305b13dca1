"""The review Markdown as a reviewer sees it: rendered the way GitHub renders a PR comment (CommonMark,
tables, raw <details>), then read back as headings, tables, lists and collapsed sections."""

from __future__ import annotations

import html
import shutil
from dataclasses import dataclass, field

import pytest
import yaml
from markdown_it import MarkdownIt

from tablewright.report.review import render_markdown
from tablewright.review.environments import change_differences
from tablewright.review.review import build_review
from tests.conftest import ROOT
from tests.support.review_corpus import BASE, CASES, Case, merged, write_case


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    collapsed: bool


@dataclass
class Page:
    headings: list[str] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    ordered_lists: list[list[str]] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)
    visible_lines: int = 0


def rendered(markdown: str) -> Page:
    """Walk markdown-it's tokens: what is inside <details> is collapsed until the reviewer opens it."""
    page, depth = Page(), 0
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(markdown)
    table: Table | None = None
    row: list[str] = []
    lists: list[list[str]] = []
    for index, token in enumerate(tokens):
        inline = tokens[index + 1].content if index + 1 < len(tokens) and tokens[index + 1].type == "inline" else ""
        inline = html.unescape(inline)  # as the reviewer reads it: `-&gt;` shows as `->`
        if token.type == "html_block":
            depth += token.content.count("<details>") - token.content.count("</details>")
            page.summaries += [line.split("<summary>")[1].split("</summary>")[0]
                               for line in token.content.splitlines() if "<summary>" in line]
        elif token.type == "heading_open":
            page.headings.append(inline)
        elif token.type == "paragraph_open" and not lists:
            page.paragraphs.append(inline)
        elif token.type == "table_open":
            table = Table([], [], depth > 0)
        elif token.type == "tr_open":
            row = []
        elif token.type in ("th_open", "td_open"):
            row.append(inline)
        elif token.type == "tr_close" and table is not None:
            (table.rows if table.header else table.header).extend([row] if table.header else row)
        elif token.type == "table_close" and table is not None:
            page.tables.append(table)
        elif token.type == "ordered_list_open":
            lists.append([])
        elif token.type == "ordered_list_close":
            page.ordered_lists.append(lists.pop())
        elif token.type == "paragraph_open" and lists:
            lists[-1].append(inline)
        if depth == 0 and token.map and token.level == 0:
            page.visible_lines += token.map[1] - token.map[0]
    return page


def review_page(case: Case, tmp_path) -> tuple[Page, object]:
    review = build_review(str(BASE), str(write_case(case, tmp_path)))
    return rendered(render_markdown(review)), review


def case_named(name: str) -> Case:
    return next(case for case in CASES if case.name == name)


def change_table(page: Page) -> Table:
    return next(t for t in page.tables if t.header[:3] == ["Class", "Action", "Change"])


def test_every_table_renders_with_whole_rows(tmp_path):
    for case in CASES:
        page, _ = review_page(case, tmp_path)
        for table in page.tables:
            assert table.header and all(len(row) == len(table.header) for row in table.rows), (case.name, table)


def test_a_new_gsi_reads_as_one_window_change_with_the_backfill_it_needs(tmp_path):
    page, review = review_page(case_named("add_gsi"), tmp_path)
    assert page.headings[0] == "Tablewright review"
    assert page.paragraphs[0].startswith("**WINDOW: apply only inside the maintenance window** (0 blocked, 1 window")
    # The month's cost before and after, then a new pattern: a new request the application sends.
    [stack] = review.stacks
    assert stack.cost_before is not None and stack.cost_after is not None
    assert page.paragraphs[1] == (f"**Monthly cost: ${stack.cost_before.total:,.2f} -> ${stack.cost_after.total:,.2f} "
                                  f"(+${stack.cost_after.total - stack.cost_before.total:,.2f})** over 1 stack(s) "
                                  "(priced lines)")
    assert page.paragraphs[2:4] == ["**Application:** requests the application sends change:",
                                    "`shop`: `orders_by_status` added: Query on GSI2 (GSI2PK = ORDER#{status})"]
    assert "daily from 02:00 for 2h (UTC)" in page.paragraphs[4]
    [row] = change_table(page).rows
    assert row[:3] == ["**window**", "create", "GSI GSI2"] and "backfilling every item" in row[4]
    # The safe changes are there, but collapsed, with their count and categories in the summary.
    safe = [c for c in review.changes if c.cls == "safe"]
    summary = next(s for s in page.summaries if "safe change" in s)
    assert summary.startswith(f"{len(safe)} safe change(s): ") and "alarms" in summary and "autoscaling" in summary
    collapsed = next(t for t in page.tables if t.header[:2] == ["Action", "Change"])
    assert collapsed.collapsed and len(collapsed.rows) == len(safe)
    # Items written before the index have no GSI2 keys: the review says how to backfill them.
    [steps] = page.ordered_lists
    assert len(steps) == 5 and "GSI2 key attributes" in steps[1] and steps[2].startswith("Backfill")
    # The design chart shows the new pattern on the new index, collapsed.
    patterns = next(t for t in page.tables if t.header[:2] == ["Pattern", "Index"])
    assert patterns.collapsed and ["orders_by_status", "GSI2"] in [r[:2] for r in patterns.rows]
    assert "Capacity and cost" in page.headings
    # The shop declares no item_count: the cost says its storage is not counted rather than showing $0 silently.
    assert any(p.startswith("storage and point-in-time recovery: Customer, Order declare no item_count (not "
                            "counted, not priced)") for p in page.paragraphs)


def test_a_renamed_table_reads_as_blocked_with_the_data_loss_first(tmp_path):
    page, _review = review_page(case_named("rename_table"), tmp_path)
    assert page.paragraphs[0].startswith("**BLOCKED: a change would lose data or protection**")
    first = change_table(page).rows[0]
    assert first[:3] == ["**blocked**", "replace", "table shop_main"]
    assert "deletes every item" in first[4] and "name shop_main -> shop_orders" in first[4]
    assert not change_table(page).collapsed


def test_a_key_template_change_reads_as_a_data_migration(tmp_path):
    page, _review = review_page(case_named("change_key_template"), tmp_path)
    # Terraform sees nothing, but items already written keep their old keys: blocked, and said at the top.
    assert page.paragraphs[0].startswith("**BLOCKED: a change would lose data or protection** (2 blocked, 0 window")
    assert page.paragraphs[2].startswith("**Data migration:** `shop`: Order keys on the table change (NOT declared")
    attention = next(t for t in page.tables if t.header[:3] == ["Class", "Action", "Change"])
    assert [row[0] for row in attention.rows] == ["**blocked**", "**blocked**"]
    breaking = [p for p in page.paragraphs if "Breaking for items already written" in p]
    assert len(breaking) == 2 and "CUSTOMER#{customerId} / ORDER#{placedAt}#{orderId}" in breaking[0]
    assert "Not declared under `migrations:`, so it is blocked" in breaking[0]
    table_steps = page.ordered_lists[0]
    assert [step.split(":")[0] for step in table_steps] == ["Dual write", "Backfill", "Verify", "Cut over", "Contract"]
    lint = next(t for t in page.tables if t.header[:2] == ["Code", "Severity"])
    assert "TW401" in [row[0] for row in lint.rows]


def test_fifty_changes_stay_readable(tmp_path):
    # The bundled CRM blueprint, both environments, with its table renamed: every alarm and autoscaling
    # target and policy names the table, so all of them change.
    shutil.copytree(ROOT / "blueprints" / "shared", tmp_path / "shared")
    base = tmp_path / "crm.yaml"
    shutil.copy(ROOT / "blueprints" / "crm.yaml", base)
    head = tmp_path / "crm-renamed.yaml"
    overlay = {"table": {"name": "crm_core", "stream": "new_image"}, "tags": {"team": "sales"}}
    head.write_text(yaml.safe_dump(merged(yaml.safe_load(base.read_text()), overlay), sort_keys=False))
    review = build_review(str(base), str(head))
    page = rendered(render_markdown(review))
    assert len(review.changes) >= 50
    dev, prod = review.stacks
    assert prod.production and not dev.production
    attention = [c for c in prod.changes if c.cls != "safe"]
    [change_table] = [t for t in page.tables if t.header[:3] == ["Class", "Action", "Change"]]
    assert len(change_table.rows) == len(attention) < 5
    # crm-dev's blocked and window changes are production's but for the table's name: said once, in production's
    # table; what differs (other alarms, no autoscaling) folds away with its count in the summary.
    assert sorted((c.cls, c.action, c.subject.replace("dev-", "prod-")) for c in dev.changes if c.cls != "safe") \
        == sorted((c.cls, c.action, c.subject) for c in attention)
    [differing] = [t for t in page.tables if t.header[0] == "Difference"]
    assert differing.collapsed and len(differing.rows) == len(change_differences(dev, prod)) > 0
    assert any(s.startswith(f"{len(differing.rows)} safe change(s) differ: alarms") for s in page.summaries)
    # What a reviewer must read is visible; the rest folds away behind one summary line per section.
    assert page.visible_lines <= 20 * len(review.stacks) + len(attention), page.visible_lines
    visible = [t.header[1] for t in page.tables if not t.collapsed and t is not change_table]
    assert visible == ["Before"]  # production's cost before and after stays in view; crm-dev's is one line
    assert any(p.startswith("Monthly cost: $") and "(`crm-prod`: $" in p for p in page.paragraphs)


@pytest.mark.parametrize("name", ["add_gsi", "rename_table", "change_key_template"])
def test_markdown_is_identical_across_runs(name, tmp_path):
    first = render_markdown(build_review(str(BASE), str(write_case(case_named(name), tmp_path))))
    second = render_markdown(build_review(str(BASE), str(write_case(case_named(name), tmp_path))))
    assert first == second


def test_what_the_application_sees_is_visible_at_the_top_and_in_its_section(tmp_path):
    """A point lookup moved from the table to a Query on a new index, a pattern removed and one added: each
    with the request before and after and what the application must do, outside every folded section."""
    head = yaml.safe_load(BASE.read_text())
    head["access_patterns"]["customer"] = {"entity": "Customer", "where": {"email": "="}, "rps": 20}
    del head["access_patterns"]["order_by_id"]
    head["access_patterns"]["orders_by_status"] = {"entity": "Order", "where": {"customerId": "=", "status": "="},
                                                   "rps": 5}
    path = tmp_path / "head.yaml"
    path.write_text(yaml.safe_dump(head, sort_keys=False))
    review = build_review(str(BASE), str(path))
    markdown = render_markdown(review)
    top = markdown.split("<details>")[0]  # what a reviewer sees before opening anything
    assert ("> - `shop`: `customer`: GetItem on the table (PK = CUSTOMER#{customerId} AND SK = PROFILE) -&gt; Query "
            "on GSI1 (GSI1PK = CUSTOMER#{email})") in top
    assert "> - `shop`: `order_by_id` removed (was Query on GSI1 (GSI1PK = ORDER#{orderId}))" in top
    assert "#### What the application sees" in markdown
    section = markdown.split("#### What the application sees")[1].split("####")[0]
    assert "<details>" not in section  # never folded
    [stack] = review.stacks
    kinds = {change.pattern: change.kind for change in stack.application}
    assert kinds == {"customer": "changed", "order_by_id": "removed", "orders_by_status": "added"}
    [customer] = [change for change in stack.application if change.pattern == "customer"]
    assert customer.before == "GetItem on the table (PK = CUSTOMER#{customerId} AND SK = PROFILE)"
    assert "is ACTIVE (DynamoDB builds it after the apply); the old request keeps working until then." in \
        customer.action
    unchanged = build_review(str(BASE), str(BASE))
    assert unchanged.stacks[0].application == [] and "What the application sees" not in render_markdown(unchanged)
