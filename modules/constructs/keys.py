"""Customer-managed KMS keys, rotated, each with an explicit key policy so reviewers see who may use it.

Every policy starts with the account statement of AWS's default key policy (the account root may do
everything, which lets IAM policies in the account grant use of the key); callers add statements for
the services that must use the key themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from modules.constructs.cdk import Construct, DataSource, Resource
from modules.constructs.naming import logical_id
from modules.constructs.resources import (
    CallerIdentityData,
    IamPolicyDocumentData,
    KmsKey,
    PartitionData,
    PolicyPrincipal,
    PolicyStatement,
    RegionData,
    ResourceArguments,
)


def data_source(scope: Construct, name: str, arguments: ResourceArguments) -> str:
    """Declare a data source once per stack; returns the prefix of its attribute references."""
    if scope.node.try_find_child(f"data.{arguments.terraform_type}.{name}") is None:
        DataSource(scope, name, arguments.terraform_type, arguments.arguments())
    return f"data.{arguments.terraform_type}.{name}"


@dataclass(frozen=True)
class Account:
    """References to the account, partition and region Terraform runs in."""

    id: str
    partition: str
    region: str


def current_account(scope: Construct) -> Account:
    return Account(
        id="${" + data_source(scope, "current", CallerIdentityData()) + ".account_id}",
        partition="${" + data_source(scope, "current", PartitionData()) + ".partition}",
        region="${" + data_source(scope, "current", RegionData()) + ".name}",
    )


def add_key(
    scope: Construct, base: str, description: str, tags: dict[str, str], service_statements: list[PolicyStatement]
) -> Resource:
    """A rotated key `<base>_key` with the policy document `<base>_key_policy`."""
    account = current_account(scope)
    root = f"arn:{account.partition}:iam::{account.id}:root"
    policy = IamPolicyDocumentData(statement=[
        PolicyStatement(sid="AccountAdministersTheKey", actions=["kms:*"], resources=["*"],
                        principals=[PolicyPrincipal(type="AWS", identifiers=[root])]),
        *service_statements,
    ])
    policy_ref = data_source(scope, logical_id(base, "key_policy"), policy)
    key = KmsKey(description=description, enable_key_rotation=True, deletion_window_in_days=30,
                 policy="${" + policy_ref + ".json}", tags=tags or None)
    return Resource(scope, logical_id(base, "key"), key.terraform_type, key.arguments())
