"""Work per design, not per environment: one blueprint of about 80 KB with 20 environments that share its design.

    python bench/environments.py [--repeat 3]

Each command (`lint`, `simulate`, `explain`, `capacity`, and `client`, which refuses the blueprint's lint error)
runs over every environment, as `main.py COMMAND fleet.yaml` in a scratch copy; environments of one design are
designed, estimated, linted and simulated once (modules/tablewright/stacks/stack.py). Wall times are medians over
the repeats; memory is the peak resident set of one more run. `--root DIR` runs another checkout's main.py (the
figures before a change: `git worktree add /tmp/before REV`).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synth import PYTHON, peak_mib, seconds  # noqa: E402

ENVIRONMENTS = 20
ENTITIES = 100
COMMANDS = ("lint", "simulate", "explain", "capacity", "client")


def entity(n: int) -> list[str]:
    return [f"  Thing{n}:",
            f"    description: \"kind {n} of the things an owner keeps, with its status and size, read by owner "
            "and by status\"",
            f"    attributes: {{ownerId: string, thingId: string, status: {{type: string, values: [OPEN, DONE]}}, "
            f"kind: string, at: timestamp, "
            f"label{n}: string, size: number, note: {{type: string, optional: true}}}}",
            f'    key: {{pk: "OWNER{n}#{{ownerId}}", sk: "THING#{{thingId}}"}}',
            f"    writes: {{inserts: {5 + n % 7}, updates: {10 + n % 5}}}"]


def patterns(n: int) -> list[str]:
    return [f"  thing{n}: {{entity: Thing{n}, where: {{ownerId: \"=\", thingId: \"=\"}}, rps: {20 + n}, "
            "description: \"one thing of an owner\"}",
            f"  things{n}: {{entity: Thing{n}, where: {{ownerId: \"=\"}}, rps: {10 + n}, limit: 20, "
            "description: \"an owner's things, a page at a time\"}",
            f"  by_status{n}: {{entity: Thing{n}, where: {{status: \"=\"}}, order_by: at, rps: 5, "
            "returns: [thingId, ownerId], description: \"things of one status, newest first\"}"]


def blueprint(hot: bool = False) -> str:
    """The fleet: ENTITIES entities, three patterns each (a GSI per status read), a daily curve and an event, in
    ENVIRONMENTS environments; `hot`: one pattern over a partition's limit (a lint error)."""
    lines = ["blueprint: fleet", "version: 1.0.0", "table:", "  name: fleet_main", "  billing: provisioned",
             "  capacity:", "    read: {min: 5, max: 40000}", "    write: {min: 5, max: 20000}",
             "environments: {" + ", ".join(f"e{n}: {{}}" for n in range(ENVIRONMENTS)) + "}",
             "traffic:", '  daily: {"03:00": 0.2, "09:00": 1.0, "13:00": 1.4, "19:00": 2.5}',
             '  events: [{name: launch, start: "18:00", duration: 10m, factor: 4}]', "entities:"]
    lines += [line for n in range(ENTITIES) for line in entity(n)]
    lines += ["access_patterns:", *(line for n in range(ENTITIES) for line in patterns(n))]
    text = "\n".join(lines) + "\n"
    busiest = 'by_status0: {entity: Thing0, where: {status: "="}, order_by: at, rps: '
    return text.replace(busiest + "5,", busiest + "90000,") if hot else text


def run(root: Path, command: str, scratch: Path, repeat: int) -> tuple[float, float]:
    """Median seconds and peak MiB of `main.py COMMAND` over every environment, in the scratch project (`client` of
    the blueprint with a lint error, which it must refuse with that error: exit 2)."""
    arguments = [PYTHON, str(root / "main.py"), command, "fleet.yaml"]
    if command == "client":
        arguments[-1] = "hot.yaml"
        arguments += ["--lang", "python", "--out", "client"]
    check = "[ $code -eq 2 ] && grep -q 'lint TW103' err" if command == "client" else "[ $code -eq 0 ]"
    quoted = subprocess.list2cmdline(arguments)
    accepting = ["sh", "-c", f"cd {scratch} && {quoted} >/dev/null 2>err; code=$?; {check}"]  # else: a failed run
    return statistics.median(seconds(accepting) for _ in range(repeat)), peak_mib(accepting)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose main.py runs (default: this one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        scratch = Path(directory)
        (scratch / "fleet.yaml").write_text(blueprint())
        (scratch / "hot.yaml").write_text(blueprint(hot=True))
        size = (scratch / "fleet.yaml").stat().st_size
        print(f"fleet.yaml: {size / 1024:.0f} KB, {ENVIRONMENTS} environments, {ENTITIES} entities, "
              f"{3 * ENTITIES} patterns ({args.root})")
        print(f"{'command':<10} {'seconds':>8} {'peak MiB':>9}")
        for command in COMMANDS:
            wall, peak = run(args.root, command, scratch, args.repeat)
            print(f"{command:<10} {wall:>8.2f} {peak:>9.0f}")


if __name__ == "__main__":
    main()
