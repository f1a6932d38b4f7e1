"""Command-line interface: `check`, `web`, `clock`, `tick`, `db upgrade` and the operators' commands.

Each command reads the same settings as the web app, so a misconfiguration is reported the same way everywhere.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from notifier import boardfile, cli_status
from notifier.cli_settings import settings
from notifier.cli_staff import staff_group
from notifier.cli_subscribers import subscribers
from notifier.errors import BoardFileError


@click.group()
def cli() -> None:
    """notifier: school status for Ontario parents during labour disruptions."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)


@cli.command()
@click.argument("path", required=False, type=click.Path(dir_okay=False))
def check(path: str | None) -> None:
    """Validate boards.yaml (default: NOTIFIER_BOARDS_FILE); print PATH:LINE: message per problem."""
    target = path or str(settings().boards_file)
    try:
        snapshot = boardfile.load(target)
    except BoardFileError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        sys.exit(1)
    click.echo(f"{target}: OK, {len(snapshot.status.boards)} boards")


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
def web(host: str, port: int) -> None:
    """Run the development web server (production uses gunicorn, see Procfile)."""
    from notifier.web import create_app

    settings()
    create_app().run(host=host, port=port, use_reloader=False)


@cli.command()
def clock() -> None:
    """Run the scheduler: a cycle every NOTIFIER_CHECK_INTERVAL seconds, until stopped."""
    from notifier import clock as clock_process

    clock_process.main(settings())


@cli.command()
def tick() -> None:
    """Run exactly one cycle and exit: 0 when it succeeded."""
    from notifier import clock as clock_process

    result = clock_process.tick(settings())
    for problem in result.problems:
        click.echo(problem, err=True)
    click.echo(f"cycle {result.cycle_id}: {result.outcome}, {len(result.changes)} change(s)")
    sys.exit(0 if result.ok else 1)


@cli.group()
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


cli.add_command(staff_group)
cli.add_command(cli_status.status)
cli.add_command(cli_status.worker)
cli.add_command(subscribers)
