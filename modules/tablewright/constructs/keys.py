"""Customer-managed KMS keys, rotated, each with an explicit key policy so reviewers see who may use it.

Every policy starts with the account statement of AWS's default key policy (the account root may do
everything, which lets IAM policies in the account grant use of the key); callers add statements for
the services that must use the key themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from tablewright.constructs.naming import logical_id
from tablewright.constructs.resources import (
    CallerIdentityData,
    IamPolicyDocumentData,
    KmsKey,
    PartitionData,
    PolicyPrincipal,
    PolicyStatement,
    RegionData,
)
from tablewright.constructs.terraform import Block, data_source, reference, resource

# The account, partition and region Terraform runs in: declared once per stack, shared by every key policy.
ACCOUNT_DATA = (
    data_source(CallerIdentityData(), "current"),
    data_source(PartitionData(), "current"),
    data_source(RegionData(), "current"),
)


@dataclass(frozen=True)
class Account:
    """References to the account, partition and region Terraform runs in (the blocks in `ACCOUNT_DATA`)."""

    id: str
    partition: str
    region: str


ACCOUNT = Account(
    id=ACCOUNT_DATA[0].ref("account_id"),
    partition=ACCOUNT_DATA[1].ref("partition"),
    region=ACCOUNT_DATA[2].ref("name"),
)


def key_address(base: str) -> str:
    return f"{KmsKey.terraform_type}.{logical_id(base, 'key')}"


def key_ref(base: str, attribute: str) -> str:
    return reference(key_address(base), attribute)


def kms_key(base: str, description: str, tags: dict[str, str], service_statements: list[PolicyStatement],
            protect: bool) -> list[Block]:
    """A rotated key `<base>_key` with the policy document `<base>_key_policy` (and the account data).
    `protect` (production): `prevent_destroy`, since a deleted key can no longer decrypt the table or its backups."""
    root = f"arn:{ACCOUNT.partition}:iam::{ACCOUNT.id}:root"
    policy = data_source(IamPolicyDocumentData(statement=[
        PolicyStatement(sid="AccountAdministersTheKey", actions=["kms:*"], resources=["*"],
                        principals=[PolicyPrincipal(type="AWS", identifiers=[root])]),
        *service_statements,
    ]), logical_id(base, "key_policy"))
    key = KmsKey(description=description, enable_key_rotation=True, deletion_window_in_days=30,
                 policy=policy.ref("json"), tags=tags or None)
    return [*ACCOUNT_DATA, policy, resource(key, logical_id(base, "key"), prevent_destroy=True if protect else None)]
