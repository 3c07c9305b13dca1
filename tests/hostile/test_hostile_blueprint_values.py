"""Hostile and careless blueprint values, refused at their line with a fix: keys and migrations that would lose or
strand data, two environments managing one table, values that once crashed (unbalanced braces, format placeholders,
colliding index names, extends loops, control characters, line separators), and values once accepted though wrong
(foreign digits, look-around patterns, a region that is a path). The contract: tests/support/hostile_support.py."""

from __future__ import annotations

import pytest

from tests.support.hostile_support import (
    GOOD,
    MARK,
    WINDOW,
    Bad,
    attributes,
    entity,
    ids,
    pattern,
    q,
    replace,
    s3_backend,
    table,
    top,
)

# What a user keeps: keys DynamoDB would refuse, data migrations that say nothing true -----------------

WITH_TTL = table("  ttl_attribute: expiresAt", text=attributes("      expiresAt: {type: number, expiry: true}"))
KEPT = [
    Bad("key-template-of-5000-characters", replace('    key: {pk: "USER#{userId}", sk: PROFILE}',
                                                    f'    key: {{pk: "USER#{{userId}}", sk: {"P" * 5000}}}  {MARK}')),
    Bad("sort-key-literal-over-1024-bytes", replace('    key: {pk: "USER#{userId}", sk: PROFILE}',
                                                     f'    key: {{pk: "USER#{{userId}}", sk: {"P" * 1100}}}  {MARK}')),
    Bad("partition-key-literal-over-2048-bytes", replace('    key: {pk: "USER#{userId}", sk: PROFILE}',
                                                          f'    key: {{pk: "{"U" * 2100}#{{userId}}", sk: PROFILE}}'
                                                          f"  {MARK}")),
    Bad("removal-of-an-entity-still-declared", top("migrations:", f"  - entity: User  {MARK}", "    removal: delete",
                                                   "    reason: gone")),
    Bad("rename-from-an-entity-still-declared", top("migrations:", "  - entity: User",
                                                    f"    renamed_from: User  {MARK}", "    reason: r")),
    Bad("removal-that-expires-without-ttl", top("migrations:", "  - entity: Gone", f"    removal: expire  {MARK}",
                                                "    reason: r")),
    Bad("removal-with-a-strategy", top("migrations:", "  - entity: Gone", "    removal: keep",
                                       f"    strategy: backfill  {MARK}", "    reason: r", text=WITH_TTL)),
    Bad("recovery-days-without-recovery", table("  point_in_time_recovery: false",
                                                f"  point_in_time_recovery_days: 7  {MARK}")),
    Bad("recovery-days-over-35", table(f"  point_in_time_recovery_days: 36  {MARK}")),
]


@pytest.mark.parametrize("case", KEPT, ids=ids(KEPT))
def test_what_would_lose_or_strand_data_is_refused(case, refuse):
    refuse(case)


# Two stacks, one physical table ------------------------------------------------------------------

ENVIRONMENTS = ("environments:", "  dev: {}", "  prod: {production: true}")
SHARED_TABLE = [
    Bad("naming-table-only", top(f"naming: {{table: '{{table}}'}}  {MARK}", *ENVIRONMENTS)),
    Bad("naming-blueprint-only", top(f"naming: {{table: '{{blueprint}}-main'}}  {MARK}", *ENVIRONMENTS)),
    Bad("overlays-pick-the-same-name", top("environments:", f"  dev: {{naming: {{table: 'x-{{table}}'}}}}  {MARK}",
                                           f"  prod: {{naming: {{table: 'x-{{table}}'}}}}  {MARK}")),
]


@pytest.mark.parametrize("case", SHARED_TABLE, ids=ids(SHARED_TABLE))
def test_two_environments_cannot_manage_the_same_table(case, refuse):
    refuse(case)


# Crashes that must become located errors ---------------------------------------------------------

ENUM_WITH_HASH = replace('    key: {pk: "USER#{userId}", sk: PROFILE}',
                         f'    key: {{pk: "USER#{{userId}}", sk: "TIER#{{tier}}"}}  {MARK}',
                         attributes(f'      tier: {{type: string, values: ["GOLD#1", SILVER]}}  {MARK}'))
TWO_PATTERNS = '  by_name:\n    entity: User\n    where: {name: "="}\n  by_visits:\n    entity: User\n' \
               '    where: {visits: "="}\n'

CRASHES = [
    Bad("naming-unbalanced-open-brace", top(f'naming: {{table: "{{table"}}  {MARK}')),
    Bad("naming-unbalanced-close-brace", top(f'naming: {{table: "table}}"}}  {MARK}')),
    Bad("backend-key-unknown-placeholder", s3_backend("key", q("x/{nope}/terraform.tfstate"))),
    Bad("backend-key-positional-placeholder", s3_backend("key", q("x/{}/terraform.tfstate"))),
    Bad("backend-key-attribute-access", s3_backend("key", q("x/{blueprint.__class__.__mro__}/state"))),
    Bad("backend-key-unbalanced-brace", s3_backend("key", q("x/{blueprint/terraform.tfstate"))),
    Bad("enum-value-with-hash-in-a-key", ENUM_WITH_HASH),
    Bad("index-names-collide-after-normalisation", entity(
        "    index_keys:",
        f'      By_Name: {{pk: "NAME#{{name}}", sk: "{{userId}}"}}  {MARK}',
        f'      by_name: {{pk: "VISITS#{{visits}}", sk: "{{userId}}"}}  {MARK}') + TWO_PATTERNS),
    Bad("declared-gsi1-beside-planned-GSI1", entity(
        "    index_keys:", f'      gsi1: {{pk: "NAME#{{name}}", sk: "{{userId}}"}}  {MARK}') + TWO_PATTERNS),
    Bad("extends-symlink-loop", f"extends: loop.yaml  {MARK}\n" + GOOD, links={"loop.yaml": "loop.yaml"}),
    Bad("extends-two-symlinks-in-a-loop", f"extends: a.yaml  {MARK}\n" + GOOD, links={"a.yaml": "b.yaml",
                                                                                        "b.yaml": "a.yaml"}),
    Bad("extends-a-directory", f"extends: shared  {MARK}\n" + GOOD, others={"shared/x.yaml": "tags: {a: b}\n"}),
    Bad("nul-byte", top(f"description: shop\x00keeper  {MARK}"),
        absent=("special characters are not allowed", "<unicode string>")),
    Bad("escape-byte-in-a-tag", top(f"tags: {{service: shop\x1b[31m}}  {MARK}"),
        absent=("special characters are not allowed", "<unicode string>")),
    Bad("invalid-utf8", top(f"description: caf\udce9  {MARK}")),
    # Line breaks to YAML, not to editors or to error locations: refused where they stand.
    Bad("line-separator-in-a-comment", top(f"description: shop  {MARK} note\u2028more")),
    Bad("paragraph-separator-in-a-comment", top(f"description: shop  {MARK} note\u2029more")),
    Bad("next-line-character-in-a-comment", top(f"description: shop  {MARK} note\x85more")),
    Bad("lone-carriage-return-in-a-comment", top(f"description: shop  {MARK} a\rb")),
    Bad("byte-order-mark-after-the-start", top(f"\ufeffdescription: shop  {MARK}")),
    Bad("window-timezone-300-characters", top(*WINDOW[:-1], f"  timezone: {'x' * 300}  {MARK}")),
    Bad("window-timezone-path", top(*WINDOW[:-1], f"  timezone: ../../../../etc/passwd  {MARK}")),
    Bad("window-on-no-day", top(WINDOW[0], f"  days: []  {MARK}", *WINDOW[2:])),  # looped to date.max
    Bad("pattern-of-no-entity", replace("    entity: User", f"    entity: []  {MARK}")),  # IndexError
]


@pytest.mark.parametrize("case", CRASHES, ids=ids(CRASHES))
def test_crash_becomes_a_located_error(case, refuse):
    refuse(case)


# Accepted today though wrong ---------------------------------------------------------------------

PROVISIONED = ("  billing: provisioned", "  capacity:")
STRFTIME_HASH = replace('    key: {pk: "USER#{userId}", sk: PROFILE}',
                        f'    key: {{pk: "USER#{{userId}}", sk: "AT#{{at}}"}}  {MARK}',
                        attributes(f"      at: {{type: timestamp, format: '%Y#%m#%d'}}  {MARK}"))

ACCEPTED_WRONG = [
    Bad("limit-true", pattern(f"    limit: true  {MARK}")),
    Bad("negative-latency-threshold", top("alarms:", f"  latency: {{operations: {{GetItem: -5}}}}  {MARK}")),
    Bad("23-digit-capacity", table(*PROVISIONED, f"    read: {{min: 1, max: 12345678901234567890123}}  {MARK}",
                                   "    write: {min: 1, max: 10}")),
    Bad("region-path", top(f"region: ../../etc  {MARK}")),
    Bad("region-not-a-region", top(f"region: Europe  {MARK}")),
    Bad("kms-key-arn-not-an-arn", table("  encryption: customer_managed", f"  kms_key_arn: not an arn  {MARK}")),
    Bad("strftime-format-with-hash", STRFTIME_HASH),
    Bad("extends-inside-an-environment", top("environments:", "  dev:", f"    extends: other.yaml  {MARK}",
                                             "  prod: {production: true}"), others={"other.yaml": "tags: {a: b}\n"}),
    Bad("environments-inside-an-environment", top("environments:", "  dev:", f"    environments: {{qa: {{}}}}  {MARK}",
                                                  "  prod: {production: true}")),
    Bad("type-error-has-a-fix", pattern(f"    rps: fast  {MARK}")),
    Bad("range-error-has-a-fix", table(*PROVISIONED, "    read: {min: 1, max: 10}", "    write: {min: 1, max: 10}",
                                       f"    target_utilization: 95  {MARK}")),
    Bad("limit-float", pattern(f"    limit: 2.5  {MARK}")),
    Bad("pattern-with-look-around", attributes(f"      code: {{type: string, pattern: '(?=a)b'}}  {MARK}")),
    # Digits of other scripts and line separators: Python's `\d` and `\s` admit them, Terraform does not.
    Bad("region-arabic-indic-digit", top(f"region: eu-west-\u0661  {MARK}")),
    Bad("backend-region-arabic-indic-digit", s3_backend("region", "eu-west-\u0661")),
    Bad("aws-provider-arabic-indic-digits", top("terraform:", f"  aws_provider: '>= \u0666.\u0661\u0661'  {MARK}")),
    Bad("aws-provider-line-separator", top("terraform:", f'  aws_provider: ">= 6.11\\u2028"  {MARK}')),
    Bad("window-start-arabic-indic-digit", top(*WINDOW[:2], f"  start: '0\u0662:00'  {MARK}", *WINDOW[3:])),
]


@pytest.mark.parametrize("case", ACCEPTED_WRONG, ids=ids(ACCEPTED_WRONG))
def test_wrong_value_is_refused_with_a_fix(case, refuse):
    refuse(case)
