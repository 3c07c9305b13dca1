"""Placeholders not filled in: a production stack must not go out with the scaffold's `cost-center: set-me`, nor
with the platform base's example topic ARN.

Cost allocation, ownership and on-call routing read these; a placeholder in production bills the wrong team or
pages nobody. Outside production a placeholder tag is fine (the scaffold passes lint there); a placeholder ARN is
a warning (an apply to AWS would fail on it, one to `tablewright local` works).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tablewright.lint.findings import Context, Issue, rule

# Compared case-insensitively, ignoring spaces, '-' and '_': `set-me`, `Set_Me`, `TODO`, `change me`, ...
PLACEHOLDERS = frozenset({"", "setme", "todo", "tbd", "changeme", "xxx"})


def is_placeholder(value: str) -> bool:
    return re.sub(r"[\s_-]", "", value).lower() in PLACEHOLDERS


@rule("TW601", "Placeholder tag value in production",
      "Set the tag to its real value (e.g. the cost center finance bills the table to); a placeholder (`set-me`, "
      "`todo`, `tbd`, `changeme`, `xxx`, empty) is refused in a production environment.",
      why="A tag of a production environment still holds a placeholder (`cost-center: set-me` as `new` scaffolds "
          "it): billing, ownership and policies that read the tag would act on a made-up value",
      severity="error in production; other environments are not checked")
def placeholder_tag(ctx: Context) -> Iterator[Issue]:
    blueprint = ctx.design.blueprint
    if not blueprint.production:
        return
    for name, value in sorted(blueprint.tags.items()):
        if is_placeholder(value):
            yield Issue(
                "error",
                f"tag `{name}` is {value!r}, a placeholder, in a production environment: every resource of the "
                "stack carries it, and cost allocation and ownership read it",
                f"set `tags.{name}` to its real value (in the blueprint, or in the production environment's "
                f"overlay: `environments.<env>.tags.{name}`)",
                ("tags", name),
            )


# The account ids AWS documentation writes in its examples (IAM user guide, SNS and KMS examples): no real account.
EXAMPLE_ACCOUNTS = frozenset({"111122223333", "123456789012", "444455556666", "777788889999"})
_EXAMPLE_ACCOUNT = re.compile(r"(?<!\d)(" + "|".join(sorted(EXAMPLE_ACCOUNTS)) + r")(?!\d)")
_PLACEHOLDER_WORD = re.compile(r"set[-_ ]?me|change[-_ ]?me", re.IGNORECASE)
# Free text and tags (TW601) are not settings.
_NOT_SETTINGS = frozenset({"description", "reason", "tags"})


def placeholder_values(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every string setting of a composed blueprint that still holds an example account id or `set-me`."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in _NOT_SETTINGS:
                yield from placeholder_values(item, (*path, key))
    elif isinstance(value, list | tuple):
        for position, item in enumerate(value):
            yield from placeholder_values(item, (*path, position))
    elif isinstance(value, str) and (_EXAMPLE_ACCOUNT.search(value) or _PLACEHOLDER_WORD.search(value)):
        yield path, value


@rule("TW602", "Placeholder ARN, account id or value",
      "Replace the value with the real one: the SNS topic on-call subscribes to, your account id, your key. "
      "`tablewright init` writes such placeholders into the platform base on purpose, one per decision to make.",
      why="A setting holds an account id from AWS's documentation (111122223333, 123456789012, ...) or `set-me`: "
          "alarms would notify a topic nobody reads, or the apply fails on a resource that does not exist",
      severity="error in production; warning elsewhere")
def placeholder_setting(ctx: Context) -> Iterator[Issue]:
    blueprint = ctx.design.blueprint
    for path, value in placeholder_values(blueprint.model_dump(mode="json", by_alias=True, exclude_defaults=True)):
        account = _EXAMPLE_ACCOUNT.search(value)
        what = f"AWS's example account id {account.group(1)}" if account else "a placeholder"
        yield Issue(
            "error" if blueprint.production else "warning",
            f"`{'.'.join(map(str, path))}` is {value!r}, {what}"
            + (" in a production environment" if blueprint.production else ""),
            "write the real value on the line this points at (for a value from the platform base, there or in "
            "this blueprint's overlay)",
            path,
        )
