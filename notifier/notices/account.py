"""The few messages this part sends itself: confirmation requests and manage links, by email or text.

They go through the outbox at the top priority (`delivery.express`), so they count against the sender's rate and
overtake a running fan-out; the page does not wait for them (`queue`): it answers at once and the same for every
address, so it tells nothing about who is subscribed. A refusal is acted on by the sender: Twilio 21610 (the number
texted STOP) opts the contact out; a recipient's refusal (21211, 21614, SMTP 5.1.1) marks it invalid.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from notifier import links
from notifier.config import Settings
from notifier.db import transaction
from notifier.delivery import express
from notifier.delivery.channels import Message
from notifier.delivery.outbox import Priority
from notifier.notices import templates
from notifier.status.boards import Board
from notifier.subscribers.addresses import EMAIL
from notifier.subscribers.contacts import find_contact
from notifier.subscribers.models import Contact

log = logging.getLogger(__name__)

def follows_of(contact: Contact, boards: Mapping[str, Board]) -> list[dict[str, Any]]:
    """The family's follows as template data: board, its short code, and the panels followed, board by board."""
    return follows_data([(f.board_id, f.panel) for f in contact.subscriber.follows], boards)


def follows_data(follows: Iterable[tuple[str, str]], boards: Mapping[str, Board]) -> list[dict[str, Any]]:
    """(board id, panel) pairs as template data, grouped board by board."""
    grouped: dict[str, list[str]] = {}
    for board_id, panel in sorted(follows):
        grouped.setdefault(board_id, []).append(panel)
    return [{"board": boards.get(b), "code": b.upper(), "panels": panels} for b, panels in grouped.items()]


def _reference(kind: str, contact_id: int) -> str:
    return f"{kind}-{contact_id}-{secrets.token_hex(4)}"


def confirmation(settings: Settings, contact: Contact, boards: Mapping[str, Board], invited: bool = False) -> Message:
    """The double opt-in request: a signed link by email, "reply YES" by text. `invited`: from a board's list."""
    return confirmation_for(settings, _addressee(contact), follows_of(contact, boards), invited)


@dataclass(frozen=True)
class Addressee:
    """Who a message goes to, without loading the contact (a bulk import invites many at once)."""

    contact_id: int
    channel: str
    address: str
    language: str
    link_key: str | None = None  # bound into the unsubscribe link when known (see `links.unsubscribe_url`)


def confirmation_for(settings: Settings, to: Addressee, follows: list[dict[str, Any]],
                     invited: bool = False) -> Message:
    """`confirmation` from plain values; `follows` as `follows_data` gives them."""
    context = {"follows": follows, "base_url": settings.base_url, "invited": invited}
    if to.channel == EMAIL:
        context["confirm_url"] = links.confirm_url(settings, to.contact_id, to.address)
        return _email(settings, to, "confirm", templates.gettext(to.language, "Confirm your school status alerts"),
                      context)
    return Message(channel=to.channel, to=to.address, reference=_reference("confirm", to.contact_id),
                   language=to.language, text=templates.render("sms/confirm.txt", to.language, **context).strip())


def manage_link(settings: Settings, contact: Contact, boards: Mapping[str, Board]) -> Message:
    """A fresh link to the family's settings page (the lost-link form, or a sign-up of an active address)."""
    language = contact.subscriber.language
    context = {"manage_url": links.manage_url(settings, contact.subscriber_id), "base_url": settings.base_url,
               "follows": follows_of(contact, boards)}
    if contact.channel == EMAIL:
        return _email(settings, _addressee(contact), "manage_link",
                      templates.gettext(language, "Your link to manage school status alerts"), context)
    return Message(channel=contact.channel, to=contact.address, reference=_reference("manage", contact.id),
                   language=language, text=templates.render("sms/manage_link.txt", language, **context).strip())


def _addressee(contact: Contact) -> Addressee:
    return Addressee(contact.id, contact.channel, contact.address, contact.subscriber.language, contact.link_key)


def _email(settings: Settings, to: Addressee, template: str, subject: str, context: dict[str, Any]) -> Message:
    language = to.language
    unsubscribe = links.unsubscribe_url(settings, to.contact_id, to.link_key)
    context = {**context, "subject": subject, "sender": settings.sender, "unsubscribe_url": unsubscribe}
    return Message(
        channel=EMAIL, to=to.address, reference=_reference(template, to.contact_id), language=language,
        subject=subject, text=templates.render(f"email/{template}.txt", language, **context),
        html=templates.render(f"email/{template}.html", language, **context),
        # RFC 8058: every email can be left in one click, even this one ("I never asked for this").
        headers={"List-Unsubscribe": f"<{unsubscribe}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
    )


def queue(settings: Settings, sessions: sessionmaker[Session], messages: list[Message],
          priority: int = Priority.ACCOUNT) -> None:
    """Put each message in the outbox, first in line, and leave it to be sent (`express.send_soon`): a page answers
    at once, the same whether or not there was anything to send."""
    ids = []
    if messages:
        with transaction(sessions) as session:
            for message in messages:
                contact = find_contact(session, message.channel, message.to)
                ids.append(express.enqueue(session, message, contact.id if contact else None, priority))
    express.send_soon(sessions, settings, ids)
