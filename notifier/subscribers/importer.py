"""Importing the contact lists boards already hold: one CSV row per address pair and board, checked row by row.

A bad row is reported with its line and nothing of it is stored; good rows are stored. Importing the same file
again changes nothing: existing addresses are matched, follows are only added when missing, and only new
addresses are invited. An address that once said stop is never re-subscribed by an import.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TextIO

from sqlalchemy.orm import Session

from notifier.errors import NotifierError
from notifier.status.boards import Board
from notifier.subscribers import consent
from notifier.subscribers.addresses import EMAIL, SMS, ContactError, parse_email, parse_phone
from notifier.subscribers.contacts import activate, find_contact
from notifier.subscribers.models import Contact, ContactStatus, Follow, Subscriber

COLUMNS = ("email", "phone", "board", "panel", "language")
PANELS = {"elementary": ("elementary",), "secondary": ("secondary",), "both": ("elementary", "secondary"),
          "": ("elementary", "secondary")}
PROBLEMS = {"email_invalid": "email is not a valid address", "phone_malformed": "phone is not a phone number",
            "phone_not_canadian": "phone is not a Canadian number"}


class ImportFileError(NotifierError):
    """The file as a whole cannot be read (missing columns, not UTF-8)."""


@dataclass
class Row:
    line: int
    addresses: list[tuple[str, str]]
    board: str
    panels: tuple[str, ...]
    language: str


@dataclass
class Report:
    """What an import did; `problems` are "FILE:LINE: message"; `invite` are contacts to send a confirmation."""

    changed: int = 0
    unchanged: int = 0
    left_alone: int = 0
    problems: list[str] = field(default_factory=list)
    invite: list[Contact] = field(default_factory=list)


def read(handle: TextIO, name: str, boards: Mapping[str, Board], report: Report) -> Iterator[Row]:
    """The valid rows of a CSV file; each invalid row adds one problem per mistake to `report`."""
    reader = csv.DictReader(handle)
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ImportFileError(f"{name}:1: missing column(s): {', '.join(missing)} (expected {', '.join(COLUMNS)})")
    for record in reader:
        mistakes, row = _check({k: (v or "").strip() for k, v in record.items() if k}, reader.line_num, boards)
        report.problems.extend(f"{name}:{reader.line_num}: {m}" for m in mistakes)
        if row is not None:
            yield row


def _check(record: dict[str, str], line: int, boards: Mapping[str, Board]) -> tuple[list[str], Row | None]:
    mistakes, addresses = [], []
    board = boards.get(record["board"].lower())
    if board is None:
        mistakes.append(f"board {record['board']!r} is not a board id in boards.yaml" if record["board"]
                        else "board is empty")
    panel = record["panel"].lower()
    if panel not in PANELS:
        mistakes.append(f"panel {record['panel']!r} must be elementary, secondary, both or empty")
    language = record["language"].lower() or (board.language.value if board else "en")
    if language not in ("en", "fr"):
        mistakes.append(f"language {record['language']!r} must be en or fr")
    for column, channel, parse in (("email", EMAIL, parse_email), ("phone", SMS, parse_phone)):
        if record[column]:
            try:
                addresses.append((channel, parse(record[column])))
            except ContactError as error:
                mistakes.append(PROBLEMS[error.code])
    if not record["email"] and not record["phone"]:
        mistakes.append("give an email or a phone (or both)")
    if mistakes:
        return mistakes, None
    return [], Row(line, addresses, board.id, PANELS[panel], language)


def store(session: Session, row: Row, now: datetime, source: str, confirmed: bool, note: str,
          report: Report) -> None:
    """Store one valid row (inside a savepoint), counting whether it changed anything."""
    with session.begin_nested():
        changed = _store(session, row, now, source, confirmed, note, report)
    if changed:
        report.changed += 1
    else:
        report.unchanged += 1


def _store(session: Session, row: Row, now: datetime, source: str, confirmed: bool, note: str,
           report: Report) -> bool:
    found = {address: find_contact(session, channel, address) for channel, address in row.addresses}
    fresh = []
    for channel, address in row.addresses:
        if consent.has_withdrawn(session, channel, address):
            report.left_alone += 1  # they said stop once: an old list is no reason to write again
        elif found[address] is None:
            fresh.append((channel, address))
    owner = next((c.subscriber for c in found.values() if c is not None
                  and c.status != ContactStatus.OPTED_OUT.value), None)
    if owner is None and not fresh:
        return False
    if owner is None:
        owner = Subscriber(language=row.language, created_at=now)
        session.add(owner)
    changed = False
    have = {(f.board_id, f.panel) for f in owner.follows}
    for panel in row.panels:
        if (row.board, panel) not in have:
            owner.follows.append(Follow(board_id=row.board, panel=panel))
            changed = True
    for channel, address in fresh:
        contact = Contact(channel=channel, address=address, created_at=now, status_changed_at=now)
        owner.contacts.append(contact)
        session.flush()
        actions = [consent.GIVEN, consent.CONFIRMED] if confirmed else [consent.GIVEN]
        for action in actions:
            consent.record(session, channel=channel, address=address, action=action, method="import", source=source,
                           subscriber_id=owner.id, language=owner.language, note=note, now=now)
        if confirmed:
            activate(session, contact, address, now)
        else:
            report.invite.append(contact)
        changed = True
    return changed
