"""`explain --resolved`: the composed blueprint, every value followed by the file and line it came from."""

from __future__ import annotations

import json
import os
from typing import Any

from tablewright.blueprint.load import LoadedBlueprint
from tablewright.errors import FieldPath

COMMENT_COLUMN = 56


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _flow(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v)}" for k, v in value.items()) + "}"
    return _scalar(value)


def _simple(value: Any) -> bool:
    return not isinstance(value, (dict, list)) or (isinstance(value, list) and all(
        not isinstance(v, (dict, list)) for v in value))


def render_resolved(loaded: LoadedBlueprint) -> str:
    where = f", environment {loaded.environment}" if loaded.environment else ""
    lines = [f"# {loaded.stack_name}: {loaded.path}{where}"]

    def origin(path: FieldPath) -> str:
        location = loaded.source.locate(path)
        return f"# {os.path.relpath(location.file)}:{location.line}"

    def emit(text: str, path: FieldPath) -> None:
        lines.append(f"{text.ljust(COMMENT_COLUMN)} {origin(path)}")

    def walk(value: Any, path: FieldPath, indent: str) -> None:
        for key, child in value.items():
            child_path = (*path, key)
            if _simple(child):
                emit(f"{indent}{key}: {_flow(child)}", child_path)
            elif isinstance(child, dict):
                emit(f"{indent}{key}:", child_path)
                walk(child, child_path, indent + "  ")
            else:
                emit(f"{indent}{key}:", child_path)
                for position, item in enumerate(child):
                    emit(f"{indent}  - {_flow(item)}", (*child_path, position))

    walk(loaded.composed or {}, (), "")
    return "\n".join(lines) + "\n"
