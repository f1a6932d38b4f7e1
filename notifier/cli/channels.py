"""`python -m notifier channels`: each channel's health, and `channels resume NAME` to lift a pause at once."""

from __future__ import annotations

import click

from notifier.cli.settings import settings
from notifier.db import make_engine, make_sessionmaker
from notifier.delivery import health
from notifier.delivery.channels import EMAIL, PUSH, SMS


@click.group("channels", invoke_without_command=True)
@click.pass_context
def channels(context: click.Context) -> None:
    """Show paused channels (nothing printed but "all channels sending" when none is)."""
    if context.invoked_subcommand is not None:
        return
    sessions = make_sessionmaker(make_engine(settings().database_url))
    with sessions() as session:
        pauses = health.pauses(session)
    for pause in pauses:
        click.echo(pause.line())
    if not pauses:
        click.echo("all channels sending")


@channels.command("resume")
@click.argument("name", type=click.Choice([EMAIL, SMS, PUSH]))
def resume(name: str) -> None:
    """Lift NAME's pause now (after fixing the setting); a new refusal pauses it again."""
    sessions = make_sessionmaker(make_engine(settings().database_url))
    if health.resume(sessions, name, "resumed by an operator"):
        click.echo(f"{name}: resumed; waiting messages go out now")
    else:
        click.echo(f"{name}: was not paused")
