"""`adopt`: a blueprint that reproduces a DynamoDB table that exists already, from what the AWS CLI says.

Input is the JSON of `aws dynamodb describe-table`, and optionally `describe-time-to-live`,
`describe-continuous-backups`, `describe-contributor-insights`, `list-tags-of-resource` and
`aws application-autoscaling describe-scalable-targets` / `describe-scaling-policies` (one file each,
or several merged into one object). Each file is recognised by its top-level keys.

The blueprint keeps the table's own key attribute names and types, its index names and keys,
projections, billing, autoscaling (bounds, targets, cooldowns, live policy names), TTL, PITR, stream,
table class, encryption, deletion protection and tags, so that the synthesized stack imports the table,
its scalable targets and its policies and changes none of them. Entities and access patterns are left
as a TODO block: only the team knows what the items are.
"""

from tablewright.adopt.describe import Description, read_description
from tablewright.adopt.writer import Adoption, adopted_blueprint, blueprint_name, write_blueprint

__all__ = ["Adoption", "Description", "adopted_blueprint", "blueprint_name", "read_description", "write_blueprint"]
