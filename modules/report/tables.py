"""Plain tables for terminals and Markdown."""

from __future__ import annotations

from collections.abc import Sequence


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=False)]
    line = "  ".join("-" * width for width in widths)

    def render(cells: Sequence[object]) -> str:
        return "  ".join(str(cell).ljust(width) for cell, width in zip(cells, widths, strict=False)).rstrip()

    return "\n".join([render(headers), line, *(render(row) for row in rows)])


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def escape(cell: object) -> str:
        return str(cell).replace("|", "\\|").replace("\r", " ").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
