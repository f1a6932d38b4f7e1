"""Webhooks through the outbox: signed with the Standard Webhooks scheme, once per change, retried, disabled."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
from datetime import timedelta

import pytest
from sqlalchemy import select

from notifier import clock
from notifier.db import utcnow
from notifier.delivery.channels import WEBHOOK, Message, WebhookChannel
from notifier.delivery.drain import drain
from notifier.errors import TemporaryDeliveryError
from notifier.notices.compose import MessageBuilder
from notifier.subscribers.webhooks import WebhookEndpoint
from tests.conftest import NOW, add_webhook, outbox_rows

LATER = NOW + timedelta(minutes=1)


def after(hours: float):
    return max(LATER, utcnow()) + timedelta(hours=hours)


def verifies(secret: str, request) -> bool:
    """The signature checked by hand, as the Standard Webhooks specification describes it (not with our library)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{request.headers['webhook-id']}.{request.headers['webhook-timestamp']}.".encode() + request.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    version, _, signature = request.headers["webhook-signature"].partition(",")
    return version == "v1" and hmac.compare_digest(signature, expected)


def _close_tdsb(run, boards, deliver=True):
    run()
    boards.update("tdsb", status="closed")
    return run(LATER, deliver=deliver)


def _webhook_rows(sessions):
    return [row for row in outbox_rows(sessions) if row.channel == "webhook"]


def test_each_change_arrives_once_with_a_signature_that_verifies(run, sessions, boards, webhook_receiver):
    endpoint = add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards)
    (request,) = webhook_receiver.requests
    assert verifies(endpoint.secret, request)
    assert request.headers["content-type"] == "application/json"
    document = json.loads(request.body)
    assert document["type"] == "board.status_changed"
    data = document["data"]
    assert data["board_id"] == "tdsb" and data["status"] == "closed"
    assert data["panels"] == {"elementary": "closed", "secondary": "closed"}
    assert data["url"] == "https://status.example.org/boards/tdsb?lang=en"
    assert {"board_name", "message", "withdrawals", "effective_from", "changes"} <= data.keys()


def test_the_signature_also_verifies_with_the_standard_webhooks_library(run, sessions, boards, webhook_receiver):
    from standardwebhooks.webhooks import Webhook

    endpoint = add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards)
    (request,) = webhook_receiver.requests
    assert Webhook(endpoint.secret).verify(request.body, request.headers)["type"] == "board.status_changed"


def test_a_tampered_body_does_not_verify(run, sessions, boards, webhook_receiver):
    endpoint = add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards)
    (request,) = webhook_receiver.requests
    forged = type(request)(request.path, request.headers, request.body.replace(b"closed", b"open"))
    assert not verifies(endpoint.secret, forged)


def test_running_the_cycle_again_sends_nothing_twice(run, sessions, boards, fast_settings, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards)
    run(LATER + timedelta(minutes=1))
    run(LATER + timedelta(minutes=2))
    clock.send_due(fast_settings, sessions, now=after(1))
    assert len(webhook_receiver.requests) == 1
    assert len(_webhook_rows(sessions)) == 1


def test_planning_again_after_a_crash_makes_no_second_row(run, sessions, boards, fast_settings, webhook_receiver):
    from notifier.delivery.outbox import ClockState
    from notifier.notices import webhooks

    add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards, deliver=False)
    with sessions() as session, session.begin():  # as if the cursor's move had been lost
        session.get(ClockState, webhooks.CURSOR).number = 0
    assert webhooks.plan(sessions, fast_settings, LATER) == 0
    assert len(_webhook_rows(sessions)) == 1


def test_a_500_is_retried_with_backoff_and_the_same_webhook_id(run, sessions, boards, fast_settings,
                                                              webhook_receiver):
    endpoint = add_webhook(sessions, webhook_receiver.url)
    webhook_receiver.fail(500, times=2)
    _close_tdsb(run, boards)
    (row,) = _webhook_rows(sessions)
    assert row.status == "pending" and row.attempts == 1 and row.due_at > utcnow()
    clock.send_due(fast_settings, sessions, now=row.due_at - timedelta(milliseconds=1))
    assert len(webhook_receiver.requests) == 1  # not before its backoff
    clock.send_due(fast_settings, sessions, now=after(1))
    clock.send_due(fast_settings, sessions, now=after(2))
    clock.send_due(fast_settings, sessions, now=after(3))
    assert len(webhook_receiver.requests) == 3
    ids = {r.headers["webhook-id"] for r in webhook_receiver.requests}
    assert len(ids) == 1
    assert all(verifies(endpoint.secret, r) for r in webhook_receiver.requests)
    (row,) = _webhook_rows(sessions)
    assert row.status == "sent" and row.attempts == 2
    with sessions() as session:
        assert session.scalar(select(WebhookEndpoint.failing_since)) is None


def test_a_slack_endpoint_gets_a_line_of_text_in_english(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url, format="slack")
    _close_tdsb(run, boards)
    (request,) = webhook_receiver.requests
    document = json.loads(request.body)
    assert list(document) == ["text"]
    assert "closed" in document["text"] and "https://status.example.org/boards/tdsb?lang=en" in document["text"]
    assert "\n" not in document["text"]


def test_a_slack_endpoint_gets_a_line_of_text_in_french(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url, format="slack", language="fr")
    _close_tdsb(run, boards)
    document = json.loads(webhook_receiver.requests[0].body)
    assert list(document) == ["text"]
    assert "fermées" in document["text"] and "?lang=fr" in document["text"]
    assert "\u00a0:" in document["text"]  # French typography: a no-break space before the colon


def test_an_endpoint_following_one_panel_hears_only_of_it(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url, panels=["secondary"])
    run()
    boards.update("tdsb", panels={"elementary": "closed"})
    run(LATER)
    assert webhook_receiver.requests == []
    boards.update("tdsb", status="closed", panels={"secondary": "work-to-rule"})
    run(LATER + timedelta(minutes=1))
    assert len(webhook_receiver.requests) == 1


def test_an_endpoint_added_after_a_change_does_not_hear_of_it(run, sessions, boards, webhook_receiver):
    _close_tdsb(run, boards)
    add_webhook(sessions, webhook_receiver.url, now=LATER + timedelta(seconds=30))
    run(LATER + timedelta(minutes=1))
    assert webhook_receiver.requests == []


def test_410_gone_disables_the_endpoint_at_once(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url)
    webhook_receiver.fail(410)
    _close_tdsb(run, boards)
    (row,) = _webhook_rows(sessions)
    assert row.status == "failed"
    with sessions() as session:
        assert session.scalar(select(WebhookEndpoint.disabled_at)) is not None


def test_a_4xx_is_the_endpoints_fault_and_is_not_retried(run, sessions, boards, fast_settings, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url)
    webhook_receiver.fail(401)
    _close_tdsb(run, boards)
    clock.send_due(fast_settings, sessions, now=after(2))
    assert len(webhook_receiver.requests) == 1
    (row,) = _webhook_rows(sessions)
    assert row.status == "failed" and row.failure == "message"


def test_redirects_are_not_followed(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url)
    webhook_receiver.fail(302)
    _close_tdsb(run, boards)
    assert len(webhook_receiver.requests) == 1
    (row,) = _webhook_rows(sessions)
    assert row.status == "failed"


def _fail_for_a_day(run, sessions, boards, fast_settings, webhook_receiver) -> int:
    """The endpoint fails for a day and is disabled; then two planning passes; how many requests it got."""
    webhook_receiver.fail(503, times=100)
    _close_tdsb(run, boards)  # the first failure, at the real time
    start = utcnow()

    def send_at(moment):
        factory = _factory(sessions, fast_settings, lambda: moment)
        drain(sessions, fast_settings, MessageBuilder, now=moment, factory=factory)

    send_at(start + timedelta(hours=12))
    with sessions() as session:
        endpoint = session.scalars(select(WebhookEndpoint)).one()
        assert endpoint.disabled_at is None and endpoint.failing_since is not None
    send_at(start + timedelta(hours=25))
    with sessions() as session:
        endpoint = session.scalars(select(WebhookEndpoint)).one()
        assert endpoint.disabled_at is not None
    (row,) = _webhook_rows(sessions)
    assert row.status == "failed"
    tries = len(webhook_receiver.requests)
    run(LATER + timedelta(days=1, minutes=5))
    run(LATER + timedelta(days=1, minutes=6))
    return tries


def test_a_day_of_failures_disables_the_endpoint_and_emails_its_confirmed_owner_once(
    run, sessions, boards, fast_settings, webhook_receiver, smtp_server
):
    from sqlalchemy import update

    inbox, _ = smtp_server
    endpoint = add_webhook(sessions, webhook_receiver.url)
    with sessions() as session, session.begin():  # the owner followed the link of their confirmation
        session.execute(update(WebhookEndpoint).where(WebhookEndpoint.id == endpoint.id)
                        .values(owner_confirmed_at=NOW))
    tries = _fail_for_a_day(run, sessions, boards, fast_settings, webhook_receiver)
    owner_mail = [m for m in inbox.messages() if m["To"] == "it@daycare.example"]
    assert len(owner_mail) == 1
    assert "turned off" in owner_mail[0]["Subject"]
    assert "127.0.0.1" in owner_mail[0].get_body(("plain",)).get_content()
    boards.update("tdsb", status="open")
    run(LATER + timedelta(days=1, minutes=7))
    assert len(webhook_receiver.requests) == tries  # a disabled endpoint gets nothing more


def test_an_owner_who_never_confirmed_gets_only_the_confirmation_not_the_turned_off_notice(
    run, sessions, boards, fast_settings, webhook_receiver, smtp_server
):
    inbox, _ = smtp_server
    add_webhook(sessions, webhook_receiver.url)  # added before owners confirmed: the next pass asks them
    _fail_for_a_day(run, sessions, boards, fast_settings, webhook_receiver)
    owner_mail = [m for m in inbox.messages() if m["To"] == "it@daycare.example"]
    assert [m["Subject"] for m in owner_mail] == ["Confirm that you look after a school status webhook"]
    assert "/webhooks/owner/" in owner_mail[0].get_body(("plain",)).get_content()
    with sessions() as session:
        assert session.scalars(select(WebhookEndpoint)).one().owner_notified_at is not None  # not told later


def _factory(sessions, settings, now):
    from notifier.delivery import channels

    def build(name):
        if name == "webhook":
            return WebhookChannel(sessions, allow_private=True, timeout=2, clock=now)
        return channels.build(settings, sessions)[name]

    return build


def test_no_secret_and_no_url_path_in_the_logs_of_failing_webhooks(run, sessions, boards, fast_settings,
                                                                   webhook_receiver, caplog):
    import logging

    caplog.set_level(logging.DEBUG, logger="notifier")
    endpoint = add_webhook(sessions, webhook_receiver.url.replace("/hooks/school-status", "/services/T0/SECRETPATH"))
    webhook_receiver.fail(500, times=1)
    webhook_receiver.fail(410)
    _close_tdsb(run, boards)
    clock.send_due(fast_settings, sessions, now=after(1))
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("notifier"))
    assert "disabled" in ours
    assert "SECRETPATH" not in ours and endpoint.secret not in ours and "whsec_" not in ours
    with sessions() as session:
        stored = session.scalars(select(WebhookEndpoint)).one()
    assert "SECRETPATH" not in (stored.last_error or "") + (stored.disabled_reason or "")


def test_a_refused_connection_is_retried_later(run, sessions, boards):
    from tests.conftest import free_port

    add_webhook(sessions, f"http://127.0.0.1:{free_port()}/hooks")
    _close_tdsb(run, boards)
    (row,) = _webhook_rows(sessions)
    assert row.status == "pending" and row.attempts == 1 and row.due_at > utcnow()
    assert "ConnectionError" in row.last_error and "/hooks" not in row.last_error


def test_a_webhook_left_in_flight_by_a_dead_sender_is_sent_again_with_the_same_id(run, sessions, boards,
                                                                                   fast_settings, webhook_receiver):
    from sqlalchemy import update

    from notifier.delivery.outbox import OutboxRow

    add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards, deliver=False)
    (row,) = _webhook_rows(sessions)
    with sessions() as session, session.begin():  # claimed by a process that died long ago
        session.execute(update(OutboxRow).where(OutboxRow.id == row.id).values(
            status="sending", claim="sender:999999", claimed_at=utcnow() - timedelta(hours=1)))
    clock.send_due(fast_settings, sessions, now=after(0))
    (request,) = webhook_receiver.requests
    assert request.headers["webhook-id"] == row.digest_key
    assert _webhook_rows(sessions)[0].status == "sent"


# --- where a delivery connects (DNS rebinding) ----------------------------------------------------------------------


class _Listener:
    """A TCP port on loopback that only counts the connections it is offered."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]

    def connections(self) -> int:
        self.sock.settimeout(0.2)
        count = 0
        try:
            while True:
                connection, _ = self.sock.accept()
                connection.close()
                count += 1
        except OSError:
            return count


@pytest.fixture
def rebinding_resolver(monkeypatch):
    """hooks.daycare.example resolves to a public address the first time (when it is checked) and to 127.0.0.1
    after that; the public address itself leads to a loopback listener standing in for the real host."""
    real = socket.getaddrinfo
    checked, rebound = _Listener(), _Listener()
    lookups = []

    def resolve(host, port, *args, **kwargs):
        if host == "hooks.daycare.example":
            lookups.append(host)
            address = "93.184.216.34" if len(lookups) == 1 else "127.0.0.1"
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        if host == "93.184.216.34":
            return real("127.0.0.1", checked.port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    yield checked, rebound, lookups
    checked.sock.close()
    rebound.sock.close()


def test_a_delivery_connects_to_the_address_that_was_checked_not_to_a_rebound_one(sessions, rebinding_resolver):
    checked, rebound, lookups = rebinding_resolver
    endpoint = add_webhook(sessions, f"https://hooks.daycare.example:{rebound.port}/hooks")
    channel = WebhookChannel(sessions, allow_private=False, timeout=0.5)
    with pytest.raises(TemporaryDeliveryError):  # the stand-in accepts and says nothing: a timeout
        channel.send(Message(WEBHOOK, endpoint.public_id, "{}", "webhook-x-1"))
    assert lookups == ["hooks.daycare.example"], "the name is resolved once, for the check"
    assert (checked.connections(), rebound.connections()) == (1, 0)


def test_a_pinned_delivery_still_names_the_host(sessions, webhook_receiver, monkeypatch):
    real = socket.getaddrinfo
    port = webhook_receiver.url.split(":")[2].split("/")[0]
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: real(
        "127.0.0.1" if host == "hooks.daycare.example" else host, *a, **k))
    endpoint = add_webhook(sessions, f"http://hooks.daycare.example:{port}/hooks/school-status")
    WebhookChannel(sessions, allow_private=True).send(Message(WEBHOOK, endpoint.public_id, "{}", "webhook-x-2"))
    (request,) = webhook_receiver.requests
    assert request.headers["host"] == f"hooks.daycare.example:{port}"
    assert request.path == "/hooks/school-status"


@pytest.fixture
def tls_receiver(tmp_path):
    """An https receiver on loopback with a certificate for hooks.daycare.example from a CA of the test's own;
    yields (port, CA bundle path, the server names clients asked for)."""
    import datetime as dt
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def certificate(subject, issuer, key, signer, ca):
        now = dt.datetime.now(dt.UTC)
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(hours=1))
                   .not_valid_after(now + dt.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName("hooks.daycare.example")]),
                                            critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    ca = certificate(ca_name, ca_name, ca_key, ca_key, ca=True)
    leaf = certificate(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hooks.daycare.example")]), ca_name, key,
                       ca_key, ca=False)
    bundle, chain, private = tmp_path / "ca.pem", tmp_path / "leaf.pem", tmp_path / "leaf.key"
    bundle.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    chain.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    asked = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's hook
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain, private)
    context.sni_callback = lambda _sock, name, _context: asked.append(name)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1], str(bundle), asked
    server.shutdown()
    server.server_close()


def _resolve_to_loopback(monkeypatch, name):
    real = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: real("127.0.0.1" if host == name else host,
                                                                           *a, **k))


def test_a_pinned_https_delivery_sends_the_name_for_sni_and_checks_the_certificate_against_it(
        sessions, tls_receiver, monkeypatch):
    port, bundle, asked = tls_receiver
    _resolve_to_loopback(monkeypatch, "hooks.daycare.example")
    endpoint = add_webhook(sessions, f"https://hooks.daycare.example:{port}/hooks")
    channel = WebhookChannel(sessions, allow_private=True, timeout=5, verify=bundle)
    assert channel.send(Message(WEBHOOK, endpoint.public_id, "{}", "webhook-x-3")).status == "sent"
    assert asked == ["hooks.daycare.example"]


def test_a_certificate_for_another_name_is_refused(sessions, tls_receiver, monkeypatch):
    port, bundle, _ = tls_receiver
    _resolve_to_loopback(monkeypatch, "hooks.busline.example")
    endpoint = add_webhook(sessions, f"https://hooks.busline.example:{port}/hooks")
    channel = WebhookChannel(sessions, allow_private=True, timeout=5, verify=bundle)
    with pytest.raises(TemporaryDeliveryError, match="SSLError"):
        channel.send(Message(WEBHOOK, endpoint.public_id, "{}", "webhook-x-4"))


def test_every_time_in_the_json_is_utc_as_documented(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url)
    run()
    boards.update("tdsb", status="closed", effective="2026-11-23T09:00:00-05:00")
    run(LATER)
    (request,) = webhook_receiver.requests
    document = json.loads(request.body)
    assert document["timestamp"].endswith("Z")
    assert document["data"]["effective_from"] == "2026-11-23T14:00:00Z"
