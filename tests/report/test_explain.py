"""`explain`: charts for people, and the query cookbook for application code."""

from __future__ import annotations

import json

from tests.conftest import BUNDLED


def test_text_charts(run_cli):
    code, out, _ = run_cli("explain", BUNDLED[0], "--env", "prod")
    assert code == 0
    # Within 100 columns the tables are one block per row (key templates are not broken).
    assert "Entity:     Contact\nPK:         CUSTOMER#{customerId}\nSK:         CONTACT#{contactAt}#{channel}\n" in out
    assert ("Pattern:       recent_contacts\nIndex:         table\nKey condition: PK = CUSTOMER#{customerId} AND SK "
            "BETWEEN CONTACT#{contactAt.from}") in out
    assert "Order / limit: desc by contactAt, limit 3" in out
    assert "GSI1 (GSI1PK/GSI1SK, projection INCLUDE" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_markdown_charts(run_cli):
    code, out, _ = run_cli("explain", BUNDLED[0], "--format", "markdown", "--env", "dev")
    assert code == 0
    assert "| Pattern | Index | Key condition | Operation | Order / limit |" in out
    assert "| customer_profile | table | PK = CUSTOMER#{customerId} AND SK = PROFILE | 1 GetItem | single item |" in out


def test_json_cookbook_has_the_exact_requests(run_cli):
    code, out, _ = run_cli("explain", "--format", "json", "--env", "prod")
    assert code == 0
    [crm, orders] = json.loads(out)
    recent = next(p for p in crm["patterns"] if p["name"] == "recent_contacts")
    assert recent["request"] == {
        "query": {
            "TableName": "prod-crm_main",
            "KeyConditionExpression": "#pk = :pk AND #sk BETWEEN :lo AND :hi",
            # Contacts expire by TTL (`expiresAt`): the ones past it that DynamoDB has not deleted yet are hidden.
            "FilterExpression": "(attribute_not_exists(#expiresAt) OR #expiresAt > :now)",
            "ExpressionAttributeNames": {"#pk": "PK", "#sk": "SK", "#expiresAt": "expiresAt",
                                         "#contactAt": "contactAt", "#channel": "channel", "#summary": "summary"},
            "ExpressionAttributeValues": {":pk": {"S": "CUSTOMER#{customerId}"},
                                          ":lo": {"S": "CONTACT#{contactAt.from}"},
                                          ":hi": {"S": "CONTACT#{contactAt.to}$"},
                                          ":now": {"N": "{_now}"}},
            "ProjectionExpression": "#contactAt, #channel, #summary",
            "ScanIndexForward": False,
            "Limit": 3,
        }
    }
    assert [p["name"] for p in recent["parameters"]] == ["customerId", "contactAt.from", "contactAt.to", "_now"]
    assert recent["parameters"][3] == {"name": "_now", "attribute": "expiresAt",
                                       "encoding": "epoch seconds: the current time", "role": "clock"}
    assert recent["parameters"][1]["encoding"] == "ISO 8601 UTC, e.g. 2024-03-01T09:30:00Z"
    profile = next(p for p in crm["patterns"] if p["name"] == "customer_profile")
    assert profile["request"]["get_item"]["Key"] == {"PK": {"S": "CUSTOMER#{customerId}"}, "SK": {"S": "PROFILE"}}
    by_product = next(p for p in orders["patterns"] if p["name"] == "orders_with_product")
    assert by_product["request"]["query"]["IndexName"] == "GSI1"
    assert orders["indexes"][0]["projection"]["type"] == "INCLUDE"
