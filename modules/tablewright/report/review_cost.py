"""The review's cost: the month before and after the change, for a stack, for the pull request, and for an
environment beside production."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from tablewright.capacity.cost import CostReport
from tablewright.report.capacity import price_line
from tablewright.report.tables import markdown_table
from tablewright.review.environments import monthly_totals
from tablewright.review.review import StackReview
from tablewright.simulate.stack import DaySummary


def money(value: float) -> str:
    return f"${value:,.2f}"


def signed(change: float) -> str:
    return f"{'+' if change >= 0 else '-'}{money(abs(change))}"


def cost_change(before: float, after: float) -> str:
    return f"{money(before)} -> {money(after)} ({signed(after - before)})"


def cost_headline(stacks: list[StackReview]) -> str:
    """The pull request's monthly cost change over every stack it reviews, for the top of the review."""
    before, after = monthly_totals(stacks)
    return f"**Monthly cost: {cost_change(before, after)}** over {len(stacks)} stack(s) (priced lines)"


def _billed(cost: CostReport, items: tuple[str, ...]) -> float | None:
    """The month's figure of the billed lines among `items`; None when one of them is not priced."""
    lines = [line for line in cost.billed if line.item in items]
    if any(line.monthly is None for line in lines):
        return None
    return round(sum(line.monthly or 0.0 for line in lines), 2)


THROUGHPUT = ("provisioned read capacity", "provisioned write capacity", "on-demand read requests",
              "on-demand write requests")


def _cost_rows(before: CostReport | None, after: CostReport | None,
               rows: list[tuple[str, Callable[[CostReport], float | None]]], billed: bool = True) -> list[list[str]]:
    def cell(cost: CostReport | None, pick: Callable[[CostReport], float | None]) -> str:
        if cost is None:
            return "-"
        value = pick(cost)
        return "not priced" if value is None else money(value)

    def delta(pick: Callable[[CostReport], float | None]) -> str:
        old, new = (pick(before), pick(after)) if before and after else (None, None)
        return "-" if old is None or new is None else signed(new - old)

    def billing(cost: CostReport | None) -> str:
        return f"{cost.billing}, {cost.table_class}" if cost else "-"

    return [*([["Billing", billing(before), billing(after), ""]] if billed else []),
            *([label, cell(before, pick), cell(after, pick), delta(pick)] for label, pick in rows)]


def _summary_rows() -> list[tuple[str, Callable[[CostReport], float | None]]]:
    return [("Total per month (priced lines)", lambda cost: cost.total)]


def _item_rows(before: CostReport | None, after: CostReport | None) -> list[tuple[str, Callable[[CostReport],
                                                                                                 float | None]]]:
    items = list(dict.fromkeys(line.item for cost in (before, after) if cost for line in cost.billed))
    return [("Throughput", partial(_billed, items=THROUGHPUT)),
            *((f"{item[0].upper()}{item[1:]}", partial(_billed, items=(item,))) for item in items)]


def cost_section(stack: StackReview) -> list[str]:
    cost = stack.cost_after or stack.cost_before
    if not cost:
        return []
    before, after = stack.cost_before, stack.cost_after
    headers = ("", "Before", "After", "Change")
    return ["#### Capacity and cost", "", markdown_table(headers, _cost_rows(before, after, _summary_rows())),
            "", f"Estimated from the blueprint's rates ({price_line(cost)}; provisioned at the suggested "
                "autoscaling minimums, within the configured bounds). `tablewright capacity` has every "
                "line.",
            *(f"> {note}" for note in cost.notes), "", *_simulated(stack),
            "<details>", "<summary>Monthly cost by item</summary>", "",
            markdown_table(headers, _cost_rows(before, after, _item_rows(before, after), billed=False)), "",
            "</details>", ""]


def _day(day: DaySummary | None) -> str:
    if day is None:
        return "-"
    cost = "not priced" if day.monthly_usd is None else f"{money(day.monthly_usd)} a month of throughput"
    return f"{day.throttled_requests:,.0f} throttled requests in {day.throttled_seconds:,} s; {cost}"


def _simulated(stack: StackReview) -> list[str]:
    """The declared traffic simulated over a day on each side (`tablewright simulate`), when one throttles."""
    if not any(day and day.throttled_requests for day in (stack.simulated_before, stack.simulated_after)):
        return []
    return [f"Simulated day of the declared traffic: before {_day(stack.simulated_before)}; after "
            f"{_day(stack.simulated_after)} (`tablewright simulate`).", ""]


def _monthly(stack: StackReview) -> str | None:
    cost = stack.cost_after or stack.cost_before
    return None if cost is None else f"{cost_change(*monthly_totals([stack]))}, {cost.billing}, {cost.table_class}"


def cost_differences(stack: StackReview, full: StackReview) -> list[str]:
    mine, theirs = _monthly(stack), _monthly(full)
    if mine is None or mine == theirs:
        return []
    cost, other = stack.cost_after or stack.cost_before, full.cost_after or full.cost_before
    notes = [f"> {note}" for note in cost.notes if other is None or note not in other.notes] if cost else []
    return [f"Monthly cost: {mine} (`{full.stack}`: {theirs or 'none'}).", *notes, ""]
