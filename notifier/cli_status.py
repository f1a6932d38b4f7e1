"""Operators' commands for delivery: `python -m notifier status` (what is queued, sent, failed, delivered, and how
the last cycle went) and `python -m notifier worker` (an extra process draining the outbox beside the clock).
"""

from __future__ import annotations

import logging
import time

import click
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from notifier.db import make_engine, make_sessionmaker
from notifier.history import last_cycle
from notifier.outbox import DeliveryReceipt, OutboxRow

log = logging.getLogger(__name__)
COLUMNS = ("pending", "sending", "sent", "delivered", "undelivered", "failed", "cancelled")


def counts(session: Session) -> dict[str, dict[str, int]]:
    """Outbox rows per channel and status, plus `delivered`/`undelivered` from the providers' callbacks."""
    table: dict[str, dict[str, int]] = {}
    for channel, status, number in session.execute(
        select(OutboxRow.channel, OutboxRow.status, func.count()).group_by(OutboxRow.channel, OutboxRow.status)
    ):
        table.setdefault(channel, dict.fromkeys(COLUMNS, 0))[status] = number
    receipts = (
        select(OutboxRow.channel, DeliveryReceipt.status, func.count())
        .join(DeliveryReceipt, DeliveryReceipt.provider_id == OutboxRow.provider_id)
        .where(DeliveryReceipt.status.in_(("delivered", "undelivered")))
        .group_by(OutboxRow.channel, DeliveryReceipt.status)
    )
    for channel, status, number in session.execute(receipts):
        table.setdefault(channel, dict.fromkeys(COLUMNS, 0))[status] = number
    return table


@click.command("status")
def status() -> None:
    """Print pending/sent/failed/delivered counts per channel and the last cycle's time and outcome."""
    from notifier.cli_settings import settings

    sessions = make_sessionmaker(make_engine(settings().database_url))
    with sessions() as session:
        table = counts(session)
        cycle = last_cycle(session)
    click.echo(f"{'channel':<8}" + "".join(f"{name:>12}" for name in COLUMNS))
    for channel in sorted(table or {"email": {}, "sms": {}}):
        row = table.get(channel, {})
        click.echo(f"{channel:<8}" + "".join(f"{row.get(name, 0):>12}" for name in COLUMNS))
    if cycle is None:
        click.echo("last cycle: none yet")
    else:
        finished = cycle.finished_at.isoformat(timespec="seconds") if cycle.finished_at else "still running"
        click.echo(f"last cycle: #{cycle.id} started {cycle.started_at.isoformat(timespec='seconds')}, "
                   f"finished {finished}: {cycle.outcome} ({cycle.detail})")


@click.command("worker")
@click.option("--every", default=2.0, show_default=True, help="Seconds between drains.")
@click.option("--once", is_flag=True, help="Drain once and exit (for cron and tests).")
def worker(every: float, once: bool) -> None:
    """Drain the outbox beside the clock; several workers never send a row twice."""
    from notifier import delivery
    from notifier.cli_settings import settings

    config = settings()
    sessions = make_sessionmaker(make_engine(config.database_url))
    log.info("worker started: draining the outbox every %.1f s", every)
    while True:
        delivery.drain(sessions, config)
        if once:
            return
        time.sleep(every)
