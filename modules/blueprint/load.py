"""Load a blueprint file: safe YAML, pydantic validation, cross-reference checks, one clear error."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from modules.blueprint.model import Blueprint, SemVer
from modules.blueprint.references import check_references
from modules.blueprint.compose import Document, environment_documents, read_document
from modules.blueprint.yamlsource import SourceMap
from modules.errors import BlueprintError, FieldPath, TablewrightError

# What each name pattern means, in words a blueprint author can act on.
_PATTERN_MEANING = {
    r"^[a-z][a-z0-9-]{0,62}$": "lowercase letters, digits and '-', starting with a letter (e.g. `crm`)",
    r"^[A-Z][A-Za-z0-9]{0,63}$": "PascalCase letters and digits (e.g. `OrderItem`)",
    r"^[A-Za-z][A-Za-z0-9_]{0,63}$": "letters, digits and '_', starting with a letter (e.g. `customerId`)",
    r"^[a-z][a-z0-9_]{0,63}$": "snake_case: lowercase letters, digits and '_' (e.g. `recent_contacts`)",
    r"^[A-Za-z][A-Za-z0-9_]{2,31}$": "3-32 letters, digits and '_', starting with a letter (e.g. `GSI1`)",
    r"^[A-Za-z0-9_.-]{3,255}$": "3-255 letters, digits, '_', '.' or '-' (DynamoDB table naming rules)",
    SemVer.__metadata__[0].pattern: "a semantic version such as 1.0.0 or 2.1.0-rc.1",
}


@dataclass(frozen=True)
class LoadedBlueprint:
    """One blueprint, composed (`extends:`) and, when it declares environments, for one of them."""

    model: Blueprint
    source: SourceMap
    path: Path
    environment: str | None = None
    composed: dict[str, Any] | None = None  # the merged document, as written across files

    @property
    def stack_name(self) -> str:
        return f"{self.model.blueprint}-{self.environment}" if self.environment else self.model.blueprint

    def locate(self, error: TablewrightError) -> TablewrightError:
        return error.located(self.source.locate(error.path))


def load_blueprints(path: Path | str) -> list[LoadedBlueprint]:
    """Read, compose and validate a blueprint: one result per environment (or one without any).
    Raises `TablewrightError` with file, line and fix."""
    path = Path(path)
    document = read_document(path)
    return [_validate(doc, path, environment) for environment, doc in environment_documents(document).items()]


def load_blueprint(path: Path | str, environment: str | None = None) -> LoadedBlueprint:
    """The blueprint for one environment (or the only stack of a blueprint without environments)."""
    loaded = load_blueprints(path)
    if environment is None and len(loaded) == 1:
        return loaded[0]
    for candidate in loaded:
        if candidate.environment == environment:
            return candidate
    names = ", ".join(str(c.environment) for c in loaded)
    raise BlueprintError(f"{path} has no environment `{environment}`" if environment else
                         f"{path} declares environments ({names}): choose one",
                         location=loaded[0].source.locate(("environments",)), hint=f"environments: {names}")


def _validate(document: Document, path: Path, environment: str | None) -> LoadedBlueprint:
    data, source = document.data, document.source
    try:
        model = Blueprint.model_validate(data)
    except ValidationError as error:
        raise _first_error(error, data, source) from None
    loaded = LoadedBlueprint(model, source, path, environment, data)
    try:
        model = _physical_names(model, environment)
        check_references(model)
        check_required_tags(model)
    except TablewrightError as error:
        raise loaded.locate(error) from None
    return LoadedBlueprint(model, source, path, environment, data)


def _physical_names(model: Blueprint, environment: str | None) -> Blueprint:
    """Apply `naming.table` ({table}, {blueprint}, {env}) to the table's name."""
    template = model.naming.table or ("{table}-{env}" if environment else "{table}")
    unknown = set(re.findall(r"\{([^}]*)\}", template)) - {"table", "blueprint", "env"}
    if unknown or ("{env}" in template and environment is None):
        raise BlueprintError(
            f"naming template {template!r} uses {', '.join(sorted(unknown)) or '{env}'} here",
            path=("naming", "table"),
            hint="use {table}, {blueprint} and, in environments, {env}",
        )
    name = template.format(table=model.table.name, blueprint=model.blueprint, env=environment or "")
    if not re.fullmatch(r"[A-Za-z0-9_.-]{3,255}", name):
        raise BlueprintError(f"naming gives the table name {name!r}, which DynamoDB does not accept",
                             path=("naming", "table"), hint="3-255 letters, digits, '_', '.' or '-'")
    return model.model_copy(update={"table": model.table.model_copy(update={"name": name})})


def check_required_tags(model: Blueprint) -> None:
    missing = [key for key in model.required_tags if key not in model.tags]
    if missing:
        raise BlueprintError(
            f"missing required tag{'s' if len(missing) > 1 else ''} {', '.join(missing)} (required_tags)",
            path=("tags",) if model.tags else ("blueprint",),
            hint=f"add `tags: {{{missing[0]}: ...}}`",
        )


def _first_error(error: ValidationError, data: Any, source: SourceMap) -> BlueprintError:
    """The earliest problem in the file, as one message (later ones usually follow from it)."""
    candidates = []
    for detail in error.errors():
        path = _data_path(data, detail["loc"])
        field = getattr(detail.get("ctx", {}).get("error"), "field", None)
        if field is not None:
            path = _data_path(data, tuple(path) + (field,))
        if detail["type"] == "missing":
            path = path + (detail["loc"][-1],) if len(path) < len(detail["loc"]) else path
        location = source.locate(path)
        candidates.append(((location.file != source.file, location.file, location.line, location.column), path, detail))
    _, path, detail = min(candidates, key=lambda c: c[0])
    message, hint = _describe(detail, path, data)
    return BlueprintError(message, path=path, hint=hint, location=source.locate(path))


def _data_path(data: Any, loc: tuple[Any, ...]) -> FieldPath:
    """Keep the parts of a pydantic location that address the document (drop validator and union tags)."""
    path: list[str | int] = []
    node = data
    for step in loc:
        if isinstance(node, dict) and step in node:
            path.append(step)
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and step < len(node):
            path.append(step)
            node = node[step]
        elif step == "[key]":
            continue
    return tuple(path)


def _describe(detail: dict[str, Any], path: FieldPath, data: Any) -> tuple[str, str | None]:
    kind = detail["type"]
    value = detail.get("input")
    ctx = detail.get("ctx", {})
    name = str(path[-1]) if path else "blueprint"
    if kind == "missing":
        field = _field_info(path)
        example = f" e.g. `{name}: {field.examples[0]}`" if field and field.examples else ""
        description = f" ({field.description.rstrip('.')})" if field and field.description else ""
        return f"missing required field `{name}`{description}", f"add `{name}:`{example}".rstrip()
    if kind == "extra_forbidden":
        allowed = _allowed_fields(path[:-1])
        close = difflib.get_close_matches(name, allowed, n=1)
        hint = f"did you mean `{close[0]}`? " if close else ""
        return f"unknown field `{name}`", f"{hint}allowed here: {', '.join(allowed)}" if allowed else hint or None
    if kind == "value_error":
        cause = ctx.get("error")
        return getattr(cause, "message", str(cause)), getattr(cause, "hint", None)
    if kind in ("literal_error", "enum"):
        return f"{value!r} is not allowed for `{name}`", f"use one of: {ctx.get('expected')}"
    if kind == "string_pattern_mismatch":
        meaning = _PATTERN_MEANING.get(ctx.get("pattern", ""), f"the pattern {ctx.get('pattern')}")
        return f"{value!r} is not valid for `{name}`", f"use {meaning}"
    if kind in ("string_type", "int_type", "int_parsing", "float_type", "float_parsing", "bool_type",
                "bool_parsing", "dict_type", "list_type", "model_type", "int_from_float"):
        expected = {"string": "text", "int": "a whole number", "float": "a number", "bool": "true or false",
                    "dict": "a mapping", "list": "a list", "model": "a mapping"}[kind.split("_")[0]]
        return f"expected {expected} for `{name}`, got {_show(value)}", None
    if kind == "too_short":
        return f"`{name}` needs at least {ctx.get('min_length', 1)} entry", None
    return f"`{name}`: {detail['msg'][0].lower()}{detail['msg'][1:]}", None


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _annotation_at(path: FieldPath) -> Any:
    """The type annotation describing the value at `path`, or None when the path leaves the schema."""
    annotation: Any = Blueprint
    for step in path:
        item = _container_item(annotation)
        if item is not None:
            annotation = item
            continue
        model = _model_in(annotation)
        if model is None or step not in model.model_fields:
            return None
        annotation = model.model_fields[step].annotation
    return annotation


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _container_item(annotation: Any) -> Any:
    """The item type of a `dict[..., X]` or `list[X]` inside `annotation` (unions searched)."""
    for candidate in (annotation, *get_args(annotation)):
        origin = get_origin(candidate)
        if origin is dict:
            return get_args(candidate)[1]
        if origin is list:
            return get_args(candidate)[0]
    return None


def _model_at(path: FieldPath) -> type[BaseModel] | None:
    annotation = _annotation_at(path)
    if annotation is None or _container_item(annotation) is not None:
        return None
    return _model_in(annotation)


def _field_info(path: FieldPath) -> Any:
    model = _model_at(path[:-1]) if path else None
    return model.model_fields.get(str(path[-1])) if model else None


def _allowed_fields(parent: FieldPath) -> list[str]:
    model = _model_at(parent)
    return list(model.model_fields) if model else []
