"""Tags that are not filled in: a production stack must not go out with the scaffold's `cost-center: set-me`.

Cost allocation, ownership and on-call routing read these tags; a placeholder in production bills the wrong
team or pages nobody. Outside production a placeholder is fine (the scaffold passes lint there).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from modules.lint.findings import Context, Issue, rule

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
