"""User-facing errors: one message with where it happened and what to write instead."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

FieldPath = tuple[str | int, ...]


@dataclass(frozen=True)
class SourceLocation:
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def render_path(path: Sequence[str | int]) -> str:
    """`("entities", "Customer", "key", "pk")` -> `entities.Customer.key.pk`; list items as `[2]`."""
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            text += f".{step}" if text else str(step)
    return text


class TablewrightError(Exception):
    """Bad input. The CLI prints it as one message and exits with code 2.

    `path` is the field the problem is about; the loader turns it into a file, line and column.
    """

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: Sequence[str | int] = (),
        hint: str | None = None,
        location: SourceLocation | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path: FieldPath = tuple(path)
        self.hint = hint
        self.location = location

    def located(self, location: SourceLocation) -> "TablewrightError":
        """The same error, pinned to a place in a file (keeps an existing, more precise location)."""
        if self.location is not None:
            return self
        return type(self)(self.message, path=self.path, hint=self.hint, location=location)

    def render(self) -> str:
        head = f"{self.location}: " if self.location else ""
        field = f"{render_path(self.path)}: " if self.path else ""
        text = f"error: {head}{field}{self.message}"
        if self.hint:
            text += f"\n  fix: {self.hint}"
        return text

    def __str__(self) -> str:
        return self.render()


class BlueprintError(TablewrightError):
    """The blueprint file cannot be read or does not follow the blueprint language."""


class DesignError(TablewrightError):
    """The blueprint is well formed but its keys cannot serve an access pattern."""
