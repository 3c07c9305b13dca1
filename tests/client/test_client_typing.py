"""The generated modules type-check strictly (mypy, tsc) for every test blueprint and for names like builtins,
keywords and locals; the guide's worked examples run (Python) and type-check (TypeScript); and the two languages
write the same key for the same value (compared module against module; each against the documented rules:
test_encoding_vectors.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import datetime

import pytest

from tests.conftest import ROOT
from tests.support.client_support import BLUEPRINTS, module_text, python_module, run_tsc, table_of


@pytest.mark.terraform
def test_generated_python_passes_mypy_strict(tmp_path):
    for name, path in BLUEPRINTS.items():
        (tmp_path / f"{name}_client.py").write_text(module_text(path))
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "."], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"no issues found in {len(BLUEPRINTS)} source files" in done.stdout


@pytest.mark.terraform
def test_generated_typescript_passes_tsc_strict(tmp_path):
    for name, path in BLUEPRINTS.items():
        (tmp_path / f"{name}_client.ts").write_text(module_text(path, "typescript"))
    done = run_tsc(tmp_path, "*.ts")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sum(line.endswith("_client.ts") for line in done.stdout.splitlines()) == len(BLUEPRINTS)


@pytest.mark.terraform
def test_attribute_names_like_builtins_keywords_and_locals_still_type_check_and_verify(write_blueprint, run_cli,
                                                                                      tmp_path):
    path = write_blueprint(textwrap.dedent('''\
        blueprint: awkward
        version: 1.0.0
        description: 'Quotes """ and */ and a \\\\ backslash in a description'
        table: {name: awkward_main}
        indexes:
          GSI1: {shards: 2}
        entities:
          Thing:
            attributes:
              str: {type: string, pattern: "^[a-z0-9-]+$"}
              date: {type: string, pattern: "^[a-z0-9-]+$"}
              values: {type: string, pattern: "^[a-z0-9-]+$"}
              self: {type: string, pattern: "^[a-z0-9-]+$"}
              limit: {type: number, width: 4}
              class: {type: string, values: ["A", "B"]}
              Number: timestamp
              cast: {type: string, pattern: "^[a-z0-9-]+$"}
              Page: {type: string, values: ["P1", "P2"]}
              bytes: {type: timestamp, format: epoch_seconds}
            key: {pk: "THING#{str}", sk: "{date}"}
          Item:
            attributes: {itemId: string, cast: string}
            key: {pk: "ITEM#{itemId}", sk: "ITEM"}
        access_patterns:
          import: {entity: Thing, where: {str: "=", date: "="}}
          str: {entity: Thing, where: {cast: "="}, filter: {Page: "=", bytes: ">"}}
          item: {entity: Item, where: {itemId: "="}}
          things_of_class:
            description: 'a "docstring" with """ quotes """ and */ comment ends'
            entity: Thing
            where: {class: "=", values: "="}
            order_by: limit
            limit: 3
          thing: {entity: Thing, where: {str: "=", date: "="}}
          things_by_self: {entity: Thing, where: {self: "="}, filter: {limit: ">"}}
    '''), "awkward.yaml")
    (tmp_path / "awkward_client.py").write_text(module_text(path))
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "awkward_client.py"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    code, out, err = run_cli("verify", str(path), "--client", "--format", "json")
    assert code == 0, out + err
    (result,) = json.loads(out)
    assert {check["result"] for check in result["client"]} == {"PASS"} and len(result["client"]) == 9
    (tmp_path / "awkward_client.ts").write_text(module_text(path, "typescript"))
    done = run_tsc(tmp_path, "awkward_client.ts")
    assert done.returncode == 0, done.stdout + done.stderr


GUIDE = ROOT / "docs" / "guides" / "application-clients.md"


def _block(language: str) -> str:
    """The code of the guide's worked example in `language` (its section's one block)."""
    heading = {"python": "## Python, worked example", "ts": "## TypeScript, worked example"}[language]
    section = GUIDE.read_text().split(heading)[1].split("\n## ")[0]
    (block,) = [part.split("\n", 1)[1] for part in section.split("```")[1:] if part.startswith(language + "\n")]
    return block


def test_the_python_example_of_the_guide_runs(aws, tmp_path, monkeypatch):
    package = tmp_path / "app" / "db"
    package.mkdir(parents=True)
    for directory in (tmp_path / "app", package):
        (directory / "__init__.py").write_text("")
    (package / "orders_client.py").write_text(module_text(BLUEPRINTS["orders"]))
    table_of(aws, BLUEPRINTS["orders"], tmp_path, "prod")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [name for name in sys.modules if name == "app" or name.startswith("app.")]:
        monkeypatch.delitem(sys.modules, name)
    scope: dict[str, object] = {}
    exec(compile(_block("python"), str(GUIDE), "exec"), scope)
    page = scope["page"]  # one order: the first page is the last
    assert [(item["orderId"], item["status"]) for item in page.items] == [("o-1", "PAID")] and page.next is None
    assert scope["profile"] is None


@pytest.mark.terraform
def test_the_typescript_example_of_the_guide_type_checks(tmp_path):
    lines = _block("ts").splitlines()
    imports = [line for line in lines if line.startswith("import ")]
    body = [line for line in lines if not line.startswith("import ")]
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "orders_client.ts").write_text(module_text(BLUEPRINTS["orders"], "typescript"))
    (tmp_path / "main.ts").write_text("\n".join([*imports, "", "export async function main(): Promise<void> {",
                                                 *body, "}", ""]))
    done = run_tsc(tmp_path, "main.ts")
    assert done.returncode == 0, done.stdout + done.stderr


PARITY = """\
    blueprint: parity
    version: 1.0.0
    table: {name: parity_main}
    entities:
      Measure:
        attributes:
          id: string
          amount: number
          at: {type: timestamp, format: epoch_seconds}
          ms: {type: timestamp, format: epoch_millis}
          day: {type: timestamp, format: "%Y%j"}
        key: {pk: "M#{id}#{at:month}", sk: "{amount}#{at}#{ms}#{day}"}
      Weekly:
        attributes: {id: string, at: timestamp}
        key: {pk: "W#{id}#{at:week}", sk: "{at}"}
      Hourly:
        attributes: {id: string, at: timestamp}
        key: {pk: "H#{id}#{at:hour}", sk: "{at}"}
    access_patterns:
      measure: {entity: Measure, where: {id: "=", at: "=", amount: "=", ms: "=", day: "="}}
      weekly: {entity: Weekly, where: {id: "=", at: "="}}
      hourly: {entity: Hourly, where: {id: "=", at: "="}}
"""


AMOUNTS = [0, 7, -5, 0.1, 1.5, -0.25, 1e21, 1e-7, 123456789.25, 2**53 - 1, 1.2345678901234567e25]


MOMENTS = ["1969-12-31T23:59:59.500000+00:00", "1960-06-15T12:00:00+00:00", "2024-03-01T09:30:00+00:00",
           "2038-01-19T03:14:08+00:00"]


WEEK_EDGES = ["2024-12-30T00:00:00+00:00", "2021-01-03T23:59:59+00:00", "2026-12-31T12:00:00+00:00",
              "2027-01-04T00:00:00+00:00", "2016-01-01T00:00:00+00:00"]


@pytest.mark.terraform
def test_the_typescript_key_builders_write_what_the_python_ones_write(write_blueprint, tmp_path):
    """Numbers without exponents (as Python's Decimal), epochs before 1970 truncated toward zero and signed
    before the padding, day-of-year strftime: the same key text in both languages, so both find one item."""
    path = write_blueprint(textwrap.dedent(PARITY), "parity.yaml")
    python = python_module(path)
    cases = [(amount, moment) for amount in AMOUNTS for moment in MOMENTS]
    expected = [python.measure_table_key(id="m", amount=amount, at=datetime.fromisoformat(moment),
                                         ms=datetime.fromisoformat(moment), day=datetime.fromisoformat(moment))
                for amount, moment in cases]
    (tmp_path / "parity_client.ts").write_text(module_text(path, "typescript"))
    done = run_tsc(tmp_path, "parity_client.ts", out_dir="build")
    assert done.returncode == 0, done.stdout + done.stderr
    moments = MOMENTS + WEEK_EDGES
    expected += [builder(id="m", at=datetime.fromisoformat(moment)) for moment in moments
                 for builder in (python.weekly_table_key, python.hourly_table_key)]
    script = ("const m = require('./build/parity_client.js'); const [cases, moments] = JSON.parse(process.argv[1]);"
              "console.log(JSON.stringify(cases.map(([amount, at]) => m.measureTableKey({id: 'm', amount,"
              " at: new Date(at), ms: new Date(at), day: new Date(at)})).concat(moments.flatMap((at) =>"
              " [m.weeklyTableKey({id: 'm', at: new Date(at)}), m.hourlyTableKey({id: 'm', at: new Date(at)})]))));")
    done = subprocess.run(["node", "-e", script, json.dumps([cases, moments])], cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected
    weeks = [key["PK"] for key in expected[len(cases)::2][len(MOMENTS):]]
    assert weeks == ["W#m#2025-W01", "W#m#2020-W53", "W#m#2026-W53", "W#m#2027-W01", "W#m#2015-W53"]
    # 1969-12-31T23:59:59.5Z: -0.5 s truncates to 0 s; -500 ms is signed, then padded to 13 characters.
    first = expected[AMOUNTS.index(1e21) * len(MOMENTS)]["SK"]
    assert first == "1000000000000000000000#0000000000#-000000000500#1969365"
