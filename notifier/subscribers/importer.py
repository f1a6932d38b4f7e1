"""Importing the contact lists boards already hold: one CSV row per address pair and board, checked row by row.

A bad row is reported with its line and nothing of it is stored; good rows are stored. Importing the same file
again changes nothing: existing addresses are matched, follows are only added when missing, and only new
addresses are invited. An address that once said stop is never re-subscribed by an import.

A board's list may hold a quarter of a million rows, so storing is set-wise: the file is checked in one streaming
pass, a chunk of rows at a time: what already exists (contacts, withdrawals, follows) is read with a few large
queries, the rows are applied in file order in memory (the same rules as one row at a time: a later row sees what
an earlier one added, in its chunk or, through the database, in an earlier one), and what is new goes in with bulk
statements of `BATCH` rows. Nothing is written twice: every new row is decided once.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TextIO

from sqlalchemy import func, insert, select, text
from sqlalchemy.orm import Session

from notifier.db import among, insert_many
from notifier.errors import NotifierError
from notifier.status.boards import Board
from notifier.status.history import latest_event_id
from notifier.subscribers import consent
from notifier.subscribers.addresses import EMAIL, SMS, ContactError, parse_email, parse_phone
from notifier.subscribers.models import FORGOTTEN, Contact, ContactStatus, Follow, Frequency, Subscriber

COLUMNS = ("email", "phone", "board", "panel", "language")
PANELS = {"elementary": ("elementary",), "secondary": ("secondary",), "both": ("elementary", "secondary"),
          "": ("elementary", "secondary")}
PROBLEMS = {"email_invalid": "email is not a valid address", "phone_malformed": "phone is not a phone number",
            "phone_not_canadian": "phone is not a Canadian number"}
BATCH = consent.BATCH
CHUNK = 50_000  # rows stored together: a later chunk sees what an earlier one wrote (one transaction)


class ImportFileError(NotifierError):
    """The file as a whole cannot be read (missing columns, not UTF-8)."""


@dataclass
class Row:
    line: int
    addresses: list[tuple[str, str]]
    board: str
    panels: tuple[str, ...]
    language: str


@dataclass(frozen=True)
class Invitee:
    """A contact the import added as pending, with what its confirmation request needs."""

    contact_id: int
    channel: str
    address: str
    language: str
    follows: tuple[tuple[str, str], ...]  # (board id, panel), sorted


@dataclass
class Report:
    """What an import did; `problems` are "FILE:LINE: message"; `invite` are contacts to send a confirmation.

    `unchanged` counts rows that added nothing: already stored (a second import), or repeating an earlier line."""

    changed: int = 0
    unchanged: int = 0
    left_alone: int = 0
    problems: list[str] = field(default_factory=list)
    invite: list[Invitee] = field(default_factory=list)


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


Owner = tuple[str, int]  # ("old", subscriber id) or ("new", index among the subscribers this import adds)


@dataclass
class _Plan:
    """What the rows add, decided in memory before anything is written."""

    contacts: dict[tuple[str, str], tuple[Owner, str]]  # (channel, address) -> (owner, status), old and new
    follows: dict[Owner, set[tuple[str, str]]]
    languages: dict[Owner, str]
    new_subscribers: list[Owner] = field(default_factory=list)
    new_follows: list[tuple[Owner, str, str]] = field(default_factory=list)
    new_contacts: list[tuple[Owner, str, str]] = field(default_factory=list)


def chunks(rows: Iterable[Row], size: int | None = None) -> Iterator[list[Row]]:
    """The rows in lists of `size` (`CHUNK`), read lazily: a quarter-million-row file never sits in memory whole."""
    size = size or CHUNK
    chunk: list[Row] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def store(session: Session, rows: Iterable[Row], now: datetime, source: str, confirmed: bool, note: str,
          report: Report) -> None:
    """Store the valid rows (set-wise, in bulk), counting which changed anything; the caller commits."""
    rows = list(rows)
    if session.get_bind().dialect.name == "postgresql":
        # What an earlier chunk wrote in this transaction is invisible to the planner's statistics until analysed:
        # without them it scans the consent records for each lookup (minutes for a quarter of a million rows).
        session.execute(text("ANALYZE subscribers, contacts, follows, consents"))
    hashed = consent.hasher(session)
    addresses = {pair for row in rows for pair in row.addresses}
    withdrawn = consent.withdrawn_among(session, addresses, hashed)
    plan = _existing(session, addresses, hashed)
    for row in rows:
        if _apply(plan, row, withdrawn, report):
            report.changed += 1
        else:
            report.unchanged += 1
    _write(session, plan, now, source, confirmed, note, report, hashed)


def _existing(session: Session, addresses: set[tuple[str, str]], hashed) -> _Plan:
    """The contacts already stored for these addresses (an opted-out one is found by its hash), with their
    families' follows and languages."""
    wanted: dict[tuple[str, str], tuple[str, str]] = {}  # (channel, stored address) -> (channel, address)
    for channel, address in addresses:
        wanted[(channel, FORGOTTEN + hashed(address))] = (channel, address)
    for channel, address in addresses:
        wanted[(channel, address)] = (channel, address)  # the plain address wins, as in `find_contact`
    found: dict[tuple[str, str], tuple[Owner, str]] = {}
    for condition in among(session, (Contact.channel, Contact.address), sorted(wanted), BATCH):
        query = select(Contact.channel, Contact.address, Contact.subscriber_id, Contact.status).where(condition)
        for channel, address, subscriber_id, status in session.execute(query):
            pair = wanted[(channel, address)]
            if pair not in found or not address.startswith(FORGOTTEN):
                found[pair] = (("old", subscriber_id), status)
    owners = sorted({owner[1] for owner, _ in found.values()})
    plan = _Plan(found, {("old", i): set() for i in owners}, {})
    for condition in among(session, (Follow.subscriber_id,), [(i,) for i in owners], BATCH):
        for subscriber_id, board, panel in session.execute(
                select(Follow.subscriber_id, Follow.board_id, Follow.panel).where(condition)):
            plan.follows[("old", subscriber_id)].add((board, panel))
    for condition in among(session, (Subscriber.id,), [(i,) for i in owners], BATCH):
        for subscriber_id, language in session.execute(select(Subscriber.id, Subscriber.language).where(condition)):
            plan.languages[("old", subscriber_id)] = language
    return plan


def _apply(plan: _Plan, row: Row, withdrawn: set[tuple[str, str]], report: Report) -> bool:
    """One row, by the rules of a single sign-up from a list; True when it adds anything."""
    found = [plan.contacts.get(pair) for pair in row.addresses]
    fresh = []
    for pair, contact in zip(row.addresses, found, strict=True):
        if pair in withdrawn:
            report.left_alone += 1  # they said stop once: an old list is no reason to write again
        elif contact is None:
            fresh.append(pair)
    owner = next((o for o, status in filter(None, found) if status != ContactStatus.OPTED_OUT.value), None)
    if owner is None and not fresh:
        return False
    if owner is None:
        owner = ("new", len(plan.new_subscribers))
        plan.new_subscribers.append(owner)
        plan.follows[owner], plan.languages[owner] = set(), row.language
    changed = False
    for panel in row.panels:
        if (row.board, panel) not in plan.follows[owner]:
            plan.follows[owner].add((row.board, panel))
            plan.new_follows.append((owner, row.board, panel))
            changed = True
    for channel, address in fresh:
        plan.contacts[(channel, address)] = (owner, ContactStatus.PENDING.value)
        plan.new_contacts.append((owner, channel, address))
        changed = True
    return changed


def _write(session: Session, plan: _Plan, now: datetime, source: str, confirmed: bool, note: str, report: Report,
           hashed) -> None:
    ids: dict[Owner, int] = {owner: owner[1] for owner in plan.follows if owner[0] == "old"}
    new = [{"language": plan.languages[o], "created_at": now, "notify_on_effect": False} for o in plan.new_subscribers]
    for owner, subscriber_id in zip(plan.new_subscribers, _insert_returning(session, Subscriber, new), strict=True):
        ids[owner] = subscriber_id
    insert_many(session, Follow.__table__, [{"subscriber_id": ids[o], "board_id": b, "panel": p}
                                            for o, b, p in plan.new_follows], BATCH)
    seen = latest_event_id(session) if confirmed else 0
    contacts = [{"subscriber_id": ids[o], "channel": c, "address": a, "frequency": Frequency.IMMEDIATE.value,
                 "status": ContactStatus.ACTIVE.value if confirmed else ContactStatus.PENDING.value,
                 "created_at": now, "status_changed_at": now, "confirmed_at": now if confirmed else None,
                 "seen_event_id": seen} for o, c, a in plan.new_contacts]
    insert_many(session, Contact.__table__, contacts, BATCH)  # (channel, address) is unique: ids are read back
    actions = [consent.GIVEN, consent.CONFIRMED] if confirmed else [consent.GIVEN]
    consent.record_many(session, ({"channel": c, "address": a, "action": action, "method": "import", "source": source,
                                   "subscriber_id": ids[o], "language": plan.languages[o], "note": note, "now": now}
                                  for o, c, a in plan.new_contacts for action in actions), hashed)
    if not confirmed:
        contact_ids = _contact_ids(session, [(c, a) for _, c, a in plan.new_contacts])
        report.invite = [Invitee(contact_ids[(c, a)], c, a, plan.languages[o], tuple(sorted(plan.follows[o])))
                         for o, c, a in plan.new_contacts]


def _contact_ids(session: Session, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    ids = {}
    for condition in among(session, (Contact.channel, Contact.address), sorted(set(pairs)), BATCH):
        ids.update({(c, a): i for c, a, i in session.execute(
            select(Contact.channel, Contact.address, Contact.id).where(condition))})
    return ids


def _insert_returning(session: Session, model, rows: list[dict]) -> list[int]:
    """Insert in bulk; the new ids, in the order of `rows`. On PostgreSQL the ids are drawn from the table's
    sequence in one statement and the rows go in by COPY (a multi-row INSERT … RETURNING of 5,000 rows is a
    statement of 15,000 placeholders that the driver parses anew each time); elsewhere INSERT … RETURNING."""
    if not rows:
        return []
    table = model.__table__
    if session.get_bind().dialect.name == "postgresql":
        sequence = func.pg_get_serial_sequence(table.name, table.c.id.name)
        ids = list(session.scalars(select(func.nextval(sequence)).select_from(func.generate_series(1, len(rows)))))
        insert_many(session, table, [{"id": i, **row} for i, row in zip(ids, rows, strict=True)], BATCH)
        return ids
    ids: list[int] = []
    statement = insert(table).returning(table.c.id, sort_by_parameter_order=True)
    for start in range(0, len(rows), BATCH):
        ids.extend(session.execute(statement, rows[start:start + BATCH]).scalars())
    return ids
