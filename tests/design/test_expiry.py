"""Items past their TTL: DynamoDB deletes them typically within a few days, not at the time they hold, so
until then every read returns them (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html).
Query and Scan patterns hide them with a filter against the current time; a GetItem cannot, and lint says so."""

from __future__ import annotations

import textwrap

from tablewright.blueprint.load import load_blueprint
from tablewright.design.cookbook import request
from tablewright.stacks.stack import build_stacks
from tablewright.verify.verify import verify_stacks

SESSIONS = """\
    blueprint: sessions
    version: 1.0.0
    table: {name: sessions_main, ttl_attribute: expiresAt}
    entities:
      Session:
        attributes:
          userId: string
          sessionId: string
          startedAt: timestamp
          expiresAt: {type: timestamp, format: epoch_seconds, optional: true}
        key: {pk: "USER#{userId}", sk: "SESSION#{startedAt}#{sessionId}"}
    access_patterns:
      active_sessions: {entity: Session, where: {userId: "="}, order_by: startedAt, order: desc, limit: 5}
"""


def _stack(write_blueprint, text: str):
    return build_stacks([load_blueprint(write_blueprint(textwrap.dedent(text)))])[0]


def test_the_request_filters_out_items_past_their_ttl_and_keeps_its_limit(write_blueprint):
    body = request(_stack(write_blueprint, SESSIONS).design.plan("active_sessions"), "sessions_main")
    assert body["FilterExpression"] == "(attribute_not_exists(#expiresAt) OR #expiresAt > :now)"
    assert body["ExpressionAttributeValues"][":now"] == {"N": "{_now}"}
    assert body["ExpressionAttributeNames"]["#expiresAt"] == "expiresAt"
    # Expired items are few: the Limit stays, and the next page continues where the filter thinned one out.
    assert body["Limit"] == 5


def test_a_pattern_that_wants_expired_items_reads_them(write_blueprint):
    text = SESSIONS.replace("limit: 5}", "limit: 5, expired: returned}")
    body = request(_stack(write_blueprint, text).design.plan("active_sessions"), "sessions_main")
    assert "FilterExpression" not in body


def test_verify_passes_the_filter_and_fails_a_request_without_it(write_blueprint, monkeypatch):
    stack = _stack(write_blueprint, SESSIONS)
    [result] = verify_stacks([stack])
    assert result.passed, result.failures
    import tablewright.verify.runner as runner

    def unfiltered(plan, table):
        body = request(plan, table)
        del body["FilterExpression"], body["ExpressionAttributeValues"][":now"], body["ExpressionAttributeNames"][
            "#expiresAt"]
        return body

    monkeypatch.setattr(runner, "request", unfiltered)
    [result] = verify_stacks([stack])
    [failure] = result.failures
    # verify's `_now` is the median TTL of the samples: about half of them have expired by then.
    assert "_now=" in failure and ("differs" in failure or "expected" in failure), failure


def test_a_get_item_of_an_expiring_entity_is_a_warning(write_blueprint, run_cli):
    text = SESSIONS + "      session: {entity: Session, where: {userId: \"=\", startedAt: \"=\", sessionId: \"=\"}}\n"
    code, out, _ = run_cli("lint", write_blueprint(textwrap.dedent(text)))
    assert code == 0
    assert "warning TW502: `session` reads Session by its key (GetItem, which takes no filter)" in out
    quiet = text.replace('sessionId: "="}}', 'sessionId: "="}, expired: returned}')
    code, out, _ = run_cli("lint", write_blueprint(textwrap.dedent(quiet)))
    assert code == 0 and "TW502" not in out


def test_an_index_without_the_ttl_attribute_is_not_filtered_and_lint_says_so(write_blueprint, run_cli):
    """A filter on an attribute the index does not project keeps every item (`attribute_not_exists` holds):
    no filter is sent, verify's oracle expects the expired items, and TW502 warns."""
    text = SESSIONS + ("      by_device: {entity: Session, where: {device: \"=\"}, order_by: startedAt, "
                       "returns: [sessionId]}\n")
    text = text.replace("          userId: string\n", "          userId: string\n          device: string\n")
    stack = _stack(write_blueprint, text)
    plan = stack.design.plan("by_device")
    assert plan.index != "table" and plan.hides_expired is None
    assert "FilterExpression" not in request(plan, "sessions_main")
    [result] = verify_stacks([stack])
    assert result.passed, result.failures
    code, out, _ = run_cli("lint", write_blueprint(textwrap.dedent(text)))
    assert code == 0
    assert "warning TW502: `by_device` reads Session on " in out and "which does not project `expiresAt`" in out
