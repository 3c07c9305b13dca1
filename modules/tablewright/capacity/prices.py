"""The prices a stack is costed with: the built-in `prices.json`, or the file a blueprint names."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tablewright.blueprint.prices import ClassPrices, PriceBook, RegionPrices

BUILT_IN_FILE = "modules/tablewright/capacity/prices.json"
BUILT_IN_BOOK = PriceBook.model_validate(json.loads((Path(__file__).parent / "prices.json").read_text()))


@dataclass(frozen=True)
class Prices:
    book: PriceBook
    file: str  # where the book comes from, as shown to users

    def region(self, region: str | None) -> RegionPrices | None:
        """The region's prices; None without a region or when the book has none for it (never another's)."""
        return self.book.regions.get(region) if region else None

    def table_class(self, region: str | None, table_class: str) -> ClassPrices | None:
        prices = self.region(region)
        return prices.table_classes.get(table_class) if prices else None  # type: ignore[call-overload]


BUILT_IN = Prices(BUILT_IN_BOOK, BUILT_IN_FILE)


def prices_of(book: PriceBook | None, file: str | None) -> Prices:
    """The prices of a blueprint: its own file's, or the built-in ones."""
    return BUILT_IN if book is None else Prices(book, file or "the blueprint's price file")
