"""Files Tablewright creates beside the user's own: new ones only, never through a link, never half-written."""

from __future__ import annotations

import os
from pathlib import Path

from tablewright.errors import BlueprintError, ErrorCode


def create_new_file(path: Path, text: str) -> None:
    """Write `text` to a file that must not exist yet: never through a symbolic link, never over a file
    that appeared meanwhile, never left half-written (a write that fails removes it)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError as error:
        raise BlueprintError(f"cannot create {path}: {error.strerror}", code=ErrorCode.PATH_ARGUMENT,
                             hint="choose another name or directory (an existing file is never overwritten)") from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        path.unlink(missing_ok=True)
        raise BlueprintError(f"cannot write {path}: {error.strerror}", code=ErrorCode.PATH_ARGUMENT,
                             hint="free some room on the disk, or choose another directory") from None
