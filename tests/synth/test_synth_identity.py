"""The synthesized Terraform stays byte-identical: every stack of the corpus (tests/support/synth_corpus.py) against
the SHA-256 digests in tests/data/synth-reference.json, and the plain-data blocks behind it."""

from __future__ import annotations

import json

import pytest

from tablewright.blueprint.load import load_blueprints
from tablewright.constructs import halves
from tablewright.constructs.resources import DynamodbTableData, KmsAlias
from tablewright.constructs.terraform import (
    DuplicateBlock,
    UnexpectedExpression,
    data_source,
    fragment,
    local,
    resource,
)
from tablewright.stacks.stack import build_stacks
from tablewright.synth.synth import synthesize
from tests.support.synth_corpus import REFERENCE, digests, write_corpus


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "in-process"])
def test_every_corpus_stack_is_byte_identical_to_the_reference(tmp_path, monkeypatch, forked):
    """Completed in two processes or in one (`halves.py`): the same bytes."""
    monkeypatch.setattr(halves, "MIN_FORKED", 1 if forked else 10**9)
    monkeypatch.setattr(halves, "can_fork", lambda: forked)
    paths = write_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    synthesize(build_stacks([stack for path in paths for stack in load_blueprints(path)]), out)
    reference = json.loads(REFERENCE.read_text())
    found = digests(out)
    assert sorted(found) == sorted(reference)
    changed = sorted(name for name in reference if found[name] != reference[name])
    assert not changed, (
        f"cdk.tf.json changed for {', '.join(changed)}. Synthesize the corpus with the previous code and run "
        "`python tests/support/synth_corpus.py compare NEW_OUT OLD_OUT` to see where (the module docstring says how "
        "to renew the reference after an intended change)."
    )


def test_fragment_writes_cdktf_metadata_for_resources_and_data_sources_only():
    alias = resource(KmsAlias(name="alias/t", target_key_id="k"), "t_alias", prevent_destroy=True)
    count = '${try(contains(data.aws_dynamodb_tables.t.names, "t"), false) ? 1 : 0}'
    live = data_source(DynamodbTableData(name="t"), "t_live", count=count)
    terraform = fragment([alias, live, local("t_lookup", "${local.x}")], "app/stack")
    assert terraform == {
        "resource": {"aws_kms_alias": {"t_alias": {
            "name": "alias/t", "target_key_id": "k", "lifecycle": {"prevent_destroy": True},
            "//": {"metadata": {"path": "app/stack/aws_kms_alias.t_alias", "uniqueId": "t_alias"}}}}},
        "data": {"aws_dynamodb_table": {"t_live": {
            "name": "t", "count": count,
            "//": {"metadata": {"path": "app/stack/data.aws_dynamodb_table.t_live", "uniqueId": "t_live"}}}}},
        "locals": {"t_lookup": "${local.x}"},
    }
    assert live.ref("arn") == "${data.aws_dynamodb_table.t_live.arn}"


def test_fragment_refuses_an_expression_tablewright_does_not_write():
    """Defence in depth: blueprint values cannot form `${` or `%{`, and if one ever did, synthesis stops."""
    # `%${` and `$%{` start an evaluation too: the `%` or `$` before it is a literal (HCL scans left to right).
    for text in ('${file("/proc/self/environ")}', "%{ if true }x%{ endif }", "a-${var.x}",
                 '%${file("/etc/hostname")}', "$%{ if true }x$%{ endif }"):
        with pytest.raises(UnexpectedExpression, match="would be evaluated by Terraform"):
            fragment([resource(KmsAlias(name="alias/t", target_key_id=text), "t_alias")], "s")
    escaped = resource(KmsAlias(name="alias/t", target_key_id="$${file(x)} %%{ if } $$${x}"), "t_alias")
    assert fragment([escaped], "s")["resource"]["aws_kms_alias"]["t_alias"]["target_key_id"] == \
        "$${file(x)} %%{ if } $$${x}"


def test_fragment_shares_identical_blocks_and_refuses_different_ones_at_one_address():
    one = data_source(DynamodbTableData(name="a"), "same")
    assert fragment([one, one], "s") == fragment([one], "s")
    with pytest.raises(DuplicateBlock, match=r"data.aws_dynamodb_table.same"):
        fragment([one, data_source(DynamodbTableData(name="b"), "same")], "s")
