"""`python -m notifier staff …`: give board staff access to the console, list who has it, take it away.

An account is only an address and its boards: staff sign in with an emailed link, so there is no password to set.
"""

from __future__ import annotations

import click

from notifier.cli.boards import published_status
from notifier.cli.settings import actor, settings_and_sessions
from notifier.db import transaction, utcnow
from notifier.staff import accounts, audit


@click.group("staff")
def staff_group() -> None:
    """Board staff accounts for the staff console (/staff)."""


@staff_group.command("add")
@click.argument("email")
@click.option("--board", "boards", multiple=True, metavar="ID", help="A board id from boards.yaml (repeatable).")
@click.option("--admin", is_flag=True, help="May edit every board (and manage accounts on /staff/accounts).")
def add(email: str, boards: tuple[str, ...], admin: bool) -> None:
    """Give EMAIL access to the console for the given boards (adds boards to an existing account)."""
    config, sessions = settings_and_sessions()
    known = [b.id for b in published_status(config, sessions).boards]
    try:
        with transaction(sessions) as session:
            member = accounts.add(session, email, boards, admin, known)
            audit.record_account(session, actor(), "staff_add", member.email, list(boards), "", utcnow())
            granted = sorted(accounts.boards_of(session, member))
            address, is_admin = member.email, member.is_admin
    except accounts.StaffError as error:
        raise click.ClickException(str(error)) from None
    role = "administrator (every board)" if is_admin else "boards: " + ", ".join(granted)
    click.echo(f"{address}: {role}. They sign in at {config.base_url}/staff/signin")


@staff_group.command("list")
def list_() -> None:
    """Every account and its boards."""
    _, sessions = settings_and_sessions()
    with sessions() as session:
        rows = accounts.everyone(session)
    if not rows:
        click.echo("no staff accounts yet: python -m notifier staff add EMAIL --board ID")
    for member, boards in rows:
        click.echo(f"{member.email}\t{'admin' if member.is_admin else ''}\t{' '.join(boards)}")


@staff_group.command("remove")
@click.argument("email")
def remove(email: str) -> None:
    """Take EMAIL's access away at once (their open sessions end at their next click)."""
    _, sessions = settings_and_sessions()
    with transaction(sessions) as session:
        removed = accounts.remove(session, email)
        if removed:
            audit.record_account(session, actor(), "staff_remove", email.strip().lower(), [], "", utcnow())
    if not removed:
        raise click.ClickException(f"no staff account for {email}")
    click.echo(f"{email}: removed")
