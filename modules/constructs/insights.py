"""Contributor Insights for the table and every GSI: the most accessed and throttled keys.

Note for reviewers: Contributor Insights shows partition and sort key values in clear text.
"""

from __future__ import annotations

from modules.constructs.cdk import Construct, Resource
from modules.constructs.naming import logical_id
from modules.constructs.resources import DynamodbContributorInsights
from modules.design.model import TableDesign


def add_contributor_insights(scope: Construct, design: TableDesign, table: Resource) -> None:
    base = logical_id(design.blueprint.blueprint)
    table_name = table.ref("name")
    targets = [(base, None)] + [(logical_id(base, index.name), index.name) for index in design.global_indexes]
    for resource_id, index_name in targets:
        arguments = DynamodbContributorInsights(table_name=table_name, index_name=index_name)
        Resource(scope, resource_id, arguments.terraform_type, arguments.arguments())
