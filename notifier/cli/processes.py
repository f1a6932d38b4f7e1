"""The Procfile's processes as commands: `web` (development server), `clock`, `tick` (one cycle) and `worker`."""

from __future__ import annotations

import logging
import signal
import sys
import threading

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
    """Run the scheduler (and the sending loop, unless NOTIFIER_CLOCK_SENDS=0) until stopped."""
    from notifier import clock as clock_process

    clock_process.main(settings())


@click.command()
def tick() -> None:
    """Run exactly one cycle, then send what is due; exit 0 when it succeeded and no channel is paused."""
    from notifier import clock as clock_process
    from notifier.db import make_engine, make_sessionmaker

    config = settings()
    sessions = make_sessionmaker(make_engine(config.database_url))
    result = clock_process.tick(config, sessions)
    for problem in result.problems:
        click.echo(problem, err=True)
    paused = clock_process.paused_lines(sessions)
    for line in paused:
        click.echo(line, err=True)
    click.echo(f"cycle {result.cycle_id}: {result.outcome}, {len(result.changes)} change(s)"
               + (f"; {len(paused)} channel(s) PAUSED" if paused else ""))
    sys.exit(0 if result.ok and not paused else 1)


def _channels(context: click.Context, parameter: click.Parameter, value: str | None) -> tuple[str, ...]:
    """`--channels push,email` as the channels' names, in sending order; every channel when not given."""
    from notifier.delivery.drain import CHANNELS

    if value is None:
        return CHANNELS
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name.lower() not in CHANNELS]
    if unknown or not names:
        raise click.BadParameter(
            (f"unknown channel{'s' if len(unknown) > 1 else ''} {', '.join(repr(n) for n in unknown)}" if unknown
             else "no channel given") + f"; valid channels: {', '.join(CHANNELS)} (comma-separated)",
            context, parameter)
    return tuple(name for name in CHANNELS if name in {n.lower() for n in names})


@click.command("worker")
@click.option("--once", is_flag=True, help="Send what is due until nothing is left, then exit (cron, tests).")
@click.option("--channels", "channels", metavar="NAMES", callback=_channels,
              help="Send only these channels, comma-separated (email, sms, webhook, push); default: every channel.")
def worker(once: bool, channels: tuple[str, ...]) -> None:
    """Send from the outbox beside the clock, under the sender's shared rate; any number of workers, any hosts.
    With --channels, only those channels' messages (e.g. a process of its own for push)."""
    from notifier import clock as clock_process
    from notifier.db import make_engine, make_sessionmaker
    from notifier.delivery.senders import SenderRefused
    from notifier.telemetry import metrics

    config = settings()
    sessions = make_sessionmaker(make_engine(config.database_url))
    try:
        if once:
            clock_process.send_due(config, sessions, kind="worker", channels=channels)
            return
        stopping = threading.Event()
        for number in (signal.SIGINT, signal.SIGTERM):  # its own: SIGINT may come inherited as ignored (a script's
            signal.signal(number, lambda *_: stopping.set())  # background job), and then Python installs none
        loop = clock_process.sending_loop(config, sessions, "worker", channels)
        loop.start()
        metrics.serve(config.metrics_address, "worker")
    except SenderRefused as refused:
        raise click.ClickException(f"worker: {refused}") from None
    try:
        while not stopping.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        log.info("worker stopping")
        loop.stop()
