"""Synthesis benchmark: wall time and peak memory (the Python process plus its Node.js child).

    python bench/synth.py [--repeat 3]

Cases: cdktf's own start-up (an empty app), each bundled example (every environment), generated
blueprints of 1, 10 and 100 tables (each provisioned, with GSIs, autoscaling and Contributor
Insights), all in one `main.py synth` run per case; and `main.py review` of the CRM example against
a changed copy (two syntheses of both environments, classification, lint, capacity, Markdown). Figures are medians over the repeats; memory is the peak of the
summed resident set of the whole process tree, sampled every 10 ms from /proc.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from modules.blueprint.load import load_blueprints  # noqa: E402

PYTHON = sys.executable

GENERATED = """\
blueprint: bench-{n}
version: 1.0.0
table:
  name: bench_{n}
  billing: provisioned
  capacity:
    read: {{min: 5, max: 500}}
    write: {{min: 5, max: 200}}
entities:
  Account:
    attributes: {{accountId: string, plan: string, region: string, createdAt: timestamp}}
    key: {{pk: "ACCOUNT#{{accountId}}", sk: PROFILE}}
  Event:
    attributes: {{accountId: string, at: timestamp, kind: string, payload: string}}
    key: {{pk: "ACCOUNT#{{accountId}}", sk: "EVENT#{{at}}#{{kind}}"}}
access_patterns:
  account: {{entity: Account, where: {{accountId: "="}}}}
  events: {{entity: Event, where: {{accountId: "=", at: between}}, order: desc, limit: 20}}
  accounts_by_region: {{entity: Account, where: {{region: "="}}, order_by: createdAt, returns: [accountId]}}
  accounts_by_plan: {{entity: Account, where: {{plan: "="}}, returns: [accountId, region]}}
  events_by_kind: {{entity: Event, where: {{kind: "="}}, order_by: at, returns: [payload]}}
"""


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _tree_rss_kib(pid: int) -> int:
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
        stack.extend(_children(current))
    return total


def measure(command: list[str]) -> tuple[float, float]:
    """(seconds, peak MiB) of one run of `command` in the project root."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while process.poll() is None:
        peak = max(peak, _tree_rss_kib(process.pid))
        time.sleep(0.01)
    elapsed = time.perf_counter() - start
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{process.stderr.read().decode()}")
    return elapsed, peak / 1024


def check_output(out: Path, stacks: int) -> None:
    """Refuse to report figures for a synthesis that did not produce complete tables."""
    files = sorted(out.glob("stacks/*/cdk.tf.json"))
    if len(files) != stacks:
        raise SystemExit(f"expected {stacks} stacks in {out}, found {len(files)}")
    for path in files:
        tables = json.loads(path.read_text())["resource"]["aws_dynamodb_table"]
        if not all("hash_key" in table and "attribute" in table for table in tables.values()):
            raise SystemExit(f"{path} has a table without its arguments")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for n in range(100):
            (work / f"bench-{n}.yaml").write_text(GENERATED.format(n=n))
        out = str(work / "out")
        empty_app = (
            "import modules.constructs.cdk as cdk; app = cdk.App(outdir=%r); cdk.TerraformStack(app, 's'); app.synth()"
            % out
        )
        cases = [("cdktf start-up (empty app)", [PYTHON, "-c", empty_app], 0)]
        for example in sorted((ROOT / "blueprints").glob("*.yaml")):
            stacks = len(load_blueprints(example))
            cases.append((f"example {example.name}", [PYTHON, "main.py", "synth", str(example), "--out", out], stacks))
        for count in (1, 10, 100):
            files = [str(work / f"bench-{n}.yaml") for n in range(count)]
            cases.append((f"generated, {count} table(s)", [PYTHON, "main.py", "synth", *files, "--out", out], count))
        shutil.copytree(ROOT / "blueprints" / "shared", work / "shared")
        changed = (ROOT / "blueprints" / "crm.yaml").read_text().replace("  ttl_attribute: expiresAt",
                                                                          "  ttl_attribute: expiresAt\n  stream: new_image")
        (work / "crm-changed.yaml").write_text(changed)
        review = [PYTHON, "main.py", "review", "--base", str(ROOT / "blueprints" / "crm.yaml"), "--head",
                  str(work / "crm-changed.yaml")]
        cases.append(("review crm.yaml (2 environments)", review, 0))
        print(f"{'case':32} {'seconds':>8} {'peak MiB':>9}   (median of {args.repeat}, {os.cpu_count()} CPUs)")
        for label, command, stacks in cases:
            runs = [measure(command) for _ in range(args.repeat)]
            if stacks:
                check_output(Path(out), stacks)
            seconds = statistics.median(r[0] for r in runs)
            memory = statistics.median(r[1] for r in runs)
            print(f"{label:32} {seconds:8.2f} {memory:9.0f}", flush=True)


if __name__ == "__main__":
    main()
