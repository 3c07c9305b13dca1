"""The blueprint language for existing tables: entities on the table's own key attribute names and types and its own
index names, keys without a sort key, expression attribute names for any attribute name, findings located in an index
named with dots; keys and index names that do not fit the table are refused."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tablewright.blueprint.load import load_blueprint, load_blueprints
from tablewright.cli import main
from tablewright.design.cookbook import follow_up_request, name_placeholder, request
from tablewright.stacks.stack import build_stack, build_stacks
from tablewright.verify.verify import verify_stacks

# --- entities on an existing table's own key attributes ------------------------------------------------------

USERS = """\
blueprint: users
version: 1.0.0
table:
  name: users-live
  keys: {pk: tenant-id, sk: id}
indexes:
  email-index:
    keys: {pk: email}
    projection: keys_only
  by-plan:
    keys: {pk: plan_key, sk: joined}
    projection: [name]
entities:
  User:
    attributes:
      tenantId: string
      userId: string
      email: string
      name: string
      plan: {type: string, values: [FREE, PRO]}
      joinedAt: timestamp
    key: {pk: "TENANT#{tenantId}", sk: "USER#{userId}"}
    index_keys:
      email-index: {pk: "{email}"}
      by-plan: {pk: "PLAN#{plan}", sk: "{joinedAt}#{userId}"}
    item_count: 10000
access_patterns:
  user_by_id: {entity: User, where: {tenantId: "=", userId: "="}, rps: 50}
  users_of_tenant: {entity: User, where: {tenantId: "="}, limit: 20, rps: 5}
  user_by_email: {entity: User, where: {email: "="}, returns: [name, plan], rps: 20}
  users_on_plan: {entity: User, where: {plan: "=", joinedAt: ">="}, limit: 10, returns: [userId, name], rps: 1}
"""


def _write(tmp_path: Path, text: str, name: str = "users.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_entities_on_existing_key_names_plan_and_verify(tmp_path):
    stack = build_stack(load_blueprint(_write(tmp_path, USERS)))
    design = stack.design
    by_id = design.plan("user_by_id")
    body = request(by_id, "users-live")
    assert body["Key"] == {"tenant-id": {"S": "TENANT#{tenantId}"}, "id": {"S": "USER#{userId}"}}
    email = design.plan("user_by_email")
    query = request(email, "users-live")
    assert (query["IndexName"], query["KeyConditionExpression"]) == ("email-index", "#pk = :pk")
    assert query["ExpressionAttributeNames"]["#pk"] == "email"
    follow = follow_up_request(email, "users-live")
    assert follow is not None
    [keys] = follow["RequestItems"]["users-live"]["Keys"]
    assert set(keys) == {"tenant-id", "id"}
    assert design.index("by-plan").keys.names == ("plan_key", "joined")
    [result] = verify_stacks([stack])
    assert result.passed, [r.failure for r in result.results]


def test_a_key_without_a_sort_key_serves_get_item(tmp_path):
    path = _write(tmp_path, """\
        blueprint: sessions
        version: 1.0.0
        table: {name: sessions, keys: {pk: session_id}}
        entities:
          Session:
            attributes: {sessionId: string, data: map, raw: binary}
            key: {pk: "{sessionId}"}
        access_patterns:
          session_by_id: {entity: Session, where: {sessionId: "="}, rps: 100}
        """, "sessions.yaml")
    stack = build_stack(load_blueprint(path))
    plan = stack.design.plan("session_by_id")
    assert plan.operation == "GetItem" and request(plan, "sessions")["Key"] == {"session_id": {"S": "{sessionId}"}}
    [result] = verify_stacks([stack])
    assert result.passed, [r.failure for r in result.results]


DESIGN_ERRORS = [
    ("sort key on a hash-only table", {"table": "{name: tbl, keys: {pk: id}}", "key": '{pk: "U#{userId}", sk: X}'},
     "the table has no sort key"),
    ("missing sort key", {"table": "{name: tbl, keys: {pk: id, sk: kind}}", "key": '{pk: "U#{userId}"}'},
     "the table has a sort key (`kind`)"),
    ("number key", {"table": "{name: tbl, keys: {pk: {name: id, type: number}}}", "key": '{pk: "{userId}"}'},
     "holds numbers"),
    ("attribute named like the key", {"table": "{name: tbl, keys: {pk: userId}}", "key": '{pk: "U#{userId}"}'},
     "the key must be the attribute itself"),
]


@pytest.mark.parametrize(("case", "parts", "message"), DESIGN_ERRORS, ids=[c for c, _, _ in DESIGN_ERRORS])
def test_keys_that_do_not_fit_the_table_are_refused(tmp_path, capsys, case, parts, message):
    path = _write(tmp_path, f"""\
        blueprint: users
        version: 1.0.0
        table: {parts['table']}
        entities:
          User:
            attributes: {{userId: string}}
            key: {parts['key']}
        """)
    assert main(["lint", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "[E301]" in err and "users.yaml:" in err, err


def test_two_indexes_writing_one_attribute_differently_are_refused(tmp_path, capsys):
    path = _write(tmp_path, USERS.replace("keys: {pk: email}", "keys: {pk: plan_key}"))
    assert main(["lint", str(path)]) == 2
    assert "User writes `plan_key` as 'PLAN#{plan}' for by-plan and as '{email}' for email-index" in (
        capsys.readouterr().err)


def test_index_names_that_would_share_terraform_names_are_refused(tmp_path, capsys):
    path = _write(tmp_path, USERS.replace("indexes:\n", "indexes:\n  email_index:\n    keys: {pk: email2}\n"))
    assert main(["lint", str(path)]) == 2
    assert "`email-index` and `email_index` differ only in case or punctuation" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "placeholder"), [("status", "#status"), ("user-id", "#x757365722d6964"),
                                                   ("a.b", "#x612e62")])
def test_expression_names_for_any_attribute_name(name, placeholder):
    assert name_placeholder(name) == placeholder


def test_capacity_findings_point_into_an_index_named_with_dots(tmp_path):
    """Index names may hold '.': a finding on its capacity is located at its own `max`, not at `indexes`."""
    text = (USERS.replace("  email-index:\n", "  email.index:\n").replace("      email-index:", "      email.index:")
            .replace("  name: users-live\n", "  name: users-live\n  billing: provisioned\n"
                     "  capacity: {read: {min: 5, max: 500}, write: {min: 5, max: 500}}\n")
            .replace("    projection: keys_only\n", "    projection: keys_only\n"
                     "    capacity: {read: {min: 1, max: 2}, write: {min: 1, max: 500}}\n"))
    [stack] = build_stacks(load_blueprints(_write(tmp_path, text)))
    [finding] = [f for f in stack.lint.findings
                 if f.finding.code == "TW308" and f.finding.message.startswith("email.index: ")]
    assert finding.finding.message.startswith("email.index: read capacity max 2 is below the estimated peak")
    assert finding.location is not None
    line = text.splitlines()[finding.location.line - 1]
    assert "capacity: {read: {min: 1, max: 2}" in line, line
