"""Timestamp formats a reader handles in time linear in the value. A blueprint's `format:` is refused (exit 2, one
located error with its fix) unless it is at most 40 characters of known directives, each part of the time written
once (32 adjacent `%B` were accepted: the TypeScript reader was reported to run past 60 s on one stored value, and
failed to compile its expression under Node 20; the Python one raised `re.error` on every read). Every
reader of a stored value (the engine's, as `migrate` uses it, and both clients') reads a directive as a fixed number
of digits or one of a few fixed words: its expression has no repetition of a varying count and no two alternatives
of which one begins the other, so it backtracks over a bounded stretch of the value only. That is asserted here of
the expressions themselves (never with a clock); the TypeScript reader runs under Node in the slow tier, with a
subprocess timeout as the failure signal. The contract: tests/support/hostile_support.py."""

from __future__ import annotations

import json
import random
import re
import subprocess
from datetime import UTC, datetime, timedelta
from re import _constants as sre_constants
from re import _parser as sre_parse

import pytest
import yaml

from tablewright.blueprint.encoding import TIME_FIELDS, encode_key_value, read_timestamp, timestamp_pattern
from tablewright.blueprint.invalid import Invalid
from tablewright.blueprint.language import AttributeSpec
from tablewright.blueprint.language.attributes import (
    _STRFTIME_DIRECTIVES,
    MAX_TIMESTAMP_FORMAT,
    _check_timestamp_format,
)
from tablewright.client import python_runtime
from tablewright.migrate.items import Unconvertible, decoded
from tests.conftest import ROOT
from tests.support.client_support import module_text, run_tsc
from tests.support.hostile_support import GOOD, MARK, Bad, assert_refused, attributes, ids, lay_out, q

TS_RUNTIME = ROOT / "modules" / "tablewright" / "client" / "typescript_runtime.ts"

# One format of each family a blueprint may declare: the bundled and tested ones, digits run together, month names
# beside digits, the 12-hour clock, text that means something to a regular expression or to Terraform, the longest.
ACCEPTED = ["iso8601", "%Y%m%d%H%M", "%Y%j", "%Y-%m-%d %I:%M %p", "%d %b %Y", "%B %y", "%Y-%m-%dT%H:%M:%S.%f",
            "%d/%m/%Y", "%d/%m/%Y %H:%M", "%Y %B %d", "%Y-%m-%d", "%B%d%Y%H%M%S", "%b%d%y%I%p", "%H:%M",
            "%Y${aws_iam_role.x.arn}", "(%Y)+[%m]*.%d?|%H\\%M", "%Y-%m-%d %I:%M:%S.%f %p", "%Y" + "x" * 38]
# Stored values crafted to make a backtracking reader work hard: 42 letters and a digit (the issue's), 10,000
# letters, digits, spaces, and a good value with 10,000 characters before or after it.
GOOD_VALUE = "2024-03-01T09:30:00Z"
HOSTILE = ["A" * 42 + "1", "September" * 1_111, "9" * 10_000, " " * 10_000, GOOD_VALUE + "0" * 10_000,
           "0" * 10_000 + GOOD_VALUE, "JanuaryFebruary" * 700, "AM" * 5_000, "%B" * 5_000]


def spec(fmt: str) -> AttributeSpec:
    return AttributeSpec.model_validate({"type": "timestamp", "format": fmt})


# The blueprint: refused formats ------------------------------------------------------------------

def at(fmt: str) -> str:
    return attributes(f"      at: {{type: timestamp, format: {q(fmt)}}}  {MARK}")


REFUSED = [
    Bad("32-adjacent-long-month-names", at("%B" * 32)),
    Bad("a-directive-twice", at("%Y-%m-%d %Y")),
    Bad("long-month-name-twice", at("%B %B")),
    Bad("two-months", at("%m %B %Y")),
    Bad("day-of-year-and-day", at("%Y %j %d")),
    Bad("12-hour-clock-without-am-pm", at("%Y-%m-%d %I:%M")),
    Bad("am-pm-without-12-hour-clock", at("%Y-%m-%d %H %p")),
    Bad("lone-percent", at("%Y%m%")),
    Bad("41-characters", at("%Y" + "x" * 39)),
]
WORDS = {"32-adjacent-long-month-names": "at most 40 characters", "a-directive-twice": "uses %Y 2 times",
         "long-month-name-twice": "uses %B 2 times", "two-months": "writes the month twice",
         "day-of-year-and-day": "writes the day twice", "12-hour-clock-without-am-pm": "%I (the 12-hour clock) "
         "without %p", "am-pm-without-12-hour-clock": "%p (AM/PM) without %I", "lone-percent": "lone '%'",
         "41-characters": "at most 40 characters"}


@pytest.mark.parametrize("case", REFUSED, ids=ids(REFUSED))
def test_lint_refuses_a_format_a_reader_could_not_read_in_one_pass(case, tmp_path, run_cli):
    lay_out(tmp_path, {"shop.yaml": case.text})
    result = run_cli("lint", tmp_path / "shop.yaml")
    first = assert_refused(result, where=case.expected(), mentions=(WORDS[case.id],))
    assert "format" in first and "[E203]" in first, first
    assert [line.startswith("error: ") for line in result[2].splitlines()].count(True) == 1, result[2]


def test_synth_refuses_32_adjacent_long_month_names(refuse):
    refuse(REFUSED[0])


def test_the_refused_formats_never_reach_a_model():
    for fmt in ("%B" * 32, "%B" * 20, "%Y%Y", "%b %B", "%y %Y", "%I %H %p", "%Y%%", "%Y-%-m", "%Y#%m", "abc"):
        with pytest.raises(ValueError, match=r"format|directive"):
            spec(fmt)


@pytest.mark.parametrize("fmt", ACCEPTED)
def test_every_format_family_stays_accepted(fmt, tmp_path, run_cli):
    assert len(fmt) <= MAX_TIMESTAMP_FORMAT
    lay_out(tmp_path, {"shop.yaml": at(fmt).replace(f"  {MARK}", "")})
    code, _, err = run_cli("lint", tmp_path / "shop.yaml")
    assert code == 0, err


# The readers: bounded expressions --------------------------------------------------------------

def backtracking(pattern: str) -> list[str]:
    """What would let a backtracking engine reread the value without bound: a repetition of a varying count (`+`,
    `*`, `{1,6}`), two alternatives of which one begins the other (or that are not plain words), anything else than
    literals, character classes, groups and anchors."""
    found: list[str] = []

    def walk(items: sre_parse.SubPattern) -> None:
        for op, value in items:
            if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
                low, high, inner = value
                if low != high:
                    found.append(f"a repetition of {low} to {high}")
                walk(inner)
            elif op is sre_constants.BRANCH:
                words = ["".join(chr(v) for o, v in branch) if all(o is sre_constants.LITERAL for o, v in branch)
                         else None for branch in value[1]]
                if None in words:
                    found.append("an alternative that is not a word")
                elif any(a != b and str(b).startswith(str(a)) for a in words for b in words):
                    found.append(f"an alternative beginning another: {words}")
            elif op is sre_constants.SUBPATTERN:
                walk(value[-1])
            elif op not in (sre_constants.LITERAL, sre_constants.IN, sre_constants.AT):
                found.append(f"{op}")
    walk(sre_parse.parse(pattern))
    return found


def widest(pattern: str) -> int:
    return int(sre_parse.parse(pattern).getwidth()[1])


def typescript_reads() -> dict[str, str]:
    """What the TypeScript runtime's DIRECTIVES read, directive by directive (its source's string literals)."""
    source = TS_RUNTIME.read_text()
    table = source[source.index("const DIRECTIVES"):]
    table = table[:table.index("\n};\n")]
    return {name: json.loads(f'"{text}"') for name, text in re.findall(r'\b([A-Za-z]): \["((?:[^"\\]|\\.)*)"', table)}


def test_every_reader_reads_a_directive_as_the_others_do():
    """The engine's, the Python runtime's and the TypeScript runtime's reads of each directive a blueprint may use
    are one expression, and none can backtrack."""
    assert set(TIME_FIELDS) == set(_STRFTIME_DIRECTIVES)
    assert python_runtime._TIME_FIELDS == TIME_FIELDS
    typescript = typescript_reads()
    assert {name: typescript.get(name) for name in TIME_FIELDS} == TIME_FIELDS
    for name, read in {**TIME_FIELDS, **typescript}.items():
        assert backtracking(read) == [], (name, read)
        assert widest(read) <= 9, (name, read)  # September


@pytest.mark.parametrize("fmt", ACCEPTED)
def test_the_expression_of_every_accepted_format_reads_a_bounded_stretch(fmt):
    """Both Python readers' expressions: nothing that backtracks, and a match at most a few dozen characters long,
    so that a value of any length is refused after reading at most that many characters once per alternative."""
    spec(fmt)
    for pattern in (timestamp_pattern(fmt).pattern, python_runtime._time_pattern(
            python_runtime.ISO8601 if fmt == "iso8601" else fmt).pattern):
        assert backtracking(pattern) == [], pattern
        assert widest(pattern) <= 2 * MAX_TIMESTAMP_FORMAT, pattern


@pytest.mark.parametrize("fmt", ACCEPTED)
def test_hostile_stored_values_are_refused_by_every_python_reader(fmt):
    attribute = spec(fmt)
    for value in HOSTILE:
        with pytest.raises(ValueError, match="is not a timestamp of the format"):
            python_runtime._read_timestamp({"S": value}, fmt)
        with pytest.raises(ValueError, match="is not a timestamp of the format"):
            read_timestamp(value, fmt)
        with pytest.raises(Unconvertible):
            decoded(attribute, {"S": value})


def test_a_runtime_given_a_repeated_directive_refuses_it_at_once():
    """A format no blueprint declares (a module edited by hand) is refused, not compiled into a regular expression."""
    for read in (lambda: python_runtime._read_timestamp({"S": "A" * 42 + "1"}, "%B" * 32),
                 lambda: read_timestamp("A" * 42 + "1", "%B" * 32), lambda: read_timestamp("x", "%Y %Q")):
        with pytest.raises(ValueError, match="each directive once"):
            read()


def moments(count: int) -> list[datetime]:
    rng = random.Random(20240301)
    start = datetime(1000, 1, 1, tzinfo=UTC)
    return [start + timedelta(seconds=rng.randrange(9_000 * 365 * 86_400), microseconds=rng.randrange(10**6))
            for _ in range(count)] + [datetime(2024, 2, 29, 0, 0, tzinfo=UTC), datetime(2023, 12, 31, 12, tzinfo=UTC)]


@pytest.mark.parametrize("fmt", ACCEPTED)
def test_the_readers_read_what_the_writers_write_as_strptime_did(fmt):
    attribute = spec(fmt)
    for moment in moments(200):
        text = encode_key_value(attribute, moment)
        assert python_runtime._timestamp(moment, fmt) == text
        earlier = datetime.strptime(text, python_runtime.ISO8601 if fmt == "iso8601" else fmt).replace(tzinfo=UTC)
        assert read_timestamp(text, fmt) == earlier, text
        assert python_runtime._read_timestamp({"S": text}, fmt) == earlier, text
        assert decoded(attribute, {"S": text}) == earlier, text


def client_read(text: str, fmt: str) -> datetime:
    return python_runtime._read_timestamp({"S": text}, fmt)


def test_out_of_range_fields_are_refused_as_strptime_refused_them():
    for text, fmt in (("2024-13-01", "%Y-%m-%d"), ("2024-02-30", "%Y-%m-%d"), ("24:00", "%H:%M"),
                      ("2024-01-01 00:05 AM", "%Y-%m-%d %I:%M %p"), ("2024000", "%Y%j")):
        for read in (datetime.strptime, read_timestamp, client_read):
            with pytest.raises(ValueError):
                read(text, fmt)


def test_what_strptime_was_lenient_about_is_refused_as_the_typescript_reader_refuses_it():
    """A one-digit day, spaces for a space, a month name in capitals: no writer writes them."""
    for text, fmt in (("2024-03-1", "%Y-%m-%d"), ("2024  03", "%Y %m"), ("MARCH 24", "%B %y")):
        datetime.strptime(text, fmt)
        for read in (read_timestamp, client_read):
            with pytest.raises(ValueError, match="is not a timestamp of the format"):
                read(text, fmt)


def test_a_located_error_names_the_field():
    with pytest.raises(Invalid) as raised:
        _check_timestamp_format("%B" * 20)
    assert raised.value.field == "format" and "uses %B 20 times" in raised.value.message


# The TypeScript reader under Node ----------------------------------------------------------------

NODE_SECONDS = 60
DRIVER = """
const m = require("./build/formats_client.js");
const [formats, hostile, moments] = JSON.parse(process.argv[1]);
const found = { roundTrips: [], accepted: [], unrefused: [] };
for (const format of formats) {
  for (const text of moments) {
    const moment = new Date(text);
    const written = m.timestamp(moment, format);
    found.roundTrips.push([format, written, m.timestamp(m.readTimestamp(written, format), format)]);
  }
  for (const value of hostile) {
    try { m.readTimestamp(value, format); found.accepted.push([format, value.slice(0, 40)]); } catch (error) {
      if (!(error instanceof RangeError)) found.unrefused.push([format, String(error)]);
    }
  }
}
for (const format of ["%B".repeat(32), "%Y %Y", "%Y %Q"]) {
  try { m.readTimestamp("A".repeat(42) + "1", format); found.accepted.push([format, "A".repeat(42) + "1"]); }
  catch (error) { if (!(error instanceof RangeError)) found.unrefused.push([format, String(error)]); }
}
console.log(JSON.stringify(found));
"""


@pytest.mark.terraform
def test_the_typescript_reader_refuses_hostile_values_under_node(tmp_path):
    """Every accepted format, under Node: what it writes it reads back, every hostile value is refused with a
    RangeError, and so are the 32 `%B` of the issue (once over 60 s of backtracking) and a repeated directive. The
    subprocess timeout is the failure signal."""
    attributes_ = {"userId": "string", **{f"at{n}": {"type": "timestamp", "format": fmt}
                                          for n, fmt in enumerate(ACCEPTED)}}
    document = yaml.safe_load(GOOD)
    document["entities"]["User"]["attributes"] = attributes_
    path = tmp_path / "formats.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    exports = "\nexport { readTimestamp, timestamp };\n"
    (tmp_path / "formats_client.ts").write_text(module_text(path, "typescript") + exports)
    done = run_tsc(tmp_path, "formats_client.ts", out_dir="build")
    assert done.returncode == 0, done.stdout + done.stderr
    # Whole milliseconds: a JavaScript Date holds no finer time.
    times = [m.isoformat(timespec="milliseconds").replace("+00:00", "Z") for m in moments(40)]
    argument = json.dumps([ACCEPTED, HOSTILE, times])
    try:
        run = subprocess.run(["node", "-e", DRIVER, argument], cwd=tmp_path, capture_output=True, text=True,
                             timeout=NODE_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"Node still reading after {NODE_SECONDS} s: a reader backtracks")
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout)
    assert found["accepted"] == [] and found["unrefused"] == []
    assert [(fmt, written) for fmt, written, again in found["roundTrips"] if written != again] == []
    assert {fmt for fmt, _, _ in found["roundTrips"]} == set(ACCEPTED)


def test_the_typescript_reader_is_where_the_tests_look():
    """typescript_reads reads the runtime's table (not an empty match)."""
    assert set(typescript_reads()) >= set(TIME_FIELDS)
