"""`python -m notifier …`: the command line for operators, the Procfile and cron; one module per command group.

Each command reads the same settings as the web app, so a misconfiguration is reported the same way everywhere.
"""

from __future__ import annotations

import logging

import click

from notifier.cli import boards, database, processes, staff, status, subscribers


@click.group()
def cli() -> None:
    """notifier: school status for Ontario parents during labour disruptions."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)


for command in (boards.check, processes.web, processes.clock, processes.tick, processes.worker, database.db,
                status.status, staff.staff_group, subscribers.subscribers):
    cli.add_command(command)
