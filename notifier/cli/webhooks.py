"""`python -m notifier webhooks …`: organisations' webhooks (add, list, remove); `add` prints the secret once."""

from __future__ import annotations

import click

from notifier.cli.boards import published_status
from notifier.cli.settings import actor, settings_and_sessions
from notifier.db import transaction
from notifier.staff import webhooks as manage
from notifier.subscribers import webhooks
from notifier.subscribers.webhooks import WebhookError


@click.group("webhooks")
def webhooks_group() -> None:
    """Webhooks for organisations (daycares, bus operators, programs): each change of a board as signed JSON."""


@webhooks_group.command("add")
@click.option("--board", "board_id", required=True, metavar="ID", help="A board id from the status document.")
@click.option("--url", required=True, help="Where to POST each change (https://…).")
@click.option("--format", "format_", default="json", show_default=True,
              help="json (Standard Webhooks) or slack ({\"text\": …}, also for Teams).")
@click.option("--panel", "panels", multiple=True, metavar="PANEL",
              help="elementary or secondary (repeatable); every panel when left out.")
@click.option("--language", default="en", show_default=True, help="en or fr, for the words of the slack format.")
@click.option("--owner", default=None, metavar="EMAIL",
              help="Who is emailed if the endpoint is turned off (once they confirm, from a link sent now).")
def add(board_id: str, url: str, format_: str, panels: tuple[str, ...], language: str, owner: str | None) -> None:
    """Add an endpoint following a board; prints its id and its secret, which is never shown again."""
    config, sessions = settings_and_sessions()
    known = [b.id for b in published_status(config, sessions).boards]
    try:
        with transaction(sessions) as session:
            endpoint = manage.add(session, config, known, board_id, url, format_.lower(), panels, language.lower(),
                                  owner, actor=actor())
            public_id, secret, shown = endpoint.public_id, endpoint.secret, endpoint.masked_url()
    except WebhookError as error:
        raise click.UsageError(str(error)) from None
    click.echo(f"{public_id}: {shown} follows {board_id} ({format_.lower()}).")
    click.echo(f"secret: {secret}")
    click.echo("Keep the secret now: it is shown only once. It verifies the webhook-signature header.")


@webhooks_group.command("list")
@click.option("--board", "board_id", default=None, metavar="ID", help="Only this board's endpoints.")
def list_(board_id: str | None) -> None:
    """Every endpoint, without secrets (URLs masked)."""
    _, sessions = settings_and_sessions()
    with sessions() as session:
        endpoints = webhooks.listed(session, board_id)
    if not endpoints:
        click.echo("no webhooks yet: python -m notifier webhooks add --board ID --url URL")
    for e in endpoints:
        state = f"disabled {e.disabled_at:%Y-%m-%d %H:%M}Z" if e.disabled_at else (
            f"failing since {e.failing_since:%Y-%m-%d %H:%M}Z" if e.failing_since else "active")
        click.echo(f"{e.public_id}\t{e.board_id}\t{e.panels or 'all panels'}\t{e.format}\t{e.language}\t"
                   f"{e.masked_url()}\t{state}")


@webhooks_group.command("remove")
@click.argument("public_id", metavar="ID")
def remove(public_id: str) -> None:
    """Remove an endpoint at once (what it has waiting is not sent)."""
    _, sessions = settings_and_sessions()
    with transaction(sessions) as session:
        removed = manage.remove(session, public_id, actor=actor())
    if removed is None:
        raise click.UsageError(f"no webhook {public_id}")
    click.echo(f"{public_id}: removed")
