"""The emulator's consumed capacity (modules/tablewright/local/capacity.py), pinned to figures worked out by hand
from DynamoDB's rules: item sizes (CapacityUnitCalculations.html), write and read units
(read-write-operations.html), index entries (GSI.html#GSI.ThroughputConsiderations.Writes) and transactions
(transaction-apis.html). And its item operations, atomic as DynamoDB's."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.support.emulator import Emulator

pytestmark = pytest.mark.terraform  # the emulator: the slow tier

TABLE = "capacity"
KEY_BYTES = 7  # "PK" + "P1" (4 bytes) and "SK" + "S" (3 bytes)


@pytest.fixture(scope="module")
def dynamodb():
    with Emulator() as emulator:
        client = emulator.client("dynamodb")
        client.create_table(
            TableName=TABLE, BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"}
                                  for name in ("PK", "SK", "GSI1PK", "GSI1SK")],
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
            GlobalSecondaryIndexes=[{
                "IndexName": "GSI1", "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["tag"]},
                "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"},
                              {"AttributeName": "GSI1SK", "KeyType": "RANGE"}]}])
        yield client


def key(name: str) -> dict[str, Any]:
    assert len(name) == 2
    return {"PK": {"S": name}, "SK": {"S": "S"}}


def sized(name: str, size: int, **attributes: str) -> dict[str, Any]:
    """An item of exactly `size` bytes: its key, `attributes` (strings) and `d` filling the rest."""
    item = {**key(name), **{attribute: {"S": value} for attribute, value in attributes.items()}}
    used = KEY_BYTES + sum(len(attribute) + len(value) for attribute, value in attributes.items()) + len("d")
    return {**item, "d": {"S": "x" * (size - used)}}


def put(client: Any, item: dict[str, Any], mode: str = "TOTAL") -> dict[str, Any]:
    return client.put_item(TableName=TABLE, Item=item, ReturnConsumedCapacity=mode)["ConsumedCapacity"]


def update(client: Any, name: str, expression: str, values: dict[str, str], mode: str = "TOTAL") -> dict[str, Any]:
    values_ = {"ExpressionAttributeValues": {k: {"S": v} for k, v in values.items()}} if values else {}
    return client.update_item(TableName=TABLE, Key=key(name), UpdateExpression=expression,
                              ReturnConsumedCapacity=mode, **values_)["ConsumedCapacity"]


def test_a_write_costs_its_size_per_kb_the_larger_of_before_and_after(dynamodb):
    assert put(dynamodb, sized("P1", 1536)) == {"TableName": TABLE, "CapacityUnits": 2.0}  # 1.5 KB: 2
    assert put(dynamodb, sized("P2", 1024)) == {"TableName": TABLE, "CapacityUnits": 1.0}  # exactly 1 KB: 1
    dynamodb.put_item(TableName=TABLE, Item=sized("P3", 900))
    assert update(dynamodb, "P3", "SET d = :d", {":d": "x" * (1100 - KEY_BYTES - 1)})["CapacityUnits"] == 2.0
    assert update(dynamodb, "P3", "SET d = :d", {":d": "x"})["CapacityUnits"] == 2.0  # 1,100 B shrinks to 9 B
    assert put(dynamodb, sized("P3", 100))["CapacityUnits"] == 1.0  # replaces the 9 B item
    assert dynamodb.delete_item(TableName=TABLE, Key=key("P1"), ReturnConsumedCapacity="TOTAL")[
        "ConsumedCapacity"]["CapacityUnits"] == 2.0  # the deleted item's size
    assert dynamodb.delete_item(TableName=TABLE, Key=key("P9"), ReturnConsumedCapacity="TOTAL")[
        "ConsumedCapacity"]["CapacityUnits"] == 1.0  # nothing to delete: 1


def test_numbers_and_binaries_are_sized_as_dynamodb_sizes_them(dynamodb):
    binary = {**key("B1"), "b": {"B": bytes(1016)}}  # 7 + 1 + 1,016 raw bytes = 1 KB (base64 on the wire: 1,356)
    assert put(dynamodb, binary)["CapacityUnits"] == 1.0
    number = {**sized("N1", 1024 - 5), "n": {"N": "12300"}}  # "n" + 3 significant digits: 1 + (2 + 1) = 4 bytes
    assert put(dynamodb, number)["CapacityUnits"] == 1.0
    number["n"] = {"N": "12345"}  # 5 significant digits: 3 + 1 = 4 bytes, 1 + 4 = 5: 1,024 bytes
    assert put(dynamodb, number)["CapacityUnits"] == 1.0
    number["n"] = {"N": "1234567"}  # 7 digits: 4 + 1 = 5 bytes, 1 + 5 = 6: 1,025 bytes
    assert put(dynamodb, number)["CapacityUnits"] == 2.0


def test_each_index_entry_written_costs_its_own_size_per_kb(dynamodb):
    item = sized("G1", 1536, GSI1PK="g", GSI1SK="h")  # its GSI1 entry: the keys only, 21 bytes
    assert put(dynamodb, item, "INDEXES") == {"TableName": TABLE, "CapacityUnits": 3.0, "Table": {
        "CapacityUnits": 2.0}, "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1.0}}}
    moved = update(dynamodb, "G1", "SET GSI1PK = :v", {":v": "z"}, "INDEXES")  # an index key changes: delete, put
    assert moved["GlobalSecondaryIndexes"] == {"GSI1": {"CapacityUnits": 2.0}} and moved["CapacityUnits"] == 4.0
    assert update(dynamodb, "G1", "SET misc = :v", {":v": "y"}, "INDEXES") == {  # not projected: no index write
        "TableName": TABLE, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 2.0}}
    assert update(dynamodb, "G1", "SET tag = :v", {":v": "t" * 2000}, "INDEXES")[  # projected: the entry, 2 KB
        "GlobalSecondaryIndexes"] == {"GSI1": {"CapacityUnits": 2.0}}
    assert update(dynamodb, "G1", "REMOVE GSI1SK", {}, "TOTAL")["CapacityUnits"] == 4.0 + 2.0  # the entry leaves
    assert put(dynamodb, sized("G2", 500, GSI1PK="g"), "INDEXES") == {  # no GSI1SK: not in the index (sparse)
        "TableName": TABLE, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}}


def test_a_transaction_writes_twice_and_reports_each_table(dynamodb):
    dynamodb.put_item(TableName=TABLE, Item=sized("T3", 1024))
    answer = dynamodb.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": sized("T1", 512)}}],
                                           ReturnConsumedCapacity="TOTAL")
    assert answer["ConsumedCapacity"] == [{"TableName": TABLE, "CapacityUnits": 2.0}]  # 0.5 KB: 1, twice
    answer = dynamodb.transact_write_items(TransactItems=[
        {"Put": {"TableName": TABLE, "Item": sized("T2", 1536, GSI1PK="g", GSI1SK="h")}},  # 2 x 2 + 1 (GSI1)
        {"Delete": {"TableName": TABLE, "Key": key("T1")}},  # 2 x 1
        {"ConditionCheck": {"TableName": TABLE, "Key": key("T3"), "ConditionExpression": "attribute_exists(PK)"}},
    ], ReturnConsumedCapacity="INDEXES")  # the condition check: 2 x 1
    assert answer["ConsumedCapacity"] == [{"TableName": TABLE, "CapacityUnits": 9.0, "Table": {"CapacityUnits": 8.0},
                                           "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1.0}}}]


def test_a_read_costs_its_size_per_4_kb_halved_when_eventually_consistent(dynamodb):
    dynamodb.put_item(TableName=TABLE, Item=sized("R1", 5 * 1024))
    for consistent, units in ((True, 2.0), (False, 1.0)):
        assert dynamodb.get_item(TableName=TABLE, Key=key("R1"), ConsistentRead=consistent, ReturnConsumedCapacity=
                                 "TOTAL")["ConsumedCapacity"] == {"TableName": TABLE, "CapacityUnits": units}
        assert dynamodb.get_item(TableName=TABLE, Key=key("R9"), ConsistentRead=consistent, ReturnConsumedCapacity=
                                 "TOTAL")["ConsumedCapacity"]["CapacityUnits"] == units / 2  # missing: 1 or 0.5


def test_a_scan_costs_the_items_it_evaluates_filtered_or_not(dynamodb):
    client = dynamodb
    client.create_table(TableName="scanned", BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"},
                                              {"AttributeName": "SK", "AttributeType": "S"}],
                        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                                   {"AttributeName": "SK", "KeyType": "RANGE"}])
    for name in ("S1", "S2", "S3"):
        client.put_item(TableName="scanned", Item=sized(name, 3000))  # 9,000 bytes: 3 x 4 KB
    scans = [({}, 1.5), ({"ConsistentRead": True}, 3.0), ({"Limit": 1}, 0.5),
             ({"FilterExpression": "PK = :none", "ExpressionAttributeValues": {":none": {"S": "none"}}}, 1.5)]
    for arguments, units in scans:
        answer = client.scan(TableName="scanned", ReturnConsumedCapacity="TOTAL", **arguments)
        assert answer["ConsumedCapacity"] == {"TableName": "scanned", "CapacityUnits": units}, arguments
    assert len(client.scan(TableName="scanned", Limit=2)["Items"]) == 2  # moto's scan otherwise as it was
    assert "ConsumedCapacity" not in client.scan(TableName="scanned")


def test_a_failed_condition_reports_no_capacity_and_items_change_one_request_at_a_time(dynamodb):
    dynamodb.put_item(TableName=TABLE, Item=sized("F1", 100))
    with pytest.raises(ClientError) as raised:
        dynamodb.put_item(TableName=TABLE, Item=sized("F1", 100), ConditionExpression="attribute_not_exists(PK)",
                          ReturnConsumedCapacity="TOTAL")
    assert raised.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert "ConsumedCapacity" not in raised.value.response
    dynamodb.put_item(TableName=TABLE, Item={**key("C1"), "n": {"N": "0"}})

    def increment(times: int) -> None:  # read, then write conditioned on the value read: no increment is lost
        done = 0
        while done < times:
            value = dynamodb.get_item(TableName=TABLE, Key=key("C1"), ConsistentRead=True)["Item"]["n"]["N"]
            try:
                dynamodb.update_item(TableName=TABLE, Key=key("C1"), UpdateExpression="SET n = :new",
                                     ConditionExpression="n = :old", ExpressionAttributeValues={
                                         ":old": {"N": value}, ":new": {"N": str(int(value) + 1)}})
                done += 1
            except ClientError as error:
                assert error.response["Error"]["Code"] == "ConditionalCheckFailedException"

    threads = [threading.Thread(target=increment, args=(25,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert dynamodb.get_item(TableName=TABLE, Key=key("C1"), ConsistentRead=True)["Item"]["n"] == {"N": "100"}
