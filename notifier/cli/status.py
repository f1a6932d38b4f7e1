"""`python -m notifier status`: paused channels first, then what is queued, sent, failed and delivered per channel, how
far the latest publish has got (per channel: sent, remaining, failed, rate, expected end), how the last cycle went,
and which processes are sending."""

from __future__ import annotations

from datetime import datetime

import click
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from notifier.db import make_engine, make_sessionmaker, utcnow
from notifier.delivery import health, progress, senders
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


def progress_lines(found: progress.PublishProgress | None, now: datetime) -> list[str]:
    """The latest publish's sending, per channel: sent, remaining, failed, rate, expected end (UTC)."""
    if found is None:
        return ["latest publish: none yet"]
    events = ",".join(str(e) for e in found.event_ids)
    lines = [f"latest publish: {found.board_id} at {found.published_at.isoformat(timespec='seconds')} "
             f"(events {events}){': all sent' if found.done else ''}{': still planning' if found.planning else ''}",
             f"{'channel':<8}{'sent':>10}{'remaining':>11}{'failed':>10}{'rate':>12}  expected end"]
    for row in found.channels:
        rate = f"{row.rate:.1f}/s" + ("" if row.measured else "*")
        if row.expected_end is None:
            end = "done"
        else:
            hours, minutes = progress.minutes_and_hours((row.expected_end - now).total_seconds())
            end = f"{row.expected_end.isoformat(timespec='seconds')} (in {hours} h {minutes:02d} min)"
        lines.append(f"{row.channel:<8}{row.sent:>10}{row.remaining:>11}{row.failed:>10}{rate:>12}  {end}")
    if any(not row.measured and row.remaining for row in found.channels):
        lines.append("* nothing sent in the last minute: the configured rate")
    return lines


def push_line(config) -> str:
    """Whether Web Push is on, and where it may post."""
    if not config.push_configured:
        return "push: off (no NOTIFIER_VAPID_PRIVATE_KEY)"
    return (f"push: on at {config.push_per_second:g}/s, contact {config.vapid_subject}, "
            f"services {', '.join(config.push_services)}")


@click.command("status")
@click.option("--board", "board_id", default=None, help="Show the latest publish of this board (default: any board).")
def status(board_id: str | None) -> None:
    """Print pending/sent/failed/delivered counts per channel, the latest publish's progress per channel, and the
    last cycle's time and outcome."""
    from notifier.cli.settings import settings

    config = settings()
    sessions = make_sessionmaker(make_engine(config.database_url))
    now = utcnow()
    with sessions() as session:
        table = counts(session)
        cycle = last_cycle(session)
        pauses = health.pauses(session)
        sending = senders.live(session)
        latest = progress.latest(session, config, now, board_id)
    for pause in pauses:  # first: nothing else matters as much
        click.echo(pause.line())
    click.echo(f"{'channel':<8}" + "".join(f"{name:>12}" for name in COLUMNS))
    for channel in sorted(table or {"email": {}, "sms": {}}):
        row = table.get(channel, {})
        click.echo(f"{channel:<8}" + "".join(f"{row.get(name, 0):>12}" for name in COLUMNS))
    for line in progress_lines(latest, now):
        click.echo(line)
    click.echo(push_line(config))
    if cycle is None:
        click.echo("last cycle: none yet")
    else:
        finished = cycle.finished_at.isoformat(timespec="seconds") if cycle.finished_at else "still running"
        click.echo(f"last cycle: #{cycle.id} started {cycle.started_at.isoformat(timespec='seconds')}, "
                   f"finished {finished}: {cycle.outcome} ({cycle.detail})")
    if not sending:
        click.echo("sending: no sending process is running (start the clock, or a worker)")
    for sender in sending:
        click.echo(f"sending: {sender.kind} pid {sender.pid} on {sender.host}, since "
                   f"{sender.started_at.isoformat(timespec='seconds')}")
