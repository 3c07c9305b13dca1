"""The synthesis corpus: blueprints whose cdk.tf.json must stay byte-identical from release to release.

The bundled examples, the feature and review blueprints, the review corpus's changes, generated
fleet blueprints and variants of the CRM example that switch on every optional setting (keys,
backends, regions, alarms, windows, insights modes). `tests/data/synth-reference.json` holds the
SHA-256 of every stack's cdk.tf.json; `tests/synth/test_synth_identity.py` synthesizes the corpus and
compares.

    python tests/support/synth_corpus.py write DIR            # the corpus blueprints into DIR (prints them)
    python tests/support/synth_corpus.py digest OUT           # the digests of a synthesis (JSON, to stdout)
    python tests/support/synth_corpus.py compare OUT REF_OUT  # which stacks differ between two syntheses, and where

To renew the reference after an intended change of the output:
    python tests/support/synth_corpus.py write /tmp/corpus > /tmp/corpus.txt
    tablewright synth --allow-lint-errors --out /tmp/corpus-out $(cat /tmp/corpus.txt)
    python tests/support/synth_corpus.py digest /tmp/corpus-out > tests/data/synth-reference.json
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
sys.path.insert(0, str(ROOT))

from bench.synth import GENERATED  # noqa: E402

REFERENCE = TESTS / "data" / "synth-reference.json"
GENERATED_NUMBERS = (0, 1, 10, 99, 999)
SHOP = TESTS / "data" / "blueprints" / "shop.yaml"

# Overlays of tests/data/blueprints/shop.yaml: the changes of the review corpus (tests/support/review_corpus.py), copied
# so that editing that corpus does not move this reference.
ORDERS_BY_STATUS = {"entity": "Order", "where": {"status": "="}, "order_by": "placedAt", "rps": 5}
SHOP_VARIANTS: dict[str, dict[str, Any]] = {
    "add-gsi": {"access_patterns": {"orders_by_status": ORDERS_BY_STATUS}},
    "change-projection": {"indexes": {"GSI1": {"projection": "all"}}},
    "switch-billing": {"table": {"billing": "on_demand", "capacity": None}},
    "rename-table": {"table": {"name": "shop_orders"}},
    "change-key-template": {"entities": {"Order": {"key": {"sk": "ORDER#{placedAt}#{orderId}"}}}},
    "change-gsi-key-template": {"entities": {"Order": {"index_keys": {"GSI1": {"pk": "ORDERID#{orderId}",
                                                                               "sk": "{customerId}"}}}}},
    "add-alarm": {"alarms": {"latency": {"enabled": True, "operations": {"GetItem": 25}}}},
    "change-alarm-threshold": {"alarms": {"throttles": {"threshold": 5}}},
    "change-capacity": {"table": {"capacity": {"read": {"min": 20, "max": 400}}}},
    "stream-on": {"table": {"stream": "new_and_old_images"}},
    "ttl-off": {"table": {"ttl_attribute": None}},
    "table-class": {"table": {"table_class": "standard_infrequent_access"}},
    "customer-managed-key": {"table": {"encryption": "customer_managed"}},
    "pitr-off-in-production": {"production": True, "table": {"point_in_time_recovery": False}},
    "pitr-off-outside-production": {"table": {"point_in_time_recovery": False}},
    "deletion-protection-off-in-production": {"production": True, "table": {"deletion_protection": False}},
    "retag": {"tags": {"team": "checkout"}},
    "remove-gsi": {"access_patterns": {"order_by_id": None}},
    "add-two-gsis": {"access_patterns": {"orders_by_status": ORDERS_BY_STATUS, "customers_by_email": {
        "entity": "Customer", "where": {"email": "="}, "rps": 5}}},
    "add-local-index": {
        "indexes": {"LSI1": {"type": "local"}},
        "entities": {"Order": {"index_keys": {"LSI1": {"pk": "CUSTOMER#{customerId}", "sk": "PLACED#{placedAt}"}}}},
        "access_patterns": {"orders_by_time": {"entity": "Order", "where": {"customerId": "=", "placedAt": "between"},
                                               "index": "LSI1", "rps": 5}}},
    "contributor-insights-off": {"contributor_insights": "off"},
    "move-maintenance-window": {"maintenance_window": {"start": "03:00"}},
}

# Alarm topics are in the stack's region: the development topic of the CRM variants in eu-west-1.
DEV_EU = {"dev": {"alarms": {"notify": ["arn:aws:sns:eu-west-1:111122223333:dev-dynamodb-alarms"]}}}
# Overlays of blueprints/crm.yaml, each renamed so that the whole corpus synthesizes in one run.
CRM_VARIANTS: dict[str, dict[str, Any]] = {
    "crm-cmk": {"table": {"encryption": "customer_managed"}},
    "crm-kms-arn": {"table": {
        "encryption": "customer_managed",
        "kms_key_arn": "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    }},
    "crm-aws-managed": {"table": {"encryption": "aws_managed", "stream": "keys_only",
                                  "table_class": "standard_infrequent_access"}},
    "crm-s3": {"terraform": {"backend": {"type": "s3", "bucket": "state-bucket", "region": "eu-west-1",
                                         "dynamodb_table": "state-locks",
                                         "key": "tw/{blueprint}/{env}/{stack}.tfstate"}}},
    "crm-s3-plain": {"terraform": {"backend": {"type": "s3", "bucket": "state-bucket"}}},
    "crm-region-v6": {"region": "eu-west-1", "terraform": {"aws_provider": ">= 6.11"}, "environments": DEV_EU},
    "crm-insights-all": {"terraform": {"aws_provider": "~> 6.20"},
                         "contributor_insights": "accessed_and_throttled_keys"},
    "crm-insights-off": {"contributor_insights": "off"},
    "crm-no-alarms": {"alarms": {"enabled": False}},
    "crm-account-alarms": {"region": "eu-west-1", "environments": DEV_EU, "alarms": {
        "account_level": True,
        "notify": ["arn:aws:sns:eu-west-1:111122223333:oncall", "arn:aws:sns:eu-west-1:111122223333:audit"],
        "throttles": {"threshold": 2.5, "period": 120, "evaluation_periods": 4, "datapoints": 4},
        "latency": {"operations": {"Query": 40, "GetItem": 12.5}},
        "utilization": {"threshold": 75}, "system_errors": {"enabled": False}}},
    "crm-weekly": {"maintenance_window": {"days": ["SA", "SU"], "start": "23:30", "duration": "1h30m",
                                          "timezone": "America/New_York"}},
    "crm-shanghai": {"maintenance_window": {"days": "daily", "start": "02:00", "duration": "2h",
                                            "timezone": "Asia/Shanghai"}},
    "crm-no-window": {"maintenance_window": None},
    "crm-unprotected": {"production": False, "environments": {"prod": {"production": False}},
                        "table": {"deletion_protection": False, "point_in_time_recovery": False,
                                  "ttl_attribute": None}},
    "crm-trail": {"change_rules": {"trail": "create"}},
    "crm-on-demand-guarded": {"table": {"billing": "on_demand", "capacity": None, "table_class":
                                        "standard_infrequent_access", "max_throughput": {"read": 3000, "write": 900}},
                              "indexes": {"GSI1": {"max_throughput": "suggested"}, "GSI2": {"max_throughput":
                                                                                            "unlimited"}}},
    "crm-scheduled": {"table": {"capacity": {"write": {"min": 140, "max": 1000, "scheduled": [
        {"name": "month-end", "start": "23:30", "end": "01:00", "min": 900, "days": ["FRI", "SAT"]}]}}}},
    "crm-warm-v613": {"terraform": {"aws_provider": ">= 6.13, < 7.0"},
                      "table": {"warm_throughput": {"read": 20000, "write": 8000}},
                      "indexes": {"GSI1": {"warm_throughput": {"read": 12000, "write": 4000}}}},
    "crm-gsi-settings": {"indexes": {"GSI1": {"projection": "keys_only",
                                              "capacity": {"read": {"min": 3, "max": 30},
                                                           "write": {"min": 2, "max": 20}}},
                                     "GSI2": {"projection": "all"}},
                         "table": {"capacity": {"target_utilization": 55}}},
}


def merged(base: Any, overlay: Any) -> Any:
    """`overlay` over `base`: mappings merge, `None` removes a key, anything else replaces."""
    if not isinstance(base, dict) or not isinstance(overlay, dict):
        return copy.deepcopy(overlay)
    result = copy.deepcopy(base)
    for key, value in overlay.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merged(result.get(key), value)
    return result


def _dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def write_corpus(directory: Path) -> list[Path]:
    """Write every corpus blueprint into `directory` (with the shared bases they extend)."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "blueprints" / "shared", directory / "shared", dirs_exist_ok=True)
    paths: list[Path] = []

    def write(name: str, text: str) -> None:
        path = directory / f"{name}.yaml"
        path.write_text(text)
        paths.append(path)

    for bundled in sorted((ROOT / "blueprints").glob("*.yaml")):
        write(bundled.stem, bundled.read_text())
    write("features", (TESTS / "data" / "blueprints" / "features.yaml").read_text())
    write("shop", SHOP.read_text())
    shop = yaml.safe_load(SHOP.read_text())
    for name, overlay in SHOP_VARIANTS.items():
        write(f"shop-{name}", _dump(merged(shop, {**overlay, "blueprint": f"shop-{name}"})))
    crm = yaml.safe_load((ROOT / "blueprints" / "crm.yaml").read_text())
    for name, overlay in CRM_VARIANTS.items():
        write(name, _dump(merged(crm, {**overlay, "blueprint": name})))
    for number in GENERATED_NUMBERS:
        write(f"bench-{number}", GENERATED.format(n=number))
    return paths


def digests(out: Path) -> dict[str, str]:
    """SHA-256 of every stack's cdk.tf.json under a synthesis directory, by stack name."""
    return {path.parent.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted((out / "stacks").glob("*/cdk.tf.json"))}


def differences(out: Path, reference: Path) -> list[str]:
    """Human-readable differences between two syntheses: missing stacks, then each differing JSON path."""
    found: list[str] = []
    mine, theirs = digests(out), digests(reference)
    for name in sorted(set(mine) | set(theirs)):
        if name not in mine or name not in theirs:
            found.append(f"{name}: only in {'reference' if name in theirs else 'output'}")
        elif mine[name] != theirs[name]:
            a = json.loads((out / "stacks" / name / "cdk.tf.json").read_text())
            b = json.loads((reference / "stacks" / name / "cdk.tf.json").read_text())
            paths = list(_diff(a, b, ""))
            found.append(f"{name}: " + ("; ".join(paths[:10]) if paths else "same JSON, different bytes"))
    return found


def _diff(a: Any, b: Any, where: str):
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                yield f"{where}/{key} only in {'reference' if key in b else 'output'}"
            else:
                yield from _diff(a[key], b[key], f"{where}/{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _diff(x, y, f"{where}[{index}]")
    elif a != b or type(a) is not type(b):
        yield f"{where}: {json.dumps(a)[:80]} != {json.dumps(b)[:80]}"


def main(argv: list[str]) -> int:
    command, *rest = argv
    if command == "write":
        for path in write_corpus(Path(rest[0])):
            print(path)
    elif command == "digest":
        print(json.dumps(digests(Path(rest[0])), indent=1, sort_keys=True))
    elif command == "compare":
        found = differences(Path(rest[0]), Path(rest[1]))
        print("\n".join(found) or "identical")
        return 1 if found else 0
    else:
        raise SystemExit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
