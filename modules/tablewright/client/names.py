"""Names in generated code: classes, functions and constants made from blueprint names."""

from __future__ import annotations

import re


def words(name: str) -> list[str]:
    """`OrderItem`, `order_item`, `my-shop`, `GSI1` -> their lowercase words."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [word.lower() for word in re.split(r"[^A-Za-z0-9]+", spaced) if word]


def snake(name: str) -> str:
    return "_".join(words(name))


def class_name(name: str) -> str:
    return "".join(word[:1].upper() + word[1:] for word in words(name))


def camel(name: str) -> str:
    text = class_name(name)
    return text[:1].lower() + text[1:]
