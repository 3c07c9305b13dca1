"""Sample data that exercises every range and order: several items behind every `=`-bound sort-key
prefix, the ranged component spread across magnitudes and time, so that keys that do not sort as their
values fail `verify` whatever the seed, wherever the trap sits."""

from __future__ import annotations

import json
import textwrap
from collections import Counter

import pytest

from tablewright.blueprint.load import load_blueprint
from tablewright.design.designer import design
from tablewright.stacks.stack import build_stacks
from tablewright.verify.samples import PREFIX_POOL, generate_samples, prefix_attributes, sample_key
from tablewright.verify.verify import verify_stacks

SEEDS = [1, 2, 3, 4, 5]

# The ranged attribute `{name}` sits behind an `=`-bound string (`chapter`) on the table and on a GSI,
# and directly in a partition's sort key; each is read by a range and (behind the prefix) by an order.
TRAPS = """\
blueprint: traps
version: 1.0.0
table:
  name: traps_main
entities:
  Lesson:
    attributes: {{courseId: string, chapter: string, {name}: {encoding}, title: string}}
    key: {{pk: "COURSE#{{courseId}}", sk: "CHAPTER#{{chapter}}#AT#{{{name}}}"}}
  Unit:
    attributes: {{trackId: string, {name}: {encoding}, title: string}}
    key: {{pk: "TRACK#{{trackId}}", sk: "AT#{{{name}}}"}}
  Topic:
    attributes: {{topicId: string, forumId: string, chapter: string, {name}: {encoding}}}
    key: {{pk: "TOPIC#{{topicId}}", sk: DETAILS}}
    index_keys:
      GSI1: {{pk: "FORUM#{{forumId}}", sk: "CHAPTER#{{chapter}}#AT#{{{name}}}"}}
access_patterns:
  lessons_in_range:
    entity: Lesson
    where: {{courseId: "=", chapter: "=", {name}: between}}
  latest_lessons:
    entity: Lesson
    where: {{courseId: "=", chapter: "="}}
    order_by: {name}
    order: desc
    limit: 3
  units_in_range:
    entity: Unit
    where: {{trackId: "=", {name}: between}}
  topics_in_range:
    entity: Topic
    where: {{forumId: "=", chapter: "=", {name}: between}}
    index: GSI1
"""
PATTERNS = ["lessons_in_range", "latest_lessons", "units_in_range", "topics_in_range"]
CASES = {
    # trap: (attribute, encoding with the trap, the same attribute encoded so it sorts, cause)
    "unpadded_number": ("lesson", "number", "{type: number, width: 6}",
                        "cause: `lesson` is a number without `width`: inside keys it compares as text"),
    "month_names": ("publishedAt", '{type: timestamp, format: "%Y %B %d"}', '{type: timestamp, format: "%Y-%m-%d"}',
                    "cause: `publishedAt` uses timestamp format '%Y %B %d', which does not sort chronologically"),
}


# Seed 1 in the fast tier, every seed in the slow one (each case verifies two designs against moto).
@pytest.mark.parametrize("seed", [seed if seed == SEEDS[0] else pytest.param(seed, marks=pytest.mark.terraform)
                                  for seed in SEEDS])
@pytest.mark.parametrize("trap", list(CASES))
def test_a_key_that_does_not_sort_as_its_values_fails_verify_on_every_seed(trap, seed, write_blueprint, run_cli):
    name, encoding, fixed, cause = CASES[trap]
    path = write_blueprint(TRAPS.format(name=name, encoding=encoding))
    code, out, _ = run_cli("verify", path, "--allow-lint-errors", "--seed", seed, "--format", "json")
    assert code == 1
    [report] = json.loads(out)
    results = {p["pattern"]: p for p in report["patterns"]}
    assert sorted(results) == sorted(PATTERNS)
    for pattern in PATTERNS:
        assert results[pattern]["result"] == "FAIL", (pattern, seed)
        assert results[pattern]["failure"].startswith(f"{pattern}: with "), results[pattern]["failure"]
        assert cause in results[pattern]["failure"]
    # The same design with an encoding that sorts passes on the same data: the trap is the cause.
    [sorted_ok] = verify_stacks(build_stacks([load_blueprint(write_blueprint(
        TRAPS.format(name=name, encoding=fixed), "fixed.yaml"))]), seed=seed)
    assert sorted_ok.passed, sorted_ok.failures
    assert all(r.items >= 2 for r in sorted_ok.results)


def test_several_items_share_every_bound_prefix_and_spread_the_range(write_blueprint):
    table = design(load_blueprint(write_blueprint(TRAPS.format(name="lesson", encoding="number"))).blueprint)
    assert prefix_attributes(table, "Lesson") == {"chapter"}
    assert prefix_attributes(table, "Topic") == {"chapter"}
    assert prefix_attributes(table, "Unit") == set()
    samples = generate_samples(table, seed=3)
    assert samples == generate_samples(table, seed=3)
    assert len({sample_key(table, s) for s in samples}) == len(samples)  # primary keys stay unique
    lessons = Counter((s.values["courseId"], s.values["chapter"]) for s in samples if s.entity == "Lesson")
    assert len(lessons) == 4 * PREFIX_POOL and min(lessons.values()) >= 3
    for prefix in lessons:
        digits = {len(str(s.values["lesson"])) for s in samples
                  if s.entity == "Lesson" and (s.values["courseId"], s.values["chapter"]) == prefix}
        assert len(digits) >= 3, (prefix, digits)  # magnitudes that sort differently as text
    topics = Counter((s.values["forumId"], s.values["chapter"]) for s in samples if s.entity == "Topic")
    assert sum(topics.values()) == 24 and sum(n >= 2 for n in topics.values()) >= 4


def test_generated_data_differs_by_seed_but_not_by_run(write_blueprint):
    blueprint = write_blueprint(textwrap.dedent(TRAPS.format(name="lesson", encoding="number")))
    table = design(load_blueprint(blueprint).blueprint)
    assert [s.item for s in generate_samples(table, 1)] == [s.item for s in generate_samples(table, 1)]
    assert [s.item for s in generate_samples(table, 1)] != [s.item for s in generate_samples(table, 2)]


def test_a_request_dynamodb_refuses_is_a_failure_with_the_cause(write_blueprint):
    """Real DynamoDB refuses a BETWEEN whose encoded bounds are out of order (moto returns nothing)."""
    from botocore.exceptions import ClientError

    from tablewright.verify.runner import verify_pattern

    class Refusing:
        def query(self, **request):
            raise ClientError({"Error": {"Code": "ValidationException", "Message": "Invalid KeyConditionExpression: "
                               "The BETWEEN operator requires upper bound to be greater than or equal to lower bound"}},
                              "Query")

    table = design(load_blueprint(write_blueprint(TRAPS.format(name="lesson", encoding="number"))).blueprint)
    result = verify_pattern(Refusing(), table, table.plan("units_in_range"), "traps_main", generate_samples(table, 1))
    assert result.failure.startswith("units_in_range: with ")
    assert ": DynamoDB refused the request: Invalid KeyConditionExpression: The BETWEEN operator" in result.failure
    assert result.failure.endswith("(cause: `lesson` is a number without `width`: inside keys it compares as text, "
                                   "so 10 sorts before 9)")
