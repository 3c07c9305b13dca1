"""Simulation benchmark: a day of declared traffic, second by second, for a fleet of tables.

    python bench/simulate.py [--repeat 3]

Cases, each one `main.py simulate --format json` run: the floor (`main.py simulate` of one blueprint
without traffic: start-up, loading, designing, linting), then generated blueprints (bench/synth.py's
tables, each with writes and a daily curve): 100 of them steady, and 1 and 100 with a 10-minute event
at four times the rate. An event day is simulated beside the normal day in each billing mode, and
lint (TW105) simulates each offered fix for every table and index the event throttles: every one of
these does. Wall times are medians over the repeats; memory is the peak resident set of one more run
(sampled, not timed). The figures are checked: every stack of the JSON must have a series for its
table.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synth import GENERATED, PYTHON, peak_mib, seconds  # noqa: E402

TRAFFIC = """\
traffic:
  daily: {{"03:00": 0.2, "09:00": 1.0, "13:00": 1.4, "19:00": 2.5}}
  events: [{{name: launch, start: "18:00", duration: 10m, factor: 4}}]
"""
WRITES = "    writes: {{inserts: {rate}, updates: {rate}}}\n"


def blueprint(n: int, event: bool = True) -> str:
    """bench/synth.py's generated table with writes on both entities, a daily curve and an event, its
    autoscaling maximum raised to what the peak needs (the event then throttles until the alarms act)."""
    text = GENERATED.format(n=n).replace("write: {min: 5, max: 200}", "write: {min: 5, max: 4000}")
    text = text.replace("    key: {pk: \"ACCOUNT#{accountId}\", sk: PROFILE}\n",
                        "    key: {pk: \"ACCOUNT#{accountId}\", sk: PROFILE}\n" + WRITES.format(rate=5 + n % 7))
    text = text.replace("    key: {pk: \"ACCOUNT#{accountId}\", sk: \"EVENT#{at}#{kind}\"}\n",
                        "    key: {pk: \"ACCOUNT#{accountId}\", sk: \"EVENT#{at}#{kind}\"}\n" + WRITES.format(rate=50))
    traffic = TRAFFIC.format()
    return text + (traffic if event else traffic.split("  events:")[0])


def check(command: list[str], stacks: int) -> None:
    """Refuse to report figures for a run whose JSON lacks a stack or a table's series."""
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    found = [s for s in json.loads(done.stdout)["stacks"] if any(x["target"] == "table" for x in s["series"])]
    if len(found) != stacks:
        raise SystemExit(f"expected {stacks} simulated stacks, found {len(found)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (median), default 3")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "modules", quiet=1)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for n in range(100):
            (work / f"sim-{n}.yaml").write_text(blueprint(n))
            (work / f"steady-{n}.yaml").write_text(blueprint(n, event=False))
        (work / "plain.yaml").write_text(GENERATED.format(n="plain"))
        cases = [("floor: one table, no traffic", [str(work / "plain.yaml")], 1),
                 ("100 tables, steady", [str(work / f"steady-{n}.yaml") for n in range(100)], 100)]
        cases += [(f"{count:,} table{'s' if count > 1 else ''}, with an event",
                   [str(work / f"sim-{n}.yaml") for n in range(count)], count) for count in (1, 100)]
        print(f"{'case':30} {'runs':>4} {'seconds':>8} {'x floor':>8} {'peak MiB':>9}   ({os.cpu_count()} CPUs)")
        floor = None
        for label, files, stacks in cases:
            command = [PYTHON, "main.py", "simulate", *files, "--format", "json"]
            check(command, stacks)
            memory = peak_mib(command)
            wall = statistics.median(seconds(command) for _ in range(args.repeat))
            floor = floor or wall
            print(f"{label:30} {args.repeat:4} {wall:8.2f} {wall / floor:8.1f} {memory:9.0f}", flush=True)


if __name__ == "__main__":
    main()
