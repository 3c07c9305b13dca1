"""`verify --client`: the generated Python client, driven through every write and every access pattern
against the embedded DynamoDB, and compared with what the design writes (`build_item`) and with the oracle.

On a table of its own, created from the synthesized Terraform (its design tag included):
1. `check_design()` passes;
2. `put_<entity>` of every sample writes exactly the item the design plans, keys, shards and all;
3. every pattern method returns what the oracle expects, and its pages of 2, followed by their tokens,
   return the same items without a repeat or a gap;
4. `update_<entity>` rewrites the index keys made of a changed attribute, moves an item whose table key
   changes, and `delete_<entity>` removes it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from botocore.exceptions import ClientError

from tablewright.blueprint.encoding import stored_value
from tablewright.client.model import Client
from tablewright.client.names import class_name, snake
from tablewright.client.python import identifier, render
from tablewright.design.design import ENTITY_ATTRIBUTE, NOW, TABLE, QueryPlan, TableDesign
from tablewright.design.items import build_item
from tablewright.verify.oracle import Expected, Probe, expected, key_probes, probes
from tablewright.verify.runner import ClientCheck, comparable, compare, short_value, table_key
from tablewright.verify.samples import Sample

MAX_PAGES = 10_000  # a token that never ends is a failure, not a hang


def load_module(text: str, name: str) -> ModuleType:
    """Import generated code (written to a scratch file, so tracebacks show its lines)."""
    with tempfile.TemporaryDirectory(prefix="tablewright-client-") as scratch:
        path = Path(scratch) / f"{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is made
        try:
            spec.loader.exec_module(module)
        finally:
            del sys.modules[name]
    return module


def client_values(design: TableDesign, entity: str, values: dict[str, Any]) -> dict[str, Any]:
    """A sample's values as the client's types take them (sets as sets)."""
    specs = design.blueprint.entities[entity].attributes
    return {name: set(value) if specs[name].type in ("string_set", "number_set") else value
            for name, value in values.items() if value is not None}


def low_level(design: TableDesign, plan: QueryPlan, row: dict[str, Any]) -> dict[str, Any]:
    """A client's returned item as DynamoDB holds it, to compare with the oracle's."""
    entity = row.get(ENTITY_ATTRIBUTE, plan.entities[0])
    specs = design.blueprint.entities[entity].attributes
    item = {name: stored_value(specs[name], value) if name in specs else {"S": value}  # a key: its text
            for name, value in row.items() if name != ENTITY_ATTRIBUTE}
    if ENTITY_ATTRIBUTE in row:
        item[ENTITY_ATTRIBUTE] = {"S": entity}
    return item


def _same(written: dict[str, Any], planned: dict[str, Any]) -> str | None:
    """The first attribute where two items differ (sets compared as sets), or None."""
    for name in sorted(written.keys() | planned.keys()):
        got, want = written.get(name), planned.get(name)
        if got is None or want is None or comparable(got) != comparable(want):
            return f"{name} is {short_value(got)}, the design writes {short_value(want)}"
    return None


def _arguments(client: Client, plan: QueryPlan, probe: Probe) -> dict[str, Any]:
    read = next(r for r in client.reads if r.pattern == plan.pattern)
    found = {}
    for argument in read.arguments:
        name = argument.attribute
        found[identifier(name)] = ((probe.values[f"{name}.from"], probe.values[f"{name}.to"]) if argument.between
                                   else probe.values[name])
    if read.hides_expired:
        found["as_of"] = datetime.fromtimestamp(probe.values[NOW], UTC)
    return found


def _rows(page: Any) -> list[dict[str, Any]]:
    if page is None:
        return []
    return [page] if isinstance(page, dict) else list(page.items)


def _walk(method: Any, arguments: dict[str, Any], size: int) -> tuple[list[dict[str, Any]], int] | str:
    """Every item, `size` at a time, by following the tokens: (items, pages), or why it did not end."""
    items: list[dict[str, Any]] = []
    token = None
    for pages in range(1, MAX_PAGES + 1):
        page = method(**arguments, limit=size, start=token)
        if len(page.items) > size:
            return f"a page of limit {size} held {len(page.items)} items"
        items += page.items
        token = page.next
        if token is None:
            return items, pages
    return f"the tokens did not end after {MAX_PAGES} pages"


def _key_text(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=repr)


def check_pattern(client: Client, design: TableDesign, table: Any, plan: QueryPlan,
                  samples: Sequence[Sample]) -> ClientCheck:
    check = ClientCheck(f"{plan.pattern}()")
    method = getattr(table, identifier(plan.pattern))
    if plan.batch:
        check.failure = _batch_difference(design, plan, method, samples)
        return check
    for probe in probes(design, plan, samples):
        arguments = _arguments(client, plan, probe)
        if plan.count:
            difference = _count_difference(method, arguments, expected(design, plan, samples, probe),
                                           expected(design, plan, samples, probe, limited=False))
            if difference is not None:
                check.failure = f"{plan.pattern}(): with {probe.describe()}: {difference}"
                return check
            continue
        rows = [low_level(design, plan, row) for row in _rows(method(**arguments))]
        difference = compare(design, plan, expected(design, plan, samples, probe), rows)
        if difference is None and plan.operation != "GetItem":
            difference = _paging_difference(plan, method, arguments)
        if difference is not None:
            check.failure = f"{plan.pattern}(): with {probe.describe()}: {difference}"
            return check
    return check


def _batch_difference(design: TableDesign, plan: QueryPlan, method: Any, samples: Sequence[Sample]) -> str | None:
    """A batch get of the oracle's keys (one without an item, one twice): their items, each once, in key order."""
    assert plan.batch is not None
    probes_ = key_probes(design, plan, samples, plan.batch)
    found = [sample for probe in probes_ for sample in expected(design, plan, samples, probe).samples]
    keys = [probe.values for probe in probes_]
    rows = [low_level(design, plan, row) for row in method(keys + keys[:1])]
    want = Expected(tuple((sample,) for sample in found), (1,) * len(found), ordered=True)
    difference = compare(design, plan, want, rows)
    return None if difference is None else f"{plan.pattern}(): with {len(keys)} keys: {difference}"


def _count_difference(method: Any, arguments: dict[str, Any], limited: Expected, everything: Expected) -> str | None:
    """A count method's answers at its own limit, at none, and at 2 against the oracle's counts."""
    for limit, want in ((None, len(everything.samples)), (2, min(2, len(everything.samples)))):
        got = method(**arguments, limit=limit)
        if got != want:
            return f"limit={limit} counted {got!r}, expected {want}"
    got = method(**arguments)
    return None if got == len(limited.samples) else f"counted {got!r}, expected {len(limited.samples)}"


def _paging_difference(plan: QueryPlan, method: Any, arguments: dict[str, Any]) -> str | None:
    everything = [_key_text(row) for row in method(**arguments, limit=None).items]
    walked = _walk(method, arguments, 2)
    if isinstance(walked, str):
        return walked
    paged = [_key_text(row) for row in walked[0]]
    repeated = [row for row, count in Counter(paged).items() if count > Counter(everything)[row]]
    if repeated:
        return f"pages of 2 repeat an item: {repeated[0][:200]}"
    sharded = plan.fan_out is not None and plan.fan_out.kind == "shards"
    if (Counter(paged) != Counter(everything)) if sharded else (paged != everything):
        missing = list((Counter(everything) - Counter(paged)).elements())
        return ("pages of 2 miss an item: " + missing[0][:200]) if missing else \
            "pages of 2 return the items in another order"
    return None


def _stored(table_client: Any, name: str, design: TableDesign) -> dict[tuple[str, str], dict[str, Any]]:
    items: dict[tuple[str, str], dict[str, Any]] = {}
    request: dict[str, Any] = {"TableName": name, "ConsistentRead": True}
    while True:
        answer = table_client.scan(**request)
        items.update({table_key(design.table_keys, item): item for item in answer["Items"]})
        if "LastEvaluatedKey" not in answer:
            return items
        request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def check_puts(design: TableDesign, dynamodb: Any, table: Any, name: str, samples: Sequence[Sample]) -> ClientCheck:
    check = ClientCheck("put_<entity>()")
    for sample in samples:
        getattr(table, f"put_{snake(sample.entity)}")(client_values(design, sample.entity, sample.values))
    stored = _stored(dynamodb, name, design)
    for sample in samples:
        written = stored.get(table_key(design.table_keys, sample.item))
        if written is None:
            key = table_key(design.table_keys, sample.item)
            check.failure = f"put_{snake(sample.entity)}() wrote no item under {key}"
            return check
        difference = _same(written, sample.item)
        if difference is not None:
            check.failure = f"put_{snake(sample.entity)}(): {difference}"
            return check
    return check


def _other_value(samples: Sequence[Sample], entity: str, attribute: str, current: Any) -> Any:
    return next((s.values[attribute] for s in samples if s.entity == entity
                 and s.values.get(attribute) is not None and s.values[attribute] != current), None)


def check_updates(design: TableDesign, dynamodb: Any, table: Any, name: str,
                  samples: Sequence[Sample]) -> ClientCheck:
    """Per entity: change every attribute its index keys are made of, then a table key attribute, then delete."""
    check = ClientCheck("update_<entity>() and delete_<entity>()")
    for entity in sorted(design.shapes):
        own = [s for s in samples if s.entity == entity]
        if not own:
            continue
        sample, shapes = own[0], design.shapes[entity]
        specs = design.blueprint.entities[entity].attributes
        key_attributes = set(shapes[TABLE].pk.attributes + shapes[TABLE].sk.attributes + shapes[TABLE].shard_by)
        key = {a: sample.values[a] for a in sorted(key_attributes)}
        indexed = sorted({a for index, shape in shapes.items() if index != TABLE
                          for a in shape.pk.attributes + shape.sk.attributes + shape.shard_by} - key_attributes)
        changes = {a: value for a in indexed
                   if (value := _other_value(samples, entity, a, sample.values.get(a))) is not None}
        values = {**sample.values, **changes}
        method = snake(entity)
        try:
            getattr(table, f"update_{method}")(key, client_values(design, entity, changes))
            difference = _expect(dynamodb, name, design, build_item(design, entity, values))
            moved = _moved_key(specs, key)
            if difference is None and moved is not None:
                getattr(table, f"update_{method}")(key, moved)
                values = {**values, **moved}
                planned = build_item(design, entity, values)
                if _item_at(dynamodb, name, design, sample.item) is not None:
                    difference = "after a table key change the item is still under its old key"
                else:
                    difference = _expect(dynamodb, name, design, planned)
                key = {**key, **moved}
            if difference is None:
                getattr(table, f"delete_{method}")(key)
                if _item_at(dynamodb, name, design, build_item(design, entity, values)) is not None:
                    difference = "the item is still there after delete"
        except (ClientError, ValueError) as error:
            difference = f"refused: {error}"
        if difference is not None:
            check.failure = f"{entity}: {difference}"
            return check
    return check


def _moved_key(specs: Any, key: dict[str, Any]) -> dict[str, Any] | None:
    """A new value for one free-text table key attribute (None: the key has none)."""
    for name, value in key.items():
        if specs[name].type == "string" and not specs[name].values:
            return {name: f"{value}-moved"}
    return None


def _item_at(dynamodb: Any, name: str, design: TableDesign, item: dict[str, Any]) -> dict[str, Any] | None:
    """The stored item under `item`'s table key, read strongly consistent."""
    key = {attribute: item[attribute] for attribute in design.table_keys.names}
    found: dict[str, Any] | None = dynamodb.get_item(TableName=name, Key=key, ConsistentRead=True).get("Item")
    return found


def _expect(dynamodb: Any, name: str, design: TableDesign, planned: dict[str, Any]) -> str | None:
    written = _item_at(dynamodb, name, design, planned)
    if written is None:
        return "no item under its key after the update"
    return _same(written, planned)


def verify_client(dynamodb: Any, design: TableDesign, client: Client, create_request: dict[str, Any],
                  samples: Sequence[Sample]) -> list[ClientCheck]:
    """Every check of the generated Python client, on a new table made from `create_request`."""
    name = create_request["TableName"] + "-client"
    dynamodb.create_table(**{**create_request, "TableName": name})
    module = load_module(render(client), f"tablewright_client_{snake(client.blueprint)}")
    table = getattr(module, class_name(client.blueprint) + "Table")(dynamodb, name)
    return client_checks(dynamodb, design, client, table, name, samples, module.StaleDesign)


def client_checks(dynamodb: Any, design: TableDesign, client: Client, table: Any, name: str,
                  samples: Sequence[Sample], stale: type[Exception]) -> list[ClientCheck]:
    """The checks of a generated client's table object `table` (the Python class, or a stand-in with its
    methods for another language's) on the empty table `name`; `stale`: what `check_design()` raises."""
    checks = [ClientCheck("check_design()")]
    try:
        table.check_design()
    except stale as error:
        checks[0].failure = f"check_design(): {error}"
    checks.append(check_puts(design, dynamodb, table, name, samples))
    if checks[-1].passed:
        checks += [check_pattern(client, design, table, plan, samples)
                   for plan in sorted(design.plans, key=lambda p: p.pattern)]
        checks.append(check_updates(design, dynamodb, table, name, samples))
    return checks
