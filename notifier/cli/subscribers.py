"""`python -m notifier subscribers …`: import a board's contact list, export consent records, purge stale sign-ups."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import click

from notifier.cli.settings import settings
from notifier.db import make_engine, make_sessionmaker, transaction, utcnow
from notifier.errors import BoardFileError
from notifier.notices import account
from notifier.status import document
from notifier.subscribers import consent, importer, signup


@click.group("subscribers")
def subscribers() -> None:
    """Parents' subscriptions: import, consent records, clean-up."""


@subscribers.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--confirmed", is_flag=True, help="Consent was obtained elsewhere: activate without an invitation.")
@click.option("--consent-note", default="", help="Required with --confirmed: how and when consent was obtained.")
def import_command(path: Path, confirmed: bool, consent_note: str) -> None:
    """Import FILE.csv (columns email, phone, board, panel, language); invite each new address to confirm."""
    if confirmed and not consent_note.strip():
        raise click.UsageError("--confirmed needs --consent-note \"…\" saying how the consent was obtained")
    config = settings()
    try:
        boards = document.load(config.boards_file).status.by_id()
    except BoardFileError as error:
        raise click.ClickException(f"boards file is invalid, fix it first:\n{error}") from None
    sessions = make_sessionmaker(make_engine(config.database_url))
    report, now = importer.Report(), utcnow()
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle, transaction(sessions) as session:
            for row in importer.read(handle, path.name, boards, report):
                importer.store(session, row, now, f"import:{path.name}", confirmed, consent_note.strip(), report)
            messages = [account.confirmation(config, c, boards, invited=True) for c in report.invite]
    except (importer.ImportFileError, UnicodeDecodeError, csv.Error) as error:
        raise click.ClickException(str(error)) from None
    outcomes = account.deliver(config, sessions, messages)
    for problem in report.problems:
        click.echo(problem, err=True)
    click.echo(f"{report.changed} row(s) stored, {report.unchanged} unchanged, {len(report.problems)} problem(s), "
               f"{report.left_alone} address(es) left alone (they had opted out), "
               f"{outcomes.count(account.SENT)} invitation(s) sent, "
               f"{len(outcomes) - outcomes.count(account.SENT)} not delivered")
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
            writer.writerows(consent.export_rows(session))
    finally:
        if output:
            handle.close()


@subscribers.command("purge-unconfirmed")
def purge_unconfirmed() -> None:
    """Delete sign-ups left unconfirmed for 7 days (run daily; consent records are kept)."""
    sessions = make_sessionmaker(make_engine(settings().database_url))
    with transaction(sessions) as session:
        count = signup.purge_unconfirmed(session, utcnow())
    click.echo(f"{count} unconfirmed contact(s) deleted")
