"""Keys against DynamoDB's size limits (partition 2,048 bytes, sort 1,024): a template over them at its longest
is a lint error (TW205), also when only its literals are known; `synth` and `verify` refuse it (E502) and,
let through with `--allow-lint-errors`, never crash: synth writes it, verify fails as DynamoDB would."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

BLUEPRINT = """\
blueprint: limits
version: 1.0.0
table: {{name: limits_main}}
entities:
  Item:
    attributes: {{itemId: string}}
    key: {{pk: "{pk}", sk: "{sk}"}}
access_patterns:
  item: {{entity: Item, where: {{itemId: "="}}}}
"""
LONG_SORT = {"pk": "ITEM#{itemId}", "sk": "X" * 1100}  # one literal: 1,100 bytes
LONG_PARTITION = {"pk": "Y" * 2100 + "#{itemId}", "sk": "A"}  # 2,101 bytes before the id


def write(tmp_path: Path, keys: dict[str, str]) -> Path:
    path = tmp_path / "limits.yaml"
    path.write_text(BLUEPRINT.format(**keys))
    return path


@pytest.mark.parametrize(("keys", "expected"), [
    (LONG_SORT, "the table: Item's sort key XXX"),
    (LONG_PARTITION, "the table: Item's partition key YYY"),
])
def test_a_key_over_the_limit_from_its_literals_alone_is_a_lint_error(tmp_path, run_cli, keys, expected):
    path = write(tmp_path, keys)
    code, out, _ = run_cli("lint", path, "--format", "json")
    assert code == 1
    [finding] = [f for f in json.loads(out)[0]["findings"] if f["code"] == "TW205"]
    assert finding["severity"] == "error" and finding["message"].startswith(expected)
    if keys is LONG_PARTITION:
        assert "is at least 2,102 bytes (with one byte for each of `itemId`), over DynamoDB's 2,048" in \
            finding["message"]
    else:
        assert ("can reach 1,100 bytes (its literals, encoded values and declared max_length), over DynamoDB's "
                "1,024") in finding["message"]
    assert len(finding["message"]) < 400  # the long literal is cut in the middle


@pytest.mark.parametrize("keys", [LONG_SORT, LONG_PARTITION], ids=["sort", "partition"])
def test_synth_and_verify_refuse_it_and_never_crash(tmp_path, run_cli, keys):
    path = write(tmp_path, keys)
    for command in ("synth", "verify"):
        code, _, err = run_cli(command, path, *(["--out", tmp_path / "out"] if command == "synth" else []))
        assert code == 2 and "lint TW205" in err and "[E502]" in err, err
    code, _, err = run_cli("synth", path, "--out", tmp_path / "out", "--allow-lint-errors")
    assert code == 0, err
    lock = json.loads((tmp_path / "limits.lock.json").read_text())  # the lock holds the long template
    assert lock["environments"]["default"]["entities"]["Item"]["keys"]["table"] == keys
    code, out, err = run_cli("verify", path, "--allow-lint-errors", "--format", "json")
    assert code == 1, err
    [result] = json.loads(out)
    assert result["passed"] is False and result["patterns"] == []
    assert result["refused"].startswith("writing the sample items: DynamoDB refuses them (")


def test_a_template_longer_than_any_key_is_refused_where_it_is_written(tmp_path, run_cli):
    path = tmp_path / "limits.yaml"
    path.write_text(textwrap.dedent(BLUEPRINT.format(pk="ITEM#{itemId}", sk="Z" * 5000)))
    code, out, err = run_cli("lint", path)
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}:7:") and "entities.Item.key.sk" in err and "at most 4096" in err, err
