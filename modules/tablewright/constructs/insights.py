"""Contributor Insights for the table and every GSI: the most accessed and throttled keys.

The `mode` argument (THROTTLED_KEYS or ACCESSED_AND_THROTTLED_KEYS) exists from hashicorp/aws 6.11;
with an older provider constraint it is left out and the provider records accessed and throttled
keys, which is the only mode it knows. Note for reviewers: Contributor Insights shows partition and
sort key values in clear text.
"""

from __future__ import annotations

from tablewright.blueprint.provider import insights_mode, supports_insights_mode
from tablewright.constructs.naming import logical_id
from tablewright.constructs.resources import (
    DynamodbContributorInsights,
    DynamodbContributorInsightsWithMode,
    InsightsMode,
)
from tablewright.constructs.terraform import Block, resource
from tablewright.design.design import TableDesign

MODES: dict[str, InsightsMode] = {
    "throttled_keys": "THROTTLED_KEYS",
    "accessed_and_throttled_keys": "ACCESSED_AND_THROTTLED_KEYS",
}


def contributor_insights(design: TableDesign, table_name: str) -> list[Block]:
    """One `aws_dynamodb_contributor_insights` per target; `table_name` is a reference to the table's name."""
    blueprint = design.blueprint
    mode = insights_mode(blueprint)
    if mode == "off":
        return []
    base = logical_id(blueprint.blueprint)
    targets = [(base, None)] + [(logical_id(base, index.name), index.name) for index in design.global_indexes]
    blocks: list[Block] = []
    for name, index_name in targets:
        arguments: DynamodbContributorInsights
        if supports_insights_mode(blueprint):
            arguments = DynamodbContributorInsightsWithMode(table_name=table_name, index_name=index_name,
                                                            mode=MODES[mode])
        else:
            arguments = DynamodbContributorInsights(table_name=table_name, index_name=index_name)
        blocks.append(resource(arguments, name))
    return blocks
