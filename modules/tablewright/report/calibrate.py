"""`calibrate`: observed against declared, per stack, table or GSI and direction, with the lines to change.

JSON: `{"version": 1, "tolerance_percent": N, "partial": [...], "comparisons": [...]}`, one comparison per
table or GSI and direction measured (units per second; `throttled_at`: ISO 8601 times of the periods with
throttles).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from datetime import UTC, datetime

from tablewright.calibrate.attribution import Attribution
from tablewright.calibrate.calibration import Calibration
from tablewright.calibrate.compare import NOT_MEASURED, Change, Comparison
from tablewright.calibrate.keys import KeyObservation
from tablewright.calibrate.replay import SLACK_PERIODS, Replay
from tablewright.design.design import TABLE
from tablewright.report.markdown import sanitize
from tablewright.report.tables import text_table
from tablewright.review.pull import printable

VERSION = 1
HEADERS = ("stack", "target", "dir", "average: declared / observed", "busiest minute: declared / observed",
           "throttled", "verdict")
SHOWN_TIMES = 5


def _time(moment: int) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _row(item: Comparison) -> list[str]:
    return [item.stack, item.target, item.direction, f"{item.declared_average:,.2f} / {item.observed_average:,.2f}",
            f"{item.declared_busiest:,.2f} / {item.observed_busiest:,.2f}", f"{item.throttled_requests:,.0f}",
            item.verdict]


def _notes(item: Comparison) -> list[str]:
    lines = []
    if item.throttled_requests:
        times = ", ".join(_time(moment) for moment in item.throttled_at[:SHOWN_TIMES])
        more = len(item.throttled_at) - SHOWN_TIMES
        lines.append(f"{item.stack} {item.target} {item.direction}s: {item.throttled_requests:,.0f} throttled "
                     f"requests in {len(item.throttled_at)} period(s) of {item.period} s: {times}"
                     + (f" and {more} more" if more > 0 else ""))
    if item.verdict not in ("as declared", NOT_MEASURED) and not item.changes:
        lines.append(f"{item.stack} {item.target} {item.direction}s: observed {item.observed_average:,.2f} units/s "
                     f"on average, {item.observed_busiest:,.2f} at the busiest; "
                     + ("the blueprint declares none: declare the patterns or writes that cause them"
                        if item.declared_average == 0 else "scale the busiest points of `traffic.daily` to match"))
    lines += [_change_line(change, f"{item.target} {item.direction}s {item.verdict}") for change in item.changes]
    return lines


def _change_line(change: Change, why: str) -> str:
    return (f"{os.path.relpath(change.location.file)}:{change.location.line}: `{change.field}` {change.current:g} -> "
            f"{change.suggested:g} ({why})")


def _key_line(key: KeyObservation) -> str:
    where = f"{key.stack} {key.target}: `{printable(key.key, 120)}`"
    if key.verdict == "throttled":
        return f"{where} ({key.template or 'no key template'}) throttled: {key.throttled:,.0f} throttle events"
    if key.template is None:
        return f"{where} matches no key template of {key.target}: {key.observed_share:.1%} of its accesses"
    text = (f"{where} ({key.template}, {', '.join(key.entities)}): {key.observed_share:.1%} of the accesses, "
            f"{key.declared_share:.1%} declared: {key.verdict}")
    return text + ("\n  " + _change_line(key.change, "hotter than declared") if key.change else "")


def _replay_line(item: Replay) -> str:
    error = "" if item.served_error is None else f", served {item.served_error:.1%} off the consumed units"
    return (f"replay {item.stack} {item.target} {item.direction}s: {len(item.observed_throttled)} period(s) "
            f"throttled observed, {len(item.predicted_throttled)} predicted, {item.matched} matched within "
            f"{SLACK_PERIODS} period(s), {item.false_alarms} predicted without one{error}")


def _attribution_line(stack: str, found: Attribution) -> str:
    shares = ", ".join(f"{entity} {share:.1%}" for entity, share in found.shares)
    whose = "the table's" if found.target == TABLE else f"{found.target}'s"
    return (f"{stack} {found.target}: attributed by Contributor Insights: {shares} of {whose} "
            f"accesses (3 x write units + read units; the top {found.listed} keys cover {found.covered:.1%}, "
            f"{found.attributed:.1%} are keys of one entity, the rest is split by declared units)")


def _attributions(calibration: Calibration) -> list[str]:
    """One line per table or GSI whose units an accessed-keys report split among its entities."""
    shown = {(item.stack, item.target): item.attribution for item in calibration.comparisons if item.attribution}
    return [_attribution_line(stack, found) for (stack, _), found in sorted(shown.items())]


def _all_notes(calibration: Calibration) -> list[str]:
    notes = [note for item in calibration.comparisons for note in _notes(item)]
    notes += _attributions(calibration)
    notes += [_key_line(key) for key in calibration.keys]
    notes += [_replay_line(item) for item in calibration.replays]
    return notes + [f"partial: `{label}`: no page said Complete; pass the query's other pages"
                    for label in calibration.partial]


def render_text(calibration: Calibration) -> str:
    lines = [f"observed against declared, units per second (tolerance {calibration.tolerance:.0%})", ""]
    if calibration.comparisons:
        lines += [text_table(HEADERS, [_row(item) for item in calibration.comparisons]), ""]
    else:
        lines += ["no table or GSI of the named stacks is in the metrics", ""]
    return "\n".join(lines + _all_notes(calibration)).rstrip("\n") + "\n"


def render_markdown(calibration: Calibration) -> str:
    lines = [f"### Observed against declared (units per second, tolerance {calibration.tolerance:.0%})", "",
             "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(sanitize(cell) for cell in _row(item)) + " |" for item in calibration.comparisons]
    notes = _all_notes(calibration)
    return "\n".join(lines + ([""] + [f"- {sanitize(note)}" for note in notes] if notes else [])) + "\n"


def _change(change: Change | None) -> dict[str, object] | None:
    if change is None:
        return None
    return {"file": os.path.relpath(change.location.file), "line": change.location.line, "field": change.field,
            "current": change.current, "suggested": change.suggested}


def render_json(calibration: Calibration) -> str:
    def entry(item: Comparison) -> dict[str, object]:
        document = asdict(item)
        document["throttled_at"] = [_time(moment) for moment in item.throttled_at]
        document["changes"] = [_change(change) for change in item.changes]
        document["fails"] = item.fails
        return document

    def key_entry(key: KeyObservation) -> dict[str, object]:
        return {**asdict(key), "entities": list(key.entities), "change": _change(key.change), "fails": key.fails}

    return json.dumps({"version": VERSION, "tolerance_percent": round(calibration.tolerance * 100, 6),
                       "partial": list(calibration.partial),
                       "comparisons": [entry(item) for item in calibration.comparisons],
                       "keys": [key_entry(key) for key in calibration.keys],
                       "replay": [{**asdict(item), "observed_throttled": [_time(m) for m in item.observed_throttled],
                                   "predicted_throttled": [_time(m) for m in item.predicted_throttled]}
                                  for item in calibration.replays]}, indent=2, sort_keys=True) + "\n"
