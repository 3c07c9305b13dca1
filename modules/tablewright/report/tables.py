"""Plain tables for terminals (within `WIDTH` columns) and Markdown (GitHub renders them: any width)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from tablewright.text import escape_hidden

WIDTH = 100  # columns of text output: a terminal beside an editor, a CI log
GAP = "  "
NARROWEST = 8  # columns narrower than this (or than their longest word) do not fit: then one block per row


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int = WIDTH) -> str:
    """Columns padded to their widest cell; when they do not fit in `width`, the widest columns wrap their cells
    onto continuation lines, and when even that cannot fit, each row is a block of `header: value` lines."""
    table = [[str(cell) for cell in headers], *([str(cell) for cell in row] for row in rows)]
    columns = list(zip(*table, strict=False))
    widths = [max(len(cell) for cell in column) for column in columns]
    floors = [min(natural, max([NARROWEST, *(len(word) for cell in column for word in cell.split())]))
              for natural, column in zip(widths, columns, strict=True)]
    narrowed = _narrowed(widths, floors, width - len(GAP) * (len(widths) - 1))
    if narrowed is None:
        return _blocks(table[0], table[1:], width)
    widths = narrowed
    lines = []
    for cells in [table[0], ["-" * w for w in widths], *table[1:]]:
        wrapped = [textwrap.wrap(cell, w, break_on_hyphens=False) or [""]
                   for cell, w in zip(cells, widths, strict=False)]
        for depth in range(max(len(parts) for parts in wrapped)):
            parts = [part[depth] if depth < len(part) else "" for part in wrapped]
            lines.append(GAP.join(part.ljust(w) for part, w in zip(parts, widths, strict=False)).rstrip())
    return "\n".join(lines)


def _narrowed(widths: list[int], floors: list[int], room: int) -> list[int] | None:
    """The column widths, the widest narrowed one column at a time (never below its floor) until they fit in
    `room`; None if they cannot."""
    narrowed = list(widths)
    while sum(narrowed) > room:
        narrowable = [i for i in range(len(narrowed)) if narrowed[i] > floors[i]]
        if not narrowable:
            return None
        narrowed[max(narrowable, key=lambda i: narrowed[i])] -= 1
    return narrowed


def _blocks(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> str:
    label = max(len(header) for header in headers) + 2
    blocks = []
    for row in rows:
        blocks += [textwrap.fill(cell, width, initial_indent=f"{header}:".ljust(label), subsequent_indent=" " * label,
                                 break_on_hyphens=False) or f"{header}:"
                   for header, cell in zip(headers, row, strict=False)]
        blocks.append("")
    return "\n".join(blocks).rstrip("\n")


def fit_lines(text: str, width: int = WIDTH) -> str:
    """Text output within `width` columns: each longer line wrapped at spaces, its continuation lines indented
    two columns past its own indentation (tables are already narrow: `text_table`). Every text report reaches the
    terminal through here: control and bidirectional characters (blueprint descriptions, Contributor Insights keys)
    are shown as escapes (`\\x1b`, `\\u202e`) first, so no value can move the cursor, recolour or reorder what
    the terminal shows, and the widths count what it shows."""
    fitted = []
    for line in escape_hidden(text).split("\n"):
        if len(line) <= width:
            fitted.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()))
        fitted += textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_on_hyphens=False,
                                drop_whitespace=True)
    return "\n".join(fitted)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def escape(cell: object) -> str:
        return str(cell).replace("|", "\\|").replace("\r", " ").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
