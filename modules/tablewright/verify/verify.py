"""The verify stage: create the synthesized table in an embedded DynamoDB, write sample items, run
every access pattern's plan and compare with the oracle, then check that every secondary index holds
exactly the items that carry its key attributes (sparse indexes)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from tablewright.client.generate import checked_client
from tablewright.client.model import Client
from tablewright.design.design import TableDesign
from tablewright.stacks.stack import Stack
from tablewright.synth.synth import synthesize
from tablewright.verify.batch import verify_batch
from tablewright.verify.client import verify_client
from tablewright.verify.indexes import verify_index
from tablewright.verify.runner import BlueprintResult, verify_pattern, write_samples
from tablewright.verify.samples import generate_samples
from tablewright.verify.tables import create_table_request, index_names, terraform_table

REGION = "us-east-1"


def verify_table(
    client: Any, design: TableDesign, config: dict[str, Any], seed: int = 7, create: bool = True,
    generated: Client | None = None,
) -> BlueprintResult:
    """Verify one design on `client`; `config` is the stack's synthesized Terraform (cdk.tf.json); with
    `generated`, that client too, on a table of its own."""
    table = terraform_table(config)["name"]
    request = create_table_request(config)
    if create:
        client.create_table(**request)
    samples = generate_samples(design, seed)
    result = BlueprintResult(design.blueprint.blueprint, table, len(samples))
    try:
        write_samples(client, table, samples)
    except ClientError as error:  # what DynamoDB refuses on every write (a key over its size limit: lint TW205)
        message = error.response.get("Error", {}).get("Message", str(error))
        result.refused = (f"writing the sample items: DynamoDB refuses them ({message}), as it would the "
                          "application's: see `tablewright lint`")
        return result
    result.results = [(verify_batch if plan.batch else verify_pattern)(client, design, plan, table, samples)
                      for plan in design.plans]
    result.indexes = [verify_index(client, design, index, table, samples) for index in index_names(request)]
    if generated is not None:
        result.client = verify_client(client, design, generated, request, samples)
    return result


def embedded_client() -> Any:
    import boto3

    return boto3.client(
        "dynamodb", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing"
    )


def verify_stacks(stacks: Sequence[Stack], seed: int = 7, with_client: bool = False) -> list[BlueprintResult]:
    """Synthesize (into a scratch directory) and verify every stack against moto, in-process (`with_client`:
    the generated Python client of each, too)."""
    from moto import mock_aws

    with tempfile.TemporaryDirectory(prefix="tablewright-verify-") as scratch:
        written = synthesize(list(stacks), Path(scratch) / "cdktf.out")
        configs = [json.loads(path.read_text()) for path in written]
    results = []
    with _isolated_credentials(), mock_aws():
        client = embedded_client()
        for stack, config in zip(stacks, configs, strict=True):
            generated = checked_client([stack], "python") if with_client else None
            results.append(verify_table(client, stack.design, config, seed, generated=generated))
    return results


class _isolated_credentials:
    """Keep real AWS credentials and profiles out of reach while the emulator runs."""

    names = ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION")

    def __enter__(self) -> None:
        self.saved = {name: os.environ.pop(name) for name in self.names if name in os.environ}
        os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_DEFAULT_REGION=REGION)

    def __exit__(self, *exc: object) -> None:
        for name in self.names:
            os.environ.pop(name, None)
        os.environ.update(self.saved)
