"""The Mermaid diagrams of `explain --format markdown` and the review: what they show, that they are stable, that
the Markdown sanitizer leaves them intact, and (slow tier) that Mermaid's own parser accepts every one of them
and rejects a broken one (tools/mermaid/parse.mjs, run with Node)."""

from __future__ import annotations

import json
import re
import shutil
import string
import subprocess
from pathlib import Path

import pytest
import yaml
from markdown_it import MarkdownIt

from tablewright.blueprint.load import load_blueprint, load_blueprints
from tablewright.lint.findings import Context
from tablewright.lint.hot import PARTITION_RCU, PARTITION_WCU, key_loads
from tablewright.report import diagrams
from tablewright.report.explain import render_markdown
from tablewright.report.markdown import sanitize
from tablewright.report.review import render_markdown as render_review
from tablewright.review.review import build_review
from tablewright.stacks.stack import Stack, build_stack, build_stacks
from tests.conftest import BUNDLED, ROOT
from tests.support.design_helpers import designed
from tests.support.review_corpus import BASE, CASES, write_case
from tests.support.terraform_support import missing_tool, slow_tier_only

TESTS = ROOT / "tests"
HOT = TESTS / "data" / "blueprints" / "hot.yaml"
FEATURES = TESTS / "data" / "blueprints" / "features.yaml"
PARSER = ROOT / "tools" / "mermaid"


def fences(markdown: str) -> list[tuple[str, str]]:
    """(info, text) of every fenced code block, as a CommonMark renderer (GitHub's) sees the Markdown."""
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(markdown)
    return [(token.info.strip(), token.content.rstrip("\n")) for token in tokens if token.type == "fence"]


def mermaid(markdown: str) -> list[str]:
    return [text for info, text in fences(markdown) if info == "mermaid"]


def stacks(path: Path) -> list[Stack]:
    return build_stacks(load_blueprints(path))


def stack(path: Path, env: str | None = None) -> Stack:
    return next(s for s in stacks(path) if env is None or s.name.endswith(f"-{env}"))


def decoded(label: str) -> str:
    """What Mermaid shows for a quoted label: entity codes `#N;` back to characters."""
    assert label.startswith('"') and label.endswith('"')
    return re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), label[1:-1])


HOSTILE = ('"]; end\n%%{init: {"theme": "dark"}}%% <img src=x onerror=alert(1)> ![x](http://e) `code` '
           "$$x$$ a|b [c] {d} #35; e:f;g &amp; click href 'q' --> x ~~~ y \t é 漢 \u202e")


def test_a_label_shows_any_value_and_holds_nothing_mermaid_or_markdown_would_read():
    label = diagrams.text(HOSTILE)
    assert decoded(label) == HOSTILE
    inner = re.sub(r"#\d+;", "", label[1:-1])  # what is left once the entity codes are taken out
    # Quotes would end the label; % a directive or comment; < > & HTML; ` ! [ ] | markdown, links and edges;
    # : ; Mermaid's entity pre-pass; $ KaTeX; control characters and line breaks a new statement.
    for character in '"%<>&`![]|:;$\n\t\'\\~' + "\u202e":
        assert character not in inner, character
    # Mermaid reads `#word;` as an entity: only our codes are followed by a `;`.
    assert [m.group() for m in re.finditer(r"#\w+;", label)] == [m.group() for m in re.finditer(r"#\d+;", label)]
    assert diagrams.text("CUSTOMER#{customerId}") == '"CUSTOMER#{customerId}"'  # templates stay readable


def test_the_layout_shows_item_collections_indexes_key_shapes_and_who_reads_them():
    crm = stack(ROOT / "blueprints" / "crm.yaml", "prod")
    lines = diagrams.layout(crm.design)
    assert lines[0] == "flowchart LR"
    text = "\n".join(lines)
    # Contact, Customer and Ticket share the CUSTOMER#{customerId} item collection on the table; Industry does not.
    collection = re.search(r'subgraph (t_c\d) \["item collection PK = CUSTOMER#{customerId}"\]\n((?:      .*\n)+)'
                           r"    end", text)
    assert collection is not None
    assert re.findall(r"      t_(\w+)\[", collection.group(2)) == ["Contact", "Customer", "Ticket"]
    assert '      t_Industry["Industry, SK = PROFILE"]' in lines
    # Each GSI with its key attributes and projection, each member with its key shape there.
    assert '  subgraph i1 ["GSI1 (global index), keys GSI1PK / GSI1SK"]' in lines
    assert '    i1_note(["projects INCLUDE (customerId, lastTouchAt, name, openedAt, subject, ticketId)"])' in lines
    assert '    subgraph i1_c1 ["item collection GSI1PK = CUSTOMER#{industry}"]' in lines
    assert '      i1_Customer["Customer, GSI1SK = {lastTouchAt}"]' in lines
    assert '      i1_Ticket["Ticket, GSI1SK = {openedAt}"]' in lines
    # An arrow from the entity on the table to each index it is projected into, with the patterns reading it there.
    edges = [line for line in lines if "-->" in line]
    assert edges == [
        '  t_Customer -->|"industry_customers, stale_customers_by_industry"| i1_Customer',
        '  t_Ticket -->|"tickets_by_status"| i1_Ticket',
        '  t_Customer -->|"salesperson_customers"| i2_Customer',
    ]
    # Every index of the design has its box, every entity its node on the table.
    assert [line.split()[1] for line in lines if line.startswith("  subgraph")] == \
        ["t"] + [f"i{n}" for n in range(1, len(crm.design.indexes) + 1)]
    assert sorted(re.findall(r"^      t_(\w+)\[", text, re.M)) == sorted(crm.design.blueprint.entities)


def test_sharded_members_and_local_indexes_are_labelled():
    features = stack(FEATURES)
    lines = diagrams.layout(features.design)
    sharded = [(entity, index) for entity, shapes in features.design.shapes.items()
               for index, shape in shapes.items() if shape.shards > 1]
    assert sharded
    for entity, index in sharded:
        shards = features.design.shapes[entity][index].shards
        assert any(re.search(rf'\["{entity}, {shards} shards, ', line) for line in lines), (entity, index)
    assert features.design.local_indexes
    for index in features.design.local_indexes:
        assert any(line.startswith("  subgraph i") and f'"{index.name} (local index)' in line for line in lines)


def test_a_sparse_index_says_which_share_of_the_items_it_holds():
    ticket = {"attributes": {"ticketId": "string", "escalatedTo": {"type": "string", "present": 0.05},
                             "openedAt": "timestamp"},
              "key": {"pk": "TICKET#{ticketId}", "sk": "T"}}
    design = designed({"Ticket": ticket}, {"escalated": {"entity": "Ticket", "where": {"escalatedTo": "="},
                                                         "order_by": "openedAt"}})
    [edge] = [line for line in diagrams.layout(design) if "-->" in line]
    label = edge.split("|")[1]
    assert edge == f"  t_Ticket -->|{label}| i1_Ticket" and decoded(label) == "escalated, 5% of its items"


def test_hot_key_charts_show_lints_numbers_before_and_after_its_sharding():
    hot = stack(HOT)
    findings = {f.finding.code: f for f in hot.lint.findings if f.finding.code in ("TW103", "TW104")}
    assert set(findings) == {"TW103", "TW104"}
    charts = diagrams.hot_key_charts(hot)
    # GSI1 by status (writes, TW103), the busiest tenant (writes, TW104), the boards (reads, TW103).
    assert [chart[0].split(" (")[0] for chart in charts] == [
        "`table PK = BOARD#{boardId}`", "`table PK = TENANT#{tenantId}`", "`GSI1 GSI1PK = ORDER#{status}`"]
    by_status = charts[2]
    # 2,000 status changes/s x 2 index writes x 0.8 (the busiest of 3 unweighted statuses) x 3 (the peak);
    # 20 shards (the most lint offers) leave 480.
    assert by_status[0] == ("`GSI1 GSI1PK = ORDER#{status}` (TW103, over a partition's limit): about 9,600 WCU per "
                            "second per key now, 480 with `indexes.GSI1.shards: 20`.")
    chart = by_status[by_status.index("```mermaid") + 1:-1]
    assert chart == [
        "xychart-beta",
        '  title "GSI1 ORDER#{status}, writes per key"',
        '  x-axis ["now", "20 shards"]',
        '  y-axis "WCU per second (line = partition limit)" 0 --> 12000.0',
        "  bar [9600.0, 480.0]",
        "  line [1000, 1000]",
    ]
    # The same shard counts as lint's fixes, for every chart.
    for finding in hot.lint.findings:
        if finding.finding.code in ("TW103", "TW104"):
            shards = re.search(r"shard it into (\d+): set `([^`]+): ", finding.finding.fix)
            assert shards is not None
            assert any(f"with `{shards.group(2)}: {shards.group(1)}`" in c[0] for c in charts), finding.finding.fix
    reads = charts[0]
    # 200 calls/s x 15 RCU (40 posts of 3 KB, eventually consistent) x 0.8 (the busiest of 4 boards) x 3 (peak).
    assert "RCU per second" in "\n".join(reads) and "  line [3000, 3000]" in reads and "  bar [7200.0, 1440.0]" in reads


def test_the_after_bars_are_what_the_model_says_once_the_shards_are_set(write_blueprint):
    """Applying every suggested `shards:` and estimating again gives the per-key loads the charts drew."""
    hot = stack(HOT)
    suggested = hot.lint.hot_keys
    data = yaml.safe_load(HOT.read_text())
    for _, fix in suggested:
        *path, last = fix.setting.split(".")
        node = data
        for part in path:
            node = node.setdefault(part, {})
        node[last] = fix.shards
    sharded = build_stack(load_blueprint(write_blueprint(yaml.safe_dump(data), "sharded.yaml")))
    after = {(load.index, tuple(load.entities)): load for load in key_loads(Context(sharded.design, sharded.capacity))}
    for load, fix in suggested:
        again = after[(load.index, tuple(load.entities))]
        assert again.wcu == pytest.approx(fix.wcu) and again.rcu == pytest.approx(fix.rcu), (load.index, load.entities)
        assert again.wcu <= PARTITION_WCU * 0.5 and again.rcu <= PARTITION_RCU * 0.5
    assert not diagrams.hot_key_charts(sharded)
    assert "#### Hot keys" not in render_markdown(sharded)


def test_no_hot_key_no_chart():
    for path in BUNDLED:
        for each in stacks(path):
            assert diagrams.hot_key_charts(each) == []
            markdown = render_markdown(each)
            assert "#### Hot keys" not in markdown and len(mermaid(markdown)) == 1


def test_the_markdown_carries_the_diagrams_and_the_sanitizer_leaves_them_intact():
    for each in [*stacks(HOT), *stacks(FEATURES), *(s for path in BUNDLED for s in stacks(path))]:
        markdown = render_markdown(each)
        blocks = mermaid(markdown)
        expected = ["\n".join(diagrams.layout(each.design))]
        expected += ["\n".join(diagrams.hot_chart(load, fix, unit)) for load, fix in each.lint.hot_keys
                     for unit, now, limit in (("WCU", load.wcu, PARTITION_WCU), ("RCU", load.rcu, PARTITION_RCU))
                     if now > limit * each.design.blueprint.lint.hot_key_warning]
        assert blocks == expected, each.name
        assert sanitize(markdown) == markdown
        for block in blocks:
            assert "<" not in block and "`" not in block and "![" not in block


def _reversed(node: object) -> object:
    if isinstance(node, dict):
        return {key: _reversed(value) for key, value in reversed(node.items())}
    if isinstance(node, list):
        return [_reversed(item) for item in node]
    return node


def test_the_diagrams_are_the_same_every_run_and_whatever_the_yaml_order(write_blueprint):
    for source in [ROOT / "blueprints" / "crm.yaml", ROOT / "blueprints" / "orders.yaml", HOT]:
        data = yaml.safe_load(source.read_text())
        path = write_blueprint(yaml.safe_dump(_reversed(data), sort_keys=False), f"reordered/{source.name}")
        lock = source.with_suffix(".lock.json")
        if lock.exists():
            shutil.copy(lock, path.with_suffix(".lock.json"))
        if "extends" in data:
            shutil.copytree(ROOT / "blueprints" / "shared", path.parent / "shared", dirs_exist_ok=True)
        original = [mermaid(render_markdown(each)) for each in stacks(source)]
        assert original == [mermaid(render_markdown(each)) for each in stacks(source)]
        assert original == [mermaid(render_markdown(each)) for each in stacks(path)], source.name


def hot_review(tmp_path: Path) -> str:
    """A review whose head adds a GSI by a 3-value status with 2,000 status changes a second."""
    data = yaml.safe_load(BASE.read_text())
    data["entities"]["Order"]["writes"] = {"updates": 2000, "changes": ["status"]}
    data["entities"]["Order"].pop("writes_per_second")
    data["access_patterns"]["by_status"] = {"entity": "Order", "where": {"status": "="}, "order_by": "placedAt",
                                            "limit": 20, "returns": ["orderId", "placedAt"]}
    head = tmp_path / "shop.yaml"
    head.write_text(yaml.safe_dump(data, sort_keys=False))
    return render_review(build_review(str(BASE), str(head)))


def test_the_review_shows_the_hot_key_charts_beside_lint_and_the_layout_with_the_design(tmp_path):
    markdown = hot_review(tmp_path)
    tokens = MarkdownIt("commonmark", {"html": True}).parse(markdown)
    depth, seen = 0, []
    for token in tokens:
        if token.type == "html_block":
            depth += token.content.count("<details>") - token.content.count("</details>")
        elif token.type == "fence" and token.info.strip() == "mermaid":
            seen.append((token.content.split("\n")[0], depth > 0))
    # The chart in sight, once; the layout folded with the design tables.
    assert seen == [("xychart-beta", False), ("flowchart LR", True)]
    assert markdown.index("#### Lint") < markdown.index("#### Hot keys") < markdown.index("#### Capacity and cost")


# --- Mermaid's own parser (slow tier: Node and tools/mermaid's packages) -------------------------------------


def parse(diagrams_: list[str]) -> tuple[int, list[dict[str, object]]]:
    """Exit status and per-diagram results of tools/mermaid/parse.mjs."""
    slow_tier_only("Mermaid's parser (Node)")
    node = shutil.which("node")
    if node is None:
        missing_tool("Node.js is not installed")
    if not (PARSER / "node_modules" / "mermaid" / "package.json").is_file():
        missing_tool("Mermaid's parser is not installed: npm ci --prefix tools/mermaid")
    result = subprocess.run([str(node), str(PARSER / "parse.mjs")], input=json.dumps(diagrams_), text=True,
                            capture_output=True, timeout=120, cwd=PARSER)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


@pytest.mark.terraform
def test_mermaid_parses_every_diagram_of_the_bundled_blueprints_a_hot_blueprint_and_the_reviews(tmp_path):
    documents = {each.name: render_markdown(each) for path in [*BUNDLED, FEATURES, HOT] for each in stacks(path)}
    documents["review"] = hot_review(tmp_path)
    for case in CASES:  # the review corpus: new, rebuilt and local indexes, renamed tables, key changes...
        documents[f"review {case.name}"] = render_review(build_review(str(BASE), str(write_case(case, tmp_path))))
    blocks = [(name, block) for name, markdown in documents.items() for block in mermaid(markdown)]
    status, results = parse([block for _, block in blocks])
    failures = [(name, block, result) for (name, block), result in zip(blocks, results, strict=True)
                if not result["ok"]]
    assert status == 0 and not failures, failures
    kinds = [(name, result["type"]) for (name, _), result in zip(blocks, results, strict=True)]
    assert ("hot", "xychart") in kinds and ("review", "xychart") in kinds and ("review", "flowchart-v2") in kinds
    assert all(kind == ("xychart" if block.startswith("xychart") else "flowchart-v2")
               for (_, block), (_, kind) in zip(blocks, kinds, strict=True))
    assert {name for name, _ in kinds} == set(documents)


@pytest.mark.terraform
def test_mermaid_rejects_a_broken_diagram_and_what_an_unescaped_value_would_do():
    hostile = HOSTILE.replace("\n", " ")
    raw = [
        'flowchart LR\n  a["unclosed] --> b',
        "xychart-beta\n  x-axis [\"now\", \"5 shards\"\n  bar [1, 2]",
        f'flowchart LR\n  a["{hostile}"] --> b',  # the value as it is: its quote ends the label
    ]
    escaped = [
        f"flowchart LR\n  subgraph t [{diagrams.text(HOSTILE)}]\n    a[{diagrams.text(HOSTILE)}]\n  end\n"
        f"  a -->|{diagrams.text(HOSTILE)}| b[{diagrams.text(string.printable)}]",
        f"xychart-beta\n  title {diagrams.text(HOSTILE)}\n  x-axis [{diagrams.text(HOSTILE)}, {diagrams.text('x')}]\n"
        f"  y-axis {diagrams.text(HOSTILE)} 0 --> 10\n  bar [1, 2]\n  line [5, 5]",
    ]
    status, results = parse(raw + escaped)
    assert status == 1
    assert [result["ok"] for result in results] == [False, False, False, True, True], results
    assert all("Parse error" in str(result["error"]) for result in results[:3])
