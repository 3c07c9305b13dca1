"""Text as a terminal, a comment or a docstring shows it: the characters that would act or hide, escaped."""

from __future__ import annotations

import re

# What a terminal acts on, or lets reorder the text it shows, without showing itself: control characters (C0, DEL,
# C1: ESC and CSI start escape sequences), the line and paragraph separators (line ends in JavaScript), and the
# bidirectional controls of Trojan Source (CVE-2021-42574, https://trojansource.codes). Text from blueprints, plans
# and metrics reaches the terminal, and generated code, with each written as its escape.
HIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escape_hidden(text: str, keep: str = "\n\t") -> str:
    """`text` with each hidden character but those in `keep` written visibly as its escape (`\\x1b`, `\\u202e`):
    a terminal, a comment or a docstring shows it as text, and nothing can reorder or rewrite what surrounds it."""
    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in keep:
            return char
        # DEL and C1 as \u007f: a JSON string (which holds C0 escaped already) reads it back as the character
        return f"\\x{ord(char):02x}" if ord(char) < 0x20 else f"\\u{ord(char):04x}"
    return HIDDEN.sub(escape, text)
