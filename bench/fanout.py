"""Fan-out benchmark: N confirmed subscribers of one board (half SMS, half email), one closure, whole cycles until
the outbox is empty — through the real `twilio` SDK against a local Twilio-shaped server and `smtplib` against a
local aiosmtpd server, both in a separate process so they do not share this process's interpreter lock.

Prints messages/second per channel, peak RSS, and the rate a bare loop of the same SDK reaches against the same
server at the same concurrency (measured in the same run), then checks every message was handed over exactly once.

    .venv/bin/python bench/fanout.py --subscribers 10000
    .venv/bin/python bench/fanout.py --subscribers 100000 --database-url postgresql://postgres@127.0.0.1/bench

With `--push-only` every subscriber follows by Web Push (a subscription on a local push service that answers 201, in
the same peer process) at `--push-cap` notifications a second (default 200, the product's default), and it prints
the push channel's mean rate divided by the cap and the first notification's delay after the cycle that recorded
the closure started (targets: >= 0.95 and <= 2 s):

    .venv/bin/python bench/fanout.py --push-only --subscribers 250000 --database-url postgresql://…/bench

With `--workers N` it runs the real processes instead (`python -m notifier clock`, which sends too, and N
`python -m notifier worker`, sharing one rate through Redis) at a realistic cap, and prints how close they held the
cap (busiest 1-s window and mean rate, each divided by the cap), when the first text left after the cycle that
recorded the closure started, how fast the clock planned (contacts/s, from its log), each process's peak RSS, and,
with `--correct-after S`, how many stale texts left after a correction recorded S seconds after the first text:

    .venv/bin/python bench/fanout.py --subscribers 2000 --workers 1 --cap 10 --correct-after 10 \
        --database-url postgresql://postgres@127.0.0.1/bench --redis-url redis://127.0.0.1:6379/7
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import resource
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ACCOUNT_SID = "AC" + "5" * 32
AUTH_TOKEN = "bench-token"  # noqa: S105 - the local fake's, not a secret
BOARD = "tdsb"
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux: a receive stamp in nanoseconds on each read


# --- the peers: a Twilio-shaped server tuned for speed (keep-alive, counting only) and an SMTP server ------------


def _peers(ready, stop) -> None:
    """Runs in its own process: both servers, plus GET /_stats with what each received."""
    try:  # the peers stand for providers on other machines: their own scheduling delays are not ours to measure
        os.nice(-10)
    except OSError:
        pass
    from aiosmtpd.controller import Controller

    texts: Counter = Counter()
    mails: Counter = Counter()  # (recipient, Message-ID) -> times received
    arrivals: dict[str, list] = {"sms": [], "email": [], "push": []}  # [arrival time, recipient, …]
    pushes: Counter = Counter()  # subscription id -> notifications received
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go in separate writes: without this, 40 ms per reply

        def log_message(self, *args) -> None:
            pass

        def handle_one_request(self) -> None:
            self.arrived = _arrival(self.connection)
            super().handle_one_request()

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            if self.path.startswith("/push/"):  # a push service: accepts the encrypted notice, reads nothing
                self.rfile.read(length)
                with lock:
                    pushes[self.path] += 1
                    arrivals["push"].append([self.arrived, self.path, time.time()])
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            form = parse_qs(self.rfile.read(length).decode())
            to = form.get("To", [""])[0]
            with lock:
                texts[to] += 1
                number = sum(texts.values())
                arrivals["sms"].append([self.arrived, to, time.time()])
            sid = f"SM{number:032x}"
            self._json(201, {"sid": sid, "to": to, "status": "queued", "body": form.get("Body", [""])[0],
                             "account_sid": ACCOUNT_SID, "num_segments": "1", "direction": "outbound-api"})

        def do_GET(self) -> None:  # noqa: N802
            if urlsplit(self.path).path == "/_arrivals":
                with lock:
                    self._json(200, arrivals)
                return
            if urlsplit(self.path).path == "/_stats":
                with lock:
                    per_mail = Counter(rcpt for rcpt, _ in mails)
                    self._json(200, {
                        "sms_total": sum(texts.values()), "sms_recipients": len(texts),
                        "sms_max_per_recipient": max(texts.values(), default=0),
                        "email_total": sum(mails.values()), "email_recipients": len(per_mail),
                        "email_max_ids_per_recipient": max(per_mail.values(), default=0),
                        "push_total": sum(pushes.values()), "push_recipients": len(pushes),
                        "push_max_per_recipient": max(pushes.values(), default=0),
                    })
                return
            self._json(200, {"messages": [], "next_page_uri": None, "page": 0, "page_size": 50})

        def _json(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    class Inbox:
        async def handle_MAIL(self, server, session, envelope, address, options):  # noqa: N802
            # An email arrives when its transaction starts, as a text does with its request's first bytes: the
            # rest of the exchange (three more round trips, on two busy cores) is not the sender's pacing.
            envelope.mail_from, envelope.started = address, time.time()
            envelope.mail_options.extend(options)
            return "250 OK"

        async def handle_DATA(self, server, session, envelope):  # noqa: N802
            match = re.search(rb"^Message-ID: (<[^>]+>)", envelope.content, re.MULTILINE | re.IGNORECASE)
            with lock:
                for rcpt in envelope.rcpt_tos:
                    mails[(rcpt, match.group(1).decode() if match else "")] += 1
                    arrivals["email"].append([getattr(envelope, "started", time.time()), rcpt, time.time()])
            return "250 OK"

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    http.socket.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)  # inherited by every accepted connection
    http.daemon_threads = True
    threading.Thread(target=http.serve_forever, daemon=True).start()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        smtp_port = probe.getsockname()[1]
    smtp = Controller(Inbox(), hostname="127.0.0.1", port=smtp_port)
    smtp.start()
    ready.send((http.server_address[1], smtp_port))
    stop.wait()
    smtp.stop()
    http.shutdown()


def _arrival(connection: socket.socket) -> float:
    """When the next request's first bytes reached this machine's network stack (the kernel's receive stamp, read
    without consuming them), or now where the system gives none.

    A provider counts a text when it reaches its edge. Stamped by the handler instead, a text would carry this
    process's own scheduling delays (it shares two cores with the senders and the database): a 60 ms stall here
    would show as six texts too many in one second that the senders never sent."""
    try:
        _, ancillary, _, _ = connection.recvmsg(1, 64, socket.MSG_PEEK)
    except OSError:
        return time.time()
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            seconds, nanoseconds = struct.unpack("qq", data[:16])
            return seconds + nanoseconds / 1e9
    return time.time()


def stats(twilio_url: str) -> dict:
    import requests

    return requests.get(f"{twilio_url}/_stats", timeout=30).json()


# --- the run ---------------------------------------------------------------------------------------------------


def populate(sessions, count: int, only: str | None = None, *, contact=None, more=None,
             tables: tuple[str, ...] = ()) -> None:
    """`count` active subscribers following the board's both panels: even ones by SMS, odd ones by email (or all
    by the channel `only` names; `contact(i)` gives another channel and address, `more(session, ids, now)` stores
    what goes with them, in `tables`).

    Stored with the driver's executemany, 50,000 families a transaction, then the tables analysed on PostgreSQL
    (a live database has statistics; a table filled a second ago has none, and its query plans would be guesses:
    250,000 push digests planned by nested loops took more than 18 minutes)."""
    from sqlalchemy import text

    from notifier.db import insert_many, utcnow
    from notifier.subscribers.models import Contact, Follow, Subscriber

    def by_sms_or_email(i: int) -> dict:
        return {"channel": "sms" if _by_text(i, only) else "email",
                "address": f"+1{2_000_000_000 + i}" if _by_text(i, only) else f"parent{i}@example.org"}

    now = utcnow()
    for start in range(1, count + 1, 50_000):
        ids = range(start, min(start + 50_000, count + 1))
        with sessions() as session, session.begin():
            insert_many(session, Subscriber.__table__, [
                {"id": i, "language": "fr" if i % 5 == 0 else "en", "notify_on_effect": False, "created_at": now}
                for i in ids])
            insert_many(session, Follow.__table__, [
                {"subscriber_id": i, "board_id": BOARD, "panel": panel} for i in ids
                for panel in ("elementary", "secondary")])
            insert_many(session, Contact.__table__, [{
                "id": i, "subscriber_id": i, **(contact or by_sms_or_email)(i),
                "status": "active", "frequency": "immediate", "created_at": now, "seen_event_id": 0,
                "morning_reminder": False, "link_key": f"bench-{i}",
            } for i in ids])
            if more:
                more(session, ids, now)
    with sessions() as session, session.begin():
        if session.get_bind().dialect.name == "postgresql":
            for table in ("subscribers", "follows", "contacts", *tables, "outbox"):
                session.execute(text(f"ANALYZE {table}"))


def bare_sdk_rate(twilio_url: str, concurrency: int, messages: int) -> float:
    """Messages/s of a plain loop of `client.messages.create` at the same concurrency against the same server."""
    from twilio.rest import Client

    from notifier.delivery.channels.sms import _RebasedHttpClient

    per_thread = messages // concurrency

    def loop(worker: int) -> None:
        client = Client(ACCOUNT_SID, AUTH_TOKEN, environment={},
                        http_client=_RebasedHttpClient(twilio_url, timeout=10))
        for n in range(per_thread):
            client.messages.create(to=f"+1{3_000_000_000 + worker * per_thread + n}", from_="+16135550100",
                                   body="Bare SDK loop", validity_period=7200)

    threads = [threading.Thread(target=loop, args=(w,)) for w in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return per_thread * concurrency / (time.perf_counter() - started)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscribers", type=int, default=100_000)
    parser.add_argument("--database-url", help="default: a temporary SQLite file")
    parser.add_argument("--sms-concurrency", type=int, default=None,
                        help="texting threads per process (default: 4; with --workers, the product's default)")
    parser.add_argument("--email-concurrency", type=int, default=None,
                        help="email threads per process (default: 2; with --workers, the product's default)")
    parser.add_argument("--bare-messages", type=int, default=5_000)
    parser.add_argument("--plan-only", action="store_true",
                        help="record the change and plan every digest, send nothing (memory at very large N)")
    parser.add_argument("--sms-only", action="store_true",
                        help="every subscriber by SMS (diagnostic: the SMS path without email sharing the CPU)")
    parser.add_argument("--email-only", action="store_true",
                        help="with --workers: every subscriber by email (the email path without texts sharing the CPU)")
    parser.add_argument("--push-only", action="store_true",
                        help="every subscriber by Web Push, in this process: the push rate against its cap, and the "
                        "first notification's delay")
    parser.add_argument("--push-cap", type=float, default=200.0, help="push notifications per second (--push-only)")
    parser.add_argument("--workers", type=int, default=None,
                        help="run the real processes: the clock (which sends) and this many workers")
    parser.add_argument("--cap", type=float, default=10.0, help="texts per second, shared (with --workers)")
    parser.add_argument("--email-cap", type=float, default=50.0, help="emails per second, shared (with --workers)")
    parser.add_argument("--redis-url", help="shared rate between the processes (needed with --workers >= 1)")
    parser.add_argument("--correct-after", type=float, default=None,
                        help="seconds after the first text: record the correction (the board open again)")
    parser.add_argument("--stop-after", type=float, default=None,
                        help="with --workers: stop this many seconds after the first text (a sample of a long run)")
    parser.add_argument("--dump", help="with --workers: write every arrival (time, recipient) to this JSON file, "
                        "and each process's log beside it (FILE.clock.log, ...)")
    parser.add_argument("--timeout", type=float, default=600.0, help="give up waiting after this many seconds")
    args = parser.parse_args()
    if args.email_only and (args.workers is None or args.sms_only):
        parser.error("--email-only goes with --workers, and not with --sms-only")
    if args.workers is None and args.sms_concurrency is None:  # the in-process run compares with a bare SDK loop
        args.sms_concurrency = 4
    if args.workers is None and args.email_concurrency is None:
        args.email_concurrency = 2

    workdir = Path(tempfile.mkdtemp(prefix="fanout-"))
    receiver, sender = multiprocessing.Pipe(duplex=False)
    stop = multiprocessing.Event()
    peers = multiprocessing.Process(target=_peers, args=(sender, stop), daemon=True)
    peers.start()
    twilio_port, smtp_port = receiver.recv()
    twilio_url = f"http://127.0.0.1:{twilio_port}"
    try:
        if args.push_only:
            return run_push(args, workdir, twilio_url, smtp_port)
        if args.workers is not None:
            return run_processes(args, workdir, twilio_url, smtp_port)
        return run(args, workdir, twilio_url, smtp_port)
    finally:
        stop.set()
        peers.join(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


def environment(args, workdir: Path, twilio_url: str, smtp_port: int) -> dict[str, str]:
    """The settings of every process of the run, as environment variables."""
    database_url = args.database_url or f"sqlite:///{workdir / 'bench.sqlite3'}"
    return {
        "NOTIFIER_DATABASE_URL": database_url, "NOTIFIER_BOARDS_FILE": str(workdir / "boards.yaml"),
        "NOTIFIER_SECRET_KEY": "bench", "NOTIFIER_BASE_URL": "https://status.example.org",
        "NOTIFIER_INSTANCE_DIR": str(workdir), "NOTIFIER_SMS_QUIET_HOURS": "",
        "NOTIFIER_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}", "NOTIFIER_MAIL_FROM": "Status <status@example.org>",
        "TWILIO_ACCOUNT_SID": ACCOUNT_SID, "TWILIO_AUTH_TOKEN": AUTH_TOKEN, "TWILIO_FROM_NUMBER": "+16135550100",
        "TWILIO_API_BASE_URL": twilio_url, "NOTIFIER_SMS_PER_SECOND": "1000000",
        "NOTIFIER_EMAIL_PER_SECOND": "1000000",
        "NOTIFIER_FOLLOW_BOARDS_FILE": "1",  # the run edits boards.yaml as a developer would; the clock publishes it
        **({"NOTIFIER_SMS_CONCURRENCY": str(args.sms_concurrency)} if args.sms_concurrency else {}),
        **({"NOTIFIER_EMAIL_CONCURRENCY": str(args.email_concurrency)} if args.email_concurrency else {}),
    }


def prepare(args, settings):
    """A fresh schema with the subscribers, and the boards as the clock first saw them."""
    from sqlalchemy import text

    from notifier import migrate
    from notifier.db import make_engine, make_sessionmaker
    from notifier.status import cycle

    shutil.copy(ROOT / "boards.yaml", settings.boards_file)
    engine = make_engine(settings.database_url)
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE"))
            connection.execute(text("CREATE SCHEMA public"))
    migrate.upgrade(settings.database_url)
    sessions = make_sessionmaker(engine)

    started = time.perf_counter()
    populate(sessions, args.subscribers, "sms" if args.sms_only else "email" if args.email_only else None)
    print(f"{args.subscribers:,} subscribers created in {time.perf_counter() - started:.1f} s "
          f"(peak RSS so far {peak_rss_mb():.0f} MB)")
    cycle.run(sessions, str(settings.boards_file), follow=True)
    return engine, sessions


def _plan_in_child(environ: dict, answer) -> None:
    """In a fresh process (its peak RSS is planning's alone): one cycle that records the closure and plans."""
    from notifier import clock
    from notifier.config import Settings
    from notifier.db import make_engine, make_sessionmaker

    settings = Settings.from_env(environ)
    sessions = make_sessionmaker(make_engine(settings.database_url))
    started = time.perf_counter()
    clock.tick(settings, sessions, deliver=False)
    answer.send((time.perf_counter() - started, peak_rss_mb()))


def _plan_once(environ: dict) -> tuple[float, float]:
    receiver, sender = multiprocessing.get_context("spawn").Pipe(duplex=False)
    child = multiprocessing.get_context("spawn").Process(target=_plan_in_child, args=(environ, sender))
    child.start()
    seconds, rss = receiver.recv()
    child.join()
    return seconds, rss


def plan_only(args, environ: dict, settings, sessions) -> int:
    """Plan N contacts in a fresh process and print contacts/s; then the same for 10,000 and the RSS ratio."""
    from sqlalchemy import func, select

    from notifier.delivery.outbox import OutboxRow

    seconds, rss = _plan_once(environ)
    with sessions() as session:
        rows = session.scalar(select(func.count()).select_from(OutboxRow))
    print(f"planned {rows:,} digests in {seconds:.1f} s: {rows / seconds:,.0f} contacts/s; "
          f"planning process peak RSS {rss:.0f} MB")
    if args.subscribers > 10_000:
        small = argparse.Namespace(**{**vars(args), "subscribers": 10_000})
        prepare(small, settings)
        set_status(settings, "open", "closed")
        small_seconds, small_rss = _plan_once(environ)
        print(f"10,000 planned in {small_seconds:.1f} s, peak RSS {small_rss:.0f} MB; "
              f"RSS ratio {args.subscribers:,} / 10,000: {rss / small_rss:.2f} (target <= 1.15)")
    return 0 if rows == args.subscribers else 1


def _ending_alone(sessions) -> int:
    """Contacts sent a digest about the reopening and none about the closure: what a correction must never do."""
    from sqlalchemy import select

    from notifier.delivery.outbox import OutboxRow, RowStatus, event_ids
    from notifier.status.history import ChangeEvent

    with sessions() as session:
        closing = {event.id for event in session.scalars(select(ChangeEvent)) if event.after == "closed"}
        heard: dict[int, bool] = {}
        for contact_id, stored in session.execute(select(OutboxRow.contact_id, OutboxRow.event_ids)
                                                  .where(OutboxRow.status == RowStatus.SENT.value)):
            heard[contact_id] = heard.get(contact_id, False) or bool(closing & set(event_ids(stored)))
    return sum(1 for closure in heard.values() if not closure)


def _by_text(number: int, only: str | None) -> bool:
    return only == "sms" or (only is None and number % 2 == 0)


def set_status(settings, old: str, new: str) -> None:
    source = settings.boards_file.read_text()
    block = source.index(f"- id: {BOARD}\n")
    settings.boards_file.write_text(source[:block] + source[block:].replace(f"status: {old}", f"status: {new}", 1))


def run(args, workdir: Path, twilio_url: str, smtp_port: int) -> int:
    from sqlalchemy import func, select

    from notifier import clock
    from notifier.config import Settings
    from notifier.delivery.outbox import OutboxRow

    environ = environment(args, workdir, twilio_url, smtp_port)
    settings = Settings.from_env(environ)
    engine, sessions = prepare(args, settings)
    set_status(settings, "open", "closed")

    if args.plan_only:
        return plan_only(args, environ, settings, sessions)

    started = time.perf_counter()
    cycles = 0
    while True:
        cycles += 1
        result = clock.tick(settings, sessions)
        assert result.ok, result.problems
        with sessions() as session:
            waiting = session.scalar(select(func.count()).where(OutboxRow.status.in_(("pending", "sending"))))
        if not waiting or cycles > 20:
            break
    total = time.perf_counter() - started

    rates = {}
    with sessions() as session:
        for channel in ("sms", "email"):
            count, first, last = session.execute(
                select(func.count(), func.min(OutboxRow.claimed_at), func.max(OutboxRow.sent_at))
                .where(OutboxRow.channel == channel, OutboxRow.status == "sent")).one()
            rates[channel] = (count, count / max((last - first).total_seconds(), 1e-6) if count else 0.0)
        planned = session.scalar(select(func.min(OutboxRow.claimed_at)))
        created = session.scalar(select(func.min(OutboxRow.created_at)))
    rss = peak_rss_mb()
    bare = bare_sdk_rate(twilio_url, args.sms_concurrency, args.bare_messages)
    seen = stats(twilio_url)
    expected_sms, expected_email = args.subscribers // 2, args.subscribers - args.subscribers // 2
    if args.sms_only:
        expected_sms, expected_email = args.subscribers, 0
    sms_received = seen["sms_total"] - (args.bare_messages // args.sms_concurrency) * args.sms_concurrency

    print(f"database: {engine.dialect.name}; {cycles} cycle(s), {total:.1f} s in all "
          f"(planning until the first claim: {(planned - created).total_seconds() if planned else 0:.1f} s)")
    for channel, (count, rate) in rates.items():
        print(f"{channel:>5}: {count:,} sent, {rate:,.0f} msgs/s")
    print(f"bare SDK loop at concurrency {args.sms_concurrency}: {bare:,.0f} msgs/s; "
          f"ratio {rates['sms'][1] / bare:.2f} (target >= 0.8)")
    print(f"peak RSS: {rss:.0f} MB")
    exactly_once = (
        rates["sms"][0] == expected_sms and sms_received == expected_sms
        and seen["sms_max_per_recipient"] == min(expected_sms, 1)
        and rates["email"][0] == expected_email and seen["email_recipients"] == expected_email
        and seen["email_max_ids_per_recipient"] == min(expected_email, 1) and seen["email_total"] == expected_email
    )
    print(f"exactly once: {'yes' if exactly_once else 'NO'} (server saw {sms_received:,} texts to "
          f"{seen['sms_recipients'] - args.bare_messages // args.sms_concurrency * args.sms_concurrency:,} numbers "
          f"and {seen['email_total']:,} emails to {seen['email_recipients']:,} addresses; "
          f"expected {expected_sms:,} and {expected_email:,})")
    engine.dispose()
    return 0 if exactly_once else 1


def populate_push(sessions, count: int, push_url: str) -> None:
    """`count` subscribers following the board's both panels by Web Push, each with a subscription of its own on the
    local push service (one browser key pair for all: the service reads nothing, and the sender encrypts each
    notice afresh whatever the key)."""
    import base64

    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    from notifier.db import insert_many
    from notifier.subscribers.push import PushSubscription, endpoint_hash

    def b64(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    point = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(Encoding.X962,
                                                                              PublicFormat.UncompressedPoint)
    p256dh, auth = b64(point), b64(os.urandom(16))

    def subscriptions(session, ids, now) -> None:
        insert_many(session, PushSubscription.__table__, [{
            "contact_id": i, "endpoint": f"{push_url}/push/{i}",
            "endpoint_hash": endpoint_hash(f"{push_url}/push/{i}"),
            "p256dh": p256dh, "auth": auth, "created_at": now, "updated_at": now,
        } for i in ids])

    populate(sessions, count, contact=lambda i: {"channel": "push", "address": f"wp-bench-{i}"},
             more=subscriptions, tables=("push_subscriptions",))


def run_push(args, workdir: Path, twilio_url: str, smtp_port: int) -> int:
    """--push-only: one closure to every subscriber by Web Push, sent by this process's drain at `--push-cap`."""
    import requests
    from sqlalchemy import func, select

    from notifier import clock, migrate
    from notifier.cli.push import new_private_pem
    from notifier.config import Settings
    from notifier.db import make_engine, make_sessionmaker
    from notifier.delivery.outbox import OutboxRow
    from notifier.status import cycle

    environ = {**environment(args, workdir, twilio_url, smtp_port), "NOTIFIER_VAPID_PRIVATE_KEY": new_private_pem(),
               "NOTIFIER_VAPID_SUBJECT": "mailto:bench@example.org", "NOTIFIER_PUSH_SERVICES": twilio_url,
               "NOTIFIER_PUSH_PER_SECOND": str(args.push_cap)}
    settings = Settings.from_env(environ)
    shutil.copy(ROOT / "boards.yaml", settings.boards_file)
    engine = make_engine(settings.database_url)
    migrate.upgrade(settings.database_url)
    sessions = make_sessionmaker(engine)
    started = time.perf_counter()
    populate_push(sessions, args.subscribers, twilio_url)
    print(f"{args.subscribers:,} push subscriptions created in {time.perf_counter() - started:.1f} s")
    cycle.run(sessions, str(settings.boards_file), follow=True)
    set_status(settings, "open", "closed")

    began = time.time()
    for _ in range(20):
        assert clock.tick(settings, sessions).ok
        with sessions() as session:
            if not session.scalar(select(func.count()).where(OutboxRow.status.in_(("pending", "sending")))):
                break
    arrivals = sorted(a[0] for a in requests.get(f"{twilio_url}/_arrivals", timeout=60).json()["push"])
    seen = stats(twilio_url)
    first, last = arrivals[0], arrivals[-1]
    rate = (len(arrivals) - 1) / max(last - first, 1e-6)
    print(f"database: {engine.dialect.name}; push cap {args.push_cap:g}/s, "
          f"{settings.push_concurrency or 'default'} thread(s)")
    print(f"push: {len(arrivals):,} notifications in {last - first:.1f} s: mean {rate:,.1f}/s, "
          f"mean / cap {rate / args.push_cap:.3f} (target >= 0.95); busiest second {_busiest_second(arrivals)}")
    print(f"first notification {first - began:.2f} s after the cycle that recorded the closure started "
          f"(target <= 2 s)")
    print(f"peak RSS: {peak_rss_mb():.0f} MB")
    once = seen["push_total"] == seen["push_recipients"] == args.subscribers and seen["push_max_per_recipient"] == 1
    print(f"exactly once: {'yes' if once else 'NO'} ({seen['push_total']:,} notifications to "
          f"{seen['push_recipients']:,} subscriptions; expected {args.subscribers:,})")
    engine.dispose()
    return 0 if once else 1


def _vm_hwm_mb(pid: int) -> float:
    """A live process's peak resident memory (VmHWM), in MB; 0 when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _busiest_second(times: list[float]) -> int:
    import bisect

    return max((bisect.bisect_left(times, t + 1.0) - i for i, t in enumerate(times)), default=0)


def run_processes(args, workdir: Path, twilio_url: str, smtp_port: int) -> int:
    """The clock (sending too) and `--workers` workers as real processes, at `--cap` texts/s shared through Redis."""
    import signal
    import subprocess

    import requests
    from sqlalchemy import func, select

    from notifier.config import Settings
    from notifier.delivery.outbox import OutboxRow
    from notifier.status.history import ChangeEvent, Cycle

    if args.workers and not args.redis_url:
        print("--workers >= 1 needs --redis-url: several senders share one rate through Redis", file=sys.stderr)
        return 2
    env = {**environment(args, workdir, twilio_url, smtp_port), "NOTIFIER_SMS_PER_SECOND": str(args.cap),
           "NOTIFIER_EMAIL_PER_SECOND": str(args.email_cap), "NOTIFIER_CHECK_INTERVAL": "1"}
    if args.redis_url:
        import redis

        redis.Redis.from_url(args.redis_url).flushdb()  # no pace left from an earlier run
        env["NOTIFIER_REDIS_URL"] = args.redis_url
    settings = Settings.from_env(env)
    engine, sessions = prepare(args, settings)
    full_env = {**{k: v for k, v in os.environ.items() if not k.startswith(("NOTIFIER_", "TWILIO_"))}, **env,
                "PYTHONUNBUFFERED": "1"}
    logs = {}
    procs = {}

    def start(name: str, command: str) -> None:
        logs[name] = workdir / f"{name}.log"
        procs[name] = subprocess.Popen([sys.executable, "-m", "notifier", command], cwd=ROOT, env=full_env,
                                       stdout=logs[name].open("w"), stderr=subprocess.STDOUT, start_new_session=True)

    def log_text(name: str) -> str:
        return logs[name].read_text(errors="replace")

    def first_arrival() -> float | None:
        """When the first message of either channel arrived, or None."""
        times = [arrival[0] for channel in arrivals().values() for arrival in channel]
        return min(times) if times else None

    def wait(condition, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(0.1)
        return False

    def arrivals() -> dict:
        return requests.get(f"{twilio_url}/_arrivals", timeout=30).json()

    def newest_event():
        with sessions() as session:
            return session.scalar(select(ChangeEvent).order_by(ChangeEvent.id.desc()).limit(1))

    start("clock", "clock")
    for number in range(args.workers):
        start(f"worker-{number + 1}", "worker")
    peaks: dict[str, float] = {}
    try:
        wait(lambda: "sending loop started" in log_text("clock"), 60)
        wait(lambda: all("sending loop started" in log_text(n) for n in procs), 60)
        set_status(settings, "open", "closed")
        wait(lambda: first_arrival() is not None, args.timeout)
        corrected_at = None
        if args.correct_after is not None:
            first = first_arrival()
            time.sleep(max(0.0, first + args.correct_after - time.time()))
            saved_at = time.time()
            set_status(settings, "closed", "open")
            deadline = time.monotonic() + 60
            while newest_event().after != "open" and time.monotonic() < deadline:
                time.sleep(0.01)
            committed_at = time.time()  # within about 10 ms of the commit that recorded the correction
            corrected_at = newest_event().recorded_at.timestamp()
        seen = [-1]

        def settled() -> bool:
            with sessions() as session:
                waiting = session.scalar(select(func.count()).where(OutboxRow.status.in_(("pending", "sending"))))
            count = sum(len(v) for v in arrivals().values())
            done = not waiting and count == seen[0]
            seen[0] = count
            return done

        if args.stop_after is not None:  # a sample of a long fan-out: stop S seconds after the first text
            time.sleep(max(0.0, first_arrival() + args.stop_after - time.time()))
        else:
            wait(lambda: settled() or time.sleep(2.0), args.timeout)
        for name, proc in procs.items():
            peaks[name] = _vm_hwm_mb(proc.pid)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)

    seen_by = arrivals()
    with sessions() as session:
        closure = session.scalar(select(ChangeEvent).where(ChangeEvent.cycle_id.is_not(None))
                                 .order_by(ChangeEvent.id).limit(1))
        cycle_start = session.get(Cycle, closure.cycle_id).started_at.timestamp()
    texts = sorted(t for t, *_ in seen_by["sms"])
    handled = sorted(at for _, _, at in seen_by["sms"])
    if args.dump:
        Path(args.dump).write_text(json.dumps(seen_by))
        for name, path in logs.items():  # the processes' logs beside it, for a closer look
            Path(f"{args.dump}.{name}.log").write_bytes(path.read_bytes())
    mails = sorted(t for t, *_ in seen_by["email"])
    mails_done = sorted(at for *_, at in seen_by["email"])
    planning = re.findall(r"planned (\d+) digest\(s\) for (\d+) contact\(s\) in ([\d.]+) s, (\d+) contacts/s",
                          log_text("clock"))
    print(f"database: {engine.dialect.name}; redis: {'yes' if args.redis_url else 'no'}; clock + {args.workers} "
          f"worker(s); cap {args.cap:g} texts/s, {args.email_cap:g} emails/s")
    for name, times, cap in (("texts", texts, args.cap), ("emails", mails, args.email_cap)):
        if len(times) > 1:
            mean = (len(times) - 1) / (times[-1] - times[0])
            print(f"{name}: {len(times):,} received; busiest 1-s window {_busiest_second(times)} = "
                  f"{_busiest_second(times) / cap:.2f} x cap; mean {mean:.2f}/s = {mean / cap:.2f} x cap")
    if len(handled) > 1:
        print(f"texts as stamped by the server's handler instead: busiest 1-s window {_busiest_second(handled)} = "
              f"{_busiest_second(handled) / args.cap:.2f} x cap")
    if len(mails_done) > 1:
        print(f"emails as stamped at the end of their DATA instead: busiest 1-s window {_busiest_second(mails_done)} "
              f"= {_busiest_second(mails_done) / args.email_cap:.2f} x cap")
    if texts:
        print(f"first text {texts[0] - cycle_start:.2f} s after the start of the cycle that recorded the closure")
    for created, contacts, took, rate in planning:
        print(f"planning: {contacts} contact(s) -> {created} digest(s) in {took} s = {rate} contacts/s")
    print("peak RSS: " + ", ".join(f"{name} {mb:.0f} MB" for name, mb in peaks.items())
          + f", bench (peers excluded) {peak_rss_mb():.0f} MB")
    if corrected_at is not None:
        print(f"correction saved {saved_at - cycle_start:.2f} s after the closure's cycle started; the cycle that "
              f"recorded it started {corrected_at - saved_at:.2f} s after the save and committed it "
              f"{committed_at - corrected_at:.2f} s later")
        for channel, name in (("sms", "texts"), ("email", "emails")):
            firsts: dict[str, float] = {}
            counts: Counter = Counter()
            for at, to, *_ in sorted(seen_by[channel]):
                firsts.setdefault(to, at)
                counts[to] += 1
            stale = sum(1 for at in firsts.values() if at > corrected_at)
            late = sum(1 for at in firsts.values() if at > committed_at)
            print(f"  {name}: {stale} stale left after the cycle began ({late} after the commit); "
                  f"{len(counts)} recipient(s) got the closure, "
                  f"{sum(1 for n in counts.values() if n == 2)} of them the correction exactly once, "
                  f"{sum(1 for n in counts.values() if n == 1)} not yet or never, "
                  f"{sum(1 for n in counts.values() if n > 2)} more than twice")
        print(f"  told the closure was over without having been told of it: {_ending_alone(sessions)} "
              "(from the outbox's sent rows; must be 0)")
    engine.dispose()
    return 0


if __name__ == "__main__":
    os.environ.pop("TWILIO_EDGE", None)
    os.environ.pop("TWILIO_REGION", None)
    sys.exit(main())
