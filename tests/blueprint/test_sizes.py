"""Attribute sizes (`bytes:`): item and index entry sizes from the attributes an entry holds.

DynamoDB's rule ("Item sizes and formats", Developer Guide): an item's size is the sum of its attribute
names' and values' UTF-8 lengths. Every figure below is that sum, by hand.
"""

from __future__ import annotations

import textwrap

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.capacity.estimate import attribute_bytes, entry_bytes, item_bytes
from tablewright.stacks.stack import build_stacks

TRACKER = """\
    blueprint: tracker
    version: 1.0.0
    table: {name: tracker_main}
    entities:
      Issue:
        attributes:
          issueId: string
          projectId: string
          title: {type: string, bytes: 80}
          description: {type: string, bytes: 2000}
          status: {type: string, values: [OPEN, DONE]}
        key: {pk: "ISSUE#{issueId}", sk: "ISSUE"}
        item_bytes: 2300
        writes_per_second: 10
    access_patterns:
      issue: {entity: Issue, where: {issueId: "="}}
      project_issues: {entity: Issue, where: {projectId: "="}, returns: [issueId, title, status], rps: 50}
"""


def _design(write_blueprint, text: str):
    return build_stacks([load_blueprint(write_blueprint(textwrap.dedent(text)))])[0].design


def test_declared_attribute_sizes_make_the_index_entries(write_blueprint):
    design = _design(write_blueprint, TRACKER)
    sizes = attribute_bytes(design, "Issue")
    # Declared: name + value. title: 5 + 80; description: 11 + 2,000.
    assert sizes["title"] == 85 and sizes["description"] == 2011
    # The rest of item_bytes goes to the attributes without a size (no free text outside the keys here):
    # representative values of 16 characters, so issueId 7 + 16 = 23, projectId 9 + 16 = 25, status 6 + 4 = 10;
    # keys PK "ISSUE#" + 16 (2 + 22), SK "ISSUE" (2 + 5), GSI1PK "ISSUE#" + 16 (6 + 22), GSI1SK 16 (6 + 16) and
    # _entity "Issue" (7 + 5) make 93; 2,300 - 93 - (23 + 25 + 10 + 85 + 2,011) = 53 more, shared 23:25:10.
    assert sizes["issueId"] == pytest.approx(23 + 53 * 23 / 58)
    assert sizes["status"] == pytest.approx(10 + 53 * 10 / 58)
    # The GSI1 entry: its keys (24 + 7 + 28 + 22 = 81) and the projected issueId, title and status.
    projected = sizes["issueId"] + 85 + sizes["status"]
    assert entry_bytes(design, "Issue", "GSI1") == 81 + -(-projected // 1) == 230
    assert item_bytes(design, "Issue") == 2300


def test_without_sizes_the_text_attributes_share_the_item_evenly(write_blueprint):
    design = _design(write_blueprint, TRACKER.replace("{type: string, bytes: 80}", "string")
                     .replace("{type: string, bytes: 2000}", "string"))
    # title and description (5 + 16 and 11 + 16) share what item_bytes leaves, 2,300 - 93 - (23 + 25 + 10 + 21 +
    # 27) = 2,101, as 21:27: the title gets 21 + 2,101 x 21/48 = 940.2 and the entry 81 + (23 + 940.2 + 10,
    # rounded up) = 1,055: 4.6 times the 230 it is when the sizes are declared.
    assert entry_bytes(design, "Issue", "GSI1") == 1055


def test_an_item_without_item_bytes_is_its_declared_attribute_sizes(write_blueprint):
    design = _design(write_blueprint, TRACKER.replace("        item_bytes: 2300\n", ""))
    # 93 (keys and _entity) + 23 + 25 + 10 + 85 + 2,011; the GSI1 entry is 81 + 23 + 85 + 10.
    assert item_bytes(design, "Issue") == 93 + 23 + 25 + 10 + 85 + 2011 == 2247
    assert entry_bytes(design, "Issue", "GSI1") == 81 + 23 + 85 + 10 == 199


@pytest.mark.parametrize(("change", "message"), [
    (("issueId: string", "issueId: {type: number, bytes: 8}"), "`bytes` does not apply to number attributes"),
    (("{type: string, bytes: 80}", "{type: string, bytes: 80, max_length: 60}"),
     "the average size `bytes: 80` exceeds `max_length: 60`"),
    (("item_bytes: 2300", "item_bytes: 1000"),
     "the attributes' `bytes` (names included) add up to 2,096, more than `item_bytes: 1,000`"),
])
def test_sizes_that_contradict_each_other_are_located_errors(change, message, write_blueprint, run_cli):
    path = write_blueprint(textwrap.dedent(TRACKER).replace(*change))
    code, _, err = run_cli("lint", str(path))
    assert code == 2 and message in err and "[E204]" in err and "blueprint.yaml:" in err, err


def test_explain_and_capacity_show_the_sizes(write_blueprint, run_cli):
    import json

    path = write_blueprint(textwrap.dedent(TRACKER))
    _, out, _ = run_cli("explain", str(path), "--format", "json")
    sizes = json.loads(out)[0]["entities"][0]["bytes"]
    assert sizes["item"] == 2300 and sizes["entries"] == {"GSI1": 230} and sizes["declared"] == ["description", "title"]
    _, out, _ = run_cli("explain", str(path))
    assert "Issue: item 2,300 B; GSI1 entry 230 B (description, title: as declared)" in out
    _, out, _ = run_cli("capacity", str(path), "--format", "json")
    reads = {read["pattern"]: read for read in json.loads(out)[0]["reads"]}
    assert reads["project_issues"]["bytes_per_item"] == 230
