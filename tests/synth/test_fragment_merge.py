"""`synth` merges fragments into each stack's file in Python; cdktf merges them itself in any other
app. Both must write the same bytes, whatever the fragments hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tablewright.constructs import cdk

# Two fragments that meet at every kind of value cdktf's deepMerge treats apart: nested objects, an
# empty object, lists at the same key (appended), a scalar written twice (the later one wins).
FIRST = {"resource": {"aws_sns_topic": {"a": {"name": "a", "tags": {}}}}, "import": [{"to": "x.a", "id": "a"}],
         "locals": {"n": 1, "shared": "first"}}
SECOND = {"resource": {"aws_sns_topic": {"b": {"name": "b"}}, "aws_sqs_queue": {"q": {"delay_seconds": 0.5}}},
          "import": [{"to": "x.b", "id": "b"}], "locals": {"shared": "second", "list": [1, 2]},
          "output": {"o": {"value": "${aws_sns_topic.a.arn}"}}}


def _add_fragments(stack: cdk.TerraformStack) -> None:
    for construct_id, fragment in (("first", FIRST), ("second", SECOND)):
        cdk.add_fragment(stack, construct_id, lambda fragment=fragment: fragment)


def _written(tmp_path: Path, name: str, merged_by_tablewright: bool) -> str:
    app = cdk.App(outdir=str(tmp_path / name), stack_traces=False)
    if merged_by_tablewright:  # a FragmentStack keeps its fragments in Python, for synth to merge
        ours = cdk.FragmentStack(app, "fragments")
        _add_fragments(ours)
        assert len(ours.fragments) == 2
        cdk.synth(app, [ours])
    else:  # in any other stack (a user's own app) they are elements, merged by cdktf in Node.js
        _add_fragments(cdk.TerraformStack(app, "fragments"))
        app.synth()
    return (tmp_path / name / "stacks" / "fragments" / "cdk.tf.json").read_text()


@pytest.mark.skipif(cdk.BACKEND != "cdktf", reason="cdktn's own layout differs; synth rewrites it")
def test_the_python_merge_writes_what_cdktf_writes(tmp_path):
    ours, cdktfs = _written(tmp_path, "ours", True), _written(tmp_path, "cdktf", False)
    assert ours == cdktfs
    assert '"to": "x.a"' in ours and '"to": "x.b"' in ours and '"tags": {' in ours and '"second"' in ours


def test_deep_merge_follows_cdktf() -> None:
    target: dict[str, Any] = {"a": {"keep": 1}, "list": [1], "scalar": "old"}
    cdk.deep_merge(target, {"a": {"add": 2, "empty": {}}, "list": [2], "scalar": "new", "fresh": [3]})
    assert target == {"a": {"keep": 1, "add": 2, "empty": {}}, "list": [1, 2], "scalar": "new", "fresh": [3]}


def test_only_fragment_stacks_are_merged_in_python(tmp_path):
    app = cdk.App(outdir=str(tmp_path / "out"), stack_traces=False)
    plain = cdk.TerraformStack(app, "plain")
    with pytest.raises(TypeError, match="not a FragmentStack"):
        cdk.synth(app, [plain])  # type: ignore[list-item]
    assert not list((tmp_path / "out").glob("stacks/*/cdk.tf.json"))  # refused before synthesizing
