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
import functools
import itertools
import multiprocessing
import os
import secrets
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from sqlalchemy import Integer, func, insert, select, text
from sqlalchemy.orm import Session

from notifier.db import Base, among, insert_many
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
POOL_LINES = 20_000  # a shorter file is checked in-process: starting worker processes would cost more than it saves
POOL_BATCH = 2_000  # lines per task sent to a worker


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


def read(handle: TextIO, name: str, boards: Mapping[str, Board], report: Report,
         workers: int | None = None) -> Iterator[Row]:
    """The valid rows of a CSV file; each invalid row adds one problem per mistake to `report`, in file order.

    Checking addresses is most of an import's work, so a long file is checked by `workers` processes (default:
    one per core) while this one stores; a file shorter than `POOL_LINES`, or `workers` 0 or 1, is checked here."""
    reader = csv.DictReader(handle)
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ImportFileError(f"{name}:1: missing column(s): {', '.join(missing)} (expected {', '.join(COLUMNS)})")
    known = {key: (board.id, board.language.value) for key, board in boards.items()}
    records = ((reader.line_num, record) for record in reader)
    workers = (os.cpu_count() or 1) if workers is None else workers
    for line, mistakes, row in _checked(records, known, workers):
        if mistakes:
            report.problems.extend(f"{name}:{line}: {m}" for m in mistakes)
        if row is not None:
            yield row


Record = tuple[int, dict[str, str]]  # (line number, the CSV row by column)
Checked = tuple[int, list[str], Row | None]  # (line number, mistakes, the row when there are none)


def _checked(records: Iterator[Record], boards: Mapping[str, tuple[str, str]], workers: int) -> Iterator[Checked]:
    """Each record checked, in file order: here, or in a pool of `workers` processes once the file proves long."""
    first = list(itertools.islice(records, POOL_LINES))
    if workers < 2 or len(first) < POOL_LINES:
        yield from _check_lines(first, boards)
        yield from _check_lines(records, boards)
        return
    # Enough work handed out ahead that the workers keep checking while this process stores a whole chunk; the
    # results are taken in the order the lines were given, so problems and rows keep the file's order.
    ahead = CHUNK // POOL_BATCH + 2 * workers
    pool = ProcessPoolExecutor(workers, mp_context=_context())
    try:
        pending: deque[Future[list[Checked]]] = deque()
        for batch in _batched(itertools.chain(first, records), POOL_BATCH):
            pending.append(pool.submit(_check_list, batch, boards))
            if len(pending) > ahead:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _context() -> multiprocessing.context.BaseContext | None:
    """Fork where there is one: the workers start at once, with the address libraries already loaded (they touch
    nothing of this process but the lines they are sent)."""
    return multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None


def _batched(records: Iterator[Record], size: int) -> Iterator[list[Record]]:
    while batch := list(itertools.islice(records, size)):
        yield batch


def _check_list(records: list[Record], boards: Mapping[str, tuple[str, str]]) -> list[Checked]:
    """A worker's task: one batch of lines checked (a list, to be sent back whole)."""
    return list(_check_lines(records, boards))


def _check_lines(records: Iterable[Record], boards: Mapping[str, tuple[str, str]]) -> Iterator[Checked]:
    for line, record in records:
        mistakes, row = _check({k: (v or "").strip() for k, v in record.items() if k}, line, boards)
        yield line, mistakes, row


def _check(record: dict[str, str], line: int, boards: Mapping[str, tuple[str, str]]) -> tuple[list[str], Row | None]:
    mistakes, addresses = [], []
    board = boards.get(record["board"].lower())
    if board is None:
        mistakes.append(f"board {record['board']!r} is not a board id in boards.yaml" if record["board"]
                        else "board is empty")
    panel = record["panel"].lower()
    if panel not in PANELS:
        mistakes.append(f"panel {record['panel']!r} must be elementary, secondary, both or empty")
    language = record["language"].lower() or (board[1] if board else "en")
    if language not in ("en", "fr"):
        mistakes.append(f"language {record['language']!r} must be en or fr")
    for column, channel in (("email", EMAIL), ("phone", SMS)):
        if record[column]:
            address, problem = _address(channel, record[column])
            if problem:
                mistakes.append(PROBLEMS[problem])
            else:
                addresses.append((channel, address))
    if not record["email"] and not record["phone"]:
        mistakes.append("give an email or a phone (or both)")
    if mistakes or board is None:  # no board is always a mistake
        return mistakes, None
    return [], Row(line, addresses, board[0], PANELS[panel], language)


@functools.lru_cache(maxsize=1 << 16)
def _address(channel: str, raw: str) -> tuple[str, str]:
    """(address, "") or ("", the ContactError code): a list repeats a family's addresses on each of its lines, and
    checking an address is the slow part of a line."""
    try:
        return (parse_email if channel == EMAIL else parse_phone)(raw), ""
    except ContactError as error:
        return "", error.code


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


def _existing(session: Session, addresses: set[tuple[str, str]], hashed: Callable[[str], str]) -> _Plan:
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
           hashed: Callable[[str], str]) -> None:
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
                 "seen_event_id": seen, "link_key": secrets.token_urlsafe(16)} for o, c, a in plan.new_contacts]
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


def _insert_returning(session: Session, model: type[Base], rows: list[dict[str, Any]]) -> list[int]:
    """Insert in bulk; the new ids, in the order of `rows`. On PostgreSQL the ids are drawn from the table's
    sequence in one statement and the rows go in by COPY (a multi-row INSERT … RETURNING of 5,000 rows is a
    statement of 15,000 placeholders that the driver parses anew each time); elsewhere INSERT … RETURNING."""
    if not rows:
        return []
    table: Any = model.__table__  # a Table (FromClause to the type checker)
    if session.get_bind().dialect.name == "postgresql":
        sequence = func.pg_get_serial_sequence(table.name, table.c.id.name)
        ids = list(session.scalars(select(func.nextval(sequence, type_=Integer))
                                   .select_from(func.generate_series(1, len(rows)))))
        insert_many(session, table, [{"id": i, **row} for i, row in zip(ids, rows, strict=True)], BATCH)
        return ids
    ids = []
    statement = insert(table).returning(table.c.id, sort_by_parameter_order=True)
    for start in range(0, len(rows), BATCH):
        ids.extend(session.execute(statement, rows[start:start + BATCH]).scalars())
    return ids
