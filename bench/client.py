"""Client benchmark: `main.py client` writing the Python and the TypeScript module of both bundled blueprints,
and `main.py verify --client` driving the generated Python client through every write and pattern.

    python bench/client.py [--repeat 3]

Wall times are medians over the repeats; memory is the peak resident set of one more run. Each run is checked:
the modules must be written, and verify must pass every client check.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synth import PYTHON, peak_mib, seconds  # noqa: E402

BLUEPRINTS = ["blueprints/orders.yaml", "blueprints/crm.yaml"]


def generate(language: str, out: Path) -> list[str]:
    return [PYTHON, "main.py", "client", *BLUEPRINTS, "--lang", language, "--out", str(out)]


def check_generated(command: list[str], out: Path, suffix: str) -> None:
    subprocess.run(command, cwd=ROOT, capture_output=True, check=True)
    written = sorted(path.name for path in out.glob(f"*_client{suffix}"))
    if written != [f"crm_client{suffix}", f"orders_client{suffix}"]:
        raise SystemExit(f"client wrote {written}")


def check_verified(command: list[str]) -> int:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    checks = [check["result"] for result in json.loads(done.stdout) for check in result["client"]]
    if done.returncode != 0 or set(checks) != {"PASS"}:
        raise SystemExit(f"verify --client failed: {done.stderr}")
    return len(checks)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=ROOT, prefix=".bench-client-") as temporary:  # --out lies inside ROOT
        for language, suffix in (("python", ".py"), ("typescript", ".ts")):
            out = Path(temporary) / language
            command = generate(language, out)
            check_generated(command, out, suffix)
            wall = statistics.median(seconds(command) for _ in range(args.repeat))
            size = sum(path.stat().st_size for path in out.glob(f"*{suffix}")) / 1024
            print(f"client --lang {language}, 2 blueprints ({size:.0f} KiB): {wall:.2f} s, "
                  f"{peak_mib(command):.0f} MiB peak")
    command = [PYTHON, "main.py", "verify", *BLUEPRINTS, "--client", "--format", "json"]
    checks = check_verified(command)
    wall = statistics.median(seconds(command) for _ in range(args.repeat))
    print(f"verify --client, 2 blueprints (4 stacks, {checks} client checks): {wall:.2f} s, "
          f"{peak_mib(command):.0f} MiB peak")


if __name__ == "__main__":
    main()
