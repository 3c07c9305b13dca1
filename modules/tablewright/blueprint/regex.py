"""The `pattern:` of string attributes: untrusted regular expressions, run by a linear-time engine.

Python's `re` backtracks: `(?:.?){3000}X` takes hours on a three-character value. Patterns are compiled
and run by the Rust `regex` crate instead (through pydantic-core, already a dependency), which never
backtracks and refuses patterns whose compiled form exceeds its size limit or nests too deeply. Its
syntax is RE2's: no look-around, no backreferences. A pattern is at most `MAX_PATTERN_LENGTH`
characters, and matches a value when it matches the whole value (as `re.fullmatch` would).
"""

from __future__ import annotations

from functools import cache

from pydantic_core import SchemaError, SchemaValidator, core_schema

MAX_PATTERN_LENGTH = 256


class PatternError(ValueError):
    """A pattern the engine refuses, with its reason in one line."""


@cache
def _validator(pattern: str) -> SchemaValidator:
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternError(f"it is {len(pattern)} characters long; at most {MAX_PATTERN_LENGTH}")
    try:
        return SchemaValidator(core_schema.str_schema(pattern=rf"\A(?:{pattern})\z", regex_engine="rust-regex"))
    except SchemaError as error:
        last = str(error).strip().splitlines()[-1].strip()
        raise PatternError(last.removeprefix("SchemaError: ").removeprefix("error: ")) from None


def check(pattern: str) -> None:
    """Raise PatternError when the engine cannot run `pattern`."""
    _validator(pattern)


def fullmatch(pattern: str, value: str) -> bool:
    """Whether `pattern` (already checked) matches the whole of `value`, in time linear in both."""
    return _validator(pattern).isinstance_python(value)
