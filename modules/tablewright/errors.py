"""User-facing errors: one message per problem with where it happened, what to write instead and a
stable code (each documented in docs/reference/errors.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

FieldPath = tuple[str | int, ...]

# Exit codes, stable across releases (docs/reference/exit-codes.md), like Terraform's `-detailed-exitcode`.
EXIT_OK = 0
EXIT_FAILED = 1  # a lint or verify failure; the gate holding a plan back; review --detailed-exitcode: blocked
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_WINDOW = 4  # --detailed-exitcode only: window changes (gate: and the window is closed), nothing blocked
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT
EXIT_CLOSED_OUTPUT = 141  # the reader of the output went away, as shells report SIGPIPE (128 + 13)

# What each exit code means, and the commands that use it: the exit-code reference is generated from this.
EXIT_MEANINGS: dict[int, tuple[str, str]] = {
    EXIT_OK: ("success: written, passed, or (gate) apply now: only safe changes, or window changes inside the "
              "window", "all"),
    EXIT_FAILED: ("findings or held back: `lint` errors (warnings too with `--strict`), a `verify` FAIL; `gate`: a "
                  "blocked change, or window changes while the window is closed or not declared; "
                  "`review --detailed-exitcode`: a blocked change", "lint, verify, gate, review"),
    EXIT_BAD_INPUT: ("bad input, nothing written: each problem as `error: file:line:column: field: problem [CODE]`, "
                     "then `fix:` and the `docs:` anchor of its code (every problem of a file at once, up to 20)",
                     "all"),
    EXIT_INTERNAL: ("an internal error, a bug in Tablewright (`[E900]`; add `--debug` for the traceback)", "all"),
    EXIT_WINDOW: ("only with `--detailed-exitcode`: window changes and nothing blocked; `gate`: the window is closed "
                  "now, so the plan waits for it; `review`: the change needs the window", "gate, review"),
    EXIT_INTERRUPTED: ("interrupted (Ctrl-C)", "all"),
    EXIT_CLOSED_OUTPUT: ("the output's reader went away before the end (`| head`), as for a program SIGPIPE stops; "
                         "what was written is kept", "all"),
}
MAX_REPORTED = 20  # errors shown per file; the rest are counted

class ErrorCode(StrEnum):
    """Stable error codes: one code, one problem. Each is documented (`CODE_DOCS`, the docs' error reference)."""

    UNREADABLE_FILE = "E100"
    YAML_SYNTAX = "E101"
    YAML_FEATURE = "E102"
    TOO_LARGE = "E103"
    UNKNOWN_FIELD = "E200"
    MISSING_FIELD = "E201"
    WRONG_TYPE = "E202"
    VALUE_NOT_ALLOWED = "E203"
    CONTRADICTION = "E204"
    UNKNOWN_NAME = "E300"
    KEY_TEMPLATE = "E301"
    TAGS = "E302"
    OVER_LIMIT = "E303"
    EXTENDS = "E400"
    ENVIRONMENTS = "E401"
    NAMING = "E402"
    LOCK_INVALID = "E403"
    LOCK_CHANGED = "E404"
    UNSERVABLE_PATTERN = "E500"
    INDEX_SETTINGS = "E501"
    LINT_ERRORS = "E502"
    USAGE = "E600"
    GITREF = "E601"
    CDK_LIBRARY = "E602"
    OUTPUT_HOLDS_FILES = "E603"
    PATH_ARGUMENT = "E604"
    CDKTF_JSON = "E605"
    TIME_ARGUMENT = "E606"
    UNKNOWN_ENVIRONMENT = "E607"
    NO_BLUEPRINTS = "E608"
    PLAN_ARGUMENT = "E609"
    PLATFORM_BASE = "E610"
    PROJECT_FILES = "E611"
    LOCAL_SERVER = "E612"
    UNKNOWN_STACK = "E613"
    TERRAFORM_SETUP = "E614"
    NOT_A_PLAN = "E700"
    FOREIGN_PLAN = "E701"
    ADOPT_INPUT = "E800"
    CALIBRATE_INPUT = "E801"
    MIGRATION = "E802"
    INTERNAL = "E900"


@dataclass(frozen=True)
class CodeDoc:
    meaning: str  # what the code names, in a phrase
    why: str  # what input leads to it
    fix: str  # what to do about it


# The error reference (docs/reference/errors.md) is generated from these; a test keeps every code documented.
CODE_DOCS: dict[ErrorCode, CodeDoc] = {
    ErrorCode.UNREADABLE_FILE: CodeDoc(
        "the file cannot be read",
        "A named file is missing, not a regular file (a directory, a device, a link out of the repository), over "
        "the size limit, not UTF-8, or holds control characters.",
        "Check the path; save the file as UTF-8 text without control characters; keep blueprints under 1 MB."),
    ErrorCode.YAML_SYNTAX: CodeDoc(
        "invalid YAML syntax",
        "The file does not parse as YAML: a bad indent, an unclosed quote or bracket, a tab used for indentation.",
        "Correct the line and column the message names; the message quotes what the parser expected."),
    ErrorCode.YAML_FEATURE: CodeDoc(
        "a YAML feature blueprints refuse",
        "Tags (`!!python/...`), merge keys (`<<`), anchors used as keys, complex keys or a key given twice: they "
        "make a blueprint mean something other than what a reviewer reads.",
        "Write the values out plainly; to share settings between blueprints use `extends:` and `environments:`."),
    ErrorCode.TOO_LARGE: CodeDoc(
        "the document is too large, too deep, or a number is out of range",
        "Bounds that keep every input's work small: nesting depth, node count, string length, numbers beyond what "
        "DynamoDB or Terraform accept.",
        "Split the blueprint (bases and `extends:`), or bring the number into the range the message gives."),
    ErrorCode.UNKNOWN_FIELD: CodeDoc(
        "unknown field",
        "A field the blueprint language does not have, often a misspelling or a field at the wrong level.",
        "Use the field the message suggests, or see the blueprint reference for the fields of that section."),
    ErrorCode.MISSING_FIELD: CodeDoc(
        "missing required field",
        "A section lacks a field it cannot do without (an entity without `key`, a pattern without `entity`).",
        "Add the field; the blueprint reference gives its type and an example."),
    ErrorCode.WRONG_TYPE: CodeDoc(
        "wrong type for a field",
        "A value of the wrong kind: a string where a number or a list is expected, a mapping where a string is.",
        "Write a value of the type the message names."),
    ErrorCode.VALUE_NOT_ALLOWED: CodeDoc(
        "value not allowed for a field",
        "The value is of the right type but outside its choices, its pattern or its range.",
        "Pick one of the values the message lists, or a value within the range it gives."),
    ErrorCode.CONTRADICTION: CodeDoc(
        "fields that contradict each other",
        "Two fields that cannot both hold: a rename and a removal of one entity, a minimum above a maximum.",
        "Keep the one you mean and remove or change the other, as the message says."),
    ErrorCode.UNKNOWN_NAME: CodeDoc(
        "a name that refers to nothing",
        "An attribute, entity, index or pattern named somewhere that is not declared.",
        "Declare it, or use one of the names the message suggests."),
    ErrorCode.KEY_TEMPLATE: CodeDoc(
        "malformed key template",
        "A key template such as `CUSTOMER#{customerId}` with an unclosed brace, an empty component or an "
        "unsupported time bucket.",
        "Write literals and `{attribute}` or `{attribute:bucket}` components separated by `#`."),
    ErrorCode.TAGS: CodeDoc(
        "tags that break AWS's tag rules or the required tags",
        "A tag key or value too long, with characters AWS refuses, in the reserved `aws:` prefix, or a tag the "
        "platform base requires left out.",
        "Follow the limits the message gives (AWS: 128-character keys, 256-character values) and set every "
        "required tag."),
    ErrorCode.OVER_LIMIT: CodeDoc(
        "more than Tablewright accepts",
        "More entities, patterns per entity, attributes or indexes than Tablewright designs for.",
        "Split the blueprint into services, or remove what no pattern needs."),
    ErrorCode.EXTENDS: CodeDoc(
        "`extends` cannot be followed",
        "The base file is missing, outside the repository root, part of a cycle, or the chain is too long.",
        "Point `extends:` at a base inside the repository, and break any cycle."),
    ErrorCode.ENVIRONMENTS: CodeDoc(
        "`environments`: a malformed overlay",
        "An environment overlay is not a mapping, has a name that is not valid, sets a field environments may not "
        "change, or there are more environments than Tablewright accepts.",
        "Change only the overlay fields the message lists (an unknown environment asked for is E607)."),
    ErrorCode.NAMING: CodeDoc(
        "names that would collide",
        "Naming or backend templates that do not render, physical names two stacks share, or Terraform addresses "
        "(or the `tablewright` output) two `TablewrightTable`s would share in one stack. Across the repository's "
        "blueprints, whatever subset a command loads (`--changed-since` included), no two may make one stack "
        "(`<blueprint>-<environment>`: one directory, one local state), manage one table or share a state key.",
        "Give each stack its own names (use `{environment}` in the template, another blueprint name or table name); "
        "one table per stack for the gate."),
    ErrorCode.LOCK_INVALID: CodeDoc(
        "the design lock is not valid",
        "Most often: the blueprint renamed or removed an attribute that the locked keys of a deployed index (or the "
        "table) are made of, e.g. `Hold.placedAt` in `GSI2`'s key renamed `heldAt`. Items already written carry "
        "keys built from that attribute, so the locked design cannot drop it. Otherwise `<blueprint>.lock.json` is "
        "not valid JSON, not consistent (edited by hand: an entity keyed on an index it does not list, colliding "
        "index names, a key without its encodings), or belongs to another blueprint.",
        "A renamed attribute: declare it on the new name (`heldAt: {type: timestamp, renamed_from: placedAt}`). The "
        "keys keep their text (same values, same encoding), an index that projects the attribute by name gets a "
        "successor, and `tablewright migrate plan|run|verify` renames the stored attribute in the old items (see "
        "the guide \"Evolving a design\"). A removed key attribute: keep it, or move the entity to new keys with a "
        "key migration. A damaged lock: restore it from version control; never edit it by hand (delete it only for "
        "a table not yet deployed)."),
    ErrorCode.LOCK_CHANGED: CodeDoc(
        "the design would change its lock",
        "`synth --locked` (and `cdktf synth`) found that the blueprint now designs the table differently from its "
        "lock: data already written under the locked keys would no longer be found.",
        "Run `tablewright synth` to see the change and write the lock, and review it as a migration."),
    ErrorCode.UNSERVABLE_PATTERN: CodeDoc(
        "the design cannot serve an access pattern",
        "No key shape on the table or a possible GSI answers the pattern: it binds attributes no key holds, or "
        "orders by one that is not a sort key.",
        "Add the attribute to the entity's key, or change the pattern as the message suggests."),
    ErrorCode.INDEX_SETTINGS: CodeDoc(
        "index settings the design cannot honour",
        "`indexes:` names an index the design does not create, or a name or setting that collides with another.",
        "Configure only indexes `explain` lists, with unique names."),
    ErrorCode.LINT_ERRORS: CodeDoc(
        "the blueprint has lint errors",
        "`synth` and `verify` refuse a blueprint whose lint reports errors: it would deploy a design known to fail.",
        "Fix the finding (`tablewright lint` gives the fix), or pass `--allow-lint-errors` knowingly."),
    ErrorCode.USAGE: CodeDoc(
        "the command line is not one the command takes",
        "An option that is unknown, missing its value or combined with one it excludes, a name argument that is "
        "not valid, or a request the format cannot answer (an Infracost usage file of several stacks).",
        "Follow the message; `tablewright COMMAND --help` lists the options, the exit codes and an example."),
    ErrorCode.GITREF: CodeDoc(
        "a git revision or path",
        "`GITREF:path` or `--changed-since GITREF` names a revision git does not know (a shallow clone lacks "
        "it), or a path not in that revision.",
        "Fetch the revision (`git fetch --depth=0` or `fetch-depth: 0` in CI), or correct the path."),
    ErrorCode.CDK_LIBRARY: CodeDoc(
        "the CDK library cannot run",
        "`TABLEWRIGHT_CDK` names a library that is unknown or not installed (cdktf, cdktn), or Node.js is missing.",
        "Install the library (`pip install -e .` or `.[cdktn]`) and Node.js 20, or unset `TABLEWRIGHT_CDK`."),
    ErrorCode.OUTPUT_HOLDS_FILES: CodeDoc(
        "the output directory holds files synth did not write",
        "A stack directory synth would replace or delete holds Terraform state, `.terraform` or other files of "
        "yours.",
        "Move what you keep out of the output directory (state belongs in a backend), then synthesize again."),
    ErrorCode.PATH_ARGUMENT: CodeDoc(
        "a path argument cannot be used",
        "An output path (`--out`, `new --dir`) that is a file, a link, a repository or the working directory, "
        "that exists already or cannot be created; a directory to read (`list DIR`, `--plan-dir`) that is not one.",
        "Pass a directory Tablewright may write (an earlier output, or a new path), or the directory to read."),
    ErrorCode.CDKTF_JSON: CodeDoc(
        "`cdktf.json` is malformed",
        "`cdktf.json` is not valid JSON, or its `context.blueprints` is not a non-empty list of blueprint paths.",
        'Correct it (cdktf reads it too): `{"context": {"blueprints": ["blueprints/orders.yaml"]}}`, or remove '
        "the list to take every blueprint under blueprints/."),
    ErrorCode.TIME_ARGUMENT: CodeDoc(
        "`--now` is not a time the gate can use",
        "The gate's `--now` is not ISO 8601, has no time zone, or lies outside the years the gate plans for.",
        "Write e.g. `--now 2026-03-01T02:30:00+00:00`, with its offset; leave it out for the current time."),
    ErrorCode.UNKNOWN_ENVIRONMENT: CodeDoc(
        "the environment asked for is not declared",
        "`--env` names an environment a blueprint named on the command line (or neither side of a review) does not "
        "declare, or none of the default blueprints declares (those without it are otherwise left out, with a "
        "note), or a blueprint with several environments is read where one must be chosen.",
        "Pass one of the environments the message lists, or leave out `--env` for every stack."),
    ErrorCode.NO_BLUEPRINTS: CodeDoc(
        "no blueprint to work on",
        "No blueprint was named and none lies under `blueprints/` (or `cdktf.json` lists none).",
        "Write one with `tablewright new NAME`, or name the blueprints on the command line."),
    ErrorCode.PLAN_ARGUMENT: CodeDoc(
        "a `--plan` or `--plan-dir` argument cannot be used",
        "`--plan` is not `STACK=PLAN.json`, names a stack the review does not have, or two plans name one stack.",
        "Write `--plan crm-prod=plan.json` (`terraform show -json` of that stack), one per stack."),
    ErrorCode.PLATFORM_BASE: CodeDoc(
        "`new --base` cannot be extended",
        "The platform base `new` would extend is missing, or outside the repository the blueprint goes into.",
        "Pass `--base` with the shared blueprint to extend, inside the same repository."),
    ErrorCode.PROJECT_FILES: CodeDoc(
        "`init` would overwrite files",
        "A file `init` writes already exists with other contents (a `.gitignore`, a `cdktf.json`, a CI workflow), "
        "or the directory cannot be written.",
        "Move the files it names aside and run it again, or pass `--skip-existing`: it then writes only the missing "
        "files and prints what the existing ones lack."),
    ErrorCode.LOCAL_SERVER: CodeDoc(
        "the local AWS cannot serve",
        "`tablewright local` (or `tablewright.testing`) was asked for an address other than 127.0.0.1, a port that "
        "is not a TCP port or that another program holds, or a second emulator in one process.",
        "Leave out `--host`; pass another `--port` or stop the program that holds it (another `tablewright local`, "
        "LocalStack)."),
    ErrorCode.UNKNOWN_STACK: CodeDoc(
        "no such synthesized stack",
        "`tablewright terraform STACK` names a stack that the output directory does not hold: a misspelling, an "
        "environment left out, or `synth` not run yet.",
        "Run `tablewright synth` first; name the stack as synth wrote it (`cdktf.out/stacks/<stack>`), e.g. "
        "`orders-dev`."),
    ErrorCode.TERRAFORM_SETUP: CodeDoc(
        "Terraform cannot run as asked",
        "The Terraform CLI is not installed, `TABLEWRIGHT_PROVIDER_MIRROR` names a directory without the "
        "hashicorp/aws provider, or `--endpoint` is not an http URL of this machine.",
        "Install Terraform; point `TABLEWRIGHT_PROVIDER_MIRROR` at a filesystem mirror (`terraform providers mirror "
        "DIR` writes one) or unset it; pass `--endpoint http://127.0.0.1:PORT` as `tablewright local` prints it."),
    ErrorCode.NOT_A_PLAN: CodeDoc(
        "not a Terraform plan in JSON",
        "The file given to `gate --plan` or `review --plan` is not `terraform show -json` output, or is malformed "
        "or too large.",
        "Write it with `terraform plan -out=tfplan && terraform show -json tfplan > plan.json`."),
    ErrorCode.FOREIGN_PLAN: CodeDoc(
        "the plan does not belong to the blueprint",
        "The plan's table is not the one the named blueprint and stack deploy.",
        "Pass the plan of that stack, or the blueprint the plan was made from."),
    ErrorCode.ADOPT_INPUT: CodeDoc(
        "`adopt`: an input it cannot use",
        "A file that is not an AWS CLI description (`aws dynamodb describe-table` and friends), or a table the "
        "blueprint language cannot reproduce.",
        "Pass the JSON the AWS CLI prints, unedited; the message says which setting cannot be reproduced."),
    ErrorCode.MIGRATION: CodeDoc(
        "`migrate`: the migration cannot run as asked",
        "The two designs hold a data change that is not declared (or two entities' items would share keys), nothing "
        "needs migrating between them, the endpoint or the table cannot be reached, or the table's control items "
        "(`_tablewright#migration`) belong to another migration in progress or to this one started with another "
        "number of segments. Nothing is written.",
        "Declare the change as `tablewright review` says; pass as --against the design the table holds now; check "
        "--endpoint-url, --region and the credentials; finish the migration in progress (run it with its design), "
        "or pass the --segments it was started with."),
    ErrorCode.CALIBRATE_INPUT: CodeDoc(
        "`calibrate`: a metrics file it cannot use",
        "A file that is not what `aws cloudwatch get-metric-data` prints for the queries `calibrate --print-queries` "
        "writes: not JSON, a key given twice, a series without its label, a status CloudWatch gave for a failed "
        "query, a table or index no named stack deploys, pages of which the last is missing, a value no table can "
        "hold (not finite, or over 1,000 times the default table quota), or a window CloudWatch cannot hold (before "
        "DynamoDB existed, in the future, longer than it keeps datapoints of that period).",
        "Run the printed queries again and pass their output unedited, every page, with the blueprint of that "
        "table."),
    ErrorCode.INTERNAL: CodeDoc(
        "internal error (a bug in Tablewright), exit code 3",
        "Something Tablewright did not expect. Nothing was written.",
        "Run again with `--debug` for the traceback and report it with the blueprint that caused it."),
}

# The error reference's address, relative to the repository: each message ends with its anchor.
ERROR_REFERENCE = "docs/reference/errors.md"


def docs_anchor(code: ErrorCode) -> str:
    return f"{ERROR_REFERENCE}#{code.lower()}"


@dataclass(frozen=True)
class SourceLocation:
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def closest_name(name: str, options: Sequence[str]) -> str | None:
    """The option a misspelt name most likely meant: the same name in another case or spelling (`orderBy` for
    `order_by`) first, else the nearest by difflib's ratio."""
    import difflib

    def folded(text: str) -> str:
        return text.replace("_", "").replace("-", "").lower()

    same = [option for option in options if folded(option) == folded(name)]
    if same:
        return same[0]
    close = difflib.get_close_matches(name, list(options), n=1)
    return close[0] if close else None


def near_names(path: Path, limit: int = 3) -> list[str]:
    """Existing entries beside the first missing part of `path` whose names are close to it (as paths relative to
    the working directory)."""
    import difflib
    import os

    path = Path(os.path.abspath(path))
    missing = path
    while not missing.parent.exists() and missing.parent != missing:
        missing = missing.parent
    parent = missing.parent
    try:
        names = sorted(entry.name for entry in parent.iterdir())[:10_000]
    except OSError:
        return []
    close = difflib.get_close_matches(missing.name, names, n=limit, cutoff=0.6)
    rest = path.relative_to(missing)
    return [os.path.relpath(parent / name / rest) for name in close]


def missing_path_hint(path: Path, otherwise: str) -> str:
    """`did you mean ...?` when a close name exists, else `otherwise`."""
    close = near_names(path)
    return f"did you mean {' or '.join(close)}?" if close else otherwise


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
    default_code = ErrorCode.USAGE

    def __init__(
        self,
        message: str,
        *,
        path: Sequence[str | int] = (),
        hint: str | None = None,
        location: SourceLocation | None = None,
        code: ErrorCode | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path: FieldPath = tuple(path)
        self.hint = hint
        self.location = location
        self.code = ErrorCode(code or self.default_code)

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
        return text + f"\n  docs: {docs_anchor(self.code)}"

    def __str__(self) -> str:
        return self.render()


class BlueprintError(TablewrightError):
    """The blueprint file cannot be read or does not follow the blueprint language."""

    default_code = ErrorCode.CONTRADICTION


class DesignError(TablewrightError):
    """The blueprint is well formed but its keys cannot serve an access pattern."""

    default_code = ErrorCode.UNSERVABLE_PATTERN


class PlanError(TablewrightError):
    """The plan given to the gate is not a usable `terraform show -json` document."""

    default_code = ErrorCode.NOT_A_PLAN


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
