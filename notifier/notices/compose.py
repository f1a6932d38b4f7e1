"""Composing what leaves: claimed outbox rows turned into the messages a parent receives.

Delivery decides when and how a row is sent; this decides what it says. Each distinct digest is rendered once per
language and channel (placeholders stand for the links) and only each contact's own links are filled in.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from notifier import links
from notifier.config import Settings
from notifier.delivery.channels import EMAIL, Message
from notifier.delivery.outbox import OutboxRow, event_ids
from notifier.delivery.sending import Job
from notifier.notices import render
from notifier.notices.digests import Event
from notifier.status.boards import Board
from notifier.status.history import BoardState, ChangeEvent
from notifier.subscribers.models import Contact, ContactStatus, Subscriber


class MessageBuilder:
    """Turns claimed rows into messages; renders each distinct digest once per language and channel."""

    def __init__(self, sessions: sessionmaker[Session], settings: Settings) -> None:
        self.sessions, self.settings = sessions, settings
        self.events: dict[int, Event] = {}
        self.rendered: dict[tuple[str, str, str], render.Rendered] = {}
        with sessions() as session:
            self.boards = {s.board_id: Board.model_validate(s.data) for s in session.scalars(select(BoardState))}

    def build(self, ids: list[int]) -> tuple[list[Job], list[int]]:
        """Jobs for the rows `ids`, and the ids of rows whose contact may no longer receive anything."""
        with self.sessions() as session:
            rows = session.execute(
                select(OutboxRow.id, OutboxRow.channel, OutboxRow.event_ids, OutboxRow.digest_key,
                       OutboxRow.attempts, OutboxRow.claim, OutboxRow.claimed_at, Contact.id, Contact.address,
                       Contact.status, Subscriber.id, Subscriber.language)
                .join(Contact, Contact.id == OutboxRow.contact_id)
                .join(Subscriber, Subscriber.id == Contact.subscriber_id)
                .where(OutboxRow.id.in_(ids))
            ).all()
            wanted = {i for row in rows for i in event_ids(row[2])} - self.events.keys()
            for event in session.scalars(select(ChangeEvent).where(ChangeEvent.id.in_(wanted))):
                self.events[event.id] = Event.from_row(event)
        jobs, gone = [], []
        for row in rows:
            row_id, channel, stored, key, attempts, claim, claimed_at, contact_id, address, status, sub_id, lang = row
            if status != ContactStatus.ACTIVE.value:
                gone.append(row_id)
                continue
            rendered = self._render(stored, lang, channel)
            headers = {}
            if channel == EMAIL:
                unsubscribe = links.unsubscribe_url(self.settings, contact_id)
                rendered = rendered.with_links(links.manage_url(self.settings, sub_id), unsubscribe)
                headers = {"List-Unsubscribe": f"<{unsubscribe}>",
                           "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
            message = Message(channel, address, rendered.text, f"digest-{row_id}.{key}", lang,
                              rendered.subject or None, rendered.html, headers)
            jobs.append(Job(row_id, channel, address, message, attempts, claim, claimed_at))
        return jobs, gone

    def _render(self, stored: str, language: str, channel: str) -> render.Rendered:
        key = (stored, language, channel)
        if key not in self.rendered:
            chosen = [self.events[i] for i in event_ids(stored) if i in self.events]
            self.rendered[key] = render.render_digest(chosen, self.boards, language, channel, self.settings)
        return self.rendered[key]
