"""The JSON API returns exactly what docs/openapi.json says, for every board."""

from __future__ import annotations

import json

import pytest

from notifier.config import ROOT
from tests.web.conftest import ALL_BOARD_IDS, OPENAPI, RICH_BOARD
from tests.web.schema import errors


def schema_errors(value, name: str) -> list[str]:
    return errors(value, {"$ref": f"#/components/schemas/{name}"}, OPENAPI)


def test_all_boards_are_listed_in_the_order_of_boards_yaml(client):
    body = client.get("/api/boards").get_json()
    assert [b["id"] for b in body["boards"]] == ALL_BOARD_IDS


def test_the_board_list_matches_the_openapi_schema(client, job_action):
    assert schema_errors(client.get("/api/boards").get_json(), "BoardList") == []


def test_every_board_matches_the_openapi_schema(client, job_action):
    for board_id in ALL_BOARD_IDS:
        response = client.get(f"/api/boards/{board_id}")
        assert response.status_code == 200, board_id
        assert schema_errors(response.get_json(), "BoardDetail") == [], board_id


def test_a_board_with_recorded_history_matches_the_openapi_schema(client, runner, boards):
    runner.invoke("tick")
    boards.update("tdsb", status="work-to-rule", panels={"secondary": "closed"},
                  withdrawals=[{"category": "transportation", "description": {"en": "No buses."}}])
    runner.invoke("tick")
    body = client.get("/api/boards/tdsb").get_json()
    assert {e["kind"] for e in body["history"]} == {"status", "panel_status", "withdrawal_added"}
    assert schema_errors(body, "BoardDetail") == []


def test_history_is_newest_first(client, runner, boards):
    runner.invoke("tick")
    boards.update("tdsb", status="work-to-rule")
    runner.invoke("tick")
    boards.update("tdsb", status="open")
    runner.invoke("tick")
    history = client.get("/api/boards/tdsb").get_json()["history"]
    assert [(e["before"], e["after"]) for e in history if e["kind"] == "status"] == \
        [("work-to-rule", "open"), ("open", "work-to-rule")]


def test_a_board_shows_each_panels_status_now_and_what_is_announced_ahead(client, job_action):
    boards = {b["id"]: b for b in client.get("/api/boards").get_json()["boards"]}
    assert boards[RICH_BOARD]["panels"] == {"elementary": "work-to-rule", "secondary": "closed"}
    assert boards[RICH_BOARD]["worst_status"] == "closed"
    assert boards[RICH_BOARD]["announced_ahead"] is False and boards[RICH_BOARD]["upcoming"] == []
    assert boards["peel"]["status"] == "open" and boards["peel"]["announced_ahead"] is True
    assert [p["status"] for p in boards["peel"]["upcoming"]] == ["closed"]
    assert boards["adsb"]["disrupted"] is False


def test_an_unknown_board_is_a_json_404_as_documented(client):
    response = client.get("/api/boards/atlantis")
    assert response.status_code == 404
    assert response.is_json and schema_errors(response.get_json(), "Error") == []


def test_the_openapi_document_is_served_as_it_is_in_the_repository(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    assert response.get_json() == json.loads((ROOT / "docs/openapi.json").read_text())


def test_the_openapi_document_is_version_3_1_and_describes_every_api_route(app):
    assert OPENAPI["openapi"].startswith("3.1")
    routes = {rule.rule.replace("<board_id>", "{board_id}") for rule in app.url_map.iter_rules()
              if rule.rule.startswith("/api/")}
    assert routes <= set(OPENAPI["paths"])


def test_the_health_response_matches_the_openapi_schema(client):
    assert schema_errors(client.get("/healthz").get_json(), "Health") == []


@pytest.mark.parametrize("bad, name", [
    ({"version": "x", "boards": [{"id": "tdsb"}]}, "BoardList"),
    ({"version": "x", "boards": [], "extra": 1}, "BoardList"),
    ({"error": "gone"}, "Error"),
])
def test_the_schema_check_rejects_responses_that_break_the_document(bad, name):
    assert schema_errors(bad, name) != []


@pytest.mark.parametrize("path", ["/api/boards?lang=AAA", "/api/boards/tdsb?lang=AAA", "/api/boards?lang="])
def test_a_language_the_api_does_not_offer_is_a_json_400_as_documented(client, path):
    response = client.get(path)
    assert response.status_code == 400
    assert response.is_json and schema_errors(response.get_json(), "Error") == []
    operation = OPENAPI["paths"]["/api/boards/{board_id}" if "tdsb" in path else "/api/boards"]["get"]
    assert "400" in operation["responses"]
