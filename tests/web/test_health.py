"""A broken boards.yaml never takes the site down: the last good state is served, and /healthz says so."""

from __future__ import annotations

import logging

import pytest

from notifier import create_app
from tests.web.conftest import visible_text

BROKEN = "boards:\n  - id: tdsb\n    status: strike\n"


def test_healthz_is_ok_when_the_file_is_valid_and_the_database_answers(client):
    body = client.get("/healthz").get_json()
    assert body["status"] == "ok"
    assert body["boards_file"]["valid"] is True and body["boards_file"]["boards"] == 72
    assert body["database"] == "ok"


def test_healthz_is_never_cached(client):
    assert client.get("/healthz").headers["Cache-Control"] == "no-store"


def test_an_invalid_edit_keeps_the_last_good_state_on_the_pages(client, boards, boards_file):
    boards.update("tdsb", status="closed")
    client.get("/boards/tdsb")
    boards_file.write_text(boards_file.read_text().replace("status: closed", "status: shut"))
    html = client.get("/boards/tdsb").get_data(as_text=True)
    assert "Schools are closed to students." in visible_text(html)
    assert len(client.get("/api/boards").get_json()["boards"]) == 72


def test_healthz_reports_degraded_with_each_problem_at_its_line(client, boards_file):
    text = boards_file.read_text()
    line = text.splitlines().index("    status: open") + 1
    boards_file.write_text(text.replace("    status: open", "    status: shut", 1))
    response = client.get("/healthz")
    body = response.get_json()
    assert response.status_code == 200
    assert body["status"] == "degraded"
    assert body["boards_file"]["serving"] == "last good version"
    assert body["boards_file"]["problems"] == [
        f"{boards_file}:{line}: boards.0.status: unknown status 'shut'; allowed: open, work-to-rule, closed"]


def test_the_log_says_the_last_good_state_is_served(client, boards_file, caplog):
    boards_file.write_text(boards_file.read_text().replace("    status: open", "    status: shut", 1))
    with caplog.at_level(logging.ERROR, logger="notifier.status.store"):
        client.get("/")
    assert "boards file invalid, serving the last good state" in caplog.text
    assert f"{boards_file}:" in caplog.text


def test_healthz_is_ok_again_once_the_file_is_fixed(client, boards_file):
    good = boards_file.read_text()
    boards_file.write_text(BROKEN)
    assert client.get("/healthz").get_json()["status"] == "degraded"
    boards_file.write_text(good)
    assert client.get("/healthz").get_json()["status"] == "ok"


def test_an_invalid_hand_edit_at_start_up_serves_the_last_published_version(env, runner, boards, boards_file):
    boards.update("tdsb", status="closed")
    runner.invoke("tick")  # the clock records every board's state
    boards_file.write_text(BROKEN)
    app = create_app({**env, "TESTING": True})
    client = app.test_client()
    try:
        assert "Schools are closed to students." in visible_text(client.get("/boards/tdsb").get_data(as_text=True))
        assert len(client.get("/api/boards").get_json()["boards"]) == 72
        body = client.get("/healthz").get_json()
        assert body["status"] == "degraded"
        assert body["boards_file"]["serving"] == "last good version"
        assert f"{boards_file}:3: boards.0.status: unknown status 'strike'; allowed: open, work-to-rule, closed" \
            in body["boards_file"]["problems"]
    finally:
        app.extensions["notifier"].engine.dispose()


def test_an_invalid_file_at_start_up_with_nothing_recorded_answers_503_in_plain_words(env, boards_file):
    boards_file.write_text(BROKEN)
    app = create_app({**env, "TESTING": True})
    client = app.test_client()
    try:
        page = client.get("/", headers={"Accept-Language": "fr"})
        assert page.status_code == 503 and page.headers["Retry-After"] == "60"
        assert "Statut temporairement indisponible" in visible_text(page.get_data(as_text=True))
        health = client.get("/healthz")
        assert health.status_code == 503 and health.get_json()["status"] == "failing"
    finally:
        app.extensions["notifier"].engine.dispose()


ELSEWHERE = {"REMOTE_ADDR": "203.0.113.7"}


def test_healthz_from_another_machine_says_only_the_state(client):
    response = client.get("/healthz", environ_base=ELSEWHERE)
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok"}
    assert response.headers["Cache-Control"] == "no-store"


def test_healthz_from_another_machine_shows_no_path_nor_problem_when_degraded(client, boards_file):
    boards_file.write_text(BROKEN)
    response = client.get("/healthz", environ_base=ELSEWHERE)
    assert response.status_code == 200
    assert response.get_json() == {"status": "degraded"}
    assert str(boards_file.parent) not in response.get_data(as_text=True)


def test_healthz_from_another_machine_keeps_the_503_when_nothing_can_be_served(env, boards_file):
    boards_file.write_text(BROKEN)
    app = create_app({**env, "TESTING": True})
    try:
        response = app.test_client().get("/healthz", environ_base=ELSEWHERE)
        assert response.status_code == 503 and response.get_json() == {"status": "failing"}
    finally:
        app.extensions["notifier"].engine.dispose()


@pytest.mark.parametrize("header", [{"X-Forwarded-For": "203.0.113.7"}, {"Forwarded": "for=203.0.113.7"}])
def test_healthz_through_a_proxy_on_this_machine_says_only_the_state(client, header):
    assert client.get("/healthz", headers=header).get_json() == {"status": "ok"}


def test_healthz_gives_the_details_to_a_caller_with_the_health_token(env):
    app = create_app({**env, "TESTING": True, "NOTIFIER_HEALTH_TOKEN": "s3cret-health-token"})
    try:
        body = app.test_client().get("/healthz", environ_base=ELSEWHERE,
                                     headers={"Authorization": "Bearer s3cret-health-token",
                                              "X-Forwarded-For": "203.0.113.7"}).get_json()
        assert body["status"] == "ok" and body["database"] == "ok" and "boards_file" in body
    finally:
        app.extensions["notifier"].engine.dispose()


def test_healthz_with_a_wrong_token_says_only_the_state(env):
    app = create_app({**env, "TESTING": True, "NOTIFIER_HEALTH_TOKEN": "s3cret-health-token"})
    try:
        body = app.test_client().get("/healthz", environ_base=ELSEWHERE,
                                     headers={"Authorization": "Bearer s3cret-health-tokem"}).get_json()
        assert body == {"status": "ok"}
    finally:
        app.extensions["notifier"].engine.dispose()


def test_healthz_without_a_configured_token_refuses_an_empty_bearer(client):
    body = client.get("/healthz", environ_base=ELSEWHERE, headers={"Authorization": "Bearer "}).get_json()
    assert body == {"status": "ok"}
