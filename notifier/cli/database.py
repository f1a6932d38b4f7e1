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
    _seed(config)


def _seed(config) -> None:
    """Publish boards.yaml as the first status document version when none is published (a new installation)."""
    from notifier.db import make_engine, make_sessionmaker, transaction, utcnow
    from notifier.errors import BoardFileError
    from notifier.status import published

    engine = make_engine(config.database_url)
    try:
        with transaction(make_sessionmaker(engine)) as session:
            seeded = published.newest(session) is None
            current = published.seed(session, config.boards_file, utcnow())
            number = current.id
    except BoardFileError as error:
        click.echo(f"the status document was not seeded: {config.boards_file} is invalid:\n{error}", err=True)
        return
    finally:
        engine.dispose()
    if seeded:
        click.echo(f"status document version {number} seeded from {config.boards_file}")
