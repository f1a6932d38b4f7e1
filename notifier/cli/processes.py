"""The Procfile's processes as commands: `web` (development server), `clock`, `tick` (one cycle) and `worker`."""

from __future__ import annotations

import logging
import sys
import time

import click

from notifier.cli.settings import settings

log = logging.getLogger(__name__)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
def web(host: str, port: int) -> None:
    """Run the development web server (production uses gunicorn, see Procfile)."""
    from notifier.web import create_app

    settings()
    create_app().run(host=host, port=port, use_reloader=False)


@click.command()
def clock() -> None:
    """Run the scheduler: a cycle every NOTIFIER_CHECK_INTERVAL seconds, until stopped."""
    from notifier import clock as clock_process

    clock_process.main(settings())


@click.command()
def tick() -> None:
    """Run exactly one cycle and exit: 0 when it succeeded."""
    from notifier import clock as clock_process

    result = clock_process.tick(settings())
    for problem in result.problems:
        click.echo(problem, err=True)
    click.echo(f"cycle {result.cycle_id}: {result.outcome}, {len(result.changes)} change(s)")
    sys.exit(0 if result.ok else 1)


@click.command("worker")
@click.option("--every", default=2.0, show_default=True, help="Seconds between drains.")
@click.option("--once", is_flag=True, help="Drain once and exit (for cron and tests).")
def worker(every: float, once: bool) -> None:
    """Drain the outbox beside the clock; several workers never send a row twice."""
    from notifier import clock as clock_process
    from notifier.db import make_engine, make_sessionmaker

    config = settings()
    sessions = make_sessionmaker(make_engine(config.database_url))
    log.info("worker started: draining the outbox every %.1f s", every)
    while True:
        clock_process.send_due(config, sessions)
        if once:
            return
        time.sleep(every)
