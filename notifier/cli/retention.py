"""`python -m notifier retention sweep`: delete now what the clock deletes each night (NOTIFIER_RETENTION_DAYS)."""

from __future__ import annotations

import click

from notifier.cli.settings import settings_and_sessions


@click.group("retention")
def retention_group() -> None:
    """How long delivery data and history are kept."""


@retention_group.command()
def sweep() -> None:
    """Delete settled messages, receipts, change events and cycles older than NOTIFIER_RETENTION_DAYS."""
    from notifier.delivery import retention

    config, sessions = settings_and_sessions()
    click.echo(retention.sweep(sessions, config.retention_days).line(config.retention_days))
