"""The monthly cost: table classes as the price data says, PITR, Contributor Insights and alarms as lines,
regions stated and never borrowed, a platform's own price file, and the Infracost usage file."""

from __future__ import annotations

import json
import math
import os
import shutil
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml

from tablewright.blueprint.load import load_blueprint
from tablewright.capacity.cost import GIB, SECONDS_PER_MONTH, CostReport, stored_bytes
from tablewright.stacks.stack import Stack, build_stacks
from tablewright.synth.synth import synthesize
from tests.conftest import BUNDLED, ROOT

PRICES = json.loads((ROOT / "modules" / "tablewright" / "capacity" / "prices.json").read_text())
THROUGHPUT = {"provisioned read capacity": "provisioned_rcu_hour", "provisioned write capacity": "provisioned_wcu_hour",
              "on-demand read requests": "on_demand_read_request_unit",
              "on-demand write requests": "on_demand_write_request_unit"}

ONE_TABLE = """\
blueprint: ledger
version: 1.0.0
{region}
contributor_insights: {insights}
terraform: {{aws_provider: "{provider}"}}
table:
  name: ledger_main
  billing: {billing}
  table_class: {table_class}
  point_in_time_recovery: {pitr}
entities:
  Entry:
    attributes: {{accountId: string, at: timestamp, note: string}}
    key: {{pk: "ACCOUNT#{{accountId}}", sk: "ENTRY#{{at}}"}}
    item_bytes: 2000
    item_count: 3000000
    writes_per_second: 2
access_patterns:
  entry:
    entity: Entry
    where: {{accountId: "=", at: "="}}
    rps: 10
  entries:
    entity: Entry
    where: {{accountId: "="}}
    items: 10
    rps: 5
"""


def stack_of(tmp_path: Path, *, region: str | None = "us-east-1", table_class: str = "standard",
             billing: str = "on_demand", pitr: bool = True, insights: str = "accessed_and_throttled_keys",
             provider: str = "~> 5.100", name: str = "ledger.yaml") -> Stack:
    path = tmp_path / name
    path.write_text(ONE_TABLE.format(region=f"region: {region}" if region else "", table_class=table_class,
                                     billing=billing, pitr=str(pitr).lower(), insights=insights, provider=provider))
    return build_stacks([load_blueprint(path)])[0]


def test_standard_infrequent_access_costs_what_the_price_data_says(tmp_path):
    standard = stack_of(tmp_path, name="a.yaml").cost
    infrequent = stack_of(tmp_path, table_class="standard_infrequent_access", name="b.yaml").cost
    prices = PRICES["regions"]["us-east-1"]["table_classes"]
    for item, figure in THROUGHPUT.items():
        a, b = standard.line(item), infrequent.line(item)
        assert a.quantity == b.quantity  # the same traffic ...
        assert (a.price, b.price) == (prices["standard"][figure], prices["standard_infrequent_access"][figure])
        assert b.monthly == round(b.quantity * prices["standard_infrequent_access"][figure], 2) != a.monthly
    # ... and the same items: IA storage is cheaper, by the ratio of the two prices.
    a, b = standard.line("storage (standard)"), infrequent.line("storage (standard_infrequent_access)")
    assert a.quantity == b.quantity and b.monthly == round(a.quantity * 0.10, 2) < a.monthly
    assert infrequent.table_class == "standard_infrequent_access"
    assert "unconfirmed figure" in b.note and "unconfirmed" not in a.note  # IA prices are third-party copies
    # The storage is the items and their index entries with 100 bytes of overhead each: 3M x 2,100 bytes.
    assert a.quantity == pytest.approx(3_000_000 * (2000 + 100) / GIB)


def test_pitr_contributor_insights_and_alarms_are_lines(tmp_path):
    cost = stack_of(tmp_path).cost
    items = [line.item for line in cost.billed]
    assert items == ["on-demand read requests", "on-demand write requests", "storage (standard)",
                     "point-in-time recovery", "Contributor Insights rules", "Contributor Insights events",
                     "CloudWatch alarms"]
    region = PRICES["regions"]["us-east-1"]
    pitr = cost.line("point-in-time recovery")
    assert (pitr.unit, pitr.price) == ("GB-months", region["pitr"]["gb_month"])
    assert pitr.quantity == pytest.approx(3_000_000 * 2100 / GIB)
    # Rules: the most accessed and the most throttled keys, for the partition key and for the sort key.
    rules = cost.line("Contributor Insights rules")
    assert (rules.quantity, rules.price) == (4, region["contributor_insights"]["rule_month"])
    # Events (accessed and throttled keys): a GetItem is one event per key part (2), a Query is one event,
    # an item written one per key part: 10 x 2 + 5 x 1 + 2 x 2 = 29 a second.
    events = cost.line("Contributor Insights events")
    assert events.quantity == pytest.approx(29 * SECONDS_PER_MONTH / 1_000_000)
    assert events.monthly == round(events.quantity * 0.03, 2)
    alarms = cost.line("CloudWatch alarms")
    assert alarms.price == region["alarms"]["metric_month"] and alarms.unit == "alarm metrics"
    assert cost.total == round(sum(line.monthly or 0 for line in cost.billed), 2) > 0 and not cost.unpriced


def test_the_alarm_line_counts_the_metrics_the_synthesized_alarms_read(tmp_path):
    for stack in build_stacks([load_blueprint(BUNDLED[0], "prod"), load_blueprint(BUNDLED[1], "dev")]):
        [written] = synthesize([stack], tmp_path / stack.name)
        alarms = json.loads(written.read_text())["resource"]["aws_cloudwatch_metric_alarm"].values()
        metrics = sum(1 for alarm in alarms for query in alarm["metric_query"] if "metric" in query)
        assert stack.cost.line("CloudWatch alarms").quantity == metrics, stack.name


def test_lines_follow_what_the_stack_has(tmp_path):
    off = stack_of(tmp_path, pitr=False, insights="off", name="a.yaml").cost
    assert not {"point-in-time recovery", "Contributor Insights rules"} & {line.item for line in off.lines}
    throttled = stack_of(tmp_path, insights="throttled_keys", provider=">= 6.11", name="b.yaml").cost
    events = throttled.line("Contributor Insights events")
    assert events.quantity == 0 and "only throttled requests are events" in events.note
    provisioned = stack_of(tmp_path, billing="provisioned\n  capacity: {read: {min: 5, max: 50}, write: {min: 5, "
                                              "max: 50}}", name="c.yaml").cost
    assert [line.item for line in provisioned.lines if line.billed][:2] == ["provisioned read capacity",
                                                                            "provisioned write capacity"]
    assert "if the table were on-demand" in provisioned.line("on-demand read requests").note


@pytest.mark.parametrize("region, note", [
    (None, "no `region` in the blueprint: nothing is priced"),
    ("eu-west-1", "no prices for eu-west-1 in modules/tablewright/capacity/prices.json: nothing is priced"),
])
def test_a_region_without_prices_is_said_never_priced_as_another(region, note, tmp_path, run_cli):
    cost = stack_of(tmp_path, region=region).cost
    [said] = cost.notes
    assert said.startswith(note) and cost.dates is None
    assert all(line.price is None and line.monthly is None for line in cost.lines)
    assert cost.total == 0 and set(cost.unpriced) == {line.item for line in cost.billed}
    assert all(line.region == region for line in cost.lines)
    code, out, _ = run_cli("capacity", tmp_path / "ledger.yaml")
    assert code == 0 and f"Note: {note}" in out and "us-east-1" not in out and "$0.25" not in out


def test_a_region_lacking_a_table_class_or_an_item_prices_what_it_has(tmp_path):
    cost = stack_of(tmp_path, region="us-east-2", table_class="standard_infrequent_access").cost
    assert cost.notes == ("no standard_infrequent_access prices for us-east-2 in "
                          "modules/tablewright/capacity/prices.json: throughput and storage are not priced",)
    assert cost.line("point-in-time recovery").price == PRICES["regions"]["us-east-2"]["pitr"]["gb_month"]
    for item in ("on-demand read requests", "Contributor Insights rules", "CloudWatch alarms"):
        line = cost.line(item)
        assert line.price is None and line.region == "us-east-2", item
    assert cost.line("CloudWatch alarms").note == "no price in modules/tablewright/capacity/prices.json for us-east-2"
    assert cost.total == cost.line("point-in-time recovery").monthly


def test_on_demand_ceiling_when_every_target_has_a_maximum(run_cli):
    [orders] = build_stacks([load_blueprint(BUNDLED[1], "prod")])
    standard = PRICES["regions"]["us-east-1"]["table_classes"]["standard"]
    per_second = 2 * (1600 * standard["on_demand_read_request_unit"] + 600 * standard["on_demand_write_request_unit"])
    assert orders.cost.ceiling == round(per_second * SECONDS_PER_MONTH, 2)
    code, out, _ = run_cli("capacity", BUNDLED[1], "--env", "prod")
    assert code == 0 and f"at most ${orders.cost.ceiling:,.2f} a month for throughput" in out
    assert "table: max_throughput read 1,600, write 600; suggested read" in out
    [crm] = build_stacks([load_blueprint(BUNDLED[0], "prod")])
    assert crm.cost.ceiling is None  # provisioned: the autoscaling maximum bounds it instead


# --- a platform's own price file ---------------------------------------------------------------------


def platform(tmp_path: Path, prices: str, pricing: str = "pricing: {file: prices/acme.yaml}") -> Path:
    """The bundled CRM blueprint over a platform base that names its own price file."""
    shutil.copytree(ROOT / "blueprints" / "shared", tmp_path / "shared")
    base = tmp_path / "shared" / "platform-base.yaml"
    base.write_text(base.read_text().replace("region: us-east-1\n", f"region: us-east-1\n{pricing}\n"))
    (tmp_path / "shared" / "prices").mkdir()
    (tmp_path / "shared" / "prices" / "acme.yaml").write_text(textwrap.dedent(prices))
    path = tmp_path / "crm.yaml"
    path.write_text((ROOT / "blueprints" / "crm.yaml").read_text())
    return path


ACME = """\
    currency: USD
    regions:
      us-east-1:
        effective: "2026-01-01"
        checked: "2026-11-02"
        table_classes:
          standard:
            provisioned_rcu_hour: 0.0001
            provisioned_wcu_hour: 0.0005
            on_demand_read_request_unit: 0.0000001
            on_demand_write_request_unit: 0.0000005
            storage_gb_month: 0.2
            source: ACME's enterprise agreement, schedule B
"""


def test_a_platform_base_supplies_its_own_price_file(tmp_path, monkeypatch, run_cli):
    monkeypatch.setenv("TABLEWRIGHT_ROOT", str(tmp_path))
    path = platform(tmp_path, ACME)
    [prod] = build_stacks([load_blueprint(path, "prod")])
    cost: CostReport = prod.cost
    assert cost.dates is not None and (cost.dates.effective, cost.dates.checked) == ("2026-01-01", "2026-11-02")
    assert cost.dates.file == str(tmp_path / "shared" / "prices" / "acme.yaml")
    assert cost.line("provisioned read capacity").price == 0.0001
    # The file prices what it lists and nothing more: no PITR, insights or alarm prices, and it says so.
    assert set(cost.unpriced) == {"point-in-time recovery", "CloudWatch alarms", "Contributor Insights rules",
                                  "Contributor Insights events"}
    code, out, _ = run_cli("capacity", path, "--env", "prod")
    assert code == 0 and "effective 2026-01-01, checked 2026-11-02, from " in " ".join(out.split())  # lines wrap


@pytest.mark.parametrize("prices, pricing, words, code", [
    (ACME.replace("0.0001\n", "-0.0001\n"), None, "`provisioned_rcu_hour` must be at least 0", "E203"),
    (ACME.replace('        checked: "2026-11-02"\n', ""), None, "missing required field `checked`", "E201"),
    (ACME.replace('"2026-11-02"', '"2 Nov 2026"'), None, "'2 Nov 2026' is not a date", "E203"),
    (ACME.replace("us-east-1:", "moon-base:"), None, "'moon-base' is not valid", "E203"),
    (ACME.replace("            source:", "            storage_per_gb: 0.2\n            source:"), None,
     "unknown field `storage_per_gb`", "E200"),
    (ACME, "pricing: {file: ../../outside.yaml}", "leaves the repository root", "E400"),
    (ACME, "pricing: {file: prices/missing.yaml}", "names no file", "E400"),
    (ACME, "pricing: {file: /etc/passwd}", "is not valid for `file`", "E203"),
])
def test_a_bad_price_file_is_one_located_error(prices, pricing, words, code, tmp_path, monkeypatch, run_cli):
    monkeypatch.setenv("TABLEWRIGHT_ROOT", str(tmp_path))
    path = platform(tmp_path, prices, *([pricing] if pricing else []))
    (tmp_path.parent / "outside.yaml").write_text(textwrap.dedent(ACME))
    status, out, err = run_cli("capacity", path, "--env", "prod")
    assert status == 2 and out == "" and words in err and f"[{code}]" in err, err
    assert err.startswith("error: ") and err.count("error: ") == 1 and "\n  fix: " in err
    where = "prices/acme.yaml" if pricing is None else "shared/platform-base.yaml"
    assert err.split(":")[1].endswith(where), err  # the file (and line) that holds the problem


# --- Infracost ---------------------------------------------------------------------------------------

# Infracost's usage file (infracost/infracost: internal/usage/usage_file.go accepts version 0.1; the
# usage schemas of internal/resources/aws/dynamodb_table.go and app_autoscaling_target.go, every key an
# Int64), as a JSON Schema.
INFRACOST_SCHEMA = {
    "type": "object",
    "required": ["version", "resource_usage"],
    "additionalProperties": False,
    "properties": {
        "version": {"enum": ["0.1", "v0.1", 0.1]},
        "resource_type_default_usage": {"type": "object"},
        "resource_usage": {
            "type": "object",
            "patternProperties": {
                r"^aws_dynamodb_table\.[A-Za-z_][A-Za-z0-9_-]*$": {
                    "type": "object", "additionalProperties": False,
                    "properties": {key: {"type": "integer", "minimum": 0} for key in (
                        "monthly_write_request_units", "monthly_read_request_units", "storage_gb",
                        "pitr_backup_storage_gb", "on_demand_backup_storage_gb", "monthly_data_restored_gb",
                        "monthly_streams_read_request_units")}},
                r"^aws_appautoscaling_target\.[A-Za-z_][A-Za-z0-9_-]*$": {
                    "type": "object", "additionalProperties": False,
                    "properties": {"capacity": {"type": "integer", "minimum": 1}}},
            },
            "additionalProperties": False,
        },
    },
}


def infracost_file(run_cli, *args: object) -> dict:
    code, out, err = run_cli("capacity", *args, "--format", "infracost")
    assert code == 0, err
    assert out.startswith("# Infracost usage file") and "\nversion: 0.1\n" in out
    data = yaml.safe_load(out)
    jsonschema.Draft202012Validator(INFRACOST_SCHEMA).validate(data)
    for values in data["resource_usage"].values():  # integers, not floats or booleans (Infracost's Int64)
        assert all(type(value) is int for value in values.values())
    return data


def test_the_infracost_usage_file_follows_infracosts_schema(run_cli, tmp_path):
    data = infracost_file(run_cli, "--env", "prod")
    stacks = build_stacks([load_blueprint(path, "prod") for path in BUNDLED])
    written = synthesize(stacks, tmp_path / "out")
    addresses = {f"{kind}.{name}" for path in written
                 for kind, blocks in json.loads(path.read_text())["resource"].items() for name in blocks}
    assert set(data["resource_usage"]) <= addresses  # every address is a resource of the synthesis
    crm, orders = stacks
    table = data["resource_usage"]["aws_dynamodb_table.crm"]
    assert table == {"storage_gb": math.ceil(stored_bytes(crm.design) / GIB),
                     "pitr_backup_storage_gb": math.ceil(stored_bytes(crm.design, table_only=True) / GIB)}
    # Provisioned: Infracost reads the table's capacity from its autoscaling targets' `capacity`: the suggested
    # minimums (1,733 RCU, 136 WCU) raised to the configured minimums (read 1,800, write 140), as `capacity` prices.
    load = crm.capacity.load("table")
    assert (load.suggested_read[0], load.suggested_write[0]) == (1733, 136)
    assert data["resource_usage"]["aws_appautoscaling_target.crm_read"] == {"capacity": 1800}
    assert data["resource_usage"]["aws_appautoscaling_target.crm_write"] == {"capacity": 140}
    # On demand: the month's request units of the table and its GSIs, billed alike.
    usage = data["resource_usage"]["aws_dynamodb_table.orders"]
    reads = sum(load.read_units_per_second for load in orders.capacity.loads)
    assert usage["monthly_read_request_units"] == round(reads * SECONDS_PER_MONTH)
    assert usage["monthly_write_request_units"] == round(orders.cost.line("on-demand write requests").quantity)


def test_infracost_out_dir_writes_each_stacks_usage_file(run_cli, tmp_path):
    out = tmp_path / "usage"
    code, said, err = run_cli("capacity", "--format", "infracost", "--out-dir", out)
    assert code == 0, err
    names = sorted(path.name for path in out.iterdir())
    assert names == ["crm-dev.yml", "crm-prod.yml", "orders-dev.yml", "orders-prod.yml"]
    for name in names:
        blueprint, environment = name.removesuffix(".yml").split("-")
        alone = run_cli("capacity", f"blueprints/{blueprint}.yaml", "--env", environment, "--format", "infracost")[1]
        assert (out / name).read_text() == alone
        assert f"wrote {os.path.relpath(out / name)}" in said
    assert err.splitlines()[-1] == f"4 stack(s) of 2 blueprint(s) estimated, one usage file each in {out}"


def test_infracost_out_dir_refuses_what_it_cannot_write(run_cli, tmp_path):
    code, _, err = run_cli("capacity", "--out-dir", tmp_path / "usage")  # text: nothing to write there
    assert code == 2 and "--out-dir writes Infracost usage files" in err and not (tmp_path / "usage").exists()
    (tmp_path / "file").write_text("kept")
    code, _, err = run_cli("capacity", "--format", "infracost", "--out-dir", tmp_path / "file")
    assert code == 2 and f"--out-dir {tmp_path / 'file'} is a file" in err and (tmp_path / "file").read_text() == "kept"
    (tmp_path / "usage").mkdir()
    (tmp_path / "usage" / "crm-prod.yml").mkdir()
    code, _, err = run_cli("capacity", "--format", "infracost", "--out-dir", tmp_path / "usage")
    assert code == 2 and "crm-prod.yml is not a regular file" in err
    assert sorted(path.name for path in (tmp_path / "usage").iterdir()) == ["crm-prod.yml"]  # nothing half-written


def test_infracost_needs_one_stack_per_address(run_cli):
    code, out, err = run_cli("capacity", BUNDLED[0], "--format", "infracost")
    assert code == 2 and out == ""
    assert "stacks crm-dev and crm-prod both have aws_dynamodb_table.crm" in err and "[E600]" in err
    assert "fix: pass `--env NAME`" in err and "or `--out-dir DIR` for one file per stack" in err


def crm_with(write_blueprint, capacity: dict) -> Stack:
    crm = yaml.safe_load((ROOT / "blueprints" / "crm.yaml").read_text())
    crm["table"]["capacity"] = capacity
    return build_stacks([load_blueprint(write_blueprint(yaml.safe_dump(crm), "crm.yaml"), "prod")])[0]


def test_provisioned_capacity_is_priced_within_the_configured_bounds(write_blueprint, run_cli):
    # CRM prod: the average loads at 70% need table 1,733 RCU / 136 WCU, GSI1 207 / 130, GSI2 186 / 6.
    stack = crm_with(write_blueprint, {"read": {"min": 4000, "max": 8000}, "write": {"min": 100, "max": 120},
                                       "target_utilization": 70})
    assert [(load.suggested_read[0], load.suggested_write[0]) for load in stack.capacity.loads] == [
        (1733, 136), (207, 130), (186, 6)]
    # Autoscaling keeps each within its [min, max]: table read at its minimum 4,000, GSI1 210 and GSI2 190 (their
    # own minimums): 4,400 RCU x 730 hours = 3,212,000 RCU-hours x $0.00013 = $417.56.
    read = stack.cost.line("provisioned read capacity")
    assert (read.quantity, read.monthly) == (4400 * 730, 417.56)
    assert read.note == ("a configured minimum decides: table 4,000 (the load needs 1,733), GSI1 210 (the load "
                         "needs 207), GSI2 190 (the load needs 186)")
    # Table write capped at its maximum 120, GSI1 at 130 (its own [130, 500]), GSI2 at its minimum 10:
    # 260 WCU x 730 = 189,800 WCU-hours x $0.00065 = $123.37.
    write = stack.cost.line("provisioned write capacity")
    assert (write.quantity, write.monthly) == (260 * 730, 123.37)
    assert write.note == ("a configured minimum decides: GSI2 10 (the load needs 6); capped at a configured "
                          "maximum: table 120 (the load needs 136); expect throttling")
    # The Infracost usage file prices the same table capacity.
    path = write_blueprint((ROOT / "blueprints" / "crm.yaml").read_text().replace(
        "read: {min: 1800, max: 5400}", "read: {min: 4000, max: 8000}"), "crm.yaml")
    code, out, err = run_cli("capacity", path, "--env", "prod", "--format", "infracost")
    assert code == 0, err
    assert yaml.safe_load(out)["resource_usage"]["aws_appautoscaling_target.crm_read"] == {"capacity": 4000}


def test_storage_says_which_entities_declare_no_item_count(tmp_path, run_cli):
    path = tmp_path / "ledger.yaml"
    text = ONE_TABLE.format(region="region: us-east-1", table_class="standard", billing="on_demand", pitr="true",
                            insights="accessed_and_throttled_keys", provider="~> 5.100")
    account = ("  Account:\n    attributes: {accountId: string}\n    key: {pk: \"ACCOUNT#{accountId}\", sk: PROFILE}\n"
               "    item_bytes: 300\n")
    path.write_text(text.replace("access_patterns:", account + "access_patterns:"))
    [stack] = build_stacks([load_blueprint(path)])
    cost = stack.cost
    # Entry is counted (3,000,000 x 2,100 bytes), Account is not: the lines say so rather than price it as 0.
    storage, pitr = cost.line("storage (standard)"), cost.line("point-in-time recovery")
    assert storage.quantity == pytest.approx(3_000_000 * 2100 / GIB)
    assert storage.note == "free tier not deducted; Account declares no item_count (not counted, not priced)"
    assert pitr.note == "Account declares no item_count (not counted, not priced)"
    note = ("storage and point-in-time recovery: Account declares no item_count (not counted, not priced); declare "
            "`item_count` on every entity to price them")
    assert cost.notes == (note,)
    _, out, _ = run_cli("capacity", path)
    out = " ".join(out.split())  # lines wrap at 100 columns
    assert f"Note: {note}" in out and "Account declares no item_count (not counted, not priced)" in out
    [data] = json.loads(run_cli("capacity", path, "--format", "json")[1])
    assert data["cost"]["notes"] == [note]
    assert data["cost"]["lines"][4]["note"] == storage.note
    _, usage, _ = run_cli("capacity", path, "--format", "infracost")
    assert "# ledger: storage_gb and pitr_backup_storage_gb leave out Account (no item_count)." in usage
    # Every entity counted: no such note.
    assert not stack_of(tmp_path, name="counted.yaml").cost.notes


def test_contributor_insights_counts_writes_on_a_sparse_gsi_by_the_share_that_lands_there(tmp_path):
    path = tmp_path / "ledger.yaml"
    text = ONE_TABLE.format(region="region: us-east-1", table_class="standard", billing="on_demand", pitr="false",
                            insights="accessed_and_throttled_keys", provider="~> 5.100")
    text = text.replace("{accountId: string, at: timestamp, note: string}",
                        "{accountId: string, at: timestamp, note: string, escalatedTo: {type: string, present: 0.1}}")
    text = text.split("access_patterns:")[0] + textwrap.dedent("""\
        access_patterns:
          escalated: {entity: Entry, where: {escalatedTo: "="}, order_by: at, rps: 1}
        """)
    path.write_text(text)
    [stack] = build_stacks([load_blueprint(path)])
    assert stack.design.plan("escalated").index == "GSI1" and stack.design.index("GSI1").keys.sk
    # One Query a second: 1 event. 2 inserts a second: 2 key parts on the table (4 events) and, on GSI1 (with a
    # sort key: 2 parts), only the 10% of entries that carry `escalatedTo`: 2 x 0.1 x 2 = 0.4. 5.4 events a second.
    events = stack.cost.line("Contributor Insights events")
    assert events.quantity == pytest.approx(5.4 * SECONDS_PER_MONTH / 1_000_000)
