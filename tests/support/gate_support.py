"""Hand-made plans for the gate's security tests: the review corpus base (tests/data/blueprints/shop.yaml) and
`terraform show -json`-shaped plans of it, with only the entries a test needs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from tests.support.review_corpus import BASE, merged

NOW = datetime(2026, 12, 1, 2, 30, tzinfo=UTC)  # inside the shop's window (daily 02:00 UTC, 2h)
OUTSIDE = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)  # outside it


def shop(directory: Path, name: str = "shop.yaml", **overlay: Any) -> Path:
    """The review corpus base (tests/data/blueprints/shop.yaml) with `overlay` merged in."""
    path = directory / name
    path.write_text(yaml.safe_dump(merged(yaml.safe_load(BASE.read_text()), overlay), sort_keys=False))
    return path


def plan(*entries: dict[str, Any], outputs: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"format_version": "1.2", "planned_values": {}, "resource_changes": list(entries),
            "output_changes": outputs or {}, **extra}


def entry(address: str, actions: list[str], before: dict[str, Any] | None, after: dict[str, Any] | None,
          after_unknown: dict[str, Any] | None = None, mode: str = "managed") -> dict[str, Any]:
    kind = address.split(".")[-2]
    return {"address": address, "type": kind, "mode": mode, "name": address.split(".")[-1],
            "change": {"actions": actions, "before": before, "after": after, "after_unknown": after_unknown or {}}}


def record(**before: Any) -> dict[str, Any]:
    """`output_changes` whose `tablewright` record before the plan holds `before` (unchanged by it)."""
    return {"tablewright": {"actions": ["no-op"], "before": before, "after": before}}


TABLE = entry("aws_dynamodb_table.shop", ["no-op"], {"name": "shop_main"}, {"name": "shop_main"})
