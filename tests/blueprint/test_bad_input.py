"""Every malformed blueprint gives one clear error: file:line, the field, the fix; exit 2; nothing written."""

from __future__ import annotations

import re

import pytest

from tablewright.synth.output import MARKER, MARKER_TEXT

BASE = """\
blueprint: shop
version: 1.0.0
table:
  name: shop_main
entities:
  User:
    attributes:
      userId: string
      name: string
      visits: number
    key: {pk: "USER#{userId}", sk: PROFILE}
access_patterns:
  user_profile:
    entity: User
    where: {userId: "="}
"""


KEY = '    key: {pk: "USER#{userId}", sk: PROFILE}'
COLLECTION = """\
  Visit:
    attributes: {visitId: string, userId: string}
    key: {pk: "VISIT#{visitId}", sk: V}
access_patterns:
  both:  # <-
    entity: [User, Visit]
    where: {userId: "="}
"""


def variant(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


# (case id, blueprint text with the offending line marked `# <-`, words the message must contain)
CASES = [
    ("yaml-syntax", variant("    where: {userId: \"=\"}", "    where: {userId: \"=\"  # <-"), "invalid YAML"),
    ("yaml-indentation", variant("      name: string", "     name: string  # <-"), "invalid YAML"),
    ("unknown-top-level-field", variant("table:", "tabel:  # <-\n  name: x\ntable:"), "unknown field `tabel`"),
    ("unknown-nested-field", variant("    key: {pk", "    kye: {pk: a, sk: b}  # <-\n    key: {pk"),
     "did you mean `key`"),
    ("wrong-type-limit", variant("    where: {userId: \"=\"}", "    where: {userId: \"=\"}\n    limit: three  # <-"),
     "expected a whole number for `limit`"),
    ("entities-not-mapping", BASE.split("entities:")[0] + "entities:  # <-\n  - User\n", "expected a mapping"),
    ("bad-billing", variant("  name: shop_main", "  name: shop_main\n  billing: serverless  # <-"),
     "'serverless' is not allowed for `billing`"),
    ("bad-order", variant("    where: {userId: \"=\"}", "    where: {userId: \"=\"}\n    order: newest  # <-"),
     "'newest' is not allowed for `order`"),
    ("bad-attribute-type", variant("      visits: number", "      visits: uuid  # <-"), "'uuid' is not allowed"),
    ("template-unknown-attribute", variant(KEY, KEY.replace("{userId}", "{uid}") + "  # <-"), "`{uid}`"),
    ("template-empty-segment", variant(KEY, KEY.replace("USER#", "USER##") + "  # <-"), "empty segment"),
    ("template-mixed-segment", variant(KEY, KEY.replace("USER#", "USER") + "  # <-"), "mixes text and a placeholder"),
    ("pattern-unknown-entity", variant("    entity: User", "    entity: Usr  # <-"), "unknown entity `Usr`"),
    ("pattern-unknown-attribute", variant('    where: {userId: "="}', '    where: {userID: "="}  # <-'),
     "`userID` is not an attribute"),
    ("returns-unknown-attribute",
     variant('    where: {userId: "="}', '    where: {userId: "="}\n    returns: [nmae]  # <-'),
     "`nmae` is not an attribute"),
    ("pattern-no-equality", variant('    where: {userId: "="}', '    where: {visits: ">"}  # <-'),
     "no `=` condition"),
    ("two-range-conditions",
     variant('    where: {userId: "="}', '    where: {userId: "=", name: ">", visits: "<"}  # <-'),
     "more than one range condition"),
    ("duplicate-key", variant("      name: string", "      name: string\n      name: number  # <-"),
     "duplicate key 'name'"),
    ("provisioned-without-capacity", variant("table:\n", "table:  # <-\n  billing: provisioned\n"),
     "provisioned billing needs `capacity`"),
    ("capacity-max-below-min", variant(
        "  name: shop_main",
        "  name: shop_main\n  billing: provisioned\n  capacity:\n    read: {min: 10, max: 5}  # <-\n"
        "    write: {min: 1, max: 5}"),
     "max (5) is below min (10)"),
    ("python-tag", variant("      name: string", "      name: !!python/object:os.system string  # <-"), "tag"),
    ("merge-key", variant("    key: {pk", "    <<: {item_bytes: 3}  # <-\n    key: {pk"), "merge keys"),
    ("reserved-attribute", variant("      visits: number", "      PK: string  # <-"), "reserved"),
    ("bad-blueprint-name", variant("blueprint: shop", "blueprint: Shop_Main  # <-"),
     "'Shop_Main' is not valid for `blueprint`"),
    ("missing-version", BASE.replace("blueprint: shop\nversion: 1.0.0\n", "blueprint: shop  # <-\n"),
     "missing required field `version`"),
    ("bad-semver", variant("version: 1.0.0", "version: one  # <-"), "a semantic version"),
    ("ttl-not-a-number", variant("  name: shop_main", "  name: shop_main\n  ttl_attribute: name  # <-"),
     "must hold epoch seconds"),
    ("begins-with-number", variant('    where: {userId: "="}', '    where: {userId: "=", visits: begins_with}  # <-'),
     "begins_with needs a string"),
    ("unknown-index-settings", BASE + "indexes:\n  GSI7:  # <-\n    projection: all\n", "settings for index `GSI7`"),
    ("pinned-unknown-index", variant('    where: {userId: "="}', '    where: {userId: "="}\n    index: ByName  # <-'),
     "names no index"),
    ("collection-without-shared-partition", BASE.replace("access_patterns:\n", COLLECTION),
     "no index serves this item collection"),
    ("empty-file", "# <-\n", "the file is empty"),
    # A spec's own error, not also "a mapping is not allowed" from the `name: type` branch of the union.
    ("unsupported-strftime-directive",
     variant("      visits: number", '      visits: number\n      at: {type: timestamp, format: "%Y-%-m-%-d"}  # <-'),
     "unsupported strftime directive(s) %-"),
    ("batch-writes-with-failing-conditions",
     variant(KEY, KEY + "\n    writes: {inserts: 5, failing: {inserts: 0.1}, batch: 25}  # <-"),
     "BatchWriteItem, which takes no condition"),
    ("failing-share-above-one", variant(KEY, KEY + "\n    writes: {updates: 5, failing: {updates: 1.5}}  # <-"),
     "must be at most 1.0, not 1.5"),
    ("batch-writes-in-a-transaction",
     variant(KEY, KEY + "\n    transactional: true\n    writes: {inserts: 5, batch: 10}  # <-"),
     "BatchWriteItem is not a transaction"),
    ("failing-transactions", variant(KEY, KEY + "\n    transactional: true\n    writes: {updates: 5, failing: "
                                     "{updates: 0.5}}  # <-"), "cancelled transaction"),
    ("failing-share-of-no-writes", variant(KEY, KEY + "\n    writes: {inserts: 5, failing: {updates: 0.5}}  # <-"),
     "`failing.updates` is set, and no updates are declared"),
    ("failing-unknown-kind", variant(KEY, KEY + "\n    writes: {updates: 5, failing: {upserts: 0.5}}  # <-"),
     "'upserts' is not allowed as a key of `failing`"),
    ("batch-writes-of-updates-only", variant(KEY, KEY + "\n    writes: {updates: 5, batch: 10}  # <-"),
     "`batch` groups inserts and deletes in BatchWriteItem (it cannot update), and none are declared"),
    ("failing-updates-that-move-the-item",
     variant(KEY, KEY + "\n    writes: {updates: 5, changes: [userId], failing: {updates: 0.5}}  # <-"),
     "an update changes `userId`, part of the table key"),
    ("expired-without-a-ttl",
     variant('    where: {userId: "="}', '    where: {userId: "="}\n    expired: returned  # <-'),
     "`user_profile` says `expired:`, and the table has no TTL"),
    ("timestamp-format-with-separator",
     variant("      visits: number", '      visits: number\n      at: {type: timestamp, format: "%Y#%m"}  # <-'),
     "contains #, the key separator"),
]


def expected_line(text: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if "# <-" in line:
            return number
    return 0


@pytest.mark.parametrize("case, text, words", CASES, ids=[c[0] for c in CASES])
def test_bad_blueprint_gives_one_located_error(case, text, words, tmp_path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "cdktf.out"
    out.mkdir()
    (out / MARKER).write_text(MARKER_TEXT)  # an earlier synthesis, which a failed one must leave alone
    (out / "previous.txt").write_text("earlier synthesis")
    path = tmp_path / "shop.yaml"
    path.write_text(text)

    code, stdout, stderr = run_cli("synth", path, "--out", out)

    assert code == 2
    assert stdout == ""
    assert "Traceback" not in stderr
    assert stderr.count("error:") == 1, stderr
    assert words in stderr
    location = re.match(rf"error: {re.escape(str(path))}:(\d+):(\d+): ", stderr)
    assert location, stderr
    line = expected_line(text)
    assert int(location.group(1)) == line, stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cdktf.out", "shop.yaml"]
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "previous.txt"]


def test_missing_file_is_a_clear_error(tmp_path, run_cli):
    code, _, stderr = run_cli("synth", tmp_path / "nope.yaml", "--out", tmp_path / "out")
    assert code == 2
    assert "file not found" in stderr
    assert not (tmp_path / "out").exists()


def test_duplicate_stack_names_across_files(tmp_path, run_cli):
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(BASE)
    second.write_text(BASE)
    code, _, stderr = run_cli("synth", first, second, "--out", tmp_path / "out")
    assert code == 2
    assert f"{second}:1:1: blueprint: stack `shop` is also produced by {first}" in stderr
    assert not (tmp_path / "out").exists()


def test_errors_name_the_fix(tmp_path, run_cli):
    path = tmp_path / "shop.yaml"
    path.write_text(variant("table:", "tabel:\n  name: x\ntable:"))
    _, _, stderr = run_cli("explain", path)
    assert "fix: did you mean `table`?" in stderr
    assert "allowed here:" in stderr


def test_alias_bomb_is_refused(tmp_path, run_cli):
    levels = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for level in range(1, 8):
        refs = ",".join([f"*a{level - 1}"] * 10)
        levels.append(f"a{level}: &a{level} [{refs}]")
    path = tmp_path / "bomb.yaml"
    path.write_text(BASE + "x_bomb:\n" + "\n".join("  " + line for line in levels) + "\n")
    code, _, stderr = run_cli("explain", path)
    assert code == 2
    assert "expands to more than" in stderr


def test_long_text_repeated_by_aliases_is_refused(tmp_path, run_cli):
    """Few nodes, much text: a 700 KB description aliased 10 times would be 7 MB in every rendering."""
    path = tmp_path / "long.yaml"
    path.write_text(BASE.replace("blueprint: shop", f"blueprint: shop\nx_text: &t {'d' * 700_000}", 1)
                    + "x_copies: [" + ", ".join(["*t"] * 10) + "]\n")
    code, _, stderr = run_cli("explain", path)
    assert code == 2 and "text expands to more than 4,000,000 characters" in stderr and "[E103]" in stderr


def test_oversized_file_is_refused(tmp_path, run_cli):
    path = tmp_path / "big.yaml"
    path.write_text(BASE + "#" * 1_100_000 + "\n")
    code, _, stderr = run_cli("explain", path)
    assert code == 2
    assert "limited to 1,000,000 bytes" in stderr


def test_yaml_12_scalars_stay_strings(write_blueprint):
    from tablewright.blueprint.yamlsource import load_yaml

    path = write_blueprint("a: yes\nb: 02:00\nc: 2024-01-01\nd: =\ne: true\nf: 12\ng: 1.5\nh: ~\n"
                           "i: 1e3\nj: -1.5e-2\nk: !!str 1e3\nl: '1e3'\nm: 0x1F\nn: 1_000\n")
    data, source = load_yaml(path)
    assert data == {"a": "yes", "b": "02:00", "c": "2024-01-01", "d": "=", "e": True, "f": 12, "g": 1.5, "h": None,
                    "i": 1000.0, "j": -0.015, "k": "1e3", "l": "1e3", "m": "0x1F", "n": "1_000"}
    assert source.locate(("c",)).line == 3


@pytest.mark.parametrize("text, message, code", [
    ("blueprint: shop\n---\nversion: 1.0.0\n",
     "2:1: invalid YAML: expected a single document in the stream, but found another document", "E101"),
    ("blueprint: " + "[" * 1100 + "]" * 1100 + "\n", "nesting deeper than 64 levels", "E103"),
    ('{"blueprint": "shop",', "1:22: invalid YAML: ", "E101"),  # no final line break: located on line 1
])
def test_parser_errors_are_said_whole_and_located(text, message, code, tmp_path, run_cli):
    path = tmp_path / "shop.yaml"
    path.write_text(text)
    code_, _, stderr = run_cli("lint", path)
    assert code_ == 2 and message in stderr and f"[{code}]" in stderr, stderr


def test_a_leading_byte_order_mark_moves_no_location(tmp_path, run_cli):
    path = tmp_path / "shop.yaml"
    path.write_text("\ufeffblueprint: shop\x01\n", encoding="utf-8")
    assert "shop.yaml:1:16: control character U+0001" in run_cli("lint", path)[2]
    path.write_text("\ufeffblueprint: shop\n: x\n", encoding="utf-8")
    assert "shop.yaml:2:1: invalid YAML" in run_cli("lint", path)[2]


def test_long_keys_repeated_by_aliases_count_as_text(tmp_path, run_cli):
    path = tmp_path / "keys.yaml"
    key = "k" * 200_000
    path.write_text(BASE + f"x_keys: &k {{? {key} : 1}}\n" + "x_copies: [" + ", ".join(["*k"] * 25) + "]\n")
    code, _, stderr = run_cli("explain", path)
    assert code == 2 and "text expands to more than 4,000,000 characters" in stderr, stderr
