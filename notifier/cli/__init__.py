"""`python -m notifier …`: the command line for operators, the Procfile and cron; one module per command group.

Each command reads the same settings as the web app, so a misconfiguration is reported the same way everywhere.
"""

from __future__ import annotations

import logging

import click

from notifier import masking
from notifier.cli import boards, channels, database, processes, push, retention, staff, status, subscribers, webhooks
from notifier.config import Settings, log_secrets
from notifier.errors import ConfigError
from notifier.telemetry import logs


def secrets() -> list[str]:
    """The configured secrets to keep out of logs (none when the settings are broken: that is reported later)."""
    try:
        return log_secrets(Settings.from_env())
    except ConfigError:
        return []


@click.group()
@click.pass_context
def cli(context: click.Context) -> None:
    """notifier: school status for Ontario parents during labour disruptions."""
    logs.configure(context.invoked_subcommand or "command")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    masking.install(secrets())


for command in (boards.check, boards.boards_group, processes.web, processes.clock, processes.tick, processes.worker,
                database.db, status.status, channels.channels, staff.staff_group, subscribers.subscribers,
                webhooks.webhooks_group, retention.retention_group, push.push_group):
    cli.add_command(command)
