"""Markdown that is safe to post as a pull-request comment, whatever the blueprint or plan holds.

Values from blueprints and plans end up in tables and sentences. Outside code spans, a `<` could
open raw HTML (close our folded sections, load a remote image) and `![...](...)` would load an
image, so both are neutralised; the tags the review writes itself (a line that is exactly
`<details>`, `</details>` or `<summary>...</summary>`) are kept. Inside code spans nothing
renders, so nothing needs escaping there. Values never carry line breaks (the loader refuses
control characters in them), so no value can make a line of its own.
"""

from __future__ import annotations

import re

# The tags the review writes itself, each alone on its line (the summary wrapping one line of text).
OWN_LINE = re.compile(r"(<details>|</details>|<summary>(?P<summary>.*)</summary>)")
_BACKTICKS = re.compile(r"`+")


def _segments(line: str) -> list[tuple[bool, str]]:
    """(is_code, text) pieces of one line: a run of N backticks opens a code span that the next run of
    exactly N closes (CommonMark); an unclosed run is plain text."""
    pieces: list[tuple[bool, str]] = []
    position = 0
    text_start = 0
    while True:
        opening = _BACKTICKS.search(line, position)
        if opening is None:
            break
        closing = _BACKTICKS.search(line, opening.end())
        while closing is not None and len(closing.group()) != len(opening.group()):
            closing = _BACKTICKS.search(line, closing.end())
        if closing is None:
            position = opening.end()
            continue
        pieces.append((False, line[text_start:opening.start()]))
        pieces.append((True, line[opening.start():closing.end()]))
        position = text_start = closing.end()
    pieces.append((False, line[text_start:]))
    return pieces


def _escape_line(line: str) -> str:
    own = OWN_LINE.fullmatch(line)
    if own and own.group("summary") is None:
        return line
    if own:
        return f"<summary>{_escape_line(own.group('summary'))}</summary>"
    return "".join(text if is_code else _neutralise(text) for is_code, text in _segments(line))


def _neutralise(text: str) -> str:
    return text.replace("<", "&lt;").replace("![", "!\\[")


def sanitize(markdown: str) -> str:
    """The same Markdown with raw HTML and images from untrusted values made inert (idempotent)."""
    return "\n".join(_escape_line(line) for line in markdown.split("\n"))
