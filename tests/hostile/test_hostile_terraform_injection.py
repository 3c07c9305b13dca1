"""Hostile blueprint values aimed at the generated Terraform: `${...}` and `%{...}` in a field AWS restricts (tags,
regions, ARNs, bucket and table names, time zones, version constraints) is refused at its line; in free text
(descriptions, reasons, the state key) it is refused or written escaped (`$${`, `%%{`), never evaluated. The same
attack, fuzzed: test_hostile_fuzz.py. The contract: tests/support/hostile_support.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.hostile_support import (
    DOLLAR,
    GOOD,
    MARK,
    PERCENT,
    WINDOW,
    Bad,
    assert_refused,
    attributes,
    ids,
    lay_out,
    pattern,
    q,
    s3_backend,
    strings_in,
    table,
    top,
)

# Terraform expression injection -------------------------------------------------------------------

TOPIC = "arn:aws:sns:us-east-1:111122223333:"

# Fields AWS restricts (tag characters, regions, ARNs, bucket and table names, IANA zones, version
# constraints): an interpolation there is refused at the line that holds it.
INTERPOLATION_REFUSED = [
    Bad("tag-key-dollar", top(f"tags: {{{q(DOLLAR)}: x}}  {MARK}")),
    Bad("tag-value-dollar", top(f"tags: {{service: {q(DOLLAR)}}}  {MARK}")),
    Bad("tag-key-percent", top(f"tags: {{{q(PERCENT)}: x}}  {MARK}")),
    Bad("tag-value-percent", top(f"tags: {{service: {q(PERCENT)}}}  {MARK}")),
    Bad("required-tag-dollar", top(f"required_tags: [{q(DOLLAR)}]  {MARK}", f"tags: {{{q(DOLLAR)}: x}}  {MARK}")),
    Bad("region-dollar", top(f"region: {q(DOLLAR)}  {MARK}")),
    Bad("region-percent", top(f"region: {q(PERCENT)}  {MARK}")),
    Bad("kms-key-arn-dollar", table("  encryption: customer_managed",
                                    f"  kms_key_arn: {q('arn:aws:kms:eu-west-1:111122223333:key/' + DOLLAR)}  {MARK}")),
    Bad("backend-bucket-dollar", s3_backend("bucket", q(DOLLAR))),
    Bad("backend-region-percent", s3_backend("region", q(PERCENT))),
    Bad("backend-lock-table-dollar", s3_backend("dynamodb_table", q(DOLLAR))),
    Bad("naming-table-dollar", top(f"naming: {{table: {q(DOLLAR + '-{table}')}}}  {MARK}")),
    Bad("naming-table-percent", top(f"naming: {{table: {q(PERCENT + '{table}')}}}  {MARK}")),
    Bad("notify-arn-dollar", top("alarms:", f"  notify: [{q(TOPIC + DOLLAR)}]  {MARK}")),
    Bad("notify-arn-percent", top("alarms:", f"  notify: [{q(TOPIC + PERCENT)}]  {MARK}")),
    Bad("window-timezone-dollar", top(*WINDOW[:-1], f"  timezone: {q(DOLLAR)}  {MARK}")),
    Bad("window-duration-percent", top(*WINDOW[:3], f"  duration: {q(PERCENT)}  {MARK}", WINDOW[4])),
    Bad("aws-provider-constraint-dollar", top("terraform:", f"  aws_provider: {q(DOLLAR)}  {MARK}")),
    Bad("tag-value-newline", top(f'tags: {{service: "shop\\nx"}}  {MARK}')),
    Bad("tag-value-right-to-left-override", top(f'tags: {{service: "shop\\u202egpj.exe"}}  {MARK}')),
    Bad("tag-value-300-characters", top(f"tags: {{service: {'x' * 300}}}  {MARK}")),
]


@pytest.mark.parametrize("case", INTERPOLATION_REFUSED, ids=ids(INTERPOLATION_REFUSED))
def test_interpolation_in_restricted_fields_is_refused(case, refuse):
    refuse(case)


UNESCAPED = re.compile(r"(?<![$%])[$%]\{(?=file\(| if true | endif )")


def unescaped_payloads(out: Path) -> list[str]:
    """Strings of every synthesized Terraform file holding the payload without the `$$`/`%%` escape."""
    configs = sorted(out.rglob("*.tf.json"))
    assert configs, f"nothing synthesized in {out}"
    return [f"{path.relative_to(out)}: {text[:200]}" for path in configs
            for text in strings_in(json.loads(path.read_text())) if UNESCAPED.search(text)]


# Free text (descriptions, reasons, the state key): refused, or written escaped.
INTERPOLATION_IN_TEXT = [
    Bad("description-dollar", top(f"description: {q(DOLLAR)}  {MARK}")),
    Bad("owner-percent", top(f"owner: {q(PERCENT)}  {MARK}")),
    Bad("backend-key-dollar", s3_backend("key", q("state/" + DOLLAR + "/terraform.tfstate"))),
    Bad("backend-key-percent", s3_backend("key", q("state/" + PERCENT + "/terraform.tfstate"))),
    Bad("attribute-description-dollar", attributes(f"      note: {{type: string, description: {q(DOLLAR)}}}  {MARK}")),
    Bad("pattern-description-percent", pattern(f"    description: {q(PERCENT)}  {MARK}")),
    Bad("lint-ignore-reason-dollar", top("lint:", f"  ignore: {{TW101: {q(DOLLAR)}}}  {MARK}")),
    Bad("scan-reason-percent", GOOD + "  export:\n    entity: User\n    scan: allowed\n    rps: 0.01\n"
                                      f"    reason: {q(PERCENT)}  {MARK}\n"),
]


@pytest.mark.parametrize("case", INTERPOLATION_IN_TEXT, ids=ids(INTERPOLATION_IN_TEXT))
def test_interpolation_in_free_text_is_refused_or_escaped(case, tmp_path, run_cli):
    lay_out(tmp_path, {"shop.yaml": case.text})
    out = tmp_path / "cdktf.out"
    result = run_cli("synth", tmp_path / "shop.yaml", "--out", out)
    if result[0] == 0:
        assert unescaped_payloads(out) == []
    else:
        assert_refused(result, where=case.expected())


def test_accepted_free_text_reaches_terraform_inert(tmp_path, run_cli):
    text = top(f"description: {q(DOLLAR)}", f"owner: {q(PERCENT)}", "tags: {service: shop}")
    text = attributes(f"      note: {{type: string, description: {q(DOLLAR + PERCENT)}}}", text=text)
    lay_out(tmp_path, {"shop.yaml": text})
    out = tmp_path / "cdktf.out"
    code, _, err = run_cli("synth", tmp_path / "shop.yaml", "--out", out)
    assert code == 0, err
    assert unescaped_payloads(out) == []
