"""Plan gate benchmark: wall time and peak resident memory of `main.py gate` on large plans.

    python bench/plan.py [--megabytes 199] [--repeat 3]

Cases, each one `main.py gate --plan PLAN.json` of the bundled orders blueprint (prod) in its own process:
- a large account: the orders table's stream turned on among `--megabytes` of other resources, most of them
  unchanged (`no-op` entries in `resource_changes`, the same resources again in `prior_state`,
  `planned_values` and `configuration`), as `terraform show -json` writes it (one line);
- the same size in one string value (the worst case for a streaming parser, which holds a value whole): refused
  (exit 2) once the value passes 16 MB, before the parser has it;
- the orders plan alone (a few kilobytes), for the start-up floor.
Wall times are medians over the repeats; memory is the peak resident set of the gate's process
(`ru_maxrss` of the child), which includes the Python interpreter and its imports. The plans are written
once into a scratch directory and deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BLUEPRINT = ROOT / "blueprints" / "orders.yaml"
NOW = "2026-12-01T03:30:00+00:00"  # inside the platform base's window: the stream change passes

TABLE = {"name": "prod-orders_main", "hash_key": "PK", "range_key": "SK", "billing_mode": "PAY_PER_REQUEST",
         "stream_enabled": False, "point_in_time_recovery": [{"enabled": True}], "deletion_protection_enabled": True}
ALARM = {"alarm_name": "other-service-{i}-read-throttles", "alarm_description": "Throttled reads. " * 12,
         "comparison_operator": "GreaterThanThreshold", "evaluation_periods": 5, "datapoints_to_alarm": 3,
         "threshold": 0, "treat_missing_data": "notBreaching", "tags": {"service": "other", "owner": "team-other"},
         "metric_query": [{"id": "m1", "return_data": False, "metric": [{
             "metric_name": "ReadThrottleEvents", "namespace": "AWS/DynamoDB", "period": 60, "stat": "Sum",
             "dimensions": {"TableName": "other_{i}"}}]}, {"id": "e1", "expression": "FILL(m1, 0)",
                                                          "return_data": True}]}


def _resource(i: int) -> dict[str, Any]:
    values = json.loads(json.dumps(ALARM).replace("{i}", str(i)))
    return {"address": f"aws_cloudwatch_metric_alarm.other_{i}", "mode": "managed",
            "type": "aws_cloudwatch_metric_alarm", "name": f"other_{i}",
            "provider_name": "registry.terraform.io/hashicorp/aws", "values": values}


def _change(resource: dict[str, Any]) -> dict[str, Any]:
    return {key: resource[key] for key in ("address", "mode", "type", "name", "provider_name")} | {
        "change": {"actions": ["no-op"], "before": resource["values"], "after": resource["values"],
                   "after_unknown": {}, "before_sensitive": {}, "after_sensitive": {}}}


def _head(stream: str) -> str:
    table = {"address": "aws_dynamodb_table.orders", "mode": "managed", "type": "aws_dynamodb_table",
             "name": "orders", "change": {"actions": ["update"], "before": TABLE,
                                          "after": {**TABLE, "stream_enabled": True, "stream_view_type": stream},
                                          "after_unknown": {}}}
    return json.dumps(table)


def write_large_account(path: Path, megabytes: int) -> int:
    """A plan of `megabytes` (as `terraform show -json` writes it: one line); returns the resources in it."""
    budget = megabytes * 1_000_000
    per = len(json.dumps(_resource(99_999))) * 2 + len(json.dumps(_change(_resource(99_999)))) + 3
    count = max(1, (budget - 2_000) // per)
    with path.open("w") as out:
        out.write('{"format_version":"1.2","terraform_version":"1.11.4","planned_values":{"root_module":'
                  '{"resources":[')
        out.write(",".join(json.dumps(_resource(i)) for i in range(count)))
        out.write(']}},"resource_changes":[' + _head("NEW_AND_OLD_IMAGES"))
        for i in range(count):
            out.write("," + json.dumps(_change(_resource(i))))
        out.write('],"prior_state":{"format_version":"1.0","values":{"root_module":{"resources":[')
        out.write(",".join(json.dumps(_resource(i)) for i in range(count)))
        out.write(']}}},"configuration":{"provider_config":{}},"timestamp":"2026-12-01T03:00:00Z"}')
    return count


def write_one_string(path: Path, megabytes: int) -> None:
    """The same size in one value: a description of `megabytes` in `prior_state`."""
    with path.open("w") as out:
        out.write('{"format_version":"1.2","planned_values":{},"resource_changes":[' + _head("KEYS_ONLY") + '],'
                  '"prior_state":{"values":{"description":"')
        chunk = "x" * 1_000_000
        for _ in range(megabytes - 1):
            out.write(chunk)
        out.write('"}}}')


def write_small(path: Path) -> None:
    path.write_text('{"format_version":"1.2","planned_values":{},"resource_changes":[' + _head("KEYS_ONLY") + "]}")


# Runs the gate as its child and reports the child's peak resident set (KiB) as its last line of stderr: each
# run gets its own accounting, whatever ran before.
MEASURE = ("import resource, subprocess, sys\n"
           "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
           "sys.stderr.write(done.stderr + '\\n' + str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
           "sys.exit(done.returncode)\n")


def run_gate(plan: Path) -> tuple[float, float, int]:
    """One gate run in its own process: seconds, peak MiB, exit code."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, str(ROOT / "main.py"), "gate", "--plan",
                             str(plan), "--blueprint", str(BLUEPRINT), "--env", "prod", "--now", NOW],
                            capture_output=True, text=True)
    seconds = time.perf_counter() - started
    *messages, peak = result.stderr.rstrip().split("\n")
    if result.returncode not in (0, 1, 2):
        raise SystemExit(f"gate failed on {plan.name} ({result.returncode}): {' '.join(messages)}")
    return seconds, int(peak) / 1024, result.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=199, help="size of the large plans (default 199 MB)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tablewright-bench-plan-") as scratch:
        cases = []
        small = Path(scratch) / "small.json"
        write_small(small)
        cases.append(("orders plan alone", small))
        large = Path(scratch) / "large.json"
        count = write_large_account(large, args.megabytes)
        cases.append((f"large account ({count:,} other resources)", large))
        string = Path(scratch) / "string.json"
        write_one_string(string, args.megabytes)
        cases.append(("one string value", string))
        for name, plan in cases:
            runs = [run_gate(plan) for _ in range(args.repeat)]
            seconds = statistics.median(run[0] for run in runs)
            peak = max(run[1] for run in runs)
            rows.append((name, plan.stat().st_size / 1_000_000, seconds, peak, runs[0][2]))
    print("| case | plan MB | seconds | peak MiB | exit |")
    print("|---|---:|---:|---:|---:|")
    for name, size, seconds, peak, code in rows:
        print(f"| {name} | {size:,.1f} | {seconds:.2f} | {peak:.0f} | {code} |")


if __name__ == "__main__":
    main()
