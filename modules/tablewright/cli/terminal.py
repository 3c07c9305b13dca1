"""What the CLI writes to a terminal: colour and a progress line, only when the stream is a TTY.

Renderers stay plain; the colour goes onto known words at the edge: `error`/`warning` prefixes, the review's
verdicts (blocked red, window yellow, safe green) and verify's and the gate's PASS/FAIL. `NO_COLOR` (any
non-empty value, https://no-color.org) turns it off; a pipe or a file never gets escapes or progress.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TextIO, TypeVar

from tablewright.text import escape_hidden

RED, YELLOW, GREEN = "31", "33", "32"
COLOURS = {"error": RED, "FAIL": RED, "BLOCKED": RED, "blocked": RED,
           "warning": YELLOW, "WINDOW": YELLOW, "window": YELLOW,
           "SAFE": GREEN, "safe": GREEN, "PASS": GREEN}
# `error:` / `warning:` opening a line, lint's `file:line:col: error TW101:`, verdict words in capitals, and a
# change table's class column (the first word of a row).
STYLED = re.compile(r"(?m)(?:^|(?<=\d: ))(?:error|warning)(?=[: ])|\b(?:PASS|FAIL|BLOCKED|WINDOW|SAFE)\b"
                    r"|^(?:blocked|window|safe)(?=  )")
PROGRESS_FROM = 5  # blueprints: fewer finish before a progress line could be read

T = TypeVar("T")


def coloured(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return stream.isatty()


def paint(text: str) -> str:
    return STYLED.sub(lambda match: f"\033[{COLOURS[match.group()]}m{match.group()}\033[0m", text)


def write(text: str, styled: bool = True, stream: TextIO | None = None) -> None:
    """Write `text` with its hidden characters escaped (`escape_hidden`: names and messages from blueprints, plans
    and metrics never drive the terminal), painted when `styled` and the stream is a colour terminal (stdout by
    default)."""
    out, text = stream or sys.stdout, escape_hidden(text)
    out.write(paint(text) if styled and coloured(out) else text)


def say(text: str) -> None:
    """A line on stderr (errors, warnings, notes, summaries), after what stdout holds so far: both read in order
    when they go to one file or terminal."""
    with contextlib.suppress(OSError):  # the reader of stdout is gone: stderr is still worth writing
        sys.stdout.flush()
    write(text + "\n", stream=sys.stderr)


def progress(items: Iterable[T], total: int, label: str, unit: str = "blueprints") -> Iterator[T]:
    """Each item, with `label N/total unit` updated in place on stderr when it is a terminal and there are enough
    items for it to matter; the line is cleared at the end."""
    shown = _shown(total)
    for done, item in enumerate(items):
        if shown:
            sys.stderr.write(f"\r{label} {done + 1}/{total} {unit}")
            sys.stderr.flush()
        yield item
    if shown:
        _clear()


@contextmanager
def status(text: str, total: int) -> Iterator[None]:
    """`text` on stderr while the block runs (a step that counts nothing itself), under the same conditions as
    `progress`; cleared after."""
    shown = _shown(total)
    if shown:
        sys.stderr.write(f"\r{text}\033[K")
        sys.stderr.flush()
    try:
        yield
    finally:
        if shown:
            _clear()


def _shown(total: int) -> bool:
    return total >= PROGRESS_FROM and sys.stderr.isatty()


def _clear() -> None:
    sys.stderr.write("\r\033[K")
    sys.stderr.flush()


def tool_version() -> str:
    """The installed distribution's version (`unknown` when run from a clone that was never installed)."""
    from importlib import metadata  # on demand: it costs start-up time

    try:
        return metadata.version("tablewright")
    except metadata.PackageNotFoundError:
        return "unknown"
