"""Composition benchmark: reading a blueprint with 20 environment overlays and many top-level keys.

    python bench/compose.py [--keys 1000 10000 49000]

Each case writes a blueprint of `N` junk top-level keys (refused later as unknown fields, E200) with 20
empty environments, and times `read_document` plus `environment_documents` (the extends and overlay
merges), the step that was quadratic: a 479 KB blueprint of 49,000 keys took over 30 minutes. The time
per key should stay flat as N grows.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tablewright.blueprint.compose import environment_documents, read_document  # noqa: E402


def blueprint(keys: int) -> str:
    environments = ", ".join(f"e{n}: {{}}" for n in range(20))
    return "\n".join(["blueprint: x", "version: 1.0.0", f"environments: {{{environments}}}",
                      *(f"k{n}: 1" for n in range(keys))]) + "\n"


def compose_seconds(keys: int, directory: Path) -> float:
    path = directory / f"k{keys}.yaml"
    path.write_text(blueprint(keys))
    started = time.perf_counter()
    environment_documents(read_document(path, directory))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, nargs="+", default=[1000, 10000, 49000])
    args = parser.parse_args()
    print(f"{'keys':>8} {'seconds':>9} {'us per key':>11}")
    with tempfile.TemporaryDirectory(prefix="tablewright-bench-") as scratch:
        for keys in args.keys:
            seconds = compose_seconds(keys, Path(scratch))
            print(f"{keys:>8,} {seconds:>9.2f} {seconds / keys * 1e6:>11.1f}")


if __name__ == "__main__":
    main()
