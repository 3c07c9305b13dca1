"""A local AWS (`tablewright local`, `tablewright.testing`, the end-to-end tests): moto's server, in-process on
127.0.0.1, plus shims for the few calls the AWS provider makes that moto lacks. Each shim follows the AWS API
reference.

Shims:
- DynamoDB UpdateContributorInsights / DescribeContributorInsights / ListContributorInsights:
  per table or GSI status ENABLED or DISABLED (ENABLING/DISABLING is reported once, then settles),
  ResourceNotFoundException for unknown tables or indexes.
- Application Auto Scaling ListTagsForResource / TagResource / UntagResource, and the `Tags` of
  RegisterScalableTarget (moto ignores them): tags per scalable target ARN.
- SSM documents of type ChangeCalendar in TEXT format (iCalendar): moto only stores JSON and YAML
  documents; TEXT change calendars are stored as given, as AWS does.
- DynamoDB `OnDemandThroughput` of tables and GSIs (CreateTable, UpdateTable, DescribeTable): moto
  ignores it; the table and each GSI keep what CreateTable or UpdateTable set and describe it back.
- CloudTrail StartLogging, StopLogging and DeleteTrail by trail ARN (the AWS provider passes the ARN,
  which the API accepts; moto looks trails up by name only there).
- DynamoDB `ConsumedCapacity` computed by DynamoDB's rules (moto reports fixed figures), item operations
  one at a time (atomic, as DynamoDB's): `capacity.py`.

Isolation: every `Emulator` starts and stops with moto's in-process backends empty, and puts back
the moto functions it patches when it stops (use it as a context manager). Within one emulator,
`new_account()` gives a fresh AWS account: credentials of that account (`provider_override`,
`client`) reach only its resources, so tests that change what they applied work on their own copy.
moto's backends are per process, so one emulator runs at a time (a second is refused).
"""

from __future__ import annotations

import errno
import io
import itertools
import json
import os
import re
import socket
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import WSGIRequestHandler, make_server

from tablewright.errors import ErrorCode, TablewrightError

# Every service a synthesized stack calls (the AWS provider's endpoints for them all point at the emulator).
SERVICES = ["dynamodb", "applicationautoscaling", "cloudwatch", "sns", "kms", "events", "ssm", "sts", "iam", "s3",
            "cloudtrail"]
REGION = "us-east-1"
LOOPBACK = "127.0.0.1"


ACCESS_KEY = "testing"  # the default account; `testing<12 digits>` is that account (see `Shims.__call__`)
_ACCOUNT_KEY = re.compile(r"^testing(\d{12})$")
_CREDENTIAL = re.compile(r"Credential=([^/]+)/\d+/([a-z0-9-]+)/")

_running = threading.Lock()  # held while an emulator runs: moto's backends are per process
_patch_undo: list[Callable[[], None]] = []
Body = dict[str, Any]  # a JSON request or answer
Answer = tuple[int, Body]
WSGIApp = Callable[..., Any]


def _patch_moto() -> None:
    """Patch moto for the emulator; `_unpatch_moto` puts everything back."""
    from tablewright.local.capacity import report_consumed_capacity

    _patch_undo.extend([*_allow_text_change_calendars(), *_keep_on_demand_throughput(), *_trails_by_arn(),
                        *report_consumed_capacity()])


def _unpatch_moto() -> None:
    while _patch_undo:
        _patch_undo.pop()()


def _replace(owner: Any, name: str, value: Any) -> Callable[[], None]:
    """Set `owner.name` to `value`; returns what puts the original back (a class's own attribute as it was, a
    staticmethod included)."""
    original = vars(owner)[name]
    setattr(owner, name, value)
    return lambda: setattr(owner, name, original)


def _allow_text_change_calendars() -> list[Callable[[], None]]:
    """moto validates SSM documents as JSON or YAML; AWS also accepts TEXT for ChangeCalendar.
    Returns the undos."""
    from moto.ssm import models
    from moto.ssm.exceptions import ValidationException

    validate = models._validate_document_format
    original_init = models.Document.__init__

    def validate_format(document_format: str) -> None:
        if document_format != "TEXT":
            validate(document_format)

    def init(self: Any, account_id: str, name: str, version_name: str, content: str, document_type: str,
             document_format: str, *args: Any, **kwargs: Any) -> None:
        if document_format != "TEXT":
            return original_init(self, account_id, name, version_name, content, document_type, document_format,
                                 *args, **kwargs)
        if document_type != "ChangeCalendar":
            raise ValidationException("TEXT documents must be change calendars")
        original_init(self, account_id, name, version_name, '{"schemaVersion": "2.0"}', document_type, "JSON",
                      *args, **kwargs)
        self.content, self.document_format, self.content_json = content, "TEXT", {}

    return [_replace(models, "_validate_document_format", validate_format),
            _replace(models.Document, "__init__", init)]


def _keep_on_demand_throughput() -> list[Callable[[], None]]:
    """moto drops `OnDemandThroughput` (the maximum request units of an on-demand table or GSI): keep what
    CreateTable and UpdateTable set, and describe it back as DynamoDB does. Returns the undos."""
    from moto.dynamodb.models import table as tables
    from moto.dynamodb.responses import DynamoHandler

    gsi: Any = tables.GlobalSecondaryIndex
    handler: Any = DynamoHandler
    create_gsi, update_gsi, describe_gsi = gsi.create, gsi.update, gsi.describe
    describe_table: Any = tables.Table.describe

    def create(dct: dict[str, Any], table_key_attrs: list[str]) -> Any:
        index = create_gsi(dct, table_key_attrs)
        index.on_demand_throughput = dct.get("OnDemandThroughput")
        return index

    def update(self: Any, u: dict[str, Any]) -> None:
        update_gsi(self, u)
        if "OnDemandThroughput" in u:
            self.on_demand_throughput = u["OnDemandThroughput"]

    def described_gsi(self: Any) -> Any:
        answer = describe_gsi(self)
        if getattr(self, "on_demand_throughput", None):
            answer["OnDemandThroughput"] = self.on_demand_throughput
        return answer

    def described_table(self: Any, base_key: str = "TableDescription") -> Any:
        answer = describe_table(self, base_key)
        if getattr(self, "on_demand_throughput", None):
            answer[base_key]["OnDemandThroughput"] = self.on_demand_throughput
        return answer

    def keeping(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """CreateTable or UpdateTable as moto does it, then the table's `OnDemandThroughput` kept and the
        answer described again with it."""
        def call(self: Any) -> Any:
            from moto.dynamodb.responses import DynamoResult

            result = original(self)
            body = self.body  # moto's parsed request
            if "OnDemandThroughput" not in body:
                return result
            table = self.dynamodb_backend.tables[body["TableName"]]
            table.on_demand_throughput = body["OnDemandThroughput"]
            return DynamoResult(table.describe())
        return call

    return [_replace(gsi, "create", staticmethod(create)), _replace(gsi, "update", update),
            _replace(gsi, "describe", described_gsi), _replace(tables.Table, "describe", described_table),
            _replace(handler, "create_table", keeping(handler.create_table)),
            _replace(handler, "update_table", keeping(handler.update_table))]


def _trails_by_arn() -> list[Callable[[], None]]:
    """moto's StartLogging, StopLogging and DeleteTrail take a trail's name only; AWS also takes its ARN.
    Returns the undos."""
    from moto.cloudtrail.models import CloudTrailBackend

    def by_name(method: Callable[[Any, str], None]) -> Callable[[Any, str], None]:
        def call(self: Any, name: str) -> None:
            if name.startswith("arn:"):
                name = self.get_trail(name).trail_name
            method(self, name)
        return call

    return [_replace(CloudTrailBackend, name, by_name(getattr(CloudTrailBackend, name)))
            for name in ("start_logging", "stop_logging", "delete_trail")]


def _reset_moto() -> None:
    """Empty every moto backend of this process (what `POST /moto-api/reset` does)."""
    from moto.moto_api._internal.models import moto_api_backend

    moto_api_backend.reset()


class Shims:
    """Answers the JSON-protocol actions moto does not implement."""

    def __init__(self) -> None:
        self.insights: dict[tuple[str, str, str, str], dict[str, Any]] = {}  # (account, region, table, index)
        self.tags: dict[tuple[str, str], dict[str, str]] = {}  # (account, scalable target ARN)
        self.handlers: dict[str, Callable[[Body, str, str], Answer]] = {
            "DynamoDB_20120810.UpdateContributorInsights": self.update_insights,
            "DynamoDB_20120810.DescribeContributorInsights": self.describe_insights,
            "DynamoDB_20120810.ListContributorInsights": self.list_insights,
            "AnyScaleFrontendService.ListTagsForResource": self.list_tags,
            "AnyScaleFrontendService.TagResource": self.tag,
            "AnyScaleFrontendService.UntagResource": self.untag,
        }

    @staticmethod
    def _table(account: str, region: str, name: str, index: str | None) -> Answer | None:
        from moto.dynamodb.models import dynamodb_backends

        table = dynamodb_backends[account][region].tables.get(name)
        indexes = [i.name for i in table.global_indexes] if table else []
        if table is None or (index and index not in indexes):
            return 400, {"__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
                         "message": f"Requested resource not found: {name}{'/index/' + index if index else ''}"}
        return None

    def update_insights(self, body: Body, region: str, account: str) -> Answer:
        name, index = body["TableName"], body.get("IndexName")
        missing = self._table(account, region, name, index)
        if missing:
            return missing
        enable = body["ContributorInsightsAction"] == "ENABLE"
        state = {"status": "ENABLING" if enable else "DISABLING", "mode": body.get("ContributorInsightsMode",
                                                                                "ACCESSED_AND_THROTTLED_KEYS")}
        self.insights[(account, region, name, index or "")] = state
        answer = {"TableName": name, "ContributorInsightsStatus": state["status"]}
        if index:
            answer["IndexName"] = index
        return 200, answer

    def describe_insights(self, body: Body, region: str, account: str) -> Answer:
        name, index = body["TableName"], body.get("IndexName")
        missing = self._table(account, region, name, index)
        if missing:
            return missing
        state = self.insights.get((account, region, name, index or ""), {"status": "DISABLED"})
        reported = state["status"]
        state["status"] = {"ENABLING": "ENABLED", "DISABLING": "DISABLED"}.get(reported, reported)
        answer: dict[str, Any] = {"TableName": name, "ContributorInsightsStatus": reported,
                                  "LastUpdateDateTime": datetime.now(UTC).timestamp()}
        if index:
            answer["IndexName"] = index
        if reported in ("ENABLED", "ENABLING"):
            answer["ContributorInsightsMode"] = state["mode"]
            answer["ContributorInsightsRuleList"] = [f"DynamoDBContributorInsights-PKC-{name}-{index or ''}"]
        return 200, answer

    def list_insights(self, body: Body, region: str, account: str) -> Answer:
        wanted = body.get("TableName")
        summaries = [
            {"TableName": name, **({"IndexName": index} if index else {}), "ContributorInsightsStatus": state["status"]}
            for (owner, where, name, index), state in sorted(self.insights.items())
            if (owner, where) == (account, region) and (wanted is None or wanted == name)
        ]
        return 200, {"ContributorInsightsSummaries": summaries}

    def list_tags(self, body: Body, region: str, account: str) -> Answer:
        return 200, {"Tags": dict(self.tags.get((account, body["ResourceARN"]), {}))}

    def tag(self, body: Body, region: str, account: str) -> Answer:
        self.tags.setdefault((account, body["ResourceARN"]), {}).update(body.get("Tags", {}))
        return 200, {}

    def untag(self, body: Body, region: str, account: str) -> Answer:
        for key in body.get("TagKeys", []):
            self.tags.get((account, body["ResourceARN"]), {}).pop(key, None)
        return 200, {}

    def _register_target(self, app: WSGIApp, environ: Body, start_response: WSGIApp, body: Body,
                         account: str) -> Any:
        """Let moto register the target, then keep the tags the request carried."""
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            captured.update(status=status, headers=headers)
            return lambda data: None

        payload = b"".join(app(environ, capture))
        if captured["status"].startswith("200") and body.get("Tags"):
            self.tags.setdefault((account, json.loads(payload)["ScalableTargetARN"]), {}).update(body["Tags"])
        start_response(captured["status"], captured["headers"])
        return [payload]

    def __call__(self, app: WSGIApp) -> WSGIApp:
        def middleware(environ: Body, start_response: WSGIApp) -> Any:
            # The account is the one the access key names (moto reads it from `x-moto-account-id`).
            credential = _CREDENTIAL.search(environ.get("HTTP_AUTHORIZATION", ""))
            in_account = _ACCOUNT_KEY.match(credential.group(1)) if credential else None
            account = in_account.group(1) if in_account else DEFAULT_ACCOUNT_ID
            if in_account:
                environ["HTTP_X_MOTO_ACCOUNT_ID"] = account
            target = environ.get("HTTP_X_AMZ_TARGET", "")
            if target not in self.handlers and target != "AnyScaleFrontendService.RegisterScalableTarget":
                return app(environ, start_response)
            length = int(environ.get("CONTENT_LENGTH") or 0)
            raw = environ["wsgi.input"].read(length)
            body = json.loads(raw or b"{}")
            if target == "AnyScaleFrontendService.RegisterScalableTarget":
                environ["wsgi.input"] = io.BytesIO(raw)
                return self._register_target(app, environ, start_response, body, account)
            handler = self.handlers[target]
            status, answer = handler(body, credential.group(2) if credential else REGION, account)
            payload = json.dumps(answer).encode()
            start_response(f"{status} {'OK' if status == 200 else 'Bad Request'}",
                           [("Content-Type", "application/x-amz-json-1.0"), ("Content-Length", str(len(payload)))])
            return [payload]

        return middleware


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, *args: Any) -> None:
        pass


def _serve(app: WSGIApp, host: str, port: int) -> Any:
    """The HTTP server on a socket bound here (werkzeug would exit the process on a port in use); a port in use is
    the user's to change."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind((host, port))
        listener.listen(128)
    except OSError as error:
        listener.close()
        hint = ("ports below 1024 need privileges: pass another --port (default 4566)"
                if error.errno == errno.EACCES else
                "another program holds the port (a running `tablewright local`, LocalStack?): stop it, or pass "
                "another --port")
        raise TablewrightError(f"cannot serve on {host}:{port}: {error.strerror or error}", code=ErrorCode.LOCAL_SERVER,
                               hint=hint) from None
    try:
        return make_server(host, port, app, threaded=True, request_handler=_QuietHandler, fd=listener.fileno())
    finally:
        listener.close()  # the server serves a duplicate of it


# Proxies would carry the emulator's own 127.0.0.1 traffic away.
PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy")


def _owned(name: str) -> bool:
    """A variable the emulator sets aside while it runs: every AWS_* (profiles, keys, config files, retries,
    endpoints) and the proxies."""
    return name.startswith("AWS_") or name in PROXIES


def _isolate_environment() -> dict[str, str]:
    """This process's AWS configuration and proxies set aside (a missing profile, a broken config file or a proxy
    would break the emulator's own clients, and no real key may reach it); returns them, for `_restore`."""
    saved = {name: value for name, value in os.environ.items() if _owned(name)}
    for name in saved:
        del os.environ[name]
    os.environ.update(NO_PROXY=LOOPBACK, no_proxy=LOOPBACK)
    return saved


def _restore_environment(saved: dict[str, str]) -> None:
    for name in [name for name in os.environ if _owned(name)]:
        del os.environ[name]
    os.environ.update(saved)


def exports(endpoint: str, region: str) -> dict[str, str]:
    """The variables that point the AWS CLI, the SDKs and Terraform at the emulator (it takes any credentials)."""
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": region, "AWS_DEFAULT_REGION": region}


def check_address(host: str, port: int) -> None:
    """The emulator serves this machine only: 127.0.0.1 (`localhost` is refused too: it may resolve elsewhere)."""
    if host != LOOPBACK:
        raise TablewrightError(f"--host {host}: the emulator serves 127.0.0.1 only (it has no authentication)",
                               code=ErrorCode.LOCAL_SERVER, hint="leave out --host; reach it through an SSH tunnel "
                                                                  "if another machine needs it")
    if not 0 <= port <= 65535:
        raise TablewrightError(f"--port {port} is not a TCP port", code=ErrorCode.LOCAL_SERVER,
                               hint="pass 1024-65535 (default 4566), or 0 for any free port")


class Emulator:
    """moto's server with the shims on 127.0.0.1 (`port` 0: a free one), in a background thread.

    `with Emulator() as emulator:` (or `stop()`): stopping shuts the server down, empties moto's
    backends again and restores what `_patch_moto` changed, so nothing outlives the emulator."""

    def __init__(self, port: int = 0, host: str = LOOPBACK) -> None:
        check_address(host, port)
        if not _running.acquire(blocking=False):
            raise TablewrightError("an emulator already runs in this process (moto keeps one set of backends)",
                                   code=ErrorCode.LOCAL_SERVER, hint="stop the other one first, or share it")
        self.environment = _isolate_environment()  # put back when it stops
        try:
            _patch_moto()
            # moto's backends live in this process: start from nothing, whatever ran before.
            _reset_moto()
            self.shims = Shims()
            app = self.shims(DomainDispatcherApplication(create_backend_app))
            self.server = _serve(app, host, port)
        except BaseException:
            _unpatch_moto()
            _restore_environment(self.environment)
            _running.release()
            raise
        self.endpoint = f"http://{host}:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.accounts = itertools.count(1)
        self.stopped = False

    def __enter__(self) -> Emulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        try:
            self.server.shutdown()
            self.server.server_close()
            self.thread.join()
            _reset_moto()
        finally:
            _unpatch_moto()
            _restore_environment(self.environment)
            _running.release()

    def point_environment(self, region: str) -> dict[str, str]:
        """Point this process's AWS SDK clients made from now on at the emulator, until it stops; the variables."""
        variables = exports(self.endpoint, region)
        os.environ.update(variables)
        return variables

    def new_account(self) -> str:
        """A fresh AWS account id: nothing exists in it yet, and no other account sees what is made in it."""
        return f"{200000000000 + next(self.accounts)}"

    @staticmethod
    def access_key(account: str | None = None) -> str:
        return ACCESS_KEY if account is None else f"{ACCESS_KEY}{account}"

    def client(self, service: str, account: str | None = None, region: str = REGION) -> Any:
        """A boto3 client of `account` (default: moto's default account) in `region`."""
        import boto3

        make: Any = boto3.client  # any service, by name
        return make(service, endpoint_url=self.endpoint, region_name=region,
                            aws_access_key_id=self.access_key(account), aws_secret_access_key="testing")

    def provider_override(self, account: str | None = None) -> dict[str, Any]:
        """A `*_override.tf.json` provider block that points the AWS provider at the emulator, in `account`."""
        return provider_override(self.endpoint, self.access_key(account))


def provider_override(endpoint: str, access_key: str = ACCESS_KEY, region: str = REGION) -> dict[str, Any]:
    """The AWS provider pointed at the emulator, with dummy credentials and the checks that would reach AWS off
    (what LocalStack's `tflocal` writes)."""
    return {"provider": {"aws": [{
        "region": region,
        "access_key": access_key,
        "secret_key": "testing",
        "skip_credentials_validation": True,
        "skip_metadata_api_check": True,
        "skip_region_validation": True,
        "s3_use_path_style": True,  # buckets as paths of the emulator's one host
        "endpoints": [{service: endpoint for service in SERVICES}],
    }]}}
