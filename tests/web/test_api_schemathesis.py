"""The public API fuzzed against its own description (docs/openapi.json, served at /api/openapi.json) with
schemathesis: whatever the path parameters and query strings, no 500, and every answer matches the schema (status
code, content type, headers, body)."""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from notifier.config import ROOT

DOCUMENT = json.loads((ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))


def test_the_served_schema_is_the_documented_one(client):
    assert client.get("/api/openapi.json").get_json() == DOCUMENT


# schemathesis leaves out the operation serving the schema itself; the test above covers that one.
@pytest.mark.parametrize("path", sorted(set(DOCUMENT["paths"]) - {"/api/openapi.json"}))
def test_every_operation_answers_as_described_for_any_input(app, path):
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    operation = next(op for op in operations if op.path == path)

    statuses: list[int] = []

    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy())
    def answers_as_described(case) -> None:
        statuses.append(case.call_and_validate().status_code)  # raises when the answer breaks the schema

    answers_as_described()
    assert statuses and all(status < 500 for status in statuses)
