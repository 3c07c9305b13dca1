"""Terraform logical ids derived from blueprint names, never from list positions.

Ids start with the blueprint's name (`aws_dynamodb_table.crm`, `aws_appautoscaling_target.crm_gsi1_read`),
so every environment's stack uses the same addresses; physical names follow `naming:`.
"""

from __future__ import annotations

import re


def logical_id(*parts: str) -> str:
    """`("crm_main", "GSI1", "read")` -> `crm_main_gsi1_read`: stable, readable and a valid identifier."""
    text = "_".join(re.sub(r"[^a-z0-9_]+", "_", part.lower()).strip("_") for part in parts if part)
    return text if re.match(r"^[a-z_]", text) else f"t_{text}"


def physical_name(table: str, suffix: str = "") -> str:
    """A name for a resource of table `table` where SNS topics and KMS aliases allow only letters, digits,
    `_` and `-` (a DynamoDB table name may also hold `.`): `orders.v2` -> `orders-v2-alarms`."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", table) + suffix
