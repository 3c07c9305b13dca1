"""What the configured hashicorp/aws version constraint guarantees."""

from __future__ import annotations

import re

from tablewright.blueprint.language import Blueprint, ContributorInsightsMode

# `mode` on aws_dynamodb_contributor_insights arrived in hashicorp/aws 6.11.
INSIGHTS_MODE_SINCE = (6, 11, 0)
# `warm_throughput` on aws_dynamodb_table (and its GSIs) arrived in hashicorp/aws 6.13.
WARM_THROUGHPUT_SINCE = (6, 13, 0)
# `point_in_time_recovery.recovery_period_in_days`: hashicorp/aws 5.100 has it (the version the tests validate
# against); earlier 5.x releases may not, so the constraint must admit none of them.
RECOVERY_PERIOD_SINCE = (5, 100, 0)
# ASCII only: Python's `\d` and `\s` admit other scripts' digits and line separators (U+2028).
_CLAUSE = re.compile(r" *(>=|<=|!=|~>|>|<|=)? *([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))? *")


def lowest_version(constraint: str) -> tuple[int, int, int] | None:
    """The lowest provider version the constraint admits (its lower bound), or None if unparsable."""
    lowest = (0, 0, 0)
    for clause in constraint.split(","):
        match = _CLAUSE.fullmatch(clause)
        if not match:
            return None
        op = match.group(1) or "="
        major, minor, patch = (int(part or 0) for part in match.group(2, 3, 4))
        version = (major, minor, patch)
        if op in (">=", ">", "=", "~>"):
            lowest = max(lowest, version)
    return lowest


def admits_only_since(blueprint: Blueprint, version: tuple[int, int, int]) -> bool:
    """The constraint admits no provider version older than `version`."""
    lowest = lowest_version(blueprint.terraform.aws_provider)
    return lowest is not None and lowest >= version


def supports_insights_mode(blueprint: Blueprint) -> bool:
    return admits_only_since(blueprint, INSIGHTS_MODE_SINCE)


def supports_warm_throughput(blueprint: Blueprint) -> bool:
    return admits_only_since(blueprint, WARM_THROUGHPUT_SINCE)


def insights_mode(blueprint: Blueprint) -> ContributorInsightsMode:
    """The effective Contributor Insights mode: the blueprint's, or the default for the environment."""
    if blueprint.contributor_insights is not None:
        return blueprint.contributor_insights
    if blueprint.production and supports_insights_mode(blueprint):
        return "throttled_keys"
    return "accessed_and_throttled_keys"


def supports_recovery_period(blueprint: Blueprint) -> bool:
    return admits_only_since(blueprint, RECOVERY_PERIOD_SINCE)
