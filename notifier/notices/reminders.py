"""Morning reminders: while a strike or work-to-rule lasts, one short message each school morning, for who asked.

A digest tells what changed; during a long strike nothing changes, and parents still ask every morning "are they
still closed?". A contact that opted in (`Contact.morning_reminder`) gets, on each weekday at the daily-summary time
(NOTIFIER_DAILY_DIGEST_AT), one line per followed board whose followed panels are closed or working to rule:
"Day 3 of the strike: secondary schools remain closed today; buses do not run." Nothing on a day with nothing in
effect, nothing on weekends, nothing to a contact whose daily summary goes out that same morning (it says as much),
and never twice a day: the row's key is the date, unique per contact in the outbox.

Its words are fixed when planned (the row's `payload`, like a confirmation's), in the family's language; whether the
contact still wants it (not opted out, reminders still on) is checked as it leaves (`delivery.claims`).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from sqlalchemy import and_, exists, select
from sqlalchemy.orm import Session, sessionmaker

from notifier import links
from notifier.config import Settings
from notifier.db import hold_lock
from notifier.delivery.channels import EMAIL, Message
from notifier.delivery.outbox import REMINDER_KEY_PREFIX, OutboxRow, Priority, RowStatus
from notifier.formatting import TORONTO
from notifier.notices import quiet_hours, templates
from notifier.status.boards import Board, Category, Panel, Status
from notifier.status.calendar import disruptions, recorded_periods, state_since
from notifier.status.history import BoardState
from notifier.subscribers.models import Contact, ContactStatus, Follow, Subscriber

log = logging.getLogger(__name__)

WINDOW = timedelta(hours=3)  # a clock down at the summary time still reminds until then; later is no morning
KEY = REMINDER_KEY_PREFIX + "{day}"


@dataclass(frozen=True)
class Item:
    """One board's situation for one family: which followed panels are closed or working to rule, since when."""

    board: Board
    status: Status
    panels: tuple[str, ...]
    day: int | None  # the disruption's day number, counting school days (weekdays); None when its start is unknown
    buses: bool  # transportation is withdrawn for one of these panels
    services: bool = True  # some service is listed as withdrawn for one of these panels

    @property
    def url(self) -> str:
        return f"/boards/{self.board.id}"


def is_reminder_morning(settings: Settings, now: datetime) -> bool:
    """True on a weekday from the daily-summary time for `WINDOW`, Toronto time."""
    local = now.astimezone(TORONTO)
    start = datetime.combine(local.date(), settings.daily_digest_at, TORONTO)
    return local.weekday() < 5 and start <= local < start + WINDOW


def school_day(start: date, today: date) -> int:
    """Which school day of a disruption `today` is, counting weekdays from `start` (both included)."""
    days, current = 0, start
    while current <= today:
        days += current.weekday() < 5
        current += timedelta(days=1)
    return max(days, 1)


def situation(session: Session, board: Board, now: datetime) -> dict[str, tuple[Status, int | None, bool, bool]]:
    """Each panel of `board` that is closed or working to rule at `now`: (status, day number, buses withdrawn, any
    service listed as withdrawn)."""
    current = board.at(now)
    found: dict[str, tuple[Status, int | None, bool, bool]] = {}
    events = None
    for panel in Panel:
        status = current.panel_status(panel)
        if status is Status.OPEN:
            continue
        if events is None:
            since = state_since(session, board.id)
            events = [e for e in disruptions(board, now, recorded_periods(session, board.id), since)
                      if e.in_force(now)]
            known = board.effective is not None or since is not None or board.period_at(now) is not None
        start = next((e.start for e in events if panel in e.panels), None)
        day = school_day(start.astimezone(TORONTO).date(), now.astimezone(TORONTO).date()) if start and known \
            else None
        buses = any(w.category is Category.TRANSPORTATION and panel in w.panels for w in current.withdrawals)
        found[panel.value] = (status, day, buses, bool(current.withdrawals_for(panel)))
    return found


def plan(sessions: sessionmaker[Session], settings: Settings, now: datetime) -> int:
    """Plan this morning's reminders (once per contact per day); returns how many were planned."""
    if not is_reminder_morning(settings, now):
        return 0
    today = now.astimezone(TORONTO).date()
    key = KEY.format(day=today.isoformat())
    with sessions() as session, session.begin():
        hold_lock(session, "plan")
        boards = {s.board_id: Board.model_validate(s.data) for s in session.scalars(select(BoardState))}
        affected = {board_id: found for board_id, board in boards.items()
                    if (found := situation(session, board, now))}
        if not affected:
            return 0
        morning = datetime.combine(today, time(), TORONTO)
        summary_this_morning = exists().where(
            OutboxRow.contact_id == Contact.id, OutboxRow.payload.is_(None),
            OutboxRow.status.in_([RowStatus.PENDING.value, RowStatus.SENDING.value, RowStatus.SENT.value]),
            and_(OutboxRow.due_at >= morning, OutboxRow.due_at < morning + timedelta(hours=12)))
        planned_today = exists().where(OutboxRow.contact_id == Contact.id, OutboxRow.digest_key == key)
        follows_affected = exists().where(Follow.subscriber_id == Contact.subscriber_id,
                                          Follow.board_id.in_(affected))
        contacts = session.scalars(
            select(Contact).join(Subscriber, Subscriber.id == Contact.subscriber_id)
            .where(Contact.status == ContactStatus.ACTIVE.value, Contact.morning_reminder.is_(True),
                   follows_affected, ~planned_today, ~summary_this_morning)
            .order_by(Contact.id)
        ).all()
        planned = 0
        for contact in contacts:
            items = _items(contact, boards, affected)
            if not items:
                continue
            message = compose(settings, contact, items, today)
            due = quiet_hours.due_at(settings, contact.channel, "immediate", False, now)
            session.add(OutboxRow(
                contact_id=contact.id, channel=contact.channel, digest_key=key, event_ids="", urgent=False,
                status=RowStatus.PENDING.value, due_at=due, attempts=0, priority=Priority.DIGEST, created_at=now,
                payload=json.dumps({"to": message.to, "text": message.text, "reference": message.reference,
                                    "language": message.language, "subject": message.subject,
                                    "html": message.html, "headers": message.headers}, ensure_ascii=False)))
            planned += 1
    if planned:
        log.info("planned %d morning reminder(s) for %s", planned, today.isoformat())
    return planned


def _items(contact: Contact, boards: dict[str, Board],
           affected: dict[str, dict[str, tuple[Status, int | None, bool, bool]]]) -> list[Item]:
    followed: dict[str, set[str]] = {}
    for follow in contact.subscriber.follows:
        followed.setdefault(follow.board_id, set()).add(follow.panel)
    items = []
    for board_id in sorted(followed):
        panels = {p: v for p, v in affected.get(board_id, {}).items() if p in followed[board_id]}
        by_status: dict[Status, list[str]] = {}
        for panel, (status, *_) in sorted(panels.items()):
            by_status.setdefault(status, []).append(panel)
        for status, chosen in sorted(by_status.items(), key=lambda s: -s[0].severity):
            days = [day for p in chosen if (day := panels[p][1]) is not None]
            items.append(Item(boards[board_id], status, tuple(chosen), max(days) if days else None,
                              any(panels[p][2] for p in chosen), any(panels[p][3] for p in chosen)))
    return items


def compose(settings: Settings, contact: Contact, items: list[Item], today: date) -> Message:
    """The reminder's words for one contact: a text, or an email with its manage and unsubscribe links."""
    language = contact.subscriber.language
    reference = f"reminder-{contact.id}-{today.isoformat()}"
    context: dict[str, Any] = {"items": items, "base_url": settings.base_url}
    if contact.channel != EMAIL:
        return Message(channel=contact.channel, to=contact.address, reference=reference, language=language,
                       text=templates.render("sms/reminder.txt", language, **context).strip())
    unsubscribe = links.unsubscribe_url(settings, contact.id, contact.link_key)
    subject = templates.render("email/reminder_subject.txt", language, **context).strip()
    context = {**context, "subject": subject, "sender": settings.sender, "unsubscribe_url": unsubscribe,
               "manage_url": links.manage_url(settings, contact.subscriber_id)}
    return Message(channel=EMAIL, to=contact.address, reference=reference, language=language, subject=subject,
                   text=templates.render("email/reminder.txt", language, **context),
                   html=templates.render("email/reminder.html", language, **context),
                   headers={"List-Unsubscribe": f"<{unsubscribe}>",
                            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"})
