"""Composing what leaves: claimed outbox rows turned into the messages a parent receives.

Delivery decides when and how a row is sent; this decides what it says. Each distinct digest is rendered once per
language and channel (placeholders stand for the links) and only each contact's own links are filled in.

Whether a row still says something true is decided here, as it is about to leave, not only when it was planned: a
row for which a later change event of the same kind was recorded (a correction: "closed", then "open after all")
is marked `superseded` and its contact planned again at once (`planning.replan`), so a parent who never received
the old news hears nothing, or only the net change, and one who did hears the correction once. This costs one
query per claimed batch while nothing new was recorded, and no rewriting of the rows waiting in the outbox.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from sqlalchemy import ScalarSelect, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier import links
from notifier.config import Settings
from notifier.db import hold_lock, rowcount, utcnow
from notifier.delivery.channels import EMAIL, PUSH, Message
from notifier.delivery.outbox import OutboxRow, RowStatus, event_ids
from notifier.delivery.sending import Job
from notifier.notices import planning, push_payload, render
from notifier.notices.digests import Event, follows_of, relevant
from notifier.status.boards import Board
from notifier.status.history import BoardState, ChangeEvent
from notifier.subscribers.models import Contact, ContactStatus, Follow, Subscriber

log = logging.getLogger(__name__)
DEFER = timedelta(seconds=2)  # how long a digest waits for an older one of its contact not yet settled


def _older_unsettled() -> ScalarSelect[int | None]:
    """The oldest digest of the row's contact older than the row and not yet settled (pending or being sent), or
    NULL. Whether that one leaves or is overtaken decides what the row should say: a correction claimed first, say,
    while the closure it corrects waits in another sender's queue or for a retry. If the closure never leaves,
    neither may the correction."""
    older = OutboxRow.__table__.alias("older")
    return (select(func.min(older.c.id))
            .where(older.c.contact_id == OutboxRow.contact_id, older.c.id < OutboxRow.id,
                   older.c.status.in_((RowStatus.PENDING.value, RowStatus.SENDING.value)), older.c.payload.is_(None))
            .scalar_subquery())


class MessageBuilder:
    """Turns claimed rows into messages; renders each distinct digest once per language and channel."""

    def __init__(self, sessions: sessionmaker[Session], settings: Settings) -> None:
        self.sessions, self.settings = sessions, settings
        self.events: dict[int, Event] = {}
        self.rendered: dict[tuple[str, str, str], render.Rendered] = {}
        with sessions() as session:
            self.boards = {s.board_id: Board.model_validate(s.data) for s in session.scalars(select(BoardState))}

    def build(self, ids: list[int], supersede: bool = True) -> tuple[list[Job], list[int]]:
        """Jobs for the rows `ids`, and the ids of rows whose contact may no longer receive anything.

        Rows overtaken by a later change are marked `superseded` and left out (none with `supersede=False`: a
        reconciliation rebuilds what may already have been sent, to recognise it).
        """
        with self.sessions() as session:
            # The row's own status and its contact's older unsettled digests come from one statement, so one
            # snapshot: a row another process superseded meanwhile is never read as still ours to send.
            rows = session.execute(
                select(OutboxRow.id, OutboxRow.channel, OutboxRow.event_ids, OutboxRow.digest_key,
                       OutboxRow.attempts, OutboxRow.claim, OutboxRow.claimed_at, Contact.id, Contact.address,
                       Contact.status, Subscriber.id, Subscriber.language, Subscriber.notify_on_effect,
                       OutboxRow.status, _older_unsettled(), Contact.link_key)
                .join(Contact, Contact.id == OutboxRow.contact_id)
                .join(Subscriber, Subscriber.id == Contact.subscriber_id)
                .where(OutboxRow.id.in_(ids))
            ).all()
            if supersede:  # a row no longer being sent was settled by another process: not this one's to send
                rows = [row for row in rows if row[13] == RowStatus.SENDING.value]
            wanted = {i for row in rows for i in event_ids(row[2])} - self.events.keys()
            for event in session.scalars(select(ChangeEvent).where(ChangeEvent.id.in_(wanted))):
                self.events[event.id] = Event.from_row(event)
            live = [row for row in rows if row[9] == ContactStatus.ACTIVE.value]
            overtaken = self._overtaken(session, live) if supersede else []
            behind = [row for row in live if row[14] is not None] if supersede else []
        self._supersede(overtaken)
        self._defer([row for row in behind if row not in overtaken])
        # Left out whether or not this process could settle them: one it could not is no longer its own.
        stale = {row[0] for row in (*overtaken, *behind)}
        jobs, gone = [], []
        for row in rows:
            row_id, channel, stored, key, attempts, claim, claimed_at, contact_id, address, status = row[:10]
            sub_id, lang = row[10], row[11]
            if status != ContactStatus.ACTIVE.value:
                gone.append(row_id)
                continue
            if row_id in stale:
                continue
            rendered = self._render(stored, lang, channel)
            headers = {}
            if channel == EMAIL:
                unsubscribe = links.unsubscribe_url(self.settings, contact_id, row[15])
                rendered = rendered.with_links(links.manage_url(self.settings, sub_id), unsubscribe)
                headers = {"List-Unsubscribe": f"<{unsubscribe}>",
                           "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
            elif channel == PUSH:  # the text is the notification's JSON; the push service reads TTL and Urgency
                headers = push_payload.headers(rendered.urgent)
            message = Message(channel, address, rendered.text, f"digest-{row_id}.{key}", lang,
                              rendered.subject or None, rendered.html, headers)
            jobs.append(Job(row_id, channel, address, message, attempts, claim, claimed_at))
        return jobs, gone

    def _overtaken(self, session: Session, rows: list[Any]) -> list[Any]:
        """The rows for which a change event recorded after their newest one, relevant to their contact, is of
        the same family as one of theirs (the row's message may no longer be true)."""
        newest = {row[0]: max(event_ids(row[2]), default=0) for row in rows}
        boards = {self.events[i].board_id for row in rows for i in event_ids(row[2]) if i in self.events}
        if not boards:
            return []
        later = [Event.from_row(e) for e in session.scalars(
            select(ChangeEvent).where(ChangeEvent.id > min(newest.values()), ChangeEvent.board_id.in_(boards),
                                      ChangeEvent.notify.is_(True)).order_by(ChangeEvent.id))]
        if not later:
            return []
        pairs: dict[int, list[tuple[str, str]]] = {}
        for subscriber_id, board_id, panel in session.execute(
                select(Follow.subscriber_id, Follow.board_id, Follow.panel)
                .where(Follow.subscriber_id.in_({row[10] for row in rows}), Follow.board_id.in_(boards))):
            pairs.setdefault(subscriber_id, []).append((board_id, panel))
        stale = []
        for row in rows:
            families = {self.events[i].family for i in event_ids(row[2]) if i in self.events}
            follows = follows_of(pairs.get(row[10], ()))
            if any(e.id > newest[row[0]] and e.family in families and relevant(e, follows, row[12]) for e in later):
                stale.append(row)
        return stale

    def _defer(self, rows: list[Any]) -> None:
        """Put rows back for a little later (only while still claimed as built): the older digest is settled
        by then."""
        if not rows:
            return
        later = utcnow() + DEFER
        with self.sessions() as session, session.begin():
            for row in rows:
                session.execute(update(OutboxRow).where(OutboxRow.id == row[0], OutboxRow.claim == row[5],
                                                        OutboxRow.status == RowStatus.SENDING.value)
                                .values(status=RowStatus.PENDING.value, claim=None, claimed_at=None, due_at=later))

    def _supersede(self, stale: list[Any]) -> None:
        """Mark stale rows `superseded` (only while still claimed as built) and plan their contacts again.

        A younger digest of the same contact not yet sent was planned on the premise that this one would leave (a
        correction planned while the closure was in a sender's queue): it is superseded with it and its events
        merged, or a parent who never got the closure would be told it is over. One statement takes it whether it
        waits or is claimed at that moment, and it is never on its way to the provider: its sender defers it while
        an older digest of its contact is unsettled, and drops it once it is no longer `sending`."""
        if not stale:
            return
        with self.sessions() as session, session.begin():
            hold_lock(session, "plan")  # beside the planning pass, never inside one of its batches
            marked: dict[int, list[int]] = {}
            oldest: dict[int, int] = {}  # contact id -> its oldest row superseded here
            done = set()
            for row in stale:
                changed = rowcount(session.execute(
                    update(OutboxRow).where(OutboxRow.id == row[0], OutboxRow.claim == row[5],
                                            OutboxRow.status == RowStatus.SENDING.value)
                    .values(status=RowStatus.SUPERSEDED.value, last_error="overtaken by a later change")
                ))
                if changed:
                    marked.setdefault(row[7], []).extend(event_ids(row[2]))
                    oldest[row[7]] = min(row[0], oldest.get(row[7], row[0]))
                    done.add(row[0])
            for contact_id, row_id in oldest.items():
                younger = session.execute(
                    update(OutboxRow).where(OutboxRow.contact_id == contact_id, OutboxRow.id > row_id,
                                            OutboxRow.status.in_((RowStatus.PENDING.value, RowStatus.SENDING.value)),
                                            OutboxRow.payload.is_(None))
                    .values(status=RowStatus.SUPERSEDED.value, last_error="planned on news that did not leave")
                    .returning(OutboxRow.id, OutboxRow.event_ids)
                    .execution_options(synchronize_session=False)).all()
                for row_id, stored in younger:
                    marked[contact_id].extend(event_ids(stored))
                    done.add(row_id)
            if marked:
                result = planning.replan(session, self.settings, marked, f"events-s{min(done)}", utcnow())
                log.info("%d message(s) overtaken by a later change before leaving: superseded; %d contact(s) "
                         "planned again (%d new digest(s))", len(done), result.contacts, result.created)

    def _render(self, stored: str, language: str, channel: str) -> render.Rendered:
        key = (stored, language, channel)
        if key not in self.rendered:
            chosen = [self.events[i] for i in event_ids(stored) if i in self.events]
            if channel == PUSH:
                self.rendered[key] = push_payload.render(chosen, self.boards, language, self.settings)
            else:
                self.rendered[key] = render.render_digest(chosen, self.boards, language, channel, self.settings)
        return self.rendered[key]
