"""/metrics: Prometheus' text format, only for who may read it, with outbox figures that follow a fan-out."""

from __future__ import annotations

from datetime import timedelta

import pytest
from prometheus_client.parser import text_string_to_metric_families

from notifier import clock, create_app
from tests.conftest import NOW

TOKEN = "metrics-token-for-tests"  # noqa: S105 - a test value


def samples(response) -> dict[tuple[str, tuple], float]:
    """{(sample name, sorted labels): value} from a /metrics answer, read by prometheus_client's own parser."""
    assert response.status_code == 200, response.get_data(as_text=True)
    text = response.get_data(as_text=True)
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


@pytest.fixture
def fresh(app):
    """The app with the database figures read on every scrape (no cache)."""
    app.config["METRICS_CACHE_SECONDS"] = 0
    return app


def test_metrics_parse_with_prometheus_clients_parser_and_name_every_shared_figure(client):
    names = {name for name, _ in samples(client.get("/metrics"))}
    assert {"notifier_outbox_messages", "notifier_outbox_oldest_due_seconds", "notifier_sent_total",
            "notifier_channel_paused", "notifier_subscribers"} <= names


def test_metrics_are_never_cached_by_a_browser_or_proxy(client):
    assert client.get("/metrics").headers["Cache-Control"] == "no-store"


def test_metrics_without_a_token_answer_only_this_machine(client):
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "203.0.113.9"}).status_code == 403


def test_metrics_without_a_token_refuse_a_request_that_came_through_a_proxy(client):
    assert client.get("/metrics", headers={"X-Forwarded-For": "203.0.113.9"}).status_code == 403


def test_metrics_with_a_token_need_it_as_a_bearer(env):
    client = create_app({**env, "NOTIFIER_METRICS_TOKEN": TOKEN, "TESTING": True}).test_client()
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/metrics", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
    ok = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"},
                    environ_base={"REMOTE_ADDR": "203.0.113.9"})
    assert ok.status_code == 200


def test_request_latency_is_labelled_by_route_not_by_url(client):
    client.get("/boards/tdsb")
    found = samples(client.get("/metrics"))
    routes = {dict(labels).get("route") for name, labels in found if name == "notifier_request_duration_seconds_count"}
    assert "/boards/<board_id>" in routes
    assert "/boards/tdsb" not in routes


def test_a_method_a_client_made_up_adds_no_label_of_its_own(client):
    client.open("/boards/tdsb", method="BREW")
    found = samples(client.get("/metrics"))
    methods = {dict(labels).get("method") for name, labels in found
               if name == "notifier_request_duration_seconds_count"}
    assert "BREW" not in methods and "other" in methods


def test_outbox_gauges_move_during_a_fan_out_and_return_to_zero(fresh, run, subscribe, boards, sessions,
                                                                 fast_settings):
    client = fresh.test_client()
    for _ in range(3):
        subscribe()
    run()
    before = samples(client.get("/metrics"))
    boards.update("tdsb", status="closed")
    run(NOW + timedelta(minutes=1), deliver=False)
    during = samples(client.get("/metrics"))
    pending = ("notifier_outbox_messages", (("channel", "email"), ("state", "pending")))
    assert during[pending] == 3
    assert during[("notifier_outbox_messages", (("channel", "sms"), ("state", "pending")))] == 3
    assert during[("notifier_outbox_oldest_due_seconds", (("channel", "email"),))] > 0
    clock.send_due(fast_settings, sessions)
    after = samples(client.get("/metrics"))
    assert after[pending] == 0
    assert after[("notifier_outbox_oldest_due_seconds", (("channel", "email"),))] == 0
    sent = ("notifier_sent_total", (("channel", "email"),))
    assert after[sent] == before.get(sent, 0) + 3
    provider = ("notifier_provider_duration_seconds_count", (("channel", "email"), ("outcome", "sent")))
    assert after[provider] >= before.get(provider, 0) + 3


def test_database_figures_are_kept_a_few_seconds(client, subscribe):
    first = samples(client.get("/metrics"))
    subscribe()
    again = samples(client.get("/metrics"))
    active = ("notifier_subscribers", (("channel", "email"), ("state", "active")))
    assert again[active] == first[active]


def test_metrics_still_answer_when_the_database_does_not(fresh):
    from notifier.db import make_engine, make_sessionmaker

    services = fresh.extensions["notifier"]
    services.sessions = make_sessionmaker(make_engine("postgresql+psycopg://nobody@127.0.0.1:1/none"))
    found = samples(fresh.test_client().get("/metrics"))
    assert found[("notifier_database_up", ())] == 0
    assert not any(name == "notifier_outbox_messages" for name, _ in found)


def test_metrics_say_the_database_answered(client):
    assert samples(client.get("/metrics"))[("notifier_database_up", ())] == 1
