"""Load a blueprint file: safe YAML, pydantic validation, cross-reference checks, one clear error."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from tablewright.blueprint.compose import (
    Document,
    environment_documents,
    read_document,
    repository_root,
    resolve_inside,
)
from tablewright.blueprint.language import KMS_KEY_ARN, REGION, S3_BUCKET, SEMVER, Blueprint
from tablewright.blueprint.lock import DEFAULT_ENVIRONMENT, LockFile, StackLock, lock_path, lock_source, read_lock
from tablewright.blueprint.prices import PriceBook
from tablewright.blueprint.references import check_references
from tablewright.blueprint.yamlsource import SourceMap, load_yaml
from tablewright.errors import BlueprintError, ErrorCode, ErrorList, FieldPath, TablewrightError, closest_name, combined

# What each name pattern means, in words a blueprint author can act on.
_PATTERN_MEANING = {
    r"^[a-z][a-z0-9-]{0,62}$": "lowercase letters, digits and '-', starting with a letter (e.g. `crm`)",
    r"^[A-Z][A-Za-z0-9]{0,63}$": "PascalCase letters and digits (e.g. `OrderItem`)",
    r"^[A-Za-z][A-Za-z0-9_]{0,63}$": "letters, digits and '_', starting with a letter (e.g. `customerId`)",
    r"^[a-z][a-z0-9_]{0,63}$": "snake_case: lowercase letters, digits and '_' (e.g. `recent_contacts`)",
    r"^[A-Za-z][A-Za-z0-9_]{2,31}$": "3-32 letters, digits and '_', starting with a letter (e.g. `GSI1`)",
    r"^[A-Za-z0-9_.-]{3,255}$": "3-255 letters, digits, '_', '.' or '-' (DynamoDB table naming rules)",
    SEMVER: "a semantic version such as 1.0.0 or 2.1.0-rc.1",
    REGION: "an AWS region name such as eu-west-1",
    KMS_KEY_ARN: "a KMS key or alias ARN, e.g. arn:aws:kms:eu-west-1:123456789012:key/<key-id>",
    S3_BUCKET: "an S3 bucket name: 3-63 lowercase letters, digits, '.' and '-'",
}


@dataclass(frozen=True)
class LoadedBlueprint:
    """One blueprint, composed (`extends:`) and, when it declares environments, for one of them."""

    blueprint: Blueprint  # the validated model
    source: SourceMap
    path: Path
    environment: str | None = None
    composed: dict[str, Any] | None = None  # the merged document, as written across files
    lock: StackLock | None = None  # this stack's entry in the design lock beside the blueprint
    lock_file: LockFile | None = None  # that lock as read, every environment's entry
    prices: PriceBook | None = None  # the prices `pricing.file` names (None: the built-in prices)
    prices_file: str | None = None  # that file, as named (relative to the blueprint that names it)

    @property
    def stack_name(self) -> str:
        return stack_name(self.blueprint.blueprint, self.environment)

    def locate(self, error: TablewrightError) -> TablewrightError:
        if isinstance(error, ErrorList):
            return combined([self.locate(item) for item in error.errors])
        return error.located(self.source.locate(error.path))


def stack_name(blueprint: str, environment: str | None) -> str:
    return f"{blueprint}-{environment}" if environment else blueprint


def load_blueprints(path: Path | str, root: Path | None = None) -> list[LoadedBlueprint]:
    """Read, compose and validate a blueprint: one result per environment (or one without any).
    `extends` stays inside `root` (default: the repository holding the file).
    Raises `TablewrightError` with file, line and fix."""
    path = Path(path)
    root = root or repository_root(path)
    document = read_document(path, root)
    stacks = [_validate(doc, path, environment) for environment, doc in environment_documents(document).items()]
    _check_distinct_stacks(stacks)
    books: dict[Path, PriceBook] = {}
    return _with_locks([_with_prices(stack, root, books) for stack in stacks], path)


def _with_prices(stack: LoadedBlueprint, root: Path, books: dict[Path, PriceBook]) -> LoadedBlueprint:
    """The stack with the price file its `pricing.file` names, read once per file and validated (errors
    located in that file), confined to the repository root like `extends`."""
    entry = stack.blueprint.pricing.file
    if entry is None:
        return stack
    location = stack.source.locate(("pricing", "file"))
    named_by = Path(location.file)
    resolved = resolve_inside(root.resolve(), entry, named_by.parent, location, "pricing.file", ErrorCode.EXTENDS)
    if resolved.suffix not in (".json", ".yaml", ".yml"):
        raise BlueprintError(f"`pricing.file: {entry}` is not a price file", location=location, code=ErrorCode.EXTENDS,
                             hint="name a .json or .yaml file in the format of "
                                  "modules/tablewright/capacity/prices.json")
    if resolved not in books:
        books[resolved] = read_price_file(named_by.parent / entry)
    return replace(stack, prices=books[resolved], prices_file=os.path.normpath(named_by.parent / entry))


def read_price_file(path: Path) -> PriceBook:
    """A price file (JSON or YAML), validated; every problem located in it."""
    data, source = load_yaml(path)
    try:
        return PriceBook.model_validate(data)
    except ValidationError as error:
        raise _all_errors(error, data, source, PriceBook) from None


def _with_locks(stacks: list[LoadedBlueprint], path: Path) -> list[LoadedBlueprint]:
    """Each stack with its entry of the design lock beside the blueprint (if there is one; `read_lock`
    refuses a symbolic link, so it cannot lead outside the repository)."""
    where = lock_path(path)
    lock = read_lock(where)
    if lock is None:
        return stacks
    name = stacks[0].blueprint.blueprint
    if lock.blueprint != name:
        raise BlueprintError(f"the design lock is for blueprint `{lock.blueprint}`, not `{name}`",
                             location=lock_source(where).locate(("blueprint",)), code=ErrorCode.LOCK_INVALID,
                             hint=f"restore {where.name} from git, or remove it to design `{name}` afresh")
    return [replace(stack, lock=lock.environments.get(stack.environment or DEFAULT_ENVIRONMENT), lock_file=lock)
            for stack in stacks]


def with_base_locks(head: list[LoadedBlueprint], base: list[LoadedBlueprint]) -> list[LoadedBlueprint]:
    """The head's stacks as a comparison with `base` designs them (`review`, `lint --against`): each against
    its own lock, or the base's when it has none (a lock not yet written or committed), so the head's new
    design does not renumber the indexes the base deployed."""
    base_locks = {stack.stack_name: stack.lock for stack in base}
    return [stack if stack.lock is not None else replace(stack, lock=base_locks.get(stack.stack_name))
            for stack in head]


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
                         f"{path} declares environments ({names}): choose one", code=ErrorCode.UNKNOWN_ENVIRONMENT,
                         location=loaded[0].source.locate(("environments",)), hint=f"environments: {names}")


def _validate(document: Document, path: Path, environment: str | None) -> LoadedBlueprint:
    data, source = document.data, document.source
    try:
        model = Blueprint.model_validate(data)
    except ValidationError as error:
        raise _all_errors(error, data, source) from None
    loaded = LoadedBlueprint(model, source, path, environment, data)
    try:
        model = _physical_names(model, environment)
        model = _implicit_orders(model)
        check_references(model)
        check_required_tags(model)
    except TablewrightError as error:
        raise loaded.locate(error) from None
    return LoadedBlueprint(model, source, path, environment, data)


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def substitute(template: str, values: dict[str, str], path: FieldPath, what: str) -> str:
    """Fill `{name}` placeholders. Nothing else is template syntax: no format specs, no attribute
    access, so a template cannot make the loader do unbounded work or read anything."""
    parts = _PLACEHOLDER.split(template)
    known = ", ".join(f"{{{name}}}" for name in values)
    for literal in parts[0::2]:
        if "{" in literal or "}" in literal:
            raise BlueprintError(f"{what} {template!r} has an unbalanced brace", path=path, code=ErrorCode.NAMING,
                                 hint=f"write placeholders as {known}, and no other braces")
    for name in parts[1::2]:
        if name not in values:
            raise BlueprintError(f"{what} {template!r} uses the unknown placeholder {{{name}}}", path=path,
                                 code=ErrorCode.NAMING, hint=f"use only {known} (no format specifications)")
    return "".join(values[part] if odd else part for odd, part in ((i % 2 == 1, p) for i, p in enumerate(parts)))


STATE_KEY = re.compile(r"[A-Za-z0-9!_.*'()/-]{1,1024}")


def _physical_names(model: Blueprint, environment: str | None) -> Blueprint:
    """Resolve `naming.table` ({table}, {blueprint}, {env}) and the s3 backend `key` for this stack."""
    template = model.naming.table or ("{table}-{env}" if environment else "{table}")
    values = {"table": model.table.name, "blueprint": model.blueprint}
    if environment is not None:
        values["env"] = environment
    name = substitute(template, values, ("naming", "table"), "naming template")
    if not re.fullmatch(r"[A-Za-z0-9_.-]{3,255}", name):
        raise BlueprintError(f"naming gives the table name {name!r}, which DynamoDB does not accept",
                             path=("naming", "table"),
                                   code=ErrorCode.NAMING, hint="3-255 letters, digits, '_', '.' or '-'")
    backend = model.terraform.backend
    key = substitute(backend.key, {"blueprint": model.blueprint, "env": environment or "default",
                                   "stack": stack_name(model.blueprint, environment)},
                     ("terraform", "backend", "key"), "state key")
    if not STATE_KEY.fullmatch(key) or key.startswith("/"):
        raise BlueprintError(f"the state key becomes {key!r}", path=("terraform", "backend", "key"),
                             code=ErrorCode.NAMING,
                             hint="use letters, digits and ! _ . * ' ( ) / - (S3's safe characters), not starting "
                                  "with '/'")
    terraform = model.terraform.model_copy(update={"backend": backend.model_copy(update={"key": key})})
    return model.model_copy(update={"table": model.table.model_copy(update={"name": name}), "terraform": terraform})


def _implicit_orders(model: Blueprint) -> Blueprint:
    """A pattern that asks for an `order` without saying by what (no range condition, no `order_by`) is
    ordered by its entity's only timestamp; with none or several, the blueprint must say which."""
    patterns = dict(model.access_patterns)
    for name, pattern in model.access_patterns.items():
        if ("order" not in pattern.model_fields_set or pattern.ordering_attribute is not None
                or len(pattern.entities) > 1 or pattern.entities[0] not in model.entities):
            continue
        attributes = model.entities[pattern.entities[0]].attributes
        candidates = sorted(a for a, spec in attributes.items() if spec.type == "timestamp")
        if len(candidates) != 1:
            keys = sorted(a for a, spec in attributes.items() if not spec.is_document)
            raise BlueprintError(
                f"`order: {pattern.order}` says which direction but not by what: `{pattern.entities[0]}` has "
                f"{'no timestamp' if not candidates else 'several timestamps (' + ', '.join(candidates) + ')'}",
                path=("access_patterns", name, "order"), code=ErrorCode.CONTRADICTION,
                hint=f"add `order_by:` with one of {', '.join(candidates or keys)}")
        patterns[name] = pattern.model_copy(update={"order_by": candidates[0]})
    return model.model_copy(update={"access_patterns": patterns})


def _identities(loaded: LoadedBlueprint) -> list[tuple[str, str, FieldPath]]:
    """What a stack must hold alone: its name (its directory and local state), its physical table, its Terraform
    state."""
    backend = loaded.blueprint.terraform.backend
    state = (f"s3://{backend.bucket}/{backend.key}" if backend.type == "s3"
             else f"terraform.{loaded.stack_name}.tfstate")
    return [("stack", loaded.stack_name, ("blueprint",)), ("table", loaded.blueprint.table.name, ("naming", "table")),
            ("state", state, ("terraform", "backend", "key"))]


def _check_distinct_stacks(stacks: list[LoadedBlueprint]) -> None:
    """Two environments must not manage the same physical table or share one Terraform state."""
    seen: dict[tuple[str, str], LoadedBlueprint] = {}
    for loaded in stacks:
        for kind, value, path in _identities(loaded)[1:]:
            other = seen.setdefault((kind, value), loaded)
            if other is not loaded:
                what = f"the table {value}" if kind == "table" else f"the Terraform state {value}"
                placeholder = "{env}"
                raise loaded.locate(BlueprintError(
                    f"environments `{other.environment}` and `{loaded.environment}` would both manage {what}",
                    path=path, code=ErrorCode.NAMING,
                    hint=f"put {placeholder} in the {'naming template' if kind == 'table' else 'state key'}, "
                         "e.g. `{table}-{env}`" if kind == "table" else
                         f"put {placeholder} in the {'state key'}, e.g. `tablewright/{{blueprint}}/{{env}}.tfstate`"))


def check_distinct_blueprints(stacks: Sequence[LoadedBlueprint]) -> None:
    """No two blueprints make the same stack (its directory and local state), manage the same physical table or
    share a Terraform state: E402, in the second one's file, naming the first."""
    seen: dict[tuple[str, str], LoadedBlueprint] = {}
    for loaded in stacks:
        for kind, value, path in _identities(loaded):
            other = seen.setdefault((kind, value), loaded)
            if other.path != loaded.path:
                what = {"stack": f"stack `{value}`", "table": f"table {value}", "state": f"Terraform state {value}"}
                where = f"{other.path}" + (f" (environment `{other.environment}`)" if other.environment else "")
                raise loaded.locate(BlueprintError(
                    f"{what[kind]} is also {'made' if kind == 'stack' else 'managed'} by {where}", path=path,
                    code=ErrorCode.NAMING,
                    hint={"stack": "give the blueprint another name: a stack is `<blueprint>-<environment>`",
                          "table": "give the table another name (`table.name`, or the naming template)",
                          "state": "give the state another key (`terraform.backend.key`)"}[kind]))


def check_required_tags(model: Blueprint) -> None:
    missing = [key for key in model.required_tags if key not in model.tags]
    if missing:
        raise BlueprintError(
            f"missing required tag{'s' if len(missing) > 1 else ''} {', '.join(missing)} (required_tags)",
            path=("tags",) if model.tags else ("blueprint",),
            code=ErrorCode.TAGS,
            hint=f"add `tags: {{{missing[0]}: ...}}`",
        )


def _all_errors(error: ValidationError, data: Any, source: SourceMap,
                root: type[BaseModel] = Blueprint) -> TablewrightError:
    """Every problem pydantic found in the file (a `root` document), each located, in file order."""
    errors = []
    for detail in _without_losing_branches(error.errors(), data):
        path = _data_path(data, detail["loc"])
        cause = detail.get("ctx", {}).get("error")
        field = getattr(cause, "field", None)
        if field is not None:
            path = _data_path(data, (*path, field))
        if detail["type"] == "missing":
            path = (*path, detail["loc"][-1]) if len(path) < len(detail["loc"]) else path
        message, hint, code = _describe(detail, path, root)
        errors.append(BlueprintError(message, path=path, hint=hint, location=source.locate(path), code=code))
    unique = list({(str(e.location), e.message): e for e in errors}.values())
    return combined(unique)


def _without_losing_branches(details: list[Any], data: Any) -> list[Any]:
    """For a union such as `AttributeSpec | "string"`, keep the errors of the branch the value was
    written for: a mapping is a spec, so "not one of the type names" is noise beside its real problem,
    whether that problem is in one of its fields or in the spec as a whole (a model validator's error,
    located at the union member itself)."""
    def losing(detail: Any) -> bool:
        return detail["type"] in ("literal_error", "string_type") and isinstance(detail.get("input"), (dict, list))

    def other_branch(detail: Any, other: Any) -> bool:
        """`other` is an error of another member of the union `detail` failed in (or inside one): the same
        value in the document, reached through a different member tag (a location step the document lacks)."""
        loc, size = detail["loc"], len(detail["loc"])
        if other is detail or losing(other) or len(other["loc"]) < size or other["loc"][:size - 1] != loc[:-1]:
            return False
        if len(other["loc"]) == size and other["type"] != "value_error":
            return False  # the other member refused the value's shape too (a list is neither): both say why
        value = _data_path(data, loc[:-1])
        return _data_path(data, loc) == value and _data_path(data, other["loc"][:size]) == value

    return [detail for detail in details
            if not (losing(detail) and any(other_branch(detail, other) for other in details))]


def _data_path(data: Any, loc: tuple[Any, ...]) -> FieldPath:
    """Keep the parts of a pydantic location that address the document (drop validator and union tags)."""
    path: list[str | int] = []
    node = data
    for step in loc:
        if (isinstance(node, dict) and step in node) or (
            isinstance(node, list) and isinstance(step, int) and step < len(node)
        ):
            path.append(step)
            node = node[step]
        elif step == "[key]":
            continue
    return tuple(path)


_EXPECTED = {"string": "text", "int": "a whole number", "float": "a number", "bool": "true or false",
             "dict": "a mapping", "list": "a list", "model": "a mapping", "finite": "a finite number"}
_BOUNDS = {"greater_than": "above {gt}", "greater_than_equal": "at least {ge}", "less_than": "below {lt}",
           "less_than_equal": "at most {le}", "multiple_of": "a multiple of {multiple_of}"}


def _describe(detail: dict[str, Any], path: FieldPath, root: type[BaseModel]) -> tuple[str, str, ErrorCode]:
    """(message, fix, error code) for one pydantic error."""
    kind = detail["type"]
    value = detail.get("input")
    ctx = detail.get("ctx", {})
    name = str(path[-1]) if path else "blueprint"
    field = _field_info(path, root)
    about = f" ({field.description.rstrip('.')})" if field and field.description else ""
    example = f"e.g. `{name}: {_flow(field.examples[0])}`" if field and field.examples else ""
    if kind == "missing":
        return f"missing required field `{name}`{about}", f"add `{name}:` {example}".rstrip(), ErrorCode.MISSING_FIELD
    if kind == "extra_forbidden":
        allowed = _allowed_fields(path[:-1], root)
        close = closest_name(name, allowed)
        hint = f"did you mean `{close}`? " if close else ""
        return f"unknown field `{name}`", f"{hint}allowed here: {', '.join(allowed)}" if allowed else \
            f"{hint}remove `{name}`", ErrorCode.UNKNOWN_FIELD
    if kind == "value_error":
        cause = ctx.get("error")
        hint = getattr(cause, "hint", None) or f"correct `{name}`{about}"
        return getattr(cause, "message", str(cause)), hint, getattr(cause, "code", None) or ErrorCode.VALUE_NOT_ALLOWED
    if kind in ("literal_error", "enum"):
        keyed = tuple(detail["loc"][-1:]) == ("[key]",) and len(path) > 1  # a mapping's key, not a value
        where = f"as a key of `{path[-2]}`" if keyed else f"for `{name}`"
        return (f"{_show(value)} is not allowed {where}", f"use one of: {ctx.get('expected')}",
                ErrorCode.VALUE_NOT_ALLOWED)
    if kind == "string_pattern_mismatch":
        meaning = _PATTERN_MEANING.get(ctx.get("pattern", ""), f"a value matching {ctx.get('pattern')}")
        return f"{_show(value)} is not valid for `{name}`", f"use {meaning}", ErrorCode.VALUE_NOT_ALLOWED
    if kind in _BOUNDS:
        bound = _BOUNDS[kind].format(**ctx)
        return (f"`{name}` must be {bound}, not {_show(value)}", f"write a value {bound}{about}",
                ErrorCode.VALUE_NOT_ALLOWED)
    if kind in ("too_short", "too_long", "string_too_short", "string_too_long"):
        return f"`{name}`: {detail['msg'][0].lower()}{detail['msg'][1:]}", \
            f"shorten or extend `{name}` to fit{about}", ErrorCode.VALUE_NOT_ALLOWED
    expected = _EXPECTED.get(kind.split("_")[0])
    if expected:
        hint = example or f"write {expected}{about}"
        return f"expected {expected} for `{name}`, got {_show(value)}", hint, ErrorCode.WRONG_TYPE
    return f"`{name}`: {detail['msg'][0].lower()}{detail['msg'][1:]}", f"correct `{name}`{about}", ErrorCode.WRONG_TYPE


def _flow(value: Any) -> str:
    return json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _annotation_at(path: FieldPath, root: type[BaseModel]) -> Any:
    """The type annotation describing the value at `path`, or None when the path leaves the schema."""
    annotation: Any = root
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


def _model_at(path: FieldPath, root: type[BaseModel]) -> type[BaseModel] | None:
    annotation = _annotation_at(path, root)
    if annotation is None or _container_item(annotation) is not None:
        return None
    return _model_in(annotation)


def _field_info(path: FieldPath, root: type[BaseModel]) -> Any:
    model = _model_at(path[:-1], root) if path else None
    return model.model_fields.get(str(path[-1])) if model else None


def _allowed_fields(parent: FieldPath, root: type[BaseModel]) -> list[str]:
    model = _model_at(parent, root)
    return list(model.model_fields) if model else []
