"""Planning webhooks: each board's change events, as recorded together, become one outbox row per endpoint.

Every cycle looks at the change events recorded since its last pass (`webhooks_planned_through`). The events one
record of a board made together (a status, both panels, the message) are one change for an organisation: one
request, keyed by the endpoint and the newest of those events (`webhook-<endpoint>-<event id>`, unique in the
outbox), so planning again after a crash never makes a second row and the `webhook-id` header stays the same
across retries. An endpoint that chose panels hears only of changes concerning them; events recorded before it was
added, and edits published without notifying, are never sent. The body is fixed when planned (`payload`), like
the messages a parent waits for, so every retry sends the same bytes.

The same pass emails the owner of each endpoint disabled since (a day of failures, or 410 Gone), once, if the owner
confirmed their address: an owner's address gets nothing but a confirmation link until then (`ask_owner`, when the
endpoint is added, or in the next pass for endpoints added before owners confirmed).
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from itertools import groupby
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier import links
from notifier.config import Settings
from notifier.db import hold_lock, rowcount
from notifier.delivery import express
from notifier.delivery.channels import EMAIL, WEBHOOK, Message
from notifier.delivery.outbox import ClockState, OutboxRow, Priority, RowStatus
from notifier.masking import mask
from notifier.notices import templates
from notifier.notices.digests import Event
from notifier.notices.webhook_body import body
from notifier.status.boards import Board
from notifier.status.history import BoardState, ChangeEvent, latest_event_id
from notifier.subscribers import webhooks
from notifier.subscribers.webhooks import WebhookEndpoint

log = logging.getLogger(__name__)

CURSOR = "webhooks_planned_through"


def key(endpoint: WebhookEndpoint, event_id: int) -> str:
    """The outbox key and `webhook-id` of one change for one endpoint: the same on every retry and re-planning."""
    return f"webhook-{endpoint.public_id}-{event_id}"


def plan(sessions: sessionmaker[Session], settings: Settings, now: datetime) -> int:
    """Plan a row per endpoint for each board change recorded since the last pass; email owners of endpoints
    disabled since. Returns how many rows were planned."""
    planned = 0
    with sessions() as session, session.begin():
        hold_lock(session, "webhooks")
        cursor, newest = _cursor(session), latest_event_id(session)
        if newest > cursor:
            planned = _plan(session, settings, cursor, newest)
            session.get_one(ClockState, CURSOR).number = newest
    if planned:
        log.info("planned %d webhook(s)", planned)
    tell_owners(sessions, settings, now)
    return planned


def _cursor(session: Session) -> int:
    state = session.get(ClockState, CURSOR, with_for_update=True)
    if state is None:  # the first pass: endpoints hear of what happens from now on, not of the past
        state = ClockState(name=CURSOR, number=latest_event_id(session))
        session.add(state)
        session.flush()
    return state.number


def _plan(session: Session, settings: Settings, cursor: int, newest: int) -> int:
    rows = session.scalars(select(ChangeEvent).where(ChangeEvent.id > cursor, ChangeEvent.id <= newest,
                                                     ChangeEvent.notify.is_(True))
                           .order_by(ChangeEvent.board_id, ChangeEvent.recorded_at, ChangeEvent.id))
    groups = [list(group) for _, group in groupby((Event.from_row(r) for r in rows),
                                                  key=lambda e: (e.board_id, e.recorded_at))]
    if not groups:
        return 0
    endpoints = webhooks.following(session, sorted({g[0].board_id for g in groups}))
    if not endpoints:
        return 0
    states = session.scalars(select(BoardState).where(BoardState.board_id.in_({e.board_id for e in endpoints})))
    boards = {s.board_id: Board.model_validate(s.data) for s in states}
    existing = set(session.scalars(select(OutboxRow.digest_key).where(
        OutboxRow.channel == WEBHOOK, OutboxRow.digest_key.in_([key(e, g[-1].id) for e in endpoints for g in groups]))))
    planned = 0
    for events in groups:
        board = boards.get(events[0].board_id)
        if board is None:
            continue
        at = events[-1].recorded_at
        if at is None:  # never: events read from the table carry their time
            continue
        for endpoint in endpoints:
            if endpoint.board_id != board.id or endpoint.created_at > at or key(endpoint, events[-1].id) in existing:
                continue
            concerned = _concerning(events, endpoint.panel_list)
            if not concerned:
                continue
            text = body(endpoint.format, endpoint.language, board.at(at), concerned, settings, at)
            message = Message(channel=WEBHOOK, to=endpoint.public_id, text=text, reference=key(endpoint, events[-1].id),
                              language=endpoint.language)
            row_id = express.enqueue(session, message, None, Priority.DIGEST, now=at)
            session.execute(update(OutboxRow).where(OutboxRow.id == row_id).values(
                event_ids=",".join(str(e.id) for e in events), urgent=False))
            planned += 1
    return planned


def _concerning(events: list[Event], panels: list[str]) -> list[Event]:
    """The events an endpoint following `panels` (all when empty) hears of; the board-wide status summary alone is
    no change a parent notices (the per-panel events say it)."""
    chosen = [e for e in events if not panels or set(e.panels()) & set(panels)]
    return chosen if any(e.kind != "status" for e in chosen) else []


def ask_owner(session: Session, settings: Settings, endpoint: WebhookEndpoint, now: datetime) -> bool:
    """Email the endpoint's owner a link to confirm their address, once; True when it was queued now."""
    if not endpoint.owner_email or endpoint.owner_confirmed_at is not None or endpoint.owner_asked_at is not None:
        return False
    endpoint.owner_asked_at = now
    express.enqueue(session, owner_confirmation(settings, endpoint), None, Priority.ACCOUNT, now=now)
    log.info("webhook %s: owner %s asked to confirm", endpoint.public_id, mask(endpoint.owner_email))
    return True


def owner_confirmation(settings: Settings, endpoint: WebhookEndpoint) -> Message:
    """The email asking an endpoint's owner to confirm their address (the only mail it gets until they do)."""
    language = endpoint.language
    subject = templates.gettext(language, "Confirm that you look after a school status webhook")
    context = {"hook_url": endpoint.masked_url(), "code": endpoint.board_id.upper(), "subject": subject,
               "confirm_url": links.webhook_owner_url(settings, endpoint.public_id, endpoint.owner_email or ""),
               "sender": settings.sender, "base_url": settings.base_url}
    return Message(channel=EMAIL, to=endpoint.owner_email or "", reference=f"webhook-owner-{endpoint.public_id}",
                   language=language, subject=subject,
                   text=templates.render("email/webhook_owner.txt", language, **context),
                   html=templates.render("email/webhook_owner.html", language, **context))


def tell_owners(sessions: sessionmaker[Session], settings: Settings, now: datetime) -> int:
    """Ask each owner not yet asked (endpoints added before owners confirmed) to confirm; email the confirmed owner
    of each endpoint disabled since the last look, once (an unconfirmed owner gets nothing); how many were told."""
    told = 0
    with sessions() as session, session.begin():
        unasked = session.scalars(select(WebhookEndpoint).where(WebhookEndpoint.owner_email.is_not(None),
                                                                WebhookEndpoint.owner_asked_at.is_(None),
                                                                WebhookEndpoint.owner_confirmed_at.is_(None))
                                  .with_for_update(skip_locked=True))
        for endpoint in unasked:
            ask_owner(session, settings, endpoint, now)
    with sessions() as session, session.begin():
        disabled = session.scalars(select(WebhookEndpoint).where(WebhookEndpoint.disabled_at.is_not(None),
                                                                 WebhookEndpoint.owner_notified_at.is_(None))
                                   .with_for_update(skip_locked=True))
        for endpoint in disabled:
            endpoint.owner_notified_at = now
            if not endpoint.owner_email:
                continue
            if endpoint.owner_confirmed_at is None:
                log.info("webhook %s disabled; owner %s not told: never confirmed", endpoint.public_id,
                         mask(endpoint.owner_email))
                continue
            express.enqueue(session, disabled_notice(settings, endpoint), None, Priority.ACCOUNT, now=now)
            log.info("webhook %s disabled; owner %s told", endpoint.public_id, mask(endpoint.owner_email))
            told += 1
    return told


def disabled_notice(settings: Settings, endpoint: WebhookEndpoint) -> Message:
    """The email telling an endpoint's owner that it was disabled, and why."""
    language = endpoint.language
    subject = templates.gettext(language, "Your school status webhook was turned off")
    context = {"hook_url": endpoint.masked_url(), "code": endpoint.board_id.upper(),
               "reason": endpoint.disabled_reason or "", "subject": subject, "sender": settings.sender,
               "board_url": f"{settings.base_url}/boards/{endpoint.board_id}", "base_url": settings.base_url}
    return Message(channel=EMAIL, to=endpoint.owner_email or "", reference=f"webhook-off-{endpoint.public_id}",
                   language=language, subject=subject,
                   text=templates.render("email/webhook_disabled.txt", language, **context),
                   html=templates.render("email/webhook_disabled.html", language, **context))


def remove(session: Session, endpoint: WebhookEndpoint) -> int:
    """Delete an endpoint and cancel what it has waiting in the outbox; how many rows were cancelled."""
    cancelled = session.execute(update(OutboxRow).where(
        OutboxRow.channel == WEBHOOK, OutboxRow.digest_key.like(f"webhook-{endpoint.public_id}-%"),
        OutboxRow.status == RowStatus.PENDING.value).values(status=RowStatus.CANCELLED.value, payload=None,
                                                             last_error="endpoint removed"))
    session.delete(endpoint)
    return rowcount(cancelled) or 0


def payload_of(row: OutboxRow) -> dict[str, Any]:
    """A planned webhook row's stored request (for tests and `status`)."""
    stored: dict[str, Any] = json.loads(row.payload or "{}")
    return stored
