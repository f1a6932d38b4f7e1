"""Confirmation requests for the addresses a bulk import added: queued in bulk, behind every closure notice.

An import may invite a quarter of a million parents. Their invitations go into the outbox with bulk statements at
the digest priority (not the top priority of a confirmation a parent waits for on a page), so a closure published
while they go out overtakes them. A running sending process sends them at the configured rate; when none runs,
the command sends them itself, as a sign-up page would.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.delivery import express, senders
from notifier.delivery.channels import Message
from notifier.delivery.outbox import Priority
from notifier.notices import account
from notifier.status.boards import Board
from notifier.subscribers.importer import Invitee

CHUNK = 200  # rows sent per round when the command sends them itself


@dataclass
class Outcome:
    """What became of the invitations: sent (or handed over), not delivered, or queued for a sending process."""

    sent: int = 0
    not_delivered: int = 0
    queued: int = 0


def enqueue(session: Session, settings: Settings, invitees: list[Invitee], boards: Mapping[str, Board]) -> list[int]:
    """Queue one confirmation request per invitee at the digest priority; the outbox row ids (the caller commits)."""
    return express.enqueue_many(session, _messages(settings, invitees, boards), Priority.DIGEST)


def _messages(settings: Settings, invitees: list[Invitee],
              boards: Mapping[str, Board]) -> Iterator[tuple[Message, int]]:
    follows: dict[tuple[tuple[str, str], ...], list[dict[str, Any]]] = {}
    for invitee in invitees:
        data = follows.get(invitee.follows)
        if data is None:
            data = follows[invitee.follows] = account.follows_data(invitee.follows, boards)
        to = account.Addressee(invitee.contact_id, invitee.channel, invitee.address, invitee.language)
        yield account.confirmation_for(settings, to, data, invited=True), invitee.contact_id


def deliver(settings: Settings, sessions: sessionmaker[Session], ids: list[int]) -> Outcome:
    """Leave the rows to a running sending process, or send them here (in small rounds) when none runs."""
    if not ids:
        return Outcome()
    with sessions() as session:
        if senders.live(session):
            return Outcome(queued=len(ids))
    outcome = Outcome()
    for start in range(0, len(ids), CHUNK):
        results = express.deliver(sessions, settings, ids[start:start + CHUNK]).values()
        sent = sum(1 for r in results if r == express.SENT)
        outcome.sent += sent
        outcome.not_delivered += len(results) - sent
    return outcome
