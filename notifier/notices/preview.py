"""What the staff console shows before publishing: the exact digest a parent would get, how many get it, and how
long reaching them all takes at the configured rates.

The preview is rendered by the same functions the real digests use, so what staff read is what parents receive.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from notifier.config import Settings
from notifier.delivery import outbox, progress, publishes
from notifier.delivery.channels import segments
from notifier.delivery.outbox import OutboxRow
from notifier.notices import render
from notifier.notices.digests import PANELS, Event, net, relevant, select_for
from notifier.status.boards import Board
from notifier.status.changes import Change, diff
from notifier.status.history import ChangeEvent
from notifier.subscribers.models import Contact, ContactStatus, Follow, Frequency, Subscriber


@dataclass(frozen=True)
class Preview:
    """What a parent following both panels of the board would receive for one change, on each channel."""

    email_subject: str
    email_text: str
    email_html: str
    sms_text: str
    sms_segments: int


def preview(old: Board | None, new: Board, language: str, settings: Settings) -> Preview:
    """The exact digest for old → new, rendered by the same functions the real digests use."""
    events = [Event.from_change(i, change, new) for i, change in enumerate(diff(old, new), start=1)]
    chosen = select_for(events, {new.id: frozenset(PANELS)}, notify_on_effect=True).events
    email = render.render_digest(chosen, {new.id: new}, language, "email", settings)
    sms = render.render_digest(chosen, {new.id: new}, language, "sms", settings)
    email = email.personal(settings, subscriber_id=0, contact_id=0)
    return Preview(email.subject, email.text, email.html or "", sms.text, segments.segments(sms.text))


def audience(session: Session, board_id: str, changes: list[Change], now: datetime) -> dict[str, dict[str, int]]:
    """How many active contacts would hear about `changes` at once, and how many in the next daily summary."""
    counts = {"email": {"now": 0, "daily": 0}, "sms": {"now": 0, "daily": 0}}
    for channel, when, _, number in _reached(session, board_id, changes):
        counts.setdefault(channel, {"now": 0, "daily": 0})[when] += number
    return counts


def texts_now(session: Session, board_id: str, changes: list[Change]) -> dict[str, int]:
    """Of the texts `changes` send at once, how many go in each language (their segments differ)."""
    found: dict[str, int] = {}
    for channel, when, language, number in _reached(session, board_id, changes):
        if channel == "sms" and when == "now":
            found[language] = found.get(language, 0) + number
    return found


def _reached(session: Session, board_id: str, changes: list[Change]) -> list[tuple[str, str, str, int]]:
    """(channel, "now" or "daily", language, active contacts) for the contacts who would hear about `changes`."""
    events = [Event.from_change(i, change) for i, change in enumerate(changes, start=1)]
    panels = {p for e in events if relevant(e, {board_id: frozenset(PANELS)}, True) for p in e.panels()}
    if not panels:
        return []
    # Urgent as the planner judges it (a closure now or announced, or one over or called off), panel by panel.
    urgent_panels = {panel for e in events if any(change.urgent for change in net([e])) for panel in e.panels()}
    followed = select(Follow.subscriber_id, func.count()).where(Follow.board_id == board_id,
                                                                Follow.panel.in_(panels))
    follows = followed.group_by(Follow.subscriber_id).subquery()
    urgent = select(Follow.subscriber_id).where(Follow.board_id == board_id, Follow.panel.in_(urgent_panels or {""}))
    query = (
        select(Contact.channel, Contact.frequency, Contact.subscriber_id.in_(urgent), Subscriber.language,
               func.count())
        .join(follows, follows.c.subscriber_id == Contact.subscriber_id)
        .join(Subscriber, Subscriber.id == Contact.subscriber_id)
        .where(Contact.status == ContactStatus.ACTIVE.value)
        .group_by(Contact.channel, Contact.frequency, Contact.subscriber_id.in_(urgent), Subscriber.language)
    )
    return [(channel, "daily" if frequency == Frequency.DAILY.value and not is_urgent else "now", language, number)
            for channel, frequency, is_urgent, language, number in session.execute(query)]


def estimates(settings: Settings, counts: dict[str, dict[str, int]], texts: dict[str, int] | None = None,
              segments_per_text: dict[str, int] | None = None) -> dict[str, progress.Estimate]:
    """For `audience` counts: per channel, who is reached at once and how long that takes at the configured rate.
    With `texts` (texts sent now per language, `texts_now`) and each language's segments per text (the preview's),
    texts are timed and priced in segments; a language without a preview counts as the longest one."""
    units = None
    if texts is not None and segments_per_text:
        longest = max(segments_per_text.values())
        units = {"sms": sum(n * segments_per_text.get(language, longest) for language, n in texts.items())}
    return progress.estimates(settings, {channel: numbers["now"] for channel, numbers in counts.items()}, units)


def for_publish(session: Session, settings: Settings, board: Board,
                event_ids: tuple[int, ...]) -> dict[str, progress.Estimate]:
    """The preview's estimate for a publish already made: per channel, its messages (texts in segments, each
    language's own, rendered from the publish's changes) at the configured rates, for the progress page."""
    query = (select(OutboxRow.channel, Subscriber.language, func.count())
             .join(Contact, Contact.id == OutboxRow.contact_id)
             .join(Subscriber, Subscriber.id == Contact.subscriber_id)
             .where(publishes.covering(event_ids))
             .group_by(OutboxRow.channel, Subscriber.language))
    counts: dict[str, dict[str, int]] = {}
    texts: dict[str, int] = {}
    for channel, language, number in session.execute(query):
        counts.setdefault(channel, {"now": 0, "daily": 0})["now"] += number
        if channel == "sms":
            texts[language] = texts.get(language, 0) + number
    # A text says what its row's events say, as the composer renders it: one of the publish's texts stands for all.
    stored = session.scalar(select(OutboxRow.event_ids).where(publishes.covering(event_ids), OutboxRow.channel == "sms")
                            .limit(1))
    chosen = stored and session.scalars(select(ChangeEvent).where(ChangeEvent.id.in_(outbox.event_ids(stored)))).all()
    events = [Event.from_row(row) for row in chosen or ()]
    per_text = {language: segments.segments(render.render_digest(events, {board.id: board}, language, "sms",
                                                                 settings).text)
                for language in ("en", "fr")} if events else {}
    return estimates(settings, counts, texts, per_text)
