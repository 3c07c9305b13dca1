"""The blueprint's tags against AWS's tag rules: how many, which characters, how long."""

from __future__ import annotations

import unicodedata

from tablewright.blueprint.language import Blueprint
from tablewright.errors import BlueprintError, ErrorCode

# "Tagging your DynamoDB resources" and "Tag naming limits and requirements":
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Tagging.html
MAX_TAGS = 50
# The tags Tablewright adds itself (`tablewright:blueprint`, and `tablewright:design` on the table).
RESERVED_PREFIX = "tablewright:"
RESERVED_TAGS = 2
TAG_PUNCTUATION = frozenset("_.:/=+-@")


def _tag_text_allowed(text: str) -> bool:
    """AWS tag keys and values: letters, digits, spaces and `_ . : / = + - @` (Unicode letters too)."""
    return all((unicodedata.category(ch)[0] in "LNZ" and ch not in "\u2028\u2029") or ch in TAG_PUNCTUATION
               for ch in text)


def check_tags(blueprint: Blueprint) -> None:
    if len(blueprint.tags) > MAX_TAGS - RESERVED_TAGS:
        raise BlueprintError(f"{len(blueprint.tags)} tags; AWS allows {MAX_TAGS} per resource and Tablewright adds "
                             f"{RESERVED_TAGS}", path=("tags",), code=ErrorCode.TAGS,
                             hint=f"keep at most {MAX_TAGS - RESERVED_TAGS}: remove tags, or move them to a tag policy")
    allowed = "letters, digits, spaces and _ . : / = + - @ (AWS's tag rules)"
    for key, value in blueprint.tags.items():
        if not 1 <= len(key) <= 128 or key.lower().startswith("aws:") or not _tag_text_allowed(key):
            raise BlueprintError(f"tag key {key!r} is not allowed", path=("tags", key), code=ErrorCode.TAGS,
                                 hint=f"1-128 characters of {allowed}, not starting with aws:")
        if key.startswith(RESERVED_PREFIX) and blueprint.adopted is None:
            raise BlueprintError(f"tag key {key!r} is Tablewright's own", path=("tags", key), code=ErrorCode.TAGS,
                                 hint=f"rename the tag: keys starting with {RESERVED_PREFIX} are set by Tablewright")
        if len(value) > 256 or not _tag_text_allowed(value):
            raise BlueprintError(f"the value of tag {key!r} is not allowed", path=("tags", key), code=ErrorCode.TAGS,
                                 hint=f"at most 256 characters of {allowed}")
