"""`python -m notifier status`: paused channels first, then what is queued, sent, failed and delivered per channel, how
the last cycle went, and which processes are sending."""

from __future__ import annotations

import click
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from notifier.db import make_engine, make_sessionmaker
from notifier.delivery import health, senders
from notifier.delivery.outbox import DeliveryReceipt, OutboxRow
from notifier.status.history import last_cycle

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
    from notifier.cli.settings import settings

    sessions = make_sessionmaker(make_engine(settings().database_url))
    with sessions() as session:
        table = counts(session)
        cycle = last_cycle(session)
        pauses = health.pauses(session)
        sending = senders.live(session)
    for pause in pauses:  # first: nothing else matters as much
        click.echo(pause.line())
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
    if not sending:
        click.echo("sending: no sending process is running (start the clock, or a worker)")
    for row in sending:
        click.echo(f"sending: {row.kind} pid {row.pid} on {row.host}, since "
                   f"{row.started_at.isoformat(timespec='seconds')}")
