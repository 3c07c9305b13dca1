"""The request model (capacity/requests.py) against what each generated client sends: every pattern and every write
kind of the bundled and test blueprints, called through the client against the emulator with DynamoDB's requests
recorded, and compared per call with the model the capacity report counts (Python here, TypeScript in the slow tier).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest

from tablewright.capacity.estimate import changed_attributes
from tablewright.capacity.requests import Request, read_requests, write_requests
from tablewright.client.model import client_of
from tablewright.client.names import class_name, snake
from tablewright.client.python import identifier
from tablewright.design.design import TABLE, QueryPlan, TableDesign
from tablewright.stacks.stack import Stack
from tablewright.synth.synth import synthesize
from tablewright.verify.client import client_values
from tablewright.verify.oracle import probes
from tablewright.verify.samples import Sample, generate_samples
from tablewright.verify.tables import create_table_request
from tests.conftest import ROOT, TEST_BLUEPRINTS
from tests.support.client_support import TypeScriptTable, module_text, python_module, run_tsc, stacks_of, table_of

CASES = {"orders": ROOT / "blueprints" / "orders.yaml", "crm": ROOT / "blueprints" / "crm.yaml",
         **{path.stem: path for path in sorted(TEST_BLUEPRINTS.glob("*.yaml"))}}
# the bundled two and updates.yaml (every kind of update the model tells apart); the others take seconds each
# against moto: the slow tier runs them
FAST = {"orders", "crm", "updates"}


@contextmanager
def recorded() -> Iterator[list[str]]:
    """Every DynamoDB action the emulator serves (in this process: moto in-process or `tablewright local`'s)."""
    from moto.dynamodb.responses import DynamoHandler

    sent: list[str] = []
    original = DynamoHandler.call_action

    def call_action(self: Any) -> Any:
        sent.append(self.headers.get("X-Amz-Target", "").rpartition(".")[2])
        return original(self)

    DynamoHandler.call_action = call_action  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        DynamoHandler.call_action = original  # type: ignore[method-assign]


def _counted(requests: tuple[Request, ...]) -> Counter[str]:
    """The model's requests of one call, whole (a call that changes every attribute it lists sends whole requests)."""
    counted: Counter[str] = Counter()
    for request in requests:
        assert request.count == int(request.count), request
        counted[request.operation] += int(request.count)
    return counted


def _sent(sent: list[str], call: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Counter[str], Any]:
    """What `call(*args, **kwargs)` sent, and what it returned."""
    start = len(sent)
    result = call(*args, **kwargs)
    return Counter(sent[start:]), result


def _one_bucket(value: Any) -> Any:
    """A range inside one time bucket: both bounds the range's start."""
    return (value[0], value[0]) if isinstance(value, tuple) else value


def _arguments(stack: Stack, plan: QueryPlan, samples: list[Sample]) -> dict[str, Any]:
    """Arguments of a call that finds items: the pattern's first probe (a range of one bucket, when bucketed)."""
    client = client_of([stack], "")
    read = next(r for r in client.reads if r.pattern == plan.pattern)
    values = probes(stack.design, plan, samples)[0].values
    found = {}
    for argument in read.arguments:
        name = argument.attribute
        value = (values[f"{name}.from"], values[f"{name}.to"]) if argument.between else values[name]
        found[identifier(name)] = _one_bucket(value) if plan.fan_out and plan.fan_out.kind == "buckets" else value
    if read.hides_expired:  # a clock before every expiry: the filter drops no item, so a page holds `limit`
        found["as_of"] = datetime(2000, 1, 1, tzinfo=UTC)
    return found


def _batch_keys(design: TableDesign, plan: QueryPlan, samples: list[Sample]) -> list[dict[str, Any]]:
    entity = plan.entities[0]
    shape = design.shapes[entity][TABLE]
    attributes = shape.pk.attributes + shape.sk.attributes + shape.shard_by
    own = [s for s in samples if s.entity == entity][: plan.batch]
    return [{a: s.values[a] for a in dict.fromkeys(attributes)} for s in own]


def check_reads(stack: Stack, table: Any, sent: list[str], samples: list[Sample]) -> dict[str, str]:
    """Per pattern: what the call sent, where it differs from the model."""
    design, differences = stack.design, {}
    for plan in sorted(design.plans, key=lambda p: p.pattern):
        method = getattr(table, identifier(plan.pattern))
        if plan.batch:
            got, _ = _sent(sent, method, _batch_keys(design, plan, samples))
            model = read_requests(plan, item_bytes=1)
        else:
            # a count of every match (`limit=None`) reads every shard; one with a limit stops early, by the data:
            # capacity's figure for that is pinned by hand in tests/capacity/test_request_model.py
            limit = {"limit": None} if plan.count else {}
            got, result = _sent(sent, method, **_arguments(stack, plan, samples), **limit)
            page = getattr(result, "items", None)  # a page's items (a GetItem returns a dict, a count a number)
            returned = len(page) if isinstance(page, list) else 0
            model = read_requests(plan, fetched=float(returned))
        declared = {r.operation for r in stack.capacity.read(plan.pattern).requests}
        if got != _counted(model) or not declared <= set(got):
            differences[plan.pattern] = f"sent {dict(got)}, the model counts {dict(_counted(model))} " \
                                        f"(the capacity report: {sorted(declared)})"
    return differences


def _other(samples: list[Sample], entity: str, attribute: str, current: Any) -> Any:
    found = next((s.values[attribute] for s in samples if s.entity == entity
                  and s.values.get(attribute) is not None and s.values[attribute] != current), None)
    if found is not None:
        return found
    if isinstance(current, datetime | date):
        return current + timedelta(days=1)
    if isinstance(current, bool):
        return not current
    if isinstance(current, int | float):
        return current + 1
    if isinstance(current, str):
        return current + "-2"
    raise AssertionError(f"no other value of {entity}.{attribute} than {current!r}")


def check_writes(stack: Stack, table: Any, sent: list[str], samples: list[Sample]) -> dict[str, str]:
    """Per entity and kind: an insert, an update of what the blueprint says updates change, a delete."""
    design, differences = stack.design, {}
    declared = {(w.entity, kind.kind): kind.requests for w in stack.capacity.writes for kind in w.kinds}
    for entity in sorted(design.shapes):
        own = [s for s in samples if s.entity == entity]
        sample, method = own[-1], snake(entity)
        changes, _ = changed_attributes(design, entity)
        shape = design.shapes[entity][TABLE]
        table_key = dict.fromkeys(shape.pk.attributes + shape.sk.attributes + shape.shard_by)
        key = {a: sample.values[a] for a in table_key}
        passes = design.blueprint.entities[entity].write_rates.passes
        new = {**{a: _other(samples, entity, a, sample.values.get(a)) for a in changes},
               **{a: sample.values[a] for a in passes}}  # passed unchanged
        calls = {"insert": (f"put_{method}", client_values(design, entity, sample.values)),
                 "update": (f"update_{method}", key, client_values(design, entity, new)),
                 "delete": (f"delete_{method}", {**key, **{a: v for a, v in new.items() if a in table_key}})}
        for kind, (name, *args) in calls.items():
            if kind == "update" and not changes:
                continue
            got, _ = _sent(sent, getattr(table, name), *args)
            # a call that changes every attribute the blueprint says updates change (and passes the others)
            model = write_requests(design, entity, kind, dict.fromkeys(changes, 1.0), 1, frozenset(passes)).requests
            if declared.get((entity, kind), model) != model and kind == "update":
                declared.pop((entity, kind))  # shares below 1: capacity counts a mix of such calls
            if got != _counted(model) or declared.get((entity, kind), model) != model:
                differences[f"{entity} {kind}"] = f"sent {dict(got)}, the model counts {dict(_counted(model))}"
    return differences


def _python_table(aws: Any, path: Path, stack: Stack, scratch: Path) -> Any:
    name = table_of(aws, path, scratch, stack.source.environment)
    module = python_module(path, stack.source.environment)
    return getattr(module, class_name(stack.design.blueprint.blueprint) + "Table")(aws, name)


def _stack(name: str) -> Stack:
    return stacks_of(CASES[name])[0]


@pytest.mark.parametrize("name", [pytest.param(name, marks=[] if name in FAST else [pytest.mark.terraform])
                                  for name in CASES])
def test_the_python_client_sends_what_the_request_model_counts(name, aws, tmp_path):
    stack = _stack(name)
    table = _python_table(aws, CASES[name], stack, tmp_path)
    samples = generate_samples(stack.design)
    with recorded() as sent:
        writes = check_writes(stack, table, sent, samples)
        for sample in samples:
            getattr(table, f"put_{snake(sample.entity)}")(client_values(stack.design, sample.entity, sample.values))
        reads = check_reads(stack, table, sent, samples)
    assert {**writes, **reads} == {}


def test_an_update_of_part_of_an_index_key_is_recorded_reading_first_as_capacity_counts(aws, tmp_path):
    # CRM without `passes: [industry]`: Customer's updates change lastTouchAt alone, GSI1's sort key beside industry its
    # partition key, so the client reads industry first (a strongly consistent GetItem of a 1,200-byte item: 1
    # RCU), at 18 updates/s in prod.
    path = tmp_path / "crm.yaml"
    shutil.copytree(ROOT / "blueprints" / "shared", tmp_path / "shared")
    path.write_text(CASES["crm"].read_text().replace("changes: [lastTouchAt], passes: [industry]",
                                                     "changes: [lastTouchAt]"))
    stack = next(s for s in stacks_of(path) if s.source.environment == "prod")
    update = next(k for w in stack.capacity.writes if w.entity == "Customer" for k in w.kinds if k.kind == "update")
    assert [(r.operation, r.count) for r in update.requests] == [("GetItem", 1), ("UpdateItem", 1)]
    assert (update.rate, update.read_units) == (18, 1.0)
    reads = [f for f in stack.capacity.traffic.flows if f.before_write and f.source == "Customer"]
    assert [(f.target, f.units) for f in reads] == [(TABLE, 18 * 1.0)]
    table = _python_table(aws, path, stack, tmp_path)
    with recorded() as sent:  # the client sends what the model counts: GetItem and UpdateItem for the update
        assert check_writes(stack, table, sent, generate_samples(stack.design)) == {}


def _typescript_case(name: str, scratch: Path) -> tuple[Stack, Path]:
    stack = _stack(name)
    (scratch / f"{name}_client.ts").write_text(module_text(CASES[name], "typescript", stack.source.environment))
    done = run_tsc(scratch, "*.ts", out_dir="build")
    assert done.returncode == 0, done.stdout + done.stderr
    return stack, scratch / "build" / f"{name}_client.js"


@pytest.mark.terraform
@pytest.mark.parametrize("name", list(CASES))
def test_the_typescript_client_sends_what_the_request_model_counts(name, tmp_path):
    from tests.support.emulator import Emulator

    stack, compiled = _typescript_case(name, tmp_path)
    with Emulator() as emulator:
        client = boto3.client("dynamodb", endpoint_url=emulator.endpoint, region_name="us-east-1",
                              aws_access_key_id="testing", aws_secret_access_key="testing")
        (written,) = synthesize([stack], tmp_path / "out")
        request = create_table_request(json.loads(written.read_text()))
        client.create_table(**request)
        table = TypeScriptTable(compiled, client_of([stack], ""), emulator.endpoint, request["TableName"])
        samples = generate_samples(stack.design)
        try:
            with recorded() as sent:
                writes = check_writes(stack, table, sent, samples)
                for sample in samples:
                    getattr(table, f"put_{snake(sample.entity)}")(
                        client_values(stack.design, sample.entity, sample.values))
                reads = check_reads(stack, table, sent, samples)
        finally:
            table.close()
    assert {**writes, **reads} == {}
