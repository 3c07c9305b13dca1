"""Alternatives benchmark: `explain`'s two alternative designs of every GSI, on a design with many GSIs.

    python bench/alternatives.py [--indexes 5 10 20]

Each case is one entity with `N` patterns that each need a GSI of their own (a different attribute bound),
so `index_choices` designs and costs 2 x N alternative blueprints. Prints seconds and peak memory.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tablewright.alternatives.alternatives import index_choices  # noqa: E402
from tablewright.blueprint.language import Blueprint  # noqa: E402
from tablewright.capacity.cost import monthly_cost  # noqa: E402
from tablewright.capacity.loads import estimate  # noqa: E402
from tablewright.design.designer import design  # noqa: E402


def blueprint(indexes: int) -> Blueprint:
    attributes = {"orgId": "string", "itemId": "string", **{f"a{n}": "string" for n in range(indexes)}}
    patterns = {f"by_a{n}": {"entity": "Item", "where": {"orgId": "=", f"a{n}": "="}, "rps": 10}
                for n in range(indexes)}
    return Blueprint.model_validate({
        "blueprint": "bench", "version": "1.0.0", "region": "us-east-1", "table": {"name": "bench_main"},
        "entities": {"Item": {"attributes": attributes, "key": {"pk": "ORG#{orgId}", "sk": "ITEM#{itemId}"},
                              "item_count": 1_000_000, "writes_per_second": 5}},
        "access_patterns": patterns}, strict=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--indexes", type=int, nargs="+", default=[5, 10, 20])
    for count in parser.parse_args().indexes:
        table = design(blueprint(count))
        capacity = estimate(table)
        tracemalloc.start()
        started = time.perf_counter()  # the stack's own cost included
        choices = index_choices(table, capacity, monthly_cost(table, capacity))
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        possible = sum(1 for choice in choices for a in choice.alternatives if a.figures is not None)
        print(f"{count} GSIs: {len(choices)} choices, {possible} alternatives costed, {seconds:.2f} s, "
              f"peak {peak:.1f} MiB")


if __name__ == "__main__":
    main()
