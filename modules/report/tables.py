"""Plain tables for terminals and Markdown."""

from __future__ import annotations

from typing import Sequence


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]
    line = "  ".join("-" * width for width in widths)
    render = lambda cells: "  ".join(str(cell).ljust(width) for cell, width in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([render(headers), line, *(render(row) for row in rows)])


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    escape = lambda cell: str(cell).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
