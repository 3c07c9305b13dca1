"""Every argument of `aws_dynamodb_table` for which the AWS provider replaces the table is blocked in review.

The provider's schema (`terraform providers schema -json`) lists every argument, down to the arguments of
its nested blocks; each one here has a change that a blueprint (or a hand edit) could make. The changes are
applied to tables in the emulator and planned by the real provider, which says which ones replace the table.
The review compares two syntheses without Terraform (modules/tablewright/review/changes.py), so it must know the same:
for every change, it plans a replacement exactly when the provider does, and classifies it blocked. A new
provider argument fails the test until it is given a change here.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tablewright.review.changes import from_configs, from_plan
from tablewright.review.classify import classify
from tests.support.emulator import Emulator
from tests.support.terraform_support import terraform, terraform_environment

pytestmark = pytest.mark.terraform
PROVIDER = "registry.terraform.io/hashicorp/aws"
ATTRIBUTES = ("PK", "SK", "GSI1PK", "GSI1SK", "LSI1SK")
KMS_KEY = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"

Body = dict[str, Any]


def base(name: str, variant: str) -> Body:
    """A table with one GSI and one local index, like those Tablewright writes (blocks as cdktf writes them)."""
    body: Body = {
        "name": name, "billing_mode": "PAY_PER_REQUEST", "hash_key": "PK", "range_key": "SK",
        "attribute": [{"name": attribute, "type": "S"} for attribute in ATTRIBUTES],
        "global_secondary_index": [{"name": "GSI1", "hash_key": "GSI1PK", "range_key": "GSI1SK",
                                    "projection_type": "INCLUDE", "non_key_attributes": ["a"]}],
        "local_secondary_index": [{"name": "LSI1", "range_key": "LSI1SK", "projection_type": "INCLUDE",
                                   "non_key_attributes": ["a"]}],
        "point_in_time_recovery": {"enabled": True}, "ttl": {"attribute_name": "expiresAt", "enabled": True},
        "server_side_encryption": {"enabled": False}, "deletion_protection_enabled": False, "tags": {"a": "b"},
        "table_class": "STANDARD", "stream_enabled": False,
    }
    if variant == "on_demand":
        body["on_demand_throughput"] = {"max_read_request_units": 100, "max_write_request_units": 100}
        body["global_secondary_index"][0]["on_demand_throughput"] = {"max_read_request_units": 100,
                                                                     "max_write_request_units": 100}
    if variant == "provisioned":
        body.update(billing_mode="PROVISIONED", read_capacity=5, write_capacity=5)
        body["global_secondary_index"][0].update(read_capacity=5, write_capacity=5)
    if variant == "stream":
        body.update(stream_enabled=True, stream_view_type="KEYS_ONLY")
    return body


def _gsi(body: Body, **changes: Any) -> None:
    body["global_secondary_index"][0].update(changes)


def _lsi(body: Body, **changes: Any) -> None:
    body["local_secondary_index"][0].update(changes)


def _rename_attribute(body: Body, old: str, new: str) -> None:
    body["attribute"] = [{**a, "name": new} if a["name"] == old else a for a in body["attribute"]]


def _key(body: Body, key: str, old: str, new: str) -> None:
    _rename_attribute(body, old, new)
    body[key] = new


def _gsi_attribute(body: Body) -> None:
    _rename_attribute(body, "GSI1SK", "GSI1SORT")
    _gsi(body, range_key="GSI1SORT")


def _gsi_hash_key(body: Body) -> None:
    _rename_attribute(body, "GSI1PK", "GSI1PART")
    _gsi(body, hash_key="GSI1PART")


def _lsi_range_key(body: Body) -> None:
    _rename_attribute(body, "LSI1SK", "LSI1SORT")
    _lsi(body, range_key="LSI1SORT")


def _attribute_type(body: Body) -> None:
    body["attribute"] = [{**a, "type": "N"} if a["name"] == "GSI1SK" else a for a in body["attribute"]]


def _gsi_maximum(direction: str) -> Callable[[Body], None]:
    def change(body: Body) -> None:
        body["global_secondary_index"][0]["on_demand_throughput"][f"max_{direction}_request_units"] = 200
    return change


def _set(**changes: Any) -> Callable[[Body], None]:
    return lambda body: body.update(changes)


def _block(block: str, **changes: Any) -> Callable[[Body], None]:
    return lambda body: body.update({block: {**body[block], **changes}})


# argument (as `block.argument` for nested blocks) -> (the table it starts from, the change)
CHANGES: dict[str, tuple[str, Callable[[Body], None]]] = {
    "billing_mode": ("on_demand", lambda body: (
        body.update(billing_mode="PROVISIONED", read_capacity=5, write_capacity=5),
        body.pop("on_demand_throughput"), body["global_secondary_index"][0].pop("on_demand_throughput"),
        _gsi(body, read_capacity=5, write_capacity=5))),
    "deletion_protection_enabled": ("on_demand", _set(deletion_protection_enabled=True)),
    "hash_key": ("on_demand", lambda body: _key(body, "hash_key", "PK", "PK2")),
    "name": ("on_demand", lambda body: body.update(name=body["name"] + "-renamed")),
    "range_key": ("on_demand", lambda body: _key(body, "range_key", "SK", "SK2")),
    "read_capacity": ("provisioned", _set(read_capacity=6)),
    "write_capacity": ("provisioned", _set(write_capacity=6)),
    "restore_date_time": ("on_demand", _set(restore_date_time="2026-01-01T00:00:00Z")),
    "restore_source_name": ("on_demand", _set(restore_source_name="other")),
    "restore_source_table_arn": ("on_demand", _set(
        restore_source_table_arn="arn:aws:dynamodb:us-east-1:123456789012:table/other")),
    "restore_to_latest_time": ("on_demand", _set(restore_to_latest_time=True)),
    "stream_enabled": ("on_demand", _set(stream_enabled=True, stream_view_type="NEW_IMAGE")),
    "stream_view_type": ("stream", _set(stream_view_type="NEW_AND_OLD_IMAGES")),
    "table_class": ("on_demand", _set(table_class="STANDARD_INFREQUENT_ACCESS")),
    "tags": ("on_demand", _set(tags={"a": "c"})),
    "attribute.name": ("on_demand", _gsi_hash_key),  # a key attribute renamed, with the key that uses it
    "attribute.type": ("on_demand", _attribute_type),
    "global_secondary_index.hash_key": ("on_demand", _gsi_hash_key),
    "global_secondary_index.name": ("on_demand", lambda body: _gsi(body, name="GSI9")),
    "global_secondary_index.non_key_attributes": ("on_demand", lambda body: _gsi(body, non_key_attributes=["a", "b"])),
    "global_secondary_index.projection_type": ("on_demand", lambda body: (
        _gsi(body, projection_type="ALL"), body["global_secondary_index"][0].pop("non_key_attributes"))),
    "global_secondary_index.range_key": ("on_demand", _gsi_attribute),
    "global_secondary_index.read_capacity": ("provisioned", lambda body: _gsi(body, read_capacity=6)),
    "global_secondary_index.write_capacity": ("provisioned", lambda body: _gsi(body, write_capacity=6)),
    "global_secondary_index.on_demand_throughput.max_read_request_units": ("on_demand", _gsi_maximum("read")),
    "global_secondary_index.on_demand_throughput.max_write_request_units": ("on_demand", _gsi_maximum("write")),
    "import_table.s3_bucket_source.bucket": ("on_demand", _set(
        import_table={"input_format": "CSV", "s3_bucket_source": {"bucket": "b"}})),
    "local_secondary_index.name": ("on_demand", lambda body: _lsi(body, name="LSI9")),
    "local_secondary_index.non_key_attributes": ("on_demand", lambda body: _lsi(body, non_key_attributes=["a", "b"])),
    "local_secondary_index.projection_type": ("on_demand", lambda body: (
        _lsi(body, projection_type="KEYS_ONLY"), body["local_secondary_index"][0].pop("non_key_attributes"))),
    "local_secondary_index.range_key": ("on_demand", _lsi_range_key),
    "on_demand_throughput.max_read_request_units": ("on_demand", _block("on_demand_throughput",
                                                                        max_read_request_units=200)),
    "on_demand_throughput.max_write_request_units": ("on_demand", _block("on_demand_throughput",
                                                                         max_write_request_units=200)),
    "point_in_time_recovery.enabled": ("on_demand", _block("point_in_time_recovery", enabled=False)),
    "point_in_time_recovery.recovery_period_in_days": ("on_demand", _block("point_in_time_recovery",
                                                                           recovery_period_in_days=7)),
    "replica.region_name": ("stream", _set(replica=[{"region_name": "us-west-2"}])),
    "server_side_encryption.enabled": ("on_demand", _block("server_side_encryption", enabled=True)),
    "server_side_encryption.kms_key_arn": ("on_demand", _block("server_side_encryption", enabled=True,
                                                               kms_key_arn=KMS_KEY)),
    "ttl.attribute_name": ("on_demand", _block("ttl", attribute_name="purgeAt")),
    "ttl.enabled": ("on_demand", _block("ttl", enabled=False)),
}
# Arguments that are not a setting of the table, each with the reason.
NOT_SETTINGS = {
    "id": "the resource's id (its name): never configured",
    "tags_all": "computed by the provider from `tags` and the provider's default tags",
    "timeouts.create": "how long Terraform waits: no setting of the table",
    "timeouts.delete": "how long Terraform waits: no setting of the table",
    "timeouts.update": "how long Terraform waits: no setting of the table",
    # `import_table` is one change as a whole (its arguments only say where the import reads from).
    **{f"import_table.{argument}": "part of `import_table`, changed as a whole" for argument in (
        "input_compression_type", "input_format", "input_format_options.csv.delimiter",
        "input_format_options.csv.header_list", "s3_bucket_source.bucket_owner",
        "s3_bucket_source.key_prefix")},
    # A replica is one change as a whole (Tablewright writes none; the review blocks any replica change).
    **{f"replica.{argument}": "part of a replica, changed as a whole" for argument in (
        "kms_key_arn", "point_in_time_recovery", "propagate_tags")},
}


def _arguments(block: dict[str, Any], prefix: str = "") -> set[str]:
    """Every configurable argument of a schema block, nested ones as `block.argument`."""
    found = {prefix + name for name, attribute in block.get("attributes", {}).items()
             if attribute.get("optional") or attribute.get("required")}
    for name, nested in block.get("block_types", {}).items():
        found |= _arguments(nested["block"], f"{prefix}{name}.")
    return found


def provider_arguments(workdir: Path, env: dict[str, str]) -> set[str]:
    (workdir / "main.tf.json").write_text(json.dumps(
        {"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws"}}}}))
    terraform(["init", "-input=false"], workdir, env)
    schema = json.loads(terraform(["providers", "schema", "-json"], workdir, env).stdout)
    return _arguments(schema["provider_schemas"][PROVIDER]["resource_schemas"]["aws_dynamodb_table"]["block"])


def _address(argument: str) -> str:
    return argument.replace(".", "_")


def configs(changed: bool) -> dict[str, Body]:
    """One table per change, before or after it."""
    bodies = {}
    for argument, (variant, change) in CHANGES.items():
        body = base(f"t-{_address(argument).replace('_', '-')}", variant)
        if changed:
            change(body)
        bodies[_address(argument)] = body
    return bodies


def _synthesis(bodies: dict[str, Body]) -> dict[str, Any]:
    return {"resource": {"aws_dynamodb_table": copy.deepcopy(bodies)}}


@pytest.fixture(scope="module")
def provider_plan(tmp_path_factory) -> tuple[set[str], dict[str, Any]]:
    """The provider's arguments, and its plan of every change against tables it applied before."""
    workdir = tmp_path_factory.mktemp("replacing")
    env = terraform_environment(workdir)
    arguments = provider_arguments(workdir, env)
    with Emulator() as emulator:
        (workdir / "provider_override.tf.json").write_text(json.dumps(emulator.provider_override()))
        (workdir / "main.tf.json").write_text(json.dumps(_synthesis(configs(changed=False))))
        terraform(["apply", "-input=false", "-auto-approve"], workdir, env)
        (workdir / "main.tf.json").write_text(json.dumps(_synthesis(configs(changed=True))))
        terraform(["plan", "-input=false", "-refresh=false", "-out=changes.tfplan"], workdir, env)
        plan = json.loads(terraform(["show", "-json", "changes.tfplan"], workdir, env).stdout)
    return arguments, plan


def test_every_provider_argument_has_a_change(provider_plan):
    arguments, _ = provider_plan
    covered = CHANGES.keys() | NOT_SETTINGS.keys()
    assert not arguments - covered, f"arguments of the provider without a change here: {sorted(arguments - covered)}"
    assert not covered - arguments, f"arguments the provider lacks: {sorted(covered - arguments)}"


def test_the_review_replaces_the_table_exactly_when_the_provider_does(provider_plan):
    _, plan = provider_plan
    by_name = {change.address.split(".")[1]: change for change in from_plan(plan)}
    replaced = {argument for argument in CHANGES if by_name.get(_address(argument)) is not None
                and by_name[_address(argument)].action == "replace"}
    # What the provider documents as forcing a new table must be among them: the check is not vacuous.
    assert {"name", "hash_key", "range_key", "local_secondary_index.name", "restore_source_name"} <= replaced
    before, after = _synthesis(configs(changed=False)), _synthesis(configs(changed=True))
    reviewed = {change.address.split(".")[1]: change for change in from_configs(before, after)}
    disagree = sorted(argument for argument in CHANGES
                      if (argument in replaced) != (reviewed[_address(argument)].action == "replace"))
    assert not disagree, f"the review and the provider disagree on replacing the table for: {disagree}"
    for argument in sorted(replaced):
        [table] = [c for c in classify([reviewed[_address(argument)]], production=False) if c.category == "table"]
        assert (table.action, table.cls, table.unblocked_by) == ("replace", "blocked", "destroy"), argument
        [planned] = [c for c in classify([by_name[_address(argument)]], production=False) if c.category == "table"]
        assert (planned.action, planned.cls) == ("replace", "blocked"), argument
