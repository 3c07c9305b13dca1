"""The embedded DynamoDB (moto, in-process) the generated Python modules run against."""

from __future__ import annotations

import pytest
from moto import mock_aws

from tests.support.client_support import dynamodb


@pytest.fixture
def aws(monkeypatch):
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        yield dynamodb()
