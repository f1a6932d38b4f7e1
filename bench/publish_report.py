"""Publish report benchmark: one publish of N outbox rows (half texts, half emails; most texts with a receipt), plus
older rows of other publishes, then time the staff report of that publish and the recipients of a board's list.

    .venv/bin/python bench/publish_report.py --rows 250000
    .venv/bin/python bench/publish_report.py --rows 250000 --database-url postgresql://postgres@127.0.0.1/bench

The database is emptied first (its `public` schema on PostgreSQL): never point it at real data.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

START = datetime(2026, 11, 23, 17, 0, tzinfo=UTC)
BATCH = 10_000
BOTH = ("elementary", "secondary")


def _fill(sessions, rows: int, older: int, publishes: int) -> None:
    """`publishes - 1` older publishes (`older` rows between them), then the one measured (`rows` rows, sent over
    about 40 minutes)."""
    from sqlalchemy import insert

    from notifier.delivery.outbox import DeliveryReceipt, OutboxRow
    from notifier.status.history import ChangeEvent, Cycle

    earlier = publishes - 1
    with sessions() as session, session.begin():
        session.add_all([Cycle(id=n, started_at=START, outcome="ok") for n in range(1, publishes + 1)])
        session.flush()
        for n in range(1, earlier + 1):  # events 10, 11 (cycle 1), 12, 13 (cycle 2), …
            at = START - timedelta(days=1, hours=earlier - n)
            session.add_all([ChangeEvent(id=8 + 2 * n + k, cycle_id=n, board_id="tdsb", kind="panel_status",
                                         panel=panel, recorded_at=at) for k, panel in enumerate(BOTH)])
        session.add_all([ChangeEvent(id=2 + k, cycle_id=publishes, board_id="tdsb", kind="panel_status", panel=panel,
                                     recorded_at=START) for k, panel in enumerate(BOTH)])
    batches = [(f"{8 + 2 * n},{9 + 2 * n}", older // earlier, START - timedelta(days=1, hours=earlier - n))
               for n in range(1, earlier + 1)]
    number = 0
    for events, count, base in [*batches, ("2,3", rows, START)]:
        for offset in range(0, count, BATCH):
            outbox, receipts = [], []
            for i in range(offset, min(offset + BATCH, count)):
                number += 1
                channel = "sms" if number % 2 else "email"
                sent = base + timedelta(seconds=i / 100)
                status = "failed" if i % 97 == 0 else "sent"
                provider = f"SM{number:032d}" if channel == "sms" and status == "sent" else None
                outbox.append({"id": number, "contact_id": None, "channel": channel, "digest_key": f"k{number}",
                               "event_ids": events, "status": status, "due_at": base, "created_at": base,
                               "sent_at": sent if status == "sent" else None, "claimed_at": sent,
                               "provider_id": provider, "attempts": 1, "priority": 1, "urgent": True})
                if provider and i % 5:
                    receipts.append({"provider_id": provider, "status": "delivered" if i % 51 else "undelivered",
                                     "updated_at": sent + timedelta(seconds=3)})
            with sessions() as session, session.begin():
                session.execute(insert(OutboxRow), outbox)
                if receipts:
                    session.execute(insert(DeliveryReceipt), receipts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=250_000)
    parser.add_argument("--older", type=int, default=50_000, help="rows of the board's older publishes")
    parser.add_argument("--publishes", type=int, default=30, help="publishes of the board, the measured one included")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from sqlalchemy import text

    from notifier import migrate
    from notifier.db import make_engine, make_sessionmaker
    from notifier.delivery import publishes, report

    url = args.database_url or f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    engine = make_engine(url)
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    migrate.upgrade(url)
    sessions = make_sessionmaker(engine)
    began = time.perf_counter()
    _fill(sessions, args.rows, args.older, args.publishes)
    with engine.begin() as connection:  # what autovacuum does soon after a bulk load: the planner needs statistics
        connection.execute(text("ANALYZE"))
    print(f"{engine.dialect.name}: {args.rows:,} rows of the publish, {args.older:,} of {args.publishes - 1} older, "
          f"filled in {time.perf_counter() - began:.1f} s")
    with sessions() as session:
        publish = publishes.find(session, "tdsb", 2)
        for _ in range(args.rounds):
            began = time.perf_counter()
            built = report.build(session, publish, START + timedelta(hours=1))
            took = time.perf_counter() - began
            began = time.perf_counter()
            listed = publishes.of_board(session, "tdsb")
            counts = publishes.recipients(session, [p for p, _ in listed])
            listing = time.perf_counter() - began
            print(f"report {took * 1000:.0f} ms, list with recipients {listing * 1000:.0f} ms")
        for channel in built.channels:
            print(f"  {channel.channel}: {channel.recipients:,} recipients, {channel.sent:,} sent, "
                  f"{channel.delivered} delivered, {channel.failed:,} failed, {len(channel.points)} points "
                  f"every {built.step.total_seconds():.0f} s")
        print(f"  list: {len(counts)} publishes, {sum(sum(c.values()) for c in counts.values()):,} recipients")


if __name__ == "__main__":
    main()
