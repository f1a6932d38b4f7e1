"""`python -m notifier db upgrade`: apply the Alembic migrations (the Procfile's release step)."""

from __future__ import annotations

from pathlib import Path

import click

from notifier.cli.settings import settings


@click.group()
def db() -> None:
    """Database schema."""


@db.command()
def upgrade() -> None:
    """Apply all migrations (safe to run on every deploy)."""
    from notifier import migrate

    config = settings()
    if config.database_url.startswith("sqlite:///"):
        Path(config.database_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    migrate.upgrade(config.database_url)
    click.echo("database is up to date")
