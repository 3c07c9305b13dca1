"""One set of encoding vectors (tests/data/encoding-vectors.json, written by hand from the documented rules) for
every implementation: the engine (tablewright/blueprint/encoding.py, and the items tablewright/design/items.py
builds from key templates), the generated Python module and the generated TypeScript module under Node.

Each generated module is the one of a blueprint made of the vectors' entities; a value is written by the very
expression the module's generator writes for it (`operations.key_text`), a bucket, a range of buckets and a shard by
the module's runtime. The TypeScript one is compiled by tsc and run by Node, in the slow tier as every test that
runs tsc (without TypeScript or Node it skips, under CI it fails: `missing_tool`)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tablewright.blueprint.encoding import bucket_range, bucket_value, encode_key_value
from tablewright.blueprint.language import AttributeSpec
from tablewright.blueprint.templates import shard_number, shard_values
from tablewright.client import python, typescript
from tablewright.client.model import client_of, field_of
from tablewright.client.names import snake
from tablewright.client.operations import key_text
from tablewright.design.items import build_item
from tests.conftest import ROOT
from tests.support.client_support import module_text, python_module, run_tsc, stacks_of

VECTORS = json.loads((ROOT / "tests" / "data" / "encoding-vectors.json").read_text())
ENTITIES = VECTORS["keys"]["entities"]
SECTIONS = ("values", "buckets", "bucket_ranges", "shards", "shard_numbers", "keys")
Outcome = dict[str, Any]  # {"key": ...} (a text or a list of them, or the key attributes) or {"error": message}


def spec(attribute: str | dict[str, Any]) -> AttributeSpec:
    return AttributeSpec.model_validate({"type": attribute} if isinstance(attribute, str) else attribute)


def parsed(kind: str, value: Any) -> Any:
    """A vector's value as Python takes it: times as datetimes, dates as dates."""
    if kind == "timestamp":
        return datetime.fromisoformat(value)
    return date.fromisoformat(value) if kind == "date" else value


def outcome(make: Callable[[], Any]) -> Outcome:
    try:
        return {"key": make()}
    except ValueError as error:
        return {"error": str(error)}


def expected(case: dict[str, Any]) -> Any:
    return next(case[name] for name in ("key", "keys", "shard", "numbers") if name in case)


def mismatches(found: dict[str, list[Outcome]]) -> list[str]:
    """Every case whose outcome is not what the vectors say (a refused case: refused with a message holding the
    vector's text)."""
    wrong = []
    cases = {section: VECTORS[section] for section in SECTIONS[:-1]} | {"keys": VECTORS["keys"]["cases"]}
    assert {section: len(outcomes) for section, outcomes in found.items()} == {
        section: len(cases[section]) for section in SECTIONS}
    for section in SECTIONS:
        for case, result in zip(cases[section], found[section], strict=True):
            ok = (case["error"] in result.get("error", "")) if "error" in case else result == {"key": expected(case)}
            if not ok:
                wrong.append(f"{section}: {json.dumps(case)} gave {json.dumps(result)}")
    return wrong


def blueprint(tmp_path: Path) -> Path:
    """A blueprint of the vectors' entities, each read by its table key."""
    patterns = {f"{snake(name)}_by_key": {"entity": name, "where": {a: "=" for a in entity["attributes"]}}
                for name, entity in ENTITIES.items()}
    document = {"blueprint": "vectors", "version": "1.0.0", "table": {"name": "vectors_main"},
                "entities": ENTITIES, "access_patterns": patterns}
    path = tmp_path / "vectors.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def item_values(case: dict[str, Any]) -> dict[str, Any]:
    attributes = ENTITIES[case["entity"]]["attributes"]
    return {name: parsed(spec(attributes[name]).type, value) for name, value in case["item"].items()}


def test_the_engine_writes_what_the_vectors_say(tmp_path):
    design = stacks_of(blueprint(tmp_path))[0].design

    def keys(case: dict[str, Any]) -> dict[str, str]:
        item = build_item(design, case["entity"], item_values(case))
        return {name: item[name]["S"] for name in ("PK", "SK")}
    found = {
        "values": [outcome(lambda c=c: encode_key_value(spec(c["attribute"]), parsed(
            spec(c["attribute"]).type, c["value"]))) for c in VECTORS["values"]],
        "buckets": [outcome(lambda c=c: bucket_value(spec(c["attribute"]), parsed(
            spec(c["attribute"]).type, c["value"]), c["bucket"])) for c in VECTORS["buckets"]],
        "bucket_ranges": [outcome(lambda c=c: bucket_range(spec(c["attribute"]), *(
            parsed(spec(c["attribute"]).type, c[end]) for end in ("from", "to")), c["bucket"]))
            for c in VECTORS["bucket_ranges"]],
        "shards": [outcome(lambda c=c: shard_number(c["values"], c["shards"])) for c in VECTORS["shards"]],
        "shard_numbers": [outcome(lambda c=c: shard_values(c["shards"])) for c in VECTORS["shard_numbers"]],
        "keys": [outcome(lambda c=c: keys(c)) for c in VECTORS["keys"]["cases"]],
    }
    assert mismatches(found) == []


def test_the_generated_python_module_writes_what_the_vectors_say(tmp_path):
    module = python_module(blueprint(tmp_path))

    def key(attribute: str | dict[str, Any], value: Any) -> Any:
        field = field_of("value", spec(attribute))
        expression = python.LANGUAGE.call(key_text(field), "value")  # as the generator writes it
        return eval(expression, vars(module), {"value": parsed(field.type, value)})

    def keys(case: dict[str, Any]) -> dict[str, str]:
        entity = getattr(module, python.NAMING.entity_constant(case["entity"]))
        return dict(entity.table.build(item_values(case)))
    found = {
        "values": [outcome(lambda c=c: key(c["attribute"], c["value"])) for c in VECTORS["values"]],
        "buckets": [outcome(lambda c=c: module._bucket(parsed(spec(c["attribute"]).type, c["value"]), c["bucket"]))
                    for c in VECTORS["buckets"]],
        "bucket_ranges": [outcome(lambda c=c: module._buckets(*(
            parsed(spec(c["attribute"]).type, c[end]) for end in ("from", "to")), c["bucket"]))
            for c in VECTORS["bucket_ranges"]],
        "shards": [outcome(lambda c=c: module._shard(c["values"], c["shards"])) for c in VECTORS["shards"]],
        "shard_numbers": [outcome(lambda c=c: module._shards(c["shards"])) for c in VECTORS["shard_numbers"]],
        "keys": [outcome(lambda c=c: keys(c)) for c in VECTORS["keys"]["cases"]],
    }
    assert mismatches(found) == []


# Runs the vectors through the compiled module: the outcome of every case of every section, as JSON.
DRIVER = """
const m = require("./build/vectors_client.js");
const vectors = require(process.argv[1]);
const kind = (attribute) => (typeof attribute === "string" ? attribute : attribute.type);
const value = (attribute, text) => (kind(attribute) === "timestamp" ? new Date(text) : text);
const outcome = (make) => {
  try { return { key: make() }; } catch (error) { return { error: String(error.message) }; }
};
const entities = vectors.keys.entities;
const item = (c) => Object.fromEntries(Object.entries(c.item).map(
  ([name, text]) => [name, value(entities[c.entity].attributes[name], text)]));
console.log(JSON.stringify({
  values: vectors.values.map((c, n) => outcome(() => m.keyTexts[n](value(c.attribute, c.value)))),
  buckets: vectors.buckets.map((c) => outcome(() => m.bucket(value(c.attribute, c.value), c.bucket))),
  bucket_ranges: vectors.bucket_ranges.map((c) => outcome(
    () => m.buckets(value(c.attribute, c.from), value(c.attribute, c.to), c.bucket))),
  shards: vectors.shards.map((c) => outcome(() => m.shard(c.values, c.shards))),
  shard_numbers: vectors.shard_numbers.map((c) => outcome(() => m.shardNumbers(c.shards))),
  keys: vectors.keys.cases.map((c) => outcome(() => m.keyBuilders[c.entity](item(c)))),
}));
"""


@pytest.mark.terraform
def test_the_generated_typescript_module_writes_what_the_vectors_say(tmp_path):
    path = blueprint(tmp_path)
    key_texts = [typescript.LANGUAGE.call(key_text(field_of("value", spec(c["attribute"]))), "value")
                 for c in VECTORS["values"]]
    builders = {entity.name: typescript.NAMING.key_builder(entity, entity.table_key)
                for entity in client_of(stacks_of(path), "").entities}
    exports = ("\n// For the vectors: the runtime's functions, each value's expression, the key builders.\n"
               "export { bucket, buckets, shard, shardNumbers };\n"
               "export const keyTexts: ((value: any) => string)[] = [\n"
               + "".join(f"  (value: any) => {expression},\n" for expression in key_texts) + "];\n"
               "export const keyBuilders: Record<string, (values: any) => Record<string, string>> = {\n"
               + "".join(f"  {json.dumps(name)}: {builder},\n" for name, builder in builders.items()) + "};\n")
    (tmp_path / "vectors_client.ts").write_text(module_text(path, "typescript") + exports)
    done = run_tsc(tmp_path, "vectors_client.ts", out_dir="build")
    assert done.returncode == 0, done.stdout + done.stderr
    vectors = ROOT / "tests" / "data" / "encoding-vectors.json"
    run = subprocess.run(["node", "-e", DRIVER, str(vectors)], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert mismatches(json.loads(run.stdout)) == []

