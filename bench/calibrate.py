"""Calibration benchmark: `main.py calibrate` reading CloudWatch's one-minute datapoints for the bundled orders
stack (prod: the table and GSI1, consumed units and throttle events, 8 series).

    python bench/calibrate.py [--repeat 3]

Cases: a day (11,520 datapoints, one file) and a week (80,640, in 7 pages of a day each, every page but the last
with a NextToken). Wall times are medians over the repeats; memory is the peak resident set of one more run. The
figures are checked: every comparison must find the declared table read average.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synth import PYTHON, peak_mib, seconds  # noqa: E402

TABLE = "prod-orders_main"
SERIES = {("-", "ConsumedReadCapacityUnits"): 360, ("-", "ConsumedWriteCapacityUnits"): 124,
          ("-", "ReadThrottleEvents"): 0, ("-", "WriteThrottleEvents"): 0,
          ("GSI1", "ConsumedReadCapacityUnits"): 315, ("GSI1", "ConsumedWriteCapacityUnits"): 120,
          ("GSI1", "ReadThrottleEvents"): 0, ("GSI1", "WriteThrottleEvents"): 0}
START = datetime(2026, 11, 1, tzinfo=UTC)


def day_page(day: int, last: bool) -> dict:
    minutes = [START + timedelta(days=day, minutes=m) for m in range(1440)]
    results = [{"Id": f"m{n}", "Label": f"{TABLE}:{index}:{metric}:Sum:60", "StatusCode": "Complete" if last else
                "PartialData", "Timestamps": [t.isoformat() for t in reversed(minutes)],
                "Values": [rate * 60.0] * len(minutes)} for n, ((index, metric), rate) in enumerate(SERIES.items())]
    return {"MetricDataResults": results, "Messages": [], **({} if last else {"NextToken": f"token-{day}"})}


def case(directory: Path, days: int) -> list[str]:
    paths = []
    for day in range(days):
        path = directory / f"day{day}.json"
        path.write_text(json.dumps(day_page(day, day == days - 1), indent=4))
        paths.append(str(path))
    return [PYTHON, "main.py", "calibrate", "blueprints/orders.yaml", "--env", "prod", "--format", "json",
            "--metrics", *paths]


def check(command: list[str]) -> None:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    table_reads = json.loads(done.stdout)["comparisons"][0]
    if done.returncode != 0 or table_reads["observed_average"] != 360:
        raise SystemExit(f"calibrate did not find the declared average: {done.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        for days in (1, 7):
            directory = Path(temporary) / f"days{days}"
            directory.mkdir()
            command = case(directory, days)
            check(command)
            wall = statistics.median(seconds(command) for _ in range(args.repeat))
            size = sum(Path(p).stat().st_size for p in command[command.index("--metrics") + 1:]) / 2**20
            print(f"{days} day(s), {days * 1440 * len(SERIES):,} datapoints ({size:.1f} MB): {wall:.2f} s, "
                  f"{peak_mib(command):.0f} MiB peak")


if __name__ == "__main__":
    main()
