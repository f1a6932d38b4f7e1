"""`python -m notifier check` and `python -m notifier boards import|export|log`: boards.yaml and the published document.

The published status document lives in the database every process shares (`status.published`); a file on disk is
only a way in (`boards import`, the one way a hand edit reaches production) and out (`boards export`). `check`
validates a file the way the import, the clock and the site do, without publishing anything.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

import click
from sqlalchemy.orm import Session, sessionmaker

from notifier.cli.settings import actor, settings, settings_and_sessions
from notifier.config import Settings
from notifier.db import transaction, utcnow
from notifier.errors import BoardFileError
from notifier.status import document, published
from notifier.status.boards import StatusFile
from notifier.status.changes import Change, diff


@click.command()
@click.argument("path", required=False, type=click.Path(dir_okay=False))
def check(path: str | None) -> None:
    """Validate boards.yaml (default: NOTIFIER_BOARDS_FILE); print PATH:LINE: message per problem."""
    target = path or str(settings().boards_file)
    try:
        snapshot = document.load(target)
    except BoardFileError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        sys.exit(1)
    click.echo(f"{target}: OK, {len(snapshot.status.boards)} boards")


@click.group("boards")
def boards_group() -> None:
    """The published status document (every process reads it from the database): import, export, log."""


def published_status(config: Settings, sessions: sessionmaker[Session]) -> StatusFile:
    """The boards of the newest published version (seeding it from NOTIFIER_BOARDS_FILE when none is)."""
    try:
        with transaction(sessions) as session:
            return published.snapshot(published.current(session, config.boards_file, utcnow())).status
    except BoardFileError as error:
        raise click.ClickException(f"the status document is invalid, fix it first:\n{error}") from None




@boards_group.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--note", default="", help="Why this version is published (kept with it, shown by `boards log`).")
@click.option("--yes", is_flag=True, help="Publish without asking for confirmation.")
def import_command(file: Path, note: str, yes: bool) -> None:
    """Publish FILE as the newest version: validated first (FILE:LINE: message), the changes shown per board.

    This is how a hand edit of boards.yaml reaches production. An invalid FILE publishes nothing.
    """
    config, sessions = settings_and_sessions()
    now = utcnow()
    try:
        data = file.read_bytes()
        text = data.decode("utf-8")
    except OSError as error:
        raise click.ClickException(f"{file}: cannot read the file: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise click.ClickException(f"{file}: not UTF-8 text (byte {error.start})") from None
    try:
        new = document.parse(text, str(file), now)
    except BoardFileError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        click.echo(f"{file}: not imported; the published status document is unchanged", err=True)
        sys.exit(1)
    with sessions() as session:
        current = published.newest(session)
        base, old_text = (current.id, current.text) if current else (None, None)
        old = _parse_quietly(current, now)
    if old_text == text:
        click.echo(f"{file}: identical to version {base}; nothing to import")
        return
    lines = changes_by_board(old, new, now)
    click.echo(f"Changes from version {base}:" if base else "Nothing is published yet; this will be the first version.")
    for line in lines or (["  (no change parents would notice: comments or layout only)"] if base else []):
        click.echo(line)
    if not yes and not click.confirm("Publish this version?", default=False):
        click.echo("not imported")
        sys.exit(1)
    try:
        with transaction(sessions) as session:
            stored = published.publish(session, text, actor(), note or f"import of {file.name}", now, base,
                                       path=str(file))
            number = stored.id
    except published.Outdated as error:
        raise click.ClickException(str(error)) from None
    from notifier import clock

    clock.request_wakeup(sessions)
    click.echo(f"published as version {number}; the clock records it and tells parents within seconds")


@boards_group.command("export")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
def export_command(file: Path | None) -> None:
    """Write the newest published version (comments included) to FILE, or to standard output."""
    config, sessions = settings_and_sessions()
    try:
        with transaction(sessions) as session:
            current = published.current(session, config.boards_file, utcnow())
            number, text = current.id, current.text
    except BoardFileError as error:
        raise click.ClickException(f"nothing is published and boards.yaml cannot seed it:\n{error}") from None
    if file is None:
        click.echo(text, nl=False)
        return
    try:
        document.write(file, text)
    except OSError as error:
        raise click.ClickException(f"{file}: cannot write the file: {error.strerror}") from None
    click.echo(f"wrote version {number} to {file}", err=True)


@boards_group.command("log")
@click.option("--limit", default=20, show_default=True, help="How many versions to list, newest first.")
def log_command(limit: int) -> None:
    """List the published versions, newest first: number, time (UTC), author, note."""
    _, sessions = settings_and_sessions()
    with sessions() as session:
        versions = published.history(session, limit)
        lines = [f"{v.id:>5}  {v.created_at:%Y-%m-%d %H:%M}  {v.author}  {v.note}" for v in versions]
    for line in lines or ["nothing published yet (the first use seeds it from boards.yaml)"]:
        click.echo(line)


def changes_by_board(old: StatusFile | None, new: StatusFile, now: datetime) -> list[str]:
    """One indented line per change a parent would notice, grouped under each board."""
    if old is None:
        return []
    before, after = old.by_id(), new.by_id()
    lines = []
    for board_id in [b.id for b in new.boards] + [b for b in before if b not in after]:
        if board_id not in before:
            lines.append(f"  {board_id}: new board ({after[board_id].status})")
        elif board_id not in after:
            lines.append(f"  {board_id}: removed")
        else:
            changes = diff(before[board_id], after[board_id], now)
            lines += [f"  {board_id}: {_describe(change)}" for change in changes]
    return lines


def _describe(change: Change) -> str:
    where = f" ({change.panel.value})" if change.panel else ""
    what = f" {change.key}" if change.key else ""
    return f"{change.kind.value}{what}{where}: {_short(change.before)} → {_short(change.after)}"


def _short(value: object) -> str:
    text = "—" if value is None else str(value)
    return text if len(text) <= 60 else text[:57] + "…"


def _parse_quietly(current: published.StatusDocument | None, now: datetime) -> StatusFile | None:
    if current is None:
        return None
    try:
        return published.snapshot(current, now).status
    except BoardFileError:
        return None

