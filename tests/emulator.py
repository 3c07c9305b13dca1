"""An AWS emulator for end-to-end tests: moto's server, in-process on 127.0.0.1, plus shims for the
few calls the AWS provider makes that moto lacks. Each shim follows the AWS API reference.

Shims (listed in the README's testing section):
- DynamoDB UpdateContributorInsights / DescribeContributorInsights / ListContributorInsights:
  per table or GSI status ENABLED or DISABLED (ENABLING/DISABLING is reported once, then settles),
  ResourceNotFoundException for unknown tables or indexes.
- Application Auto Scaling ListTagsForResource / TagResource / UntagResource, and the `Tags` of
  RegisterScalableTarget (moto ignores them): tags per scalable target ARN.
- SSM documents of type ChangeCalendar in TEXT format (iCalendar): moto only stores JSON and YAML
  documents; TEXT change calendars are stored as given, as AWS does.
"""

from __future__ import annotations

import io
import json
import re
import threading
import urllib.request
from datetime import datetime, timezone
from typing import Any, Callable

from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import WSGIRequestHandler, make_server

SERVICES = ["dynamodb", "applicationautoscaling", "cloudwatch", "sns", "kms", "events", "ssm", "sts", "iam"]
REGION = "us-east-1"


def _allow_text_change_calendars() -> None:
    """moto validates SSM documents as JSON or YAML; AWS also accepts TEXT for ChangeCalendar."""
    from moto.ssm import models

    if getattr(models, "_tablewright_shim", False):
        return
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
            raise models.ValidationException("TEXT documents must be change calendars")
        original_init(self, account_id, name, version_name, '{"schemaVersion": "2.0"}', document_type, "JSON",
                      *args, **kwargs)
        self.content, self.document_format, self.content_json = content, "TEXT", {}

    models._validate_document_format = validate_format
    models.Document.__init__ = init
    models._tablewright_shim = True


class Shims:
    """Answers the JSON-protocol actions moto does not implement."""

    def __init__(self) -> None:
        self.insights: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.tags: dict[str, dict[str, str]] = {}
        self.handlers: dict[str, Callable[[dict, str], tuple[int, dict]]] = {
            "DynamoDB_20120810.UpdateContributorInsights": self.update_insights,
            "DynamoDB_20120810.DescribeContributorInsights": self.describe_insights,
            "DynamoDB_20120810.ListContributorInsights": self.list_insights,
            "AnyScaleFrontendService.ListTagsForResource": self.list_tags,
            "AnyScaleFrontendService.TagResource": self.tag,
            "AnyScaleFrontendService.UntagResource": self.untag,
        }

    @staticmethod
    def _table(region: str, name: str, index: str | None) -> tuple[int, dict] | None:
        from moto.dynamodb.models import dynamodb_backends

        table = dynamodb_backends[DEFAULT_ACCOUNT_ID][region].tables.get(name)
        indexes = [i.name for i in table.global_indexes] if table else []
        if table is None or (index and index not in indexes):
            return 400, {"__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
                         "message": f"Requested resource not found: {name}{'/index/' + index if index else ''}"}
        return None

    def update_insights(self, body: dict, region: str) -> tuple[int, dict]:
        name, index = body["TableName"], body.get("IndexName")
        missing = self._table(region, name, index)
        if missing:
            return missing
        enable = body["ContributorInsightsAction"] == "ENABLE"
        state = {"status": "ENABLING" if enable else "DISABLING", "mode": body.get("ContributorInsightsMode",
                                                                                "ACCESSED_AND_THROTTLED_KEYS")}
        self.insights[(region, name, index or "")] = state
        answer = {"TableName": name, "ContributorInsightsStatus": state["status"]}
        if index:
            answer["IndexName"] = index
        return 200, answer

    def describe_insights(self, body: dict, region: str) -> tuple[int, dict]:
        name, index = body["TableName"], body.get("IndexName")
        missing = self._table(region, name, index)
        if missing:
            return missing
        state = self.insights.get((region, name, index or ""), {"status": "DISABLED"})
        reported = state["status"]
        state["status"] = {"ENABLING": "ENABLED", "DISABLING": "DISABLED"}.get(reported, reported)
        answer: dict[str, Any] = {"TableName": name, "ContributorInsightsStatus": reported,
                                  "LastUpdateDateTime": datetime.now(timezone.utc).timestamp()}
        if index:
            answer["IndexName"] = index
        if reported in ("ENABLED", "ENABLING"):
            answer["ContributorInsightsMode"] = state["mode"]
            answer["ContributorInsightsRuleList"] = [f"DynamoDBContributorInsights-PKC-{name}-{index or ''}"]
        return 200, answer

    def list_insights(self, body: dict, region: str) -> tuple[int, dict]:
        wanted = body.get("TableName")
        summaries = [
            {"TableName": name, **({"IndexName": index} if index else {}), "ContributorInsightsStatus": state["status"]}
            for (where, name, index), state in sorted(self.insights.items())
            if where == region and (wanted is None or wanted == name)
        ]
        return 200, {"ContributorInsightsSummaries": summaries}

    def list_tags(self, body: dict, region: str) -> tuple[int, dict]:
        return 200, {"Tags": dict(self.tags.get(body["ResourceARN"], {}))}

    def tag(self, body: dict, region: str) -> tuple[int, dict]:
        self.tags.setdefault(body["ResourceARN"], {}).update(body.get("Tags", {}))
        return 200, {}

    def untag(self, body: dict, region: str) -> tuple[int, dict]:
        for key in body.get("TagKeys", []):
            self.tags.get(body["ResourceARN"], {}).pop(key, None)
        return 200, {}

    def _register_target(self, app: Callable, environ: dict, start_response: Callable, body: dict) -> Any:
        """Let moto register the target, then keep the tags the request carried."""
        captured: dict[str, Any] = {}

        def capture(status: str, headers: list, exc_info: Any = None) -> Any:
            captured.update(status=status, headers=headers)
            return lambda data: None

        payload = b"".join(app(environ, capture))
        if captured["status"].startswith("200") and body.get("Tags"):
            self.tags.setdefault(json.loads(payload)["ScalableTargetARN"], {}).update(body["Tags"])
        start_response(captured["status"], captured["headers"])
        return [payload]

    def __call__(self, app: Callable) -> Callable:
        def middleware(environ: dict, start_response: Callable) -> Any:
            target = environ.get("HTTP_X_AMZ_TARGET", "")
            if target not in self.handlers and target != "AnyScaleFrontendService.RegisterScalableTarget":
                return app(environ, start_response)
            length = int(environ.get("CONTENT_LENGTH") or 0)
            raw = environ["wsgi.input"].read(length)
            body = json.loads(raw or b"{}")
            if target == "AnyScaleFrontendService.RegisterScalableTarget":
                environ["wsgi.input"] = io.BytesIO(raw)
                return self._register_target(app, environ, start_response, body)
            handler = self.handlers[target]
            match = re.search(r"Credential=[^/]+/\d+/([a-z0-9-]+)/", environ.get("HTTP_AUTHORIZATION", ""))
            status, answer = handler(body, match.group(1) if match else REGION)
            payload = json.dumps(answer).encode()
            start_response(f"{status} {'OK' if status == 200 else 'Bad Request'}",
                           [("Content-Type", "application/x-amz-json-1.0"), ("Content-Length", str(len(payload)))])
            return [payload]

        return middleware


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, *args: Any) -> None:
        pass


class Emulator:
    """moto's server with the shims, on a free port of 127.0.0.1, in a background thread."""

    def __init__(self) -> None:
        _allow_text_change_calendars()
        self.shims = Shims()
        app = self.shims(DomainDispatcherApplication(create_backend_app))
        self.server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=_QuietHandler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        # moto's backends live in this process: start from nothing, whatever ran before.
        urllib.request.urlopen(urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST")).close()

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join()

    def client(self, service: str) -> Any:
        import boto3

        return boto3.client(service, endpoint_url=self.endpoint, region_name=REGION,
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    def provider_override(self) -> dict[str, Any]:
        """A `*_override.tf.json` provider block that points the AWS provider at the emulator."""
        return {"provider": {"aws": [{
            "region": REGION,
            "access_key": "testing",
            "secret_key": "testing",
            "skip_credentials_validation": True,
            "skip_metadata_api_check": True,
            "skip_region_validation": True,
            "endpoints": [{service: self.endpoint for service in SERVICES}],
        }]}}
