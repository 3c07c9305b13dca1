"""The catalog (`list`) as a text table or JSON."""

from __future__ import annotations

import json
from dataclasses import asdict

from tablewright.catalog.catalog import Entry
from tablewright.report.tables import text_table

HEADERS = ("Blueprint", "Version", "Owner", "Environments", "Tables", "Entities", "Patterns", "File", "Description")


def render_text(entries: list[Entry]) -> str:
    rows = [[e.blueprint, e.version, e.owner, ", ".join(e.environments) or "-", str(len(e.tables)),
             str(e.entities), str(e.patterns), e.file, _shorten(e.description or e.error.split("\n")[0])]
            for e in entries]
    return text_table(HEADERS, rows) + "\n"


def _shorten(text: str, width: int = 63) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def render_json(entries: list[Entry]) -> str:
    return json.dumps([asdict(e) for e in entries], indent=2) + "\n"
