"""`python -m notifier subscribers …`: import a board's contact list, export consent records, purge stale sign-ups."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import click

from notifier.cli.boards import published_status
from notifier.cli.settings import settings
from notifier.db import make_engine, make_sessionmaker, transaction, utcnow
from notifier.formatting import spreadsheet_safe
from notifier.notices import invitations
from notifier.subscribers import consent, importer


@click.group("subscribers")
def subscribers() -> None:
    """Parents' subscriptions: import, consent records, clean-up."""


@subscribers.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--confirmed", is_flag=True, help="Consent was obtained elsewhere: activate without an invitation.")
@click.option("--consent-note", default="", help="Required with --confirmed: how and when consent was obtained.")
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="Processes checking a long file's lines (default: one per core; 0: check them here).")
def import_command(path: Path, confirmed: bool, consent_note: str, workers: int | None) -> None:
    """Import FILE.csv (columns email, phone, board, panel, language); invite each new address to confirm."""
    if confirmed and not consent_note.strip():
        raise click.UsageError("--confirmed needs --consent-note \"…\" saying how the consent was obtained")
    config = settings()
    sessions = make_sessionmaker(make_engine(config.database_url))
    boards = published_status(config, sessions).by_id()
    report, now = importer.Report(), utcnow()
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle, transaction(sessions) as session:
            ids: list[int] = []
            # One streaming pass, every bad line reported; stored a chunk at a time, so memory stays flat.
            for rows in importer.chunks(importer.read(handle, path.name, boards, report, workers)):
                importer.store(session, rows, now, f"import:{path.name}", confirmed, consent_note.strip(), report)
                ids.extend(invitations.enqueue(session, config, report.invite, boards))
                report.invite = []
    except (importer.ImportFileError, UnicodeDecodeError, csv.Error) as error:
        raise click.ClickException(str(error)) from None
    outcome = invitations.deliver(config, sessions, ids)
    for problem in report.problems:
        click.echo(problem, err=True)
    queued = f", {outcome.queued} invitation(s) queued for the sending process" if outcome.queued else ""
    click.echo(f"{report.changed} row(s) stored, {report.unchanged} unchanged, {len(report.problems)} problem(s), "
               f"{report.left_alone} address(es) left alone (they had opted out), "
               f"{outcome.sent} invitation(s) sent, {outcome.not_delivered} not delivered{queued}")
    if report.problems:
        sys.exit(1)


@subscribers.command("export-consent")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here instead of stdout.")
def export_consent(output: Path | None) -> None:
    """Write every consent record (given, confirmed, withdrawn) as CSV: CASL's proof of consent."""
    sessions = make_sessionmaker(make_engine(settings().database_url))
    columns = ["at", "action", "method", "channel", "address_masked", "address_hash", "source", "text_version",
               "language", "note", "subscriber_id"]
    handle = output.open("w", newline="", encoding="utf-8") if output else sys.stdout
    try:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        with sessions() as session:
            # Sources and notes come from outside (a header, a file name, a text): no cell may run as a formula.
            writer.writerows({k: spreadsheet_safe(v) for k, v in row.items()} for row in consent.export_rows(session))
    finally:
        if output:
            handle.close()


@subscribers.command("purge-unconfirmed")
def purge_unconfirmed() -> None:
    """Delete sign-ups left unconfirmed for 7 days (run daily; consent records are kept)."""
    from notifier import clock

    sessions = make_sessionmaker(make_engine(settings().database_url))
    with transaction(sessions) as session:
        count = clock.purge_unconfirmed(session, utcnow())
    click.echo(f"{count} unconfirmed contact(s) deleted")
