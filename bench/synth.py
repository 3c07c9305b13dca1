"""Synthesis benchmark: wall time and peak memory (the Python process plus its Node.js child).

    python bench/synth.py [--repeat 3] [--fleet-repeat 1]

Cases, each one `main.py synth` run: cdktf's own floor (an empty app: Python, jsii and Node.js
start-up, one empty stack), generated blueprints of 1, 100 and 1,000 tables (each provisioned, with
GSIs, autoscaling, Contributor Insights and alarms), each bundled example (every environment), and
`main.py review` of the CRM example against a changed copy (two syntheses of both environments,
classification, lint, capacity, Markdown). `synth` loads, designs and lints every blueprint before
synthesizing, so the figures are the whole command's. Wall times are medians over the repeats (the
1,000-table case runs `--fleet-repeat` times); memory is the peak of the summed resident set of the
whole process tree in one more run, sampled every 10 ms from /proc (not timed: the sampler competes
for the CPUs); `x floor` compares the wall time with the floor.
Tablewright's modules are compiled to bytecode first, as an installed package is.
"""

from __future__ import annotations

import argparse
import compileall
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

from tablewright.blueprint.load import load_blueprints  # noqa: E402

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
    """Child processes of `pid`: from /proc/PID/task/*/children where the kernel offers it (cheap: the
    sampler must not compete with the measured processes for CPU), else by scanning /proc."""
    try:
        return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
                for child in (task / "children").read_text().split()]
    except FileNotFoundError:
        if not Path(f"/proc/{pid}").exists():
            return []
    except OSError:
        return []
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


def _run(command: list[str], sample: bool) -> tuple[float, float]:
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    if sample:
        while process.poll() is None:
            peak = max(peak, _tree_rss_kib(process.pid))
            time.sleep(0.01)
    _, errors = process.communicate()
    elapsed = time.perf_counter() - start
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{errors.decode()}")
    return elapsed, peak / 1024


def seconds(command: list[str]) -> float:
    """Wall time of one run of `command` in the project root, nothing else running beside it."""
    return _run(command, sample=False)[0]


def peak_mib(command: list[str]) -> float:
    """Peak resident memory of one run of `command` (sampled: the sampler takes CPU, so it is not timed)."""
    return _run(command, sample=True)[1]


def check_output(out: Path, stacks: int) -> None:
    """Refuse to report figures for a synthesis that did not produce complete tables."""
    files = sorted(out.glob("stacks/*/cdk.tf.json"))
    if len(files) != stacks:
        raise SystemExit(f"expected {stacks} stacks in {out}, found {len(files)}")
    for path in files:
        tables = json.loads(path.read_text())["resource"]["aws_dynamodb_table"]
        if not all("hash_key" in table and "attribute" in table for table in tables.values()):
            raise SystemExit(f"{path} has a table without its arguments")


FLEET = 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (median), default 3")
    parser.add_argument("--fleet-repeat", type=int, default=1, help="runs of the 1,000-table case, default 1")
    args = parser.parse_args()
    # An installed package runs from bytecode; where PYTHONDONTWRITEBYTECODE is set (as on CI images)
    # an editable checkout would otherwise recompile every module of ours on every run.
    compileall.compile_dir(ROOT / "modules", quiet=1)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for n in range(FLEET):
            (work / f"bench-{n}.yaml").write_text(GENERATED.format(n=n))
        out = str(work / "out")
        empty_app = (
            f"import tablewright.constructs.cdk as cdk; app = cdk.App(outdir={out!r}); "
            "cdk.TerraformStack(app, 's'); app.synth()"
        )
        cases = [("floor: cdktf empty app", [PYTHON, "-c", empty_app], 0, args.repeat)]
        for count in (1, 100, FLEET):
            files = [str(work / f"bench-{n}.yaml") for n in range(count)]
            cases.append((f"generated, {count:,} table{'s' if count > 1 else ''}",
                          [PYTHON, "main.py", "synth", *files, "--out", out], count,
                          args.fleet_repeat if count == FLEET else args.repeat))
        for example in sorted((ROOT / "blueprints").glob("*.yaml")):
            stacks = len(load_blueprints(example))
            cases.append((f"example {example.name} ({stacks} stacks)",
                          [PYTHON, "main.py", "synth", str(example), "--out", out], stacks, args.repeat))
        shutil.copytree(ROOT / "blueprints" / "shared", work / "shared")
        changed = (ROOT / "blueprints" / "crm.yaml").read_text().replace(
            "  ttl_attribute: expiresAt", "  ttl_attribute: expiresAt\n  stream: new_image"
        )
        (work / "crm-changed.yaml").write_text(changed)
        review = [PYTHON, "main.py", "review", "--base", str(ROOT / "blueprints" / "crm.yaml"), "--head",
                  str(work / "crm-changed.yaml")]
        cases.append(("review crm.yaml (2 environments)", review, 0, args.repeat))
        print(f"{'case':34} {'runs':>4} {'seconds':>8} {'x floor':>8} {'peak MiB':>9}   ({os.cpu_count()} CPUs)")
        floor = None
        for label, command, stacks, repeat in cases:
            memory = peak_mib(command)  # first: it also writes the design locks the timed runs then read
            wall = statistics.median(seconds(command) for _ in range(repeat))
            if stacks:
                check_output(Path(out), stacks)
            floor = floor or wall
            print(f"{label:34} {repeat:4} {wall:8.2f} {wall / floor:8.1f} {memory:9.0f}", flush=True)


if __name__ == "__main__":
    main()
