"""Shared fixtures: a fresh database per test, the app and its clients, a boards file to edit, and real peers
(an SMTP server on loopback, a Twilio-shaped HTTP server, headless Chromium).

The suite runs on SQLite by default and on PostgreSQL when NOTIFIER_DATABASE_URL points at one (CI does both).
Provider settings are removed from the environment so a forgotten fake can never reach a real provider.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import inspect, select, text

from notifier import migrate
from notifier.clock import cycle_steps
from notifier.config import ROOT, Settings
from notifier.db import Base, make_engine, make_sessionmaker
from notifier.delivery import express, health, outbox, senders, totals  # noqa: F401 - every module that declares tables
from notifier.delivery.outbox import OutboxRow
from notifier.staff import models as staff_models  # noqa: F401
from notifier.status import cycle, history  # noqa: F401
from notifier.status.history import latest_event_id
from notifier.subscribers import consent, models, ratelimit, webhooks  # noqa: F401
from notifier.subscribers.models import Contact, Follow, Subscriber

for _name in list(os.environ):
    if _name.startswith("TWILIO_") or _name in ("NOTIFIER_SMTP_URL", "NOTIFIER_BASE_URL", "NOTIFIER_BOARDS_FILE"):
        del os.environ[_name]



class SettlingClient(FlaskClient):
    """A test client that, after each request, waits for the messages the app left to send in the background
    (`express.send_soon`), so a test reads the inbox as a parent would a moment later. The app itself never waits:
    a test of the answer itself uses `FlaskClient` (see tests/web/test_answer_times.py)."""

    def open(self, *args, **kwargs):
        response = super().open(*args, **kwargs)
        express.settle()
        return response


Flask.test_client_class = SettlingClient


@pytest.fixture(autouse=True)
def _fresh_pacers():
    """Each test starts with this process's pacers new: a test that moved the clock forward and sent (a sign-in
    link in the background, say) leaves slots reserved in its future, which would hold the next test's sends."""
    from notifier.delivery import pacing

    yield
    express.settle()
    with pacing._pacers_lock:
        pacing._pacers.clear()

ACCOUNT_SID = "AC" + "7" * 32
AUTH_TOKEN = "test-auth-token"  # noqa: S105 - the fake server's, not a real secret
SERVICE_NUMBER = "+16135550100"
BASE_URL = "https://status.example.org"


def free_port() -> int:
    """A port nothing listens on now (aiosmtpd cannot take port 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- database ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> str:
    """The test database, migrated once per run: PostgreSQL if NOTIFIER_DATABASE_URL is set, else a SQLite file.

    Under pytest-xdist each worker gets a database of its own (`<name>_gw0`, … created next to the given one).
    """
    given = os.environ.get("NOTIFIER_DATABASE_URL")
    if not given:
        url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.sqlite3'}"
    else:
        url = Settings.from_env({"NOTIFIER_DATABASE_URL": given}).database_url
        if worker_id != "master":
            url = _worker_database(url, worker_id)
    engine = make_engine(url)
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE"))
            connection.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    migrate.upgrade(url)
    return url


def _worker_database(url: str, worker_id: str) -> str:
    """Create (if needed) a PostgreSQL database for one xdist worker and return its URL."""
    from sqlalchemy.engine import make_url

    base = make_url(url)
    name = f"{base.database}_{worker_id}"
    admin = make_engine(url).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        exists = connection.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).scalar()
        if not exists:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


@pytest.fixture
def engine(database_url: str):
    engine = make_engine(database_url)
    yield engine
    _empty_all_tables(engine)
    engine.dispose()


def _empty_all_tables(engine) -> None:
    existing = set(inspect(engine).get_table_names())
    with engine.begin() as connection:
        for table in reversed(Base.metadata.sorted_tables):
            if table.name in existing:
                connection.execute(table.delete())


@pytest.fixture
def sessions(engine):
    """A session factory on the test database (emptied after each test)."""
    return make_sessionmaker(engine)


# --- files and settings -----------------------------------------------------------------------------------------


@pytest.fixture
def boards_file(tmp_path: Path) -> Path:
    """A private copy of the real boards.yaml that a test may edit."""
    path = tmp_path / "boards.yaml"
    shutil.copy(ROOT / "boards.yaml", path)
    return path


@pytest.fixture
def env(database_url: str, boards_file: Path, tmp_path: Path, engine) -> dict[str, str]:
    """Environment settings for an app or a command under test (local outbox; no provider configured).

    The suite edits its private boards.yaml the way a developer does, so it runs with development's follow mode
    (NOTIFIER_FOLLOW_BOARDS_FILE=1): an edit of the file is published as a new status document version when a
    process next looks. Production's way (the file only seeds; `boards import` publishes) has its own tests in
    tests/status/test_published.py, which turn follow mode off.
    """
    return {
        "NOTIFIER_DATABASE_URL": database_url,
        "NOTIFIER_BOARDS_FILE": str(boards_file),
        "NOTIFIER_FOLLOW_BOARDS_FILE": "1",
        "NOTIFIER_SECRET_KEY": "test-secret-key",
        "NOTIFIER_BASE_URL": BASE_URL,
        "NOTIFIER_INSTANCE_DIR": str(tmp_path / "instance"),
        "NOTIFIER_OUTBOX_DIR": str(tmp_path / "outbox"),
        "NOTIFIER_SMS_QUIET_HOURS": "",
        "NOTIFIER_WEBHOOKS_ALLOW_PRIVATE": "1",  # the webhook receiver of the tests listens on loopback
    }


@pytest.fixture
def settings(env: dict[str, str]) -> Settings:
    return Settings.from_env(env)


@pytest.fixture
def app(env: dict[str, str]):
    from notifier import create_app

    app = create_app({**env, "TESTING": True})
    yield app
    app.extensions["notifier"].engine.dispose()


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(env: dict[str, str], monkeypatch: pytest.MonkeyPatch):
    """Runs `python -m notifier …` commands in-process with the test settings."""
    from click.testing import CliRunner

    from notifier.cli import cli

    for key, value in env.items():
        monkeypatch.setenv(key, value)

    class Runner:
        def invoke(self, *args: str):
            return CliRunner().invoke(cli, list(args), catch_exceptions=False)

    return Runner()


# --- boards -----------------------------------------------------------------------------------------------------


class BoardsFile:
    """Edits a test's boards.yaml the way a person would: one board's fields at a time, keeping the rest."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def update(self, board_id: str, **fields) -> None:
        from notifier.status.document import round_trip_yaml

        yaml = round_trip_yaml()
        document = yaml.load(self.path.read_text(encoding="utf-8"))
        board = next(b for b in document["boards"] if b["id"] == board_id)
        for key, value in fields.items():
            if value is None:
                board.pop(key, None)
            else:
                board[key] = value
        import io

        out = io.StringIO()
        yaml.dump(document, out)
        self.path.write_text(out.getvalue(), encoding="utf-8")
        # Many edits may land within one second in a test: move the mtime so file watchers notice each one.
        stat = self.path.stat()
        os.utime(self.path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


@pytest.fixture
def boards(boards_file: Path) -> BoardsFile:
    return BoardsFile(boards_file)


def make_withdrawal(**overrides) -> dict:
    """A withdrawal as written in boards.yaml, with sensible defaults."""
    withdrawal = {
        "category": "transportation",
        "description": {"en": "No buses to secondary schools.", "fr": "Aucun autobus vers les écoles secondaires."},
    }
    withdrawal.update(overrides)
    return withdrawal


# --- real peers: SMTP, Twilio, a live server, Chromium ----------------------------------------------------------


class SmtpInbox:
    """What a real SMTP server on loopback received; `refuse(address, code)` makes it reject a recipient."""

    def __init__(self) -> None:
        self.envelopes: list = []
        self.refusals: dict[str, str] = {}
        self.connections = 0

    async def handle_EHLO(self, server, session, envelope, hostname, responses):  # noqa: N802 - aiosmtpd hook
        self.connections += 1
        session.host_name = hostname
        return responses

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        if address in self.refusals:
            return self.refusals[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        self.envelopes.append(envelope)
        return "250 Message accepted for delivery"

    def refuse(self, address: str, code: int = 550) -> None:
        self.refusals[address] = f"{code} {'Mailbox unavailable' if code >= 500 else 'Try again later'}"

    def messages(self):
        from email import message_from_bytes, policy

        return [message_from_bytes(e.content, policy=policy.default) for e in self.envelopes]


@pytest.fixture
def smtp_server() -> Iterator[tuple[SmtpInbox, str]]:
    """A real SMTP server (aiosmtpd) on loopback; yields (inbox, NOTIFIER_SMTP_URL)."""
    from aiosmtpd.controller import Controller

    inbox = SmtpInbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield inbox, f"smtp://127.0.0.1:{port}"
    controller.stop()


@pytest.fixture
def twilio_server() -> Iterator:
    """A Twilio-shaped HTTP server on loopback for the real SDK (see tests/fakes/twilio_server.py)."""
    from tests.fakes.twilio_server import FakeTwilio

    server = FakeTwilio(ACCOUNT_SID, AUTH_TOKEN).start()
    yield server
    server.stop()


@pytest.fixture
def webhook_receiver() -> Iterator:
    """A webhook receiver on loopback that records requests and can answer errors (tests/fakes/webhook_receiver.py)."""
    from tests.fakes.webhook_receiver import WebhookReceiver

    receiver = WebhookReceiver()
    yield receiver
    receiver.close()


@pytest.fixture(scope="session")
def vapid_key() -> str:
    """A VAPID private key (PEM) for the whole run."""
    from notifier.cli.push import new_private_pem

    return new_private_pem()


@pytest.fixture
def push_service() -> Iterator:
    """A push service speaking RFC 8030 on loopback that decrypts what it accepts (tests/fakes/push_service.py)."""
    from tests.fakes.push_service import PushService

    service = PushService()
    yield service
    service.close()


@pytest.fixture
def push_env(env: dict[str, str], vapid_key: str, push_service) -> dict[str, str]:
    """Settings with Web Push on, allowed to post to the loopback push service only."""
    return {**env, "NOTIFIER_VAPID_PRIVATE_KEY": vapid_key, "NOTIFIER_VAPID_SUBJECT": "mailto:ops@example.org",
            "NOTIFIER_PUSH_SERVICES": push_service.origin, "NOTIFIER_RETRY_BASE_SECONDS": "1"}


@pytest.fixture
def provider_env(env: dict[str, str], smtp_server, twilio_server) -> dict[str, str]:
    """Settings that send through the loopback SMTP server and the Twilio-shaped server."""
    return {
        **env,
        "NOTIFIER_SMTP_URL": smtp_server[1],
        "NOTIFIER_MAIL_FROM": "School status <status@example.org>",
        "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
        "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "TWILIO_FROM_NUMBER": SERVICE_NUMBER,
        "TWILIO_API_BASE_URL": twilio_server.url,
    }


@pytest.fixture
def live_server(app) -> Iterator[str]:
    """The app served over HTTP on loopback (for the browser); yields its base URL."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", free_port(), app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


@pytest.fixture(scope="session")
def browser():
    """Debian's headless Chromium driven by Playwright (no browser download)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is not installed: run `make test` (it installs it) or apt-get install chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    """A phone-sized page."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-CA")
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def axe():
    """Run axe-core (WCAG 2.0 A + AA) on a Playwright page; call `axe(page)` and it fails the test on violations."""
    from axe_playwright_python.sync_playwright import Axe

    checker = Axe()

    def check(page) -> None:
        results = checker.run(page, options={"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa"]},
                                             "resultTypes": ["violations"]})
        assert results.violations_count == 0, results.generate_report()

    return check


# --- subscribers, settings that send fast, and whole cycles (digests and delivery) ---------------------------


NOW = datetime(2026, 11, 23, 17, 0, tzinfo=UTC)  # Monday 12:00 in Toronto: outside quiet hours
BOTH = ("elementary", "secondary")
_numbers = itertools.count(100)


def phone() -> str:
    """A fresh fictional Canadian mobile number (555-01XX)."""
    return f"+1613555{next(_numbers) % 10000:04d}"


def make_subscriber(session, **overrides) -> Subscriber:
    """A confirmed family following TDSB's both panels by email and SMS; override any part.

    Keys: language, notify_on_effect, email (None for no email), phone (None for no SMS), frequency (both contacts),
    email_frequency, sms_frequency, status, follows [(board, panel)], seen_event_id (default: the newest event),
    morning_reminder.
    """
    number = next(_numbers)
    options = {
        "language": "en", "notify_on_effect": False, "email": f"parent{number}@example.org", "phone": phone(),
        "frequency": "immediate", "status": "active", "follows": [("tdsb", p) for p in BOTH],
        "seen_event_id": None, "morning_reminder": False,
    }
    options.update(overrides)
    seen = latest_event_id(session) if options["seen_event_id"] is None else options["seen_event_id"]
    subscriber = Subscriber(language=options["language"], notify_on_effect=options["notify_on_effect"])
    for channel, address in (("email", options["email"]), ("sms", options["phone"])):
        if address:
            frequency = options.get(f"{channel}_frequency") or options["frequency"]
            subscriber.contacts.append(Contact(channel=channel, address=address, status=options["status"],
                                               frequency=frequency, seen_event_id=seen,
                                               morning_reminder=options["morning_reminder"]))
    for board_id, panel in options["follows"]:
        subscriber.follows.append(Follow(board_id=board_id, panel=panel))
    session.add(subscriber)
    session.flush()
    return subscriber


@pytest.fixture
def subscribe(sessions):
    """Create a subscriber in its own transaction: `subscribe(**overrides)` returns (subscriber_id, email, phone)."""

    def create(**overrides):
        with sessions() as session, session.begin():
            subscriber = make_subscriber(session, **overrides)
            addresses = {c.channel: c.address for c in subscriber.contacts}
            return subscriber.id, addresses.get("email"), addresses.get("sms")

    return create


@pytest.fixture
def fast_env(provider_env) -> dict[str, str]:
    """Provider settings without the production rate limits (a long code's 1 text per second)."""
    return {**provider_env, "NOTIFIER_SMS_PER_SECOND": "1000", "NOTIFIER_EMAIL_PER_SECOND": "1000",
            "NOTIFIER_RETRY_BASE_SECONDS": "1"}


@pytest.fixture
def fast_settings(fast_env) -> Settings:
    return Settings.from_env(fast_env)


@pytest.fixture
def run(sessions, fast_settings):
    """Run one cycle (record, plan) at `now`, then, like `tick`, send what is due: `run(now=NOW, settings=None,
    deliver=True)`."""
    from notifier.clock import send_due

    def run_cycle(now: datetime = NOW, settings: Settings | None = None, deliver: bool = True):
        chosen = settings or fast_settings
        result = cycle.run(sessions, str(chosen.boards_file), now=now, after_record=cycle_steps(chosen),
                           follow=chosen.follow_boards_file)
        if deliver:
            send_due(chosen, sessions, now=now)
        return result

    return run_cycle


def add_webhook(sessions, url: str, **overrides):
    """An endpoint following TDSB (all panels, JSON, English) added at NOW; override any part. Returns it."""
    fields = {"board_id": "tdsb", "url": url, "owner_email": "it@daycare.example", "now": NOW, **overrides}
    with sessions() as session, session.begin():
        endpoint = webhooks.add(session, **fields)
        session.expunge(endpoint)
    return endpoint


def outbox_rows(sessions) -> list[OutboxRow]:
    with sessions() as session:
        return list(session.scalars(select(OutboxRow).order_by(OutboxRow.id)))


# --- Redis ------------------------------------------------------------------------------------------------------


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis database of this test's own, emptied before the test: `redis://127.0.0.1:6379/<n>`.

    n is NOTIFIER_TEST_REDIS_DB (default 1) plus the xdist worker's index (gw0 +0, gw1 +1; no xdist +0), so parallel
    workers never share one. Skips with the reason when no Redis answers on 127.0.0.1:6379.
    """
    import redis

    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw3" under xdist; read here so -p no:xdist works too
    index = int(worker[2:]) if worker.startswith("gw") else 0
    url = f"redis://127.0.0.1:6379/{int(os.environ.get('NOTIFIER_TEST_REDIS_DB', '1')) + index}"
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    try:
        client.flushdb()
    except redis.ConnectionError as error:
        pytest.skip(f"Redis is not reachable on 127.0.0.1:6379 ({error}); start redis-server to run this test")
    finally:
        client.close()
    yield url


# --- the W3C Nu HTML checker --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def vnu():
    """The W3C Nu HTML checker: `vnu.errors({name: html, …}) -> {name: [messages]}`, one Java run per call."""
    from tests.support.vnu import Vnu

    checker = Vnu()
    missing = checker.available()
    if missing:
        pytest.fail(missing)
    return checker


# --- fakes that fail on purpose (tests/fakes/) ------------------------------------------------------------------


@pytest.fixture
def faulty_smtp() -> Iterator:
    """An SMTP server on loopback that can go down, refuse, push back and demand AUTH (tests/fakes/smtp_server.py)."""
    from tests.fakes.smtp_server import FakeSmtp

    fake = FakeSmtp().start()
    yield fake
    fake.stop()


@pytest.fixture
def tcp_proxy() -> Iterator:
    """Makes loopback TCP proxies that cut, refuse and pause: `tcp_proxy(host, port)` (tests/fakes/tcp_proxy.py)."""
    from tests.fakes.tcp_proxy import TcpProxy

    proxies = []

    def make(host: str, port: int) -> TcpProxy:
        proxies.append(TcpProxy(host, port).start())
        return proxies[-1]

    yield make
    for proxy in proxies:
        proxy.stop()


# --- real processes -----------------------------------------------------------------------------------------------


@pytest.fixture
def processes(tmp_path: Path) -> Iterator:
    """Starts the Procfile's commands as real processes (tests/support/processes.py); all are stopped after the
    test, passed or failed, and their log tails are printed (pytest shows them when the test failed)."""
    from tests.support.processes import Processes

    group = Processes(tmp_path / "process-logs")
    try:
        yield group
    finally:
        group.stop_all()
        print(group.logs())
