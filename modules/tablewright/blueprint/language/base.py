"""Names, bounds and the strict base model every part of the blueprint language shares."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

BlueprintName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,62}$")]
EntityName = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Za-z0-9]{0,63}$")]
AttributeName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")]
PatternName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
# DynamoDB's own rules for index names and attribute names a table already uses (`adopt`); the names
# Tablewright plans itself (`GSI<n>`, `PK`) and entity attributes follow the narrower rules above.
IndexName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{3,255}$")]
KeyAttributeName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,255}$")]
TableName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{3,255}$")]
SEMVER = r"^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$"
SemVer = Annotated[str, StringConstraints(max_length=64, pattern=SEMVER)]

AttributeType = Literal["string", "number", "timestamp", "date", "boolean", "map", "list", "string_set",
                        "number_set", "binary"]
# The scalar types a key, a key condition or a filter can use; the others are document values.
KEY_TYPES = ("string", "number", "timestamp", "date", "boolean")
Operator = Literal["=", "<", "<=", ">", ">=", "between", "begins_with"]
ContributorInsightsMode = Literal["off", "throttled_keys", "accessed_and_throttled_keys"]
RANGE_OPERATORS = ("<", "<=", ">", ">=", "between", "begins_with")


# Attribute names the generated items use for keys and bookkeeping; user attributes may not take them.
RESERVED_ATTRIBUTE = re.compile(r"^(PK|SK|GSI[0-9]+(PK|SK)|_.*)$")


# Bounds that keep every figure realistic and every loop small (blueprints are untrusted input).
MAX_RATE = 10_000_000  # requests or writes per second
# Keys per BatchGetItem request (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html)
BATCH_GET_LIMIT = 100
MAX_CAPACITY = 1_000_000  # capacity units (AWS's default quota is 40,000 per table)
MAX_COOLDOWN = 86_400  # seconds
MAX_ENTITIES = 100
MAX_ATTRIBUTES = 200
MAX_PATTERNS = 1_000
MAX_INDEXES = 25  # 20 global + 5 local: DynamoDB's limits
MAX_EXAMPLES = 100
MAX_NOTIFY_TARGETS = 5  # CloudWatch alarm actions per state and EventBridge targets per rule
# Alarm kinds whose metrics DynamoDB publishes every five minutes (Developer Guide, "DynamoDB metrics and
# dimensions": only the throttle, error, latency, consumed-capacity and request metrics are per minute).
PUBLISHED_EVERY = {"utilization": 300, "online_index_throttles": 300, "account_utilization": 300}
PUBLISHED_METRICS = {"utilization": "Provisioned*CapacityUnits", "online_index_throttles": "OnlineIndexThrottleEvents",
                     "account_utilization": "AccountProvisioned*CapacityUtilization"}
REGION = r"^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$"
KMS_KEY_ARN = r"^arn:aws[a-z-]*:kms:[a-z]{2}(-[a-z]+)+-[0-9]{1,2}:[0-9]{12}:(key|alias)/[A-Za-z0-9/_-]{1,256}$"
S3_BUCKET = r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$"
Region = Annotated[str, StringConstraints(pattern=REGION)]


class Strict(BaseModel):
    # strict: `limit: true` is not 1, `limit: 2.5` is not 2; allow_inf_nan: every figure is finite.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)
