"""`python -m notifier webhooks add|list|remove`, and the checks every way of adding an endpoint goes through."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from notifier.config import Settings
from notifier.db import transaction
from notifier.staff import webhooks as manage
from notifier.staff.models import AuditEntry
from notifier.subscribers.webhooks import WebhookEndpoint, WebhookError

URL = "http://127.0.0.1:9/hooks"
SLACK = "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX"


def invoke(env, monkeypatch, *args: str):
    from notifier.cli import cli

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return CliRunner().invoke(cli, ["webhooks", *args])


def test_add_prints_the_id_and_the_secret_once(runner, sessions):
    result = runner.invoke("webhooks", "add", "--board", "tdsb", "--url", URL)
    assert result.exit_code == 0
    secret = re.search(r"whsec_[A-Za-z0-9+/=]+", result.output).group(0)
    with sessions() as session:
        endpoint = session.scalars(select(WebhookEndpoint)).one()
    assert endpoint.secret == secret and endpoint.public_id in result.output
    assert result.output.count("whsec_") == 1


def test_list_shows_no_secret_and_masks_the_url(runner, sessions):
    runner.invoke("webhooks", "add", "--board", "tdsb", "--url", SLACK, "--format", "slack", "--language", "fr",
                  "--panel", "secondary", "--owner", "it@bus.example")
    output = runner.invoke("webhooks", "list").output
    assert "whsec_" not in output and "XXXX" not in output and "T000" not in output
    assert "https://hooks.slack.com/…" in output and "slack" in output and "secondary" in output


def test_remove_takes_an_endpoint_away(runner, sessions):
    runner.invoke("webhooks", "add", "--board", "tdsb", "--url", URL)
    with sessions() as session:
        public_id = session.scalar(select(WebhookEndpoint.public_id))
    assert runner.invoke("webhooks", "remove", public_id).exit_code == 0
    with sessions() as session:
        assert session.scalars(select(WebhookEndpoint)).all() == []
        actions = session.scalars(select(AuditEntry.action)).all()
    assert actions == ["webhook_add", "webhook_remove"]


@pytest.mark.parametrize(("args", "said"), [
    (("--board", "nosuchboard", "--url", URL), "unknown board"),
    (("--board", "tdsb", "--url", "ftp://example.org/x"), "must start with https://"),
    (("--board", "tdsb", "--url", URL, "--format", "xml"), "unknown format"),
    (("--board", "tdsb", "--url", URL, "--panel", "middle"), "unknown panel"),
    (("--board", "tdsb", "--url", URL, "--language", "de"), "unknown language"),
    (("--board", "tdsb", "--url", URL, "--owner", "nobody"), "not an email address"),
])
def test_add_refuses_what_it_cannot_use_with_exit_code_2(env, monkeypatch, sessions, args, said):
    result = invoke(env, monkeypatch, "add", *args)
    assert result.exit_code == 2 and said in result.output
    with sessions() as session:
        assert session.scalars(select(WebhookEndpoint)).all() == []


def test_removing_an_unknown_id_says_so(env, monkeypatch):
    result = invoke(env, monkeypatch, "remove", "wh_nothing")
    assert result.exit_code == 2 and "no webhook wh_nothing" in result.output


# --- what production refuses (SSRF) ---------------------------------------------------------------------------


@pytest.fixture
def production(env) -> Settings:
    return Settings.from_env({**env, "NOTIFIER_WEBHOOKS_ALLOW_PRIVATE": "0"})


@pytest.mark.parametrize("url", [
    "http://93.184.216.34/hook",  # not https
    "https://127.0.0.1/hook",
    "https://localhost/hook",
    "https://10.0.0.5/hook",
    "https://192.168.1.1/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://[::1]/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://[fe80::1]/hook",
    "https://[2002:7f00:1::]/hook",  # 6to4 carrying 127.0.0.1
    "https://[2002:a9fe:a9fe::1]/hook",  # 6to4 carrying 169.254.169.254
    "https://[64:ff9b::a00:5]/hook",  # NAT64 carrying 10.0.0.5
    "https://[64:ff9b::7f00:1]/hook",  # NAT64 carrying 127.0.0.1
    "https://[64:ff9b:1::a9fe:a9fe]/hook",  # local-use NAT64 (/96) carrying 169.254.169.254
    "https://[64:ff9b:1:c0a8:1:100::]/hook",  # local-use NAT64 (/48) carrying 192.168.1.1
    "https://224.0.0.1/hook",
    "https://0.0.0.0/hook",
    "https://user:pass@93.184.216.34/hook",
    "javascript:alert(1)",
    "file:///etc/passwd",
])
def test_production_refuses_urls_that_reach_inside_the_network(sessions, production, url):
    with pytest.raises(WebhookError), transaction(sessions) as session:
        manage.add(session, production, ["tdsb"], "tdsb", url)


def test_production_accepts_https_to_a_public_address(sessions, production):
    with transaction(sessions) as session:
        endpoint = manage.add(session, production, ["tdsb"], "tdsb", "https://93.184.216.34/hook")
    assert endpoint.secret.startswith("whsec_")


@pytest.mark.parametrize("address", ["64:ff9b::5db8:d822", "2002:5db8:d822::1"])
def test_production_accepts_6to4_and_nat64_addresses_carrying_a_public_one(sessions, production, address):
    with transaction(sessions) as session:
        endpoint = manage.add(session, production, ["tdsb"], "tdsb", f"https://[{address}]/hook")
    assert endpoint.secret.startswith("whsec_")


def test_a_name_that_resolves_to_a_private_address_is_refused(sessions, production, monkeypatch):
    import socket

    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: [(2, 1, 6, "", ("10.1.2.3", 443))])
    with pytest.raises(WebhookError, match="private or reserved"), transaction(sessions) as session:
        manage.add(session, production, ["tdsb"], "tdsb", "https://hooks.daycare.example/x")


def test_a_name_that_later_resolves_inside_is_refused_at_send_time(sessions, production, monkeypatch,
                                                                   webhook_receiver):
    """DNS may change after the endpoint was added: the check runs again before each request."""
    import socket

    from notifier.delivery.channels import Message, WebhookChannel
    from notifier.errors import MessageError
    from tests.conftest import add_webhook

    endpoint = add_webhook(sessions, "https://hooks.daycare.example/x")
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: [(2, 1, 6, "", ("169.254.169.254", 443))])
    channel = WebhookChannel(sessions, allow_private=False)
    with pytest.raises(MessageError, match="169.254.169.254"):
        channel.send(Message("webhook", endpoint.public_id, "{}", "webhook-x-1"))
    assert webhook_receiver.requests == []


# --- how many a board may have -------------------------------------------------------------------------------------


def test_a_board_has_at_most_the_configured_number_of_webhooks(sessions, env):
    from notifier.subscribers.webhooks import WebhookLimitError

    settings = Settings.from_env({**env, "NOTIFIER_WEBHOOKS_PER_BOARD": "2"})
    for _ in range(2):
        with transaction(sessions) as session:
            manage.add(session, settings, ["tdsb", "peel"], "tdsb", URL)
    with pytest.raises(WebhookLimitError, match="tdsb already has 2 webhooks"), transaction(sessions) as session:
        manage.add(session, settings, ["tdsb", "peel"], "tdsb", URL)
    with transaction(sessions) as session:
        manage.add(session, settings, ["tdsb", "peel"], "peel", URL)  # another board has its own count
    with sessions() as session:
        assert len(session.scalars(select(WebhookEndpoint)).all()) == 3


def test_five_webhooks_per_board_by_default(settings):
    assert settings.webhooks_per_board == 5


def test_the_command_refuses_one_webhook_too_many_with_exit_code_2(env, monkeypatch, sessions):
    env = {**env, "NOTIFIER_WEBHOOKS_PER_BOARD": "1"}
    assert invoke(env, monkeypatch, "add", "--board", "tdsb", "--url", URL).exit_code == 0
    result = invoke(env, monkeypatch, "add", "--board", "tdsb", "--url", URL)
    assert result.exit_code == 2 and "already has 1 webhooks" in result.output and "remove one first" in result.output


# --- the owner's address -------------------------------------------------------------------------------------------


def test_adding_a_webhook_emails_its_owner_a_confirmation_link_and_nothing_more(sessions, settings):
    import json

    from notifier.delivery.outbox import OutboxRow

    with transaction(sessions) as session:
        endpoint = manage.add(session, settings, ["tdsb"], "tdsb", URL, owner_email="IT@Daycare.example",
                              language="fr")
    with sessions() as session:
        (row,) = session.scalars(select(OutboxRow)).all()
        stored = session.scalars(select(WebhookEndpoint)).one()
    message = json.loads(row.payload)
    assert (row.channel, message["to"], row.digest_key) == ("email", "IT@daycare.example",
                                                            f"webhook-owner-{endpoint.public_id}")
    assert "/webhooks/owner/" in message["text"] and "lang=fr" in message["text"]
    assert message["subject"] == "Confirmez que vous êtes responsable d’un webhook sur l’état des écoles"
    assert stored.owner_asked_at is not None and stored.owner_confirmed_at is None


def test_a_webhook_without_an_owner_emails_nobody(sessions, settings):
    from notifier.delivery.outbox import OutboxRow

    with transaction(sessions) as session:
        manage.add(session, settings, ["tdsb"], "tdsb", URL)
    with sessions() as session:
        assert session.scalars(select(OutboxRow)).all() == []


def test_migration_0018_leaves_existing_owners_unconfirmed_and_downgrades(tmp_path):
    from alembic import command
    from sqlalchemy import inspect, text

    from notifier import migrate
    from notifier.db import make_engine

    url = f"sqlite:///{tmp_path / 'migrate.sqlite3'}"
    migrate.upgrade(url)
    command.downgrade(migrate.alembic_config(url), "0018-1")
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO webhook_endpoints (public_id, board_id, panels, url, format, language, secret, owner_email,"
            " added_by, created_at) VALUES ('wh_old', 'tdsb', '', 'https://x.example/h', 'json', 'en', 'whsec_x',"
            " 'it@daycare.example', 'cli', '2026-01-01 00:00:00')"))
    migrate.upgrade(url)
    with engine.begin() as connection:
        row = connection.execute(text("SELECT owner_asked_at, owner_confirmed_at FROM webhook_endpoints")).one()
    assert tuple(row) == (None, None)
    command.downgrade(migrate.alembic_config(url), "0018-1")
    columns = {c["name"] for c in inspect(engine).get_columns("webhook_endpoints")}
    assert "owner_confirmed_at" not in columns and "owner_email" in columns
    engine.dispose()
