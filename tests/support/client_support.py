"""Generated clients for the tests: made from a blueprint, imported (Python), driven through Node (TypeScript)."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from tablewright.blueprint.load import load_blueprints
from tablewright.client.generate import generate
from tablewright.client.model import Client
from tablewright.client.names import class_name
from tablewright.stacks.stack import Stack, build_stacks
from tablewright.synth.synth import synthesize
from tablewright.verify.client import load_module
from tablewright.verify.tables import create_table_request
from tests.conftest import ROOT, TEST_BLUEPRINTS
from tests.support.terraform_support import missing_tool

BLUEPRINTS = {  # the bundled ones, a sharded design (features) and a sparse one with every type (client)
    "orders": ROOT / "blueprints" / "orders.yaml",
    "crm": ROOT / "blueprints" / "crm.yaml",
    "features": TEST_BLUEPRINTS / "features.yaml",
    "client": TEST_BLUEPRINTS / "client.yaml",
}
DRIVER = ROOT / "tests" / "support" / "client_driver.js"
TSC = ROOT / "node_modules" / ".bin" / "tsc"


def run_tsc(directory: Path, include: str, out_dir: str | None = None) -> subprocess.CompletedProcess[str]:
    """`tsc --strict` on `directory`'s files matching `include` (type-checked only, or compiled to CommonJS
    into `out_dir`), with the project's node_modules."""
    if not TSC.exists() or shutil.which("node") is None:
        missing_tool("TypeScript or Node.js is not installed: run `npm ci`")
    if not (directory / "node_modules").exists():
        (directory / "node_modules").symlink_to(ROOT / "node_modules")
    options: dict[str, Any] = {"strict": True, "target": "ES2022", "module": "commonjs", "moduleResolution": "node",
                               "types": ["node"], "skipLibCheck": True}
    options.update({"outDir": out_dir} if out_dir else {"noEmit": True})
    (directory / "tsconfig.json").write_text(json.dumps({"compilerOptions": options, "include": [include]}))
    return subprocess.run([str(TSC), "-p", ".", "--listFiles"], cwd=directory, capture_output=True, text=True)


def stacks_of(path: Path, environment: str | None = None) -> list[Stack]:
    """The blueprint's stacks (only `environment`'s, when given)."""
    loaded = load_blueprints(path)
    return build_stacks([stack for stack in loaded if environment is None or stack.environment == environment])


def module_text(path: Path, language: str = "python", environment: str | None = None) -> str:
    (text,) = generate(stacks_of(path, environment), language).values()  # type: ignore[arg-type]
    return text


def python_module(path: Path, environment: str | None = None, text: str | None = None) -> ModuleType:
    return load_module(text or module_text(path, environment=environment), f"client_{path.stem}_{environment}")


def table_of(aws: Any, path: Path, scratch: Path, environment: str | None = None, suffix: str = "") -> str:
    """Create the table the stack's synthesized Terraform declares (its tags too) with the client `aws`; returns its
    name."""
    (written,) = synthesize(stacks_of(path, environment)[:1], scratch / "out")
    request = create_table_request(json.loads(written.read_text()))
    request["TableName"] += suffix
    aws.create_table(**request)
    return str(request["TableName"])


def dynamodb() -> Any:
    import boto3

    return boto3.client("dynamodb", region_name="us-east-1", aws_access_key_id="testing",
                        aws_secret_access_key="testing")


class StaleDesignInNode(Exception):
    """The TypeScript client's StaleDesign."""


def _to_json(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"$date": value.astimezone(UTC).isoformat().replace("+00:00", "Z")}
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (set, frozenset)):
        return {"$set": sorted(_to_json(v) for v in value)}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode()}
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    return value


class TypeScriptTable:
    """The generated TypeScript table class, run by Node (tests/support/client_driver.js), with the Python class's
    methods: `put_order(item)`, `user_orders_by_date(userId=..., orderedAt=(a, b), limit=2, start=None)`."""

    def __init__(self, compiled: Path, client: Client, endpoint: str, table: str) -> None:
        self.client = client
        self.process = subprocess.Popen(
            ["node", str(DRIVER), str(compiled), class_name(client.blueprint) + "Table", endpoint, table],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)

    def _call(self, method: str, args: list[Any]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"method": method, "args": _to_json(args)}) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        if "error" in answer:
            error = answer["error"]
            raise (StaleDesignInNode if error["name"] == "StaleDesign" else ValueError)(
                f"{error['name']}: {error['message']}")
        return answer["result"]

    def check_design(self) -> None:
        self._call("checkDesign", [])

    def _decoded(self, entity: str, row: dict[str, Any]) -> dict[str, Any]:
        fields = {field.name: field for field in self.client.entity(row.get("_entity", entity)).fields}
        found = {}
        for name, value in row.items():
            kind = fields[name].type if name in fields else ""
            if isinstance(value, dict) and "$date" in value:
                value = datetime.fromisoformat(value["$date"].replace("Z", "+00:00"))
            elif isinstance(value, dict) and "$set" in value:
                value = set(value["$set"])
            elif isinstance(value, dict) and "$bytes" in value:
                value = base64.b64decode(value["$bytes"])
            elif kind == "date":
                value = date.fromisoformat(value)
            found[name] = value
        return found

    def __getattr__(self, name: str) -> Any:
        verb, _, entity = name.partition("_")
        if verb in ("put", "update", "delete"):
            target = verb + class_name(entity)
            return lambda *args: self._call(target, list(args))
        from tablewright.client.python import identifier

        read = next(r for r in self.client.reads if identifier(r.pattern) == name)
        if read.batch:  # a list of keys in, a list of items out
            return lambda keys: [self._decoded(read.entities[0], row)
                                 for row in self._call(_camel(read.pattern), [keys])]

        def call(limit: Any = "default", start: str | None = None, as_of: datetime | None = None,
                 **arguments: Any) -> Any:
            args = {}
            for argument in read.arguments:
                value = arguments[identifier(argument.attribute)]
                args[argument.attribute] = {"from": value[0], "to": value[1]} if argument.between else value
            parameters: list[Any] = [args] if read.arguments else []
            if read.operation == "GetItem":
                row = self._call(_camel(read.pattern), parameters)
                return None if row is None else self._decoded(read.entities[0], row)
            clock = {"asOf": as_of} if as_of is not None else {}
            if read.count:  # a number, and no page token
                return self._call(_camel(read.pattern),
                                  [*parameters, clock if limit == "default" else {"limit": limit, **clock}])
            options = {"start": start, **clock} if limit == "default" else {"limit": limit, "start": start, **clock}
            page = self._call(_camel(read.pattern), [*parameters, options])
            return SimpleNamespace(items=[self._decoded(read.entities[0], row) for row in page["items"]],
                                   next=page["next"])
        return call


def _camel(name: str) -> str:
    from tablewright.client.names import camel

    return camel(name)
