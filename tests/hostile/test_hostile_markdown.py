"""Hostile text in the review and gate Markdown (the pull request comment): blueprint and plan values never become raw
HTML, images, links, mentions or issue references, whatever their backticks, escapes or character references, as a
CommonMark renderer with raw HTML on (GitHub's) reads the comment. The contract: tests/support/hostile_support.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.gate_support import TABLE, entry, plan
from tests.support.hostile_support import (
    MARK,
    SHOP,
    SHOP_TEXT,
    assert_refused,
    ids,
    lay_out,
    marked_lines,
    replace,
)

# HTML in the review Markdown ---------------------------------------------------------------------

HTML_TAGS = [
    ("tag-value-img", f"tags: {{service: '<img src=https://x>'}}  {MARK}"),
    ("tag-key-closes-details", f"tags: {{service: shop, '</details>': x}}  {MARK}"),
    ("tag-value-script", f"tags: {{service: shop, note: '<script>alert(1)</script>'}}  {MARK}"),
]


@pytest.mark.parametrize("name, tags", HTML_TAGS, ids=ids(HTML_TAGS))
def test_review_markdown_never_carries_raw_html_from_a_blueprint(name, tags, tmp_path, run_cli):
    from markdown_it import MarkdownIt

    head = replace("tags: {service: shop}", tags, SHOP_TEXT)
    lay_out(tmp_path, {"head.yaml": head})
    result = run_cli("review", "--base", SHOP, "--head", tmp_path / "head.yaml", "--format", "markdown")
    if result[0] != 0:
        assert_refused(result, where={"head.yaml": marked_lines(head)})
        return
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(result[1])
    for element in ("<img", "<script"):
        assert element not in html, f"raw {element} from the blueprint in the review"
    assert html.count("<details") == html.count("</details>"), "a </details> from the blueprint closes a section"


OWN_TAGS = {"<details>", "</details>", "<summary>", "</summary>"}


def raw_html(markdown: str) -> list[str]:
    """What a GitHub-like renderer (CommonMark with tables, raw HTML on) would pass through as HTML or load
    as an image, besides the review's own <details> and <summary>."""
    from markdown_it import MarkdownIt

    found = []
    for token in MarkdownIt("commonmark", {"html": True}).enable("table").parse(markdown):
        for child in [token, *(token.children or [])]:
            if child.type == "image":
                found.append(f"image {child.attrs.get('src')}")
            elif child.type in ("html_inline", "html_block"):
                found += [tag for tag in re.findall(r"</?[A-Za-z][^>]*>", child.content) if tag not in OWN_TAGS
                          and not tag.startswith("<summary>")]
    return found


def review_with_scan_reason(reason: str, tmp_path: Path, run_cli) -> tuple[int, str, str]:
    """`review` of the shop with a scan pattern added whose `reason` is the given text."""
    head = SHOP_TEXT.replace("access_patterns:\n", "access_patterns:\n  export_all:\n    entity: Order\n"
                             "    filter: {total: \"=\"}\n    scan: allowed\n    rps: 0.01\n"
                             f"    reason: {json.dumps(reason)}\n")
    lay_out(tmp_path, {"head.yaml": head})
    return run_cli("review", "--base", SHOP, "--head", tmp_path / "head.yaml")


def gate_markdown(the_plan: dict[str, Any], tmp_path: Path, run_cli) -> tuple[int, str, str]:
    """The gate's Markdown verdict on `the_plan` for the shop, inside its window."""
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(the_plan))
    return run_cli("gate", "--plan", plan_file, "--blueprint", SHOP, "--now", "2026-12-01T02:30:00Z",
                   "--format", "markdown")


# The security review's payloads: a code span the sanitizer paired differently from the renderer.
SCAN_REASONS = [
    ("backslash-escaped-backticks", '\\`<img src="https://attacker.example/pixel.png?a=1" width=600>\\` and '
                                    '\\`<a href="https://attacker.example">approve</a>\\`'),
    ("one-backtick-paired-across-cells", 'nightly ` <img src="https://attacker.example/cell.png">'),
    ("image-in-a-code-span", "`![x](https://attacker.example/i.png)` ![y](https://attacker.example/j.png)"),
]


@pytest.mark.parametrize("name, reason", SCAN_REASONS, ids=ids(SCAN_REASONS))
def test_review_markdown_has_no_raw_html_whatever_the_backticks(name, reason, tmp_path, run_cli):
    code, out, err = review_with_scan_reason(reason, tmp_path, run_cli)
    assert code == 0, err
    assert "TW305" in out and "attacker.example" in out  # the reason is there, inert
    assert raw_html(out) == []


def test_gate_markdown_has_no_raw_html_from_plan_values(tmp_path, run_cli):
    description = ("\\`<img src=//attacker.example/g.png>\\`\n</details>\n"
                   "<details>\n![x](//attacker.example/h.png)")
    alarm = entry("aws_cloudwatch_metric_alarm.shop_throttles", ["update"], {"alarm_description": "ok"},
                  {"alarm_description": description})
    code, out, err = gate_markdown(plan(TABLE, alarm), tmp_path, run_cli)
    assert code == 0, err
    assert "attacker.example" in out and raw_html(out) == []
    assert out.count("<details>") == out.count("</details>") == 1  # only the folded safe changes


# Outside code, GitHub makes these notify someone or link somewhere (mentions, e-mail, issue references, URLs).
ACTIVE_TEXT = re.compile(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9]|[A-Za-z0-9]@[A-Za-z0-9]|(?<![&\w])#[0-9]|GH-[0-9]|"
                         r"[A-Za-z]+://|(?i:www)\.")
MENTIONS = "ping @octocat and @acme/security, mail ops@example.com, see #1234, GH-99, owner/repo#7"
LINKS = "[approve](https://attacker.example/ok) https://attacker.example/x www.attacker.example javascript://x"
# The same, assembled by the renderer from character references and backslash escapes.
ENCODED = ("&#x40;org/team &commat;octocat &num;123 &#x23;12 https&#x3a;//attacker.example https&colon;//e.com "
           "www&period;attacker.example a&#x40;b.com GH&#x2d;12 https:\\//e.com")


def active(markdown: str) -> list[str]:
    """Links, and text GitHub would turn into mentions, references or links, as the renderer sees the comment."""
    from markdown_it import MarkdownIt

    found = []
    for token in MarkdownIt("commonmark", {"html": True}).enable("table").parse(markdown):
        children = token.children or []
        found += [f"link {child.attrs.get('href')}" for child in children if child.type == "link_open"]
        # The text as the reader sees it: escapes and character references decoded, adjacent pieces joined.
        found += ACTIVE_TEXT.findall("".join(child.content for child in children
                                             if child.type in ("text", "text_special")))
    return found


def test_review_markdown_makes_no_mention_or_link_from_blueprint_text(tmp_path, run_cli):
    code, out, err = review_with_scan_reason(MENTIONS + " " + LINKS + " " + ENCODED, tmp_path, run_cli)
    assert code == 0, err
    assert "octocat" in out and "attacker.example" in out  # the text is there, inert
    assert active(out) == []
    assert active(MENTIONS + " " + LINKS) and len(active(ENCODED)) >= 8  # the check finds them in the raw text


def test_gate_markdown_makes_no_mention_or_link_from_plan_values(tmp_path, run_cli):
    tags = {"@octocat": "x", "owner": "ops@example.com", "see #12": "www.attacker.example"}
    alarm = entry("aws_cloudwatch_metric_alarm.shop_throttles", ["update"], {"alarm_description": "ok", "tags": {}},
                  {"alarm_description": LINKS, "tags": tags})
    table = entry("aws_dynamodb_table.shop", ["update"], {"name": "shop_main", "tags": {}},
                  {"name": "shop_main", "tags": tags})
    code, out, err = gate_markdown(plan(table, alarm), tmp_path, run_cli)
    assert code == 0, err
    assert "octocat" in out and "attacker.example" in out
    assert active(out) == []
