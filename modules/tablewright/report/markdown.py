"""Markdown that is safe to post as a pull-request comment, whatever the blueprint or plan holds.

Values from blueprints and plans end up in tables, sentences and code spans. A `<` could open raw
HTML (close our folded sections, load a remote image, draw a fake approval) and `![...](...)` would
load an image, so every `<` and `>` becomes an entity and every `![` is escaped, on every line, code
spans included: deciding where a code span starts and ends is the renderer's business (backslash
escapes, table cells), and a sanitizer that guessed differently would leave HTML standing. Inside a
real code span the entity shows as written (`&lt;`): untrusted text stays visible and inert. The tags
the review writes itself (a line that is exactly `<details>`, `</details>` or `<summary>...</summary>`)
and a blockquote's leading `>` are kept, and so is every `>` of the Mermaid diagrams the review draws
(a ```` ```mermaid ```` fence: its arrows are `-->`, and inside a fenced block nothing is HTML). No value can
make a line of its own (and pass for one of our tags or fences): the loader refuses line breaks in
blueprint values, and values from plans reach the Markdown through table cells and `one_line`, which
flatten them.

Mentions (`@name`, an e-mail address), issue references (`#12`, `GH-12`) and links (`[text](url)`, a bare
`https://` or `www.` address) are made inert the same way, everywhere: a zero-width space after their
marker, so `@team` reads as written and notifies nobody.
"""

from __future__ import annotations

import re

# The tags the review writes itself, each alone on its line (the summary wrapping one line of text).
OWN_LINE = re.compile(r"(<details>|</details>|<summary>(?P<summary>.*)</summary>)")
# A blockquote: `>` markers at the start of a line (the review's warnings).
_QUOTE = re.compile(r"^( {0,3}>)+ ?")


def one_line(text: str) -> str:
    """`text` with its line breaks made spaces: a value inserted into a sentence cannot start a line."""
    return re.sub(r"[\r\n]+", " ", text)


def _escape_line(line: str) -> str:
    own = OWN_LINE.fullmatch(line)
    if own and own.group("summary") is None:
        return line
    if own:
        return f"<summary>{_escape_line(own.group('summary'))}</summary>"
    quote = _QUOTE.match(line)
    marker = quote.group() if quote else ""
    return marker + _neutralise(line[len(marker):])


# What GitHub turns into a mention, a reference or a link outside code (a comment with `@team` notifies it,
# `#12` cross-links an issue, a URL becomes a link): a zero-width space after the marker breaks the pattern
# and stays invisible, in code spans too. The review writes none of these itself.
INERT = "\u200b"
_ACTIVE = re.compile(r"(@|#|GH-)(?=[A-Za-z0-9])|(\]|:)(?=\(|//)|(?i:(www))(?=\.)")


def _inert(match: re.Match[str]) -> str:
    marker = match.group(1) or match.group(2) or match.group(3)
    if match.group(1) == "#" and not match.string[match.end()].isdigit():
        return marker  # `#` before a letter is a key separator (`ORDER#{id}`), not a reference
    return marker + INERT


# A character reference or a backslash escape the renderer decodes after this has run (`&#x40;`, `&commat;`, `\/`)
# could assemble a mention or a link out of harmless text: shown as written instead (`&amp;...`, `\\/`). The
# references the sanitizer writes itself (`&lt;`, `&gt;`, `&amp;`) stay, so it is idempotent.
_REFERENCE = re.compile(r"&(?!(?:lt|gt|amp);)(?=#?[A-Za-z0-9]+;)")
_ESCAPE = re.compile(r"(?<!\\)\\(?=[@#:/.&\-])")


def _neutralise(text: str) -> str:
    text = _REFERENCE.sub("&amp;", text)
    text = text.replace("<", "&lt;").replace(">", "&gt;").replace("![", "!\\[")
    text = _ESCAPE.sub(r"\\\\", text)
    return _ACTIVE.sub(_inert, text)


MERMAID_FENCE, FENCE_END = "```mermaid", "```"


def fence_for(lines: list[str]) -> str:
    """A code fence longer than any run of backticks in the lines (CommonMark), so none can close it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def sanitize(markdown: str) -> str:
    """The same Markdown with raw HTML and images from untrusted values made inert (idempotent)."""
    lines = []
    in_diagram = False
    for line in markdown.replace("\r", " ").split("\n"):
        if in_diagram:
            in_diagram = line != FENCE_END
            lines.append(line.replace("<", "&lt;").replace("![", "!\\[") if in_diagram else line)
            continue
        in_diagram = line == MERMAID_FENCE
        lines.append(line if in_diagram else _escape_line(line))
    return "\n".join(lines)
