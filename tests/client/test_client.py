"""`client`: the generated Python module, imported and run against the embedded DynamoDB (moto, in-process): its key
builders, its reads page by page, its writes that keep every index key, its values at their edges. Elsewhere:
verify --client (test_client_verify.py), strict typing and the two languages side by side (test_client_typing.py),
the design digest (test_client_design.py), the command (test_client_command.py), the TypeScript module against the
emulator server (test_client_typescript.py, the slow tier) and the encoding vectors (test_encoding_vectors.py)."""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, timedelta

import pytest
from botocore.exceptions import ClientError

from tablewright.blueprint.language import AttributeSpec
from tablewright.client.model import client_of
from tests.support.client_support import BLUEPRINTS, python_module, stacks_of, table_of

MOMENT = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)


def test_key_builders_follow_the_key_templates_and_encodings():
    kitchen = python_module(BLUEPRINTS["client"])
    # Padded to `width: 3`; epoch milliseconds of 2024-03-01T09:30Z are 1,709,285,400 s x 1000.
    assert kitchen.ticket_gsi1_key(assignee="ann", status="OPEN", priority=7) == {
        "GSI1PK": "TICKET#ann#OPEN", "GSI1SK": "007"}
    assert kitchen._TICKET.stored["openedAt"](MOMENT) == {"N": "1709285400000"}
    # strftime `%Y%m%d%H%M` inside a key; a day bucket of the timestamp.
    assert kitchen.comment_table_key(projectId="p", ticketId="t", commentId="c") == {
        "PK": "PROJECT#p", "SK": "COMMENT#t#c"}
    assert kitchen._COMMENT.stored["at"](MOMENT) == {"S": "202403010930"}
    assert kitchen.reading_table_key(sensorId="s-1", at=MOMENT) == {
        "PK": "SENSOR#s-1#2024-03-01", "SK": "2024-03-01T09:30:00Z"}
    # The shard: SHA-256 of the shard-by values' key text joined by '#', first 8 hex digits, modulo the shards.
    features = python_module(BLUEPRINTS["features"])
    (shard_by,) = {k.shard_by for e in client_of(stacks_of(BLUEPRINTS["features"]), "").entities
                   if e.name == "Event" for k in e.keys if k.index == "table"}
    values = {"kind": "A", "at": MOMENT, "eventId": "e-9"}
    text = "#".join({"kind": "A", "at": "2024-03-01T09:30:00Z", "eventId": "e-9"}[a] for a in shard_by)
    shard = str(int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 5)
    assert features.event_table_key(**values)["PK"] == f"EVENT#A#{shard}"
    with pytest.raises(ValueError, match="contains the key separator"):
        kitchen.ticket_table_key(projectId="p#1", ticketId="t")
    with pytest.raises(ValueError, match="more than 3 digits"):
        kitchen.ticket_gsi1_key(assignee="ann", status="OPEN", priority=1000)


def _ticket(**changes):
    return {"ticketId": "t-1", "projectId": "p-1", "assignee": "ann", "status": "OPEN", "priority": 5,
            "from": "web", "openedAt": MOMENT, "dueOn": date(2024, 3, 9), "labels": {"b", "a"}, "votes": {3, 1},
            "meta": {"k": "v"}, "history": ["x"], "blob": b"\x01", "urgent": True, **changes}


def gsi2_key(kitchen, values):
    """A ticket's GSI2 key (its builder takes every attribute the key is made of)."""
    (keys,) = [k for k in kitchen._TICKET.indexes if k.names[0] == "GSI2PK"]
    return keys.build(values)


def test_pages_follow_tokens_without_a_repeat_or_a_gap(aws, tmp_path):
    orders = python_module(BLUEPRINTS["orders"], "dev")
    table = orders.OrdersTable(aws, table_of(aws, BLUEPRINTS["orders"], tmp_path, "dev"))
    for number in range(7):
        table.put_order({"orderId": f"o-{number}", "userId": "u-1", "status": "PAID", "totalCents": number,
                         "orderedAt": datetime(2024, 3, 1 + number, tzinfo=UTC)})
    window = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC))
    pages, token = [], None
    while True:
        page = table.user_orders_by_date(userId="u-1", orderedAt=window, limit=2, start=token)
        pages.append([item["orderId"] for item in page.items])
        token = page.next
        if token is None:
            break
    assert pages == [["o-6", "o-5"], ["o-4", "o-3"], ["o-2", "o-1"], ["o-0"]]  # newest first, 4 pages of 2
    assert [i["orderId"] for i in table.user_orders_by_date(userId="u-1", orderedAt=window).items] == [
        f"o-{n}" for n in range(6, -1, -1)]  # the pattern's limit of 25 holds all 7
    with pytest.raises(ValueError, match="not a page token of this read"):
        table.user_orders_by_date(userId="u-1", orderedAt=window, start="bm90IGEgdG9rZW4")


def test_a_value_holding_a_placeholder_stays_as_it_is(aws, tmp_path):
    orders = python_module(BLUEPRINTS["orders"], "dev")
    table = orders.OrdersTable(aws, table_of(aws, BLUEPRINTS["orders"], tmp_path, "dev"))
    tricky = "{orderedAt.to}"
    table.put_order({"orderId": "o-1", "userId": tricky, "status": "PAID", "totalCents": 1, "orderedAt": MOMENT})
    window = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC))
    assert [o["orderId"] for o in table.user_orders_by_date(userId=tricky, orderedAt=window).items] == ["o-1"]


def test_a_token_continues_only_the_call_that_returned_it(aws, tmp_path):
    orders = python_module(BLUEPRINTS["orders"], "dev")
    table = orders.OrdersTable(aws, table_of(aws, BLUEPRINTS["orders"], tmp_path, "dev"))
    for number in range(3):
        for user in ("u-1", "u-2"):
            table.put_order({"orderId": f"{user}-{number}", "userId": user, "status": "PAID", "totalCents": 1,
                             "orderedAt": datetime(2024, 3, 1 + number, tzinfo=UTC)})
    window = (datetime(2024, 1, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC))
    token = table.user_orders_by_date(userId="u-1", orderedAt=window, limit=1).next
    assert token is not None
    assert [o["orderId"] for o in table.user_orders_by_date(userId="u-1", orderedAt=window, start=token).items] == [
        "u-1-1", "u-1-0"]
    for start, arguments in ((token, {"userId": "u-2", "orderedAt": window}),
                             ("W3RydWVd", {"userId": "u-1", "orderedAt": window}),
                             ("not base64!", {"userId": "u-1", "orderedAt": window})):
        with pytest.raises(ValueError, match="not a page token of this read"):
            table.user_orders_by_date(**arguments, start=start)
    with pytest.raises(ValueError, match="a page holds at least 1 item"):
        table.user_orders_by_date(userId="u-1", orderedAt=window, limit=0)


def test_sharded_reads_merge_every_shard_in_order_across_pages(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    table = kitchen.ClientKitchenTable(aws, table_of(aws, BLUEPRINTS["client"], tmp_path))
    for number in range(9):
        table.put_ticket(_ticket(ticketId=f"t-{number}", openedAt=datetime(2024, 3, 1, number, tzinfo=UTC)))
    assert len({gsi2_key(kitchen, _ticket(ticketId=f"t-{n}"))["GSI2PK"] for n in range(9)}) == 3
    seen, token = [], None
    for _ in range(10):
        page = table.tickets_by_status(status="OPEN", limit=4, start=token)
        seen.append([item["ticketId"] for item in page.items])
        token = page.next
        if token is None:
            break
    assert seen == [["t-8", "t-7", "t-6", "t-5"], ["t-4", "t-3", "t-2", "t-1"], ["t-0"]]


def test_reads_hide_comments_past_their_ttl_now_or_as_of_a_given_time(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    table = kitchen.ClientKitchenTable(aws, table_of(aws, BLUEPRINTS["client"], tmp_path))
    now = datetime.now(UTC)
    for number, expires in enumerate([now - timedelta(days=1), now + timedelta(days=1), None]):
        comment = {"projectId": "p-1", "ticketId": "t-1", "commentId": f"c-{number}", "at": MOMENT, "body": "hi"}
        table.put_comment(comment if expires is None else {**comment, "expiresAt": expires})
    # c-0 expired yesterday (DynamoDB may not have deleted it yet); c-2 has no TTL and never expires.
    assert [c["commentId"] for c in table.comments_on_ticket(projectId="p-1", ticketId="t-1").items] == ["c-1", "c-2"]
    earlier = table.comments_on_ticket(projectId="p-1", ticketId="t-1", as_of=now - timedelta(days=2)).items
    assert [c["commentId"] for c in earlier] == ["c-0", "c-1", "c-2"]
    later = table.comments_on_ticket(projectId="p-1", ticketId="t-1", as_of=now + timedelta(days=2)).items
    assert [c["commentId"] for c in later] == ["c-2"]


class _Throttled:
    """A low-level client whose BatchGetItem answers half of the keys and leaves the rest unprocessed."""

    def __init__(self, table: str) -> None:
        self.table, self.requests = table, []

    def batch_get_item(self, RequestItems):  # boto3's spelling
        keys = RequestItems[self.table]["Keys"]
        self.requests.append(len(keys))
        done, left = keys[:max(1, len(keys) // 2)], keys[max(1, len(keys) // 2):]
        return {"Responses": {self.table: list(reversed(done))},
                "UnprocessedKeys": {self.table: {**RequestItems[self.table], "Keys": left}} if left else {}}


def test_a_batch_get_sends_100_keys_a_request_and_the_unprocessed_ones_again(monkeypatch):
    features = python_module(BLUEPRINTS["features"])
    monkeypatch.setattr(features.time, "sleep", lambda seconds: None)
    keys = [{"PK": {"S": f"CUSTOMER#c{n % 150}"}, "SK": {"S": "ORDER#o"}} for n in range(160)]  # 150 distinct
    client = _Throttled("t")
    template = {"Keys": [{"PK": {"S": "CUSTOMER#{customerId}"}, "SK": {"S": "ORDER#o"}}]}
    found = features._batch_get(client, "t", template, [{"customerId": f"c{n % 150}"} for n in range(160)],
                                ("PK", "SK"))
    assert found == keys[:150]  # each key once, in the order asked, whatever order the answers came in
    # 100 keys, then what each answer left (half of them, rounded down, answered), then the other 50 keys.
    assert client.requests == [100, 50, 25, 13, 7, 4, 2, 1, 50, 25, 13, 7, 4, 2, 1]


def test_updates_rewrite_index_keys_leave_sparse_indexes_and_move_items(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    name = table_of(aws, BLUEPRINTS["client"], tmp_path)
    table = kitchen.ClientKitchenTable(aws, name)
    table.put_ticket(_ticket())
    key = {"projectId": "p-1", "ticketId": "t-1"}

    def stored(ticket_id: str = "t-1"):
        return aws.get_item(TableName=name, Key={"PK": {"S": "PROJECT#p-1"}, "SK": {"S": f"TICKET#{ticket_id}"}}
                            ).get("Item")

    table.update_ticket(key, {"status": "DONE"})  # GSI1 and GSI2 keys hold the status: both rewritten
    item = stored()
    assert item["GSI1PK"] == {"S": "TICKET#ann#DONE"}
    assert item["GSI2PK"]["S"].startswith("TICKET#DONE#")
    assert [t["ticketId"] for t in table.tickets_of_assignee(assignee="ann", status="DONE").items] == ["t-1"]
    table.update_ticket(key, {"assignee": None})  # optional: the ticket leaves the sparse GSI1
    assert {"assignee", "GSI1PK", "GSI1SK"}.isdisjoint(stored())
    assert table.tickets_of_assignee(assignee="ann", status="DONE").items == []
    table.update_ticket(key, {"ticketId": "t-2"})  # a table key attribute: delete and put in one transaction
    assert stored() is None
    assert stored("t-2")["GSI2PK"]["S"] == gsi2_key(kitchen, _ticket(ticketId="t-2", status="DONE"))["GSI2PK"]
    assert table.ticket(projectId="p-1", ticketId="t-2")["priority"] == 5
    with pytest.raises(kitchen.ItemNotFound):
        table.update_ticket(key, {"status": "OPEN"})  # the item moved away: an index key change reads it first
    with pytest.raises(kitchen.ItemNotFound):
        table.update_ticket(key, {"urgent": False})  # no index key: the update's own condition finds it missing
    moved = {"projectId": "p-1", "ticketId": "t-2"}
    table.update_ticket(moved, {"ticketId": "t-2", "urgent": False})  # the key as it is: no move, an update
    assert stored("t-2")["urgent"] == {"BOOL": False}
    table.put_comment({"projectId": "p-1", "ticketId": "t-2", "commentId": "c-1", "at": MOMENT, "body": "hi"})
    aws.put_item(TableName=name, Item={"PK": {"S": "PROJECT#p-1"}, "SK": {"S": "TICKET#t-9"},
                                       "_entity": {"S": "Comment"}})
    with pytest.raises(ClientError, match="ConditionalCheckFailed"):  # never over another entity's item
        table.put_ticket(_ticket(ticketId="t-9"))
    with pytest.raises(ClientError, match="ConditionalCheckFailed"):
        table.delete_ticket({"projectId": "p-1", "ticketId": "t-9"})
    activity = table.project_activity(projectId="p-1").items
    assert sorted(item["_entity"] for item in activity) == ["Comment", "Comment", "Ticket"]


def test_a_move_holds_only_if_the_item_is_unchanged_since_it_was_read(aws, tmp_path, monkeypatch):
    kitchen = python_module(BLUEPRINTS["client"])
    table = kitchen.ClientKitchenTable(aws, table_of(aws, BLUEPRINTS["client"], tmp_path))
    table.put_ticket(_ticket())
    key = {"projectId": "p-1", "ticketId": "t-1"}
    read = kitchen._TICKET.current(aws, table.table_name, kitchen._TICKET.table.typed(key), None)
    table.update_ticket(key, {"priority": 9})  # a concurrent writer, between the move's read and its transaction
    monkeypatch.setattr(kitchen._Entity, "current", lambda *args: read)
    with pytest.raises(ClientError, match="TransactionCanceled"):
        table.update_ticket(key, {"ticketId": "t-2"})
    monkeypatch.undo()
    assert table.ticket(projectId="p-1", ticketId="t-1")["priority"] == 9
    assert table.ticket(projectId="p-1", ticketId="t-2") is None


def test_updates_take_only_the_table_key_from_the_key_given(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    name = table_of(aws, BLUEPRINTS["client"], tmp_path)
    table = kitchen.ClientKitchenTable(aws, name)
    stale = _ticket(assignee="bob")
    table.put_ticket(stale)
    table.update_ticket({"projectId": "p-1", "ticketId": "t-1"}, {"assignee": "amy"})
    table.update_ticket(stale, {"status": "DONE"})  # a whole, outdated item as the key: its assignee is not used
    assert [t["assignee"] for t in table.tickets_of_assignee(assignee="amy", status="DONE").items] == ["amy"]
    assert table.tickets_of_assignee(assignee="bob", status="DONE").items == []


def test_a_key_attribute_change_that_keeps_the_key_text_is_an_update(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    table = kitchen.ClientKitchenTable(aws, table_of(aws, BLUEPRINTS["client"], tmp_path))
    first = datetime(2024, 3, 1, 10, 0, 0, 100000, tzinfo=UTC)
    table.put_reading({"sensorId": "s", "at": first, "value": 1})
    # iso8601 keys hold whole seconds: .1 s and .4 s make the same key, so this is no move (a transaction on one
    # item twice, which DynamoDB refuses), but an update.
    table.update_reading({"sensorId": "s", "at": first}, {"at": first.replace(microsecond=400000), "value": 2})
    (reading,) = table.readings_between(sensorId="s", at=(first.replace(microsecond=0), first)).items
    assert reading["value"] == 2


def test_maps_and_lists_keep_every_value_type_they_can_hold(aws, tmp_path):
    kitchen = python_module(BLUEPRINTS["client"])
    name = table_of(aws, BLUEPRINTS["client"], tmp_path)
    table = kitchen.ClientKitchenTable(aws, name)
    meta = {"n": None, "s": {"b", "a"}, "ns": {2, 1}, "b": b"\x01\x02", "l": [None, 1, "x", {"deep": True}]}
    table.put_ticket(_ticket(meta=meta))
    stored = aws.get_item(TableName=name, Key={"PK": {"S": "PROJECT#p-1"}, "SK": {"S": "TICKET#t-1"}})["Item"]
    assert stored["meta"] == {"M": {"n": {"NULL": True}, "s": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2"]},
                                    "b": {"B": b"\x01\x02"}, "l": {"L": [{"NULL": True}, {"N": "1"}, {"S": "x"},
                                                                         {"M": {"deep": {"BOOL": True}}}]}}}
    assert table.ticket(projectId="p-1", ticketId="t-1")["meta"] == meta
    with pytest.raises(ValueError, match="is not a value DynamoDB stores in a map or list"):
        table.put_ticket(_ticket(meta={"when": MOMENT}))


def test_epoch_milliseconds_are_exact(aws, tmp_path):
    """2004-09-18T13:12:28.120Z: 1,095,513,148 s since 1970 (calendar.timegm) and 120 ms; float arithmetic on
    `timestamp() * 1000` gives ...119."""
    import calendar

    moment = datetime(2004, 9, 18, 13, 12, 28, 120000, tzinfo=UTC)
    millis = calendar.timegm(moment.timetuple()) * 1000 + 120
    assert millis == 1095513148120
    kitchen = python_module(BLUEPRINTS["client"])
    assert kitchen._TICKET.stored["openedAt"](moment) == {"N": str(millis)}
    assert kitchen._TICKET.read["openedAt"]({"N": str(millis)}) == moment
    from tablewright.blueprint.encoding import stored_value

    assert stored_value(AttributeSpec(type="timestamp", format="epoch_millis"), moment) == {"N": str(millis)}
