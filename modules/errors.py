"""User-facing errors: one message per problem with where it happened, what to write instead and a
stable code (documented in the README under "Error codes")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

FieldPath = tuple[str | int, ...]

# Exit codes, stable across releases (README: "Exit codes"), like Terraform's `-detailed-exitcode`.
EXIT_OK = 0
EXIT_FAILED = 1  # a lint or verify failure; the gate holding a plan back; review --detailed-exitcode: blocked
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_WINDOW = 4  # --detailed-exitcode only: window changes (gate: and the window is closed), nothing blocked
MAX_REPORTED = 20  # errors shown per file; the rest are counted

# Stable error codes: what each means. The README lists them; a test keeps the two in step.
ERROR_CODES: dict[str, str] = {
    "E100": "the file cannot be read: missing, not a regular file, too large, not UTF-8, control characters",
    "E101": "invalid YAML syntax",
    "E102": "YAML features blueprints refuse: tags, merge keys, complex or duplicate keys",
    "E103": "the document is too large or too deep, or a number is out of range",
    "E200": "unknown field",
    "E201": "missing required field",
    "E202": "wrong type for a field",
    "E203": "value not allowed for a field (choices, pattern, range)",
    "E204": "fields that contradict each other",
    "E300": "a name that refers to nothing: attribute, entity, index, pattern",
    "E301": "malformed key template",
    "E302": "tags that break AWS's tag rules or the required tags",
    "E303": "more than Tablewright accepts: entities, patterns per entity, attributes, indexes",
    "E400": "`extends`: missing, outside the repository root, a cycle, too many files",
    "E401": "`environments`: a malformed overlay or an unknown environment",
    "E402": "naming and backend templates, physical names shared between stacks, Terraform addresses (or the "
            "`tablewright` output) two `TablewrightTable`s would share in one stack",
    "E403": "the design lock (`<blueprint>.lock.json`) is not valid, not consistent (edited by hand: an entity keyed "
            "on an index it does not list, index names that collide, a key without its encodings), or not this "
            "blueprint's",
    "E404": "the design would change its lock, which `synth --locked` refuses",
    "E500": "the design cannot serve an access pattern",
    "E501": "index settings or names the design cannot honour",
    "E502": "lint errors, which `synth` and `verify` refuse without `--allow-lint-errors`",
    "E600": "a command-line argument (an output path, a time, a file) or `cdktf.json`",
    "E601": "a git revision or path (`GITREF:path`, `--changed-since GITREF`)",
    "E602": (
        "the CDK library cannot run: `TABLEWRIGHT_CDK` names one that is unknown or not installed (cdktf, cdktn), "
        "or Node.js is missing"
    ),
    "E603": "the output directory holds files synth did not write (Terraform state, `.terraform`) in a stack directory "
            "it would delete",
    "E700": "not a Terraform plan in JSON, or a malformed one",
    "E701": "the plan does not belong to the blueprint",
    "E800": "`adopt`: an input that is not an AWS CLI description, or a table the blueprint cannot reproduce",
    "E900": "internal error (a bug in Tablewright): exit code 3",
}


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

    exit_code = EXIT_BAD_INPUT
    default_code = "E600"

    def __init__(
        self,
        message: str,
        *,
        path: Sequence[str | int] = (),
        hint: str | None = None,
        location: SourceLocation | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path: FieldPath = tuple(path)
        self.hint = hint
        self.location = location
        self.code = code or self.default_code
        assert self.code in ERROR_CODES, self.code

    def located(self, location: SourceLocation) -> TablewrightError:
        """The same error, pinned to a place in a file (keeps an existing, more precise location)."""
        if self.location is not None:
            return self
        return self.rewritten(location=location)

    def rewritten(self, **changes: object) -> TablewrightError:
        """A copy with some of message, path, hint, location or code replaced."""
        fields: dict[str, object] = dict(
            message=self.message, path=self.path, hint=self.hint, location=self.location, code=self.code
        )
        fields.update(changes)
        message = fields.pop("message")
        return type(self)(message, **fields)  # type: ignore[arg-type]

    def prefixed(self, prefix: str) -> TablewrightError:
        """The same error with its message prefixed (e.g. which side of a review it is in)."""
        return self.rewritten(message=prefix + self.message)

    def render(self) -> str:
        head = f"{self.location}: " if self.location else ""
        field = f"{render_path(self.path)}: " if self.path else ""
        text = f"error: {head}{field}{self.message} [{self.code}]"
        if self.hint:
            text += f"\n  fix: {self.hint}"
        return text

    def __str__(self) -> str:
        return self.render()


class BlueprintError(TablewrightError):
    """The blueprint file cannot be read or does not follow the blueprint language."""

    default_code = "E204"


class DesignError(TablewrightError):
    """The blueprint is well formed but its keys cannot serve an access pattern."""

    default_code = "E500"


class PlanError(TablewrightError):
    """The plan given to the gate is not a usable `terraform show -json` document."""

    default_code = "E700"


class ErrorList(TablewrightError):
    """Several problems found in one pass (all validation errors of a file), shown together."""

    errors: list[TablewrightError]

    def __init__(self, errors: Sequence[TablewrightError]) -> None:
        errors = [item for error in errors for item in (error.errors if isinstance(error, ErrorList) else [error])]
        first = errors[0]
        super().__init__(first.message, path=first.path, hint=first.hint, location=first.location, code=first.code)
        self.errors = list(errors)

    def located(self, location: SourceLocation) -> TablewrightError:
        return ErrorList([error.located(location) for error in self.errors])

    def rewritten(self, **changes: object) -> TablewrightError:
        return ErrorList([error.rewritten(**changes) for error in self.errors])

    def prefixed(self, prefix: str) -> TablewrightError:
        return ErrorList([error.prefixed(prefix) for error in self.errors])

    def render(self) -> str:
        shown = [error.render() for error in self.errors[:MAX_REPORTED]]
        hidden = len(self.errors) - MAX_REPORTED
        if hidden > 0:
            shown.append(f"error: {hidden} more problem(s) not shown [{self.errors[MAX_REPORTED].code}]\n"
                         "  fix: correct the ones above and run again")
        return "\n".join(shown)


def combined(errors: Sequence[TablewrightError]) -> TablewrightError:
    """One error as it is, several as an ErrorList, ordered by where they are."""
    if len(errors) == 1:
        return errors[0]
    ordered = sorted(errors, key=lambda e: (e.location.file, e.location.line, e.location.column)
                     if e.location else ("", 0, 0))
    return ErrorList(ordered)
