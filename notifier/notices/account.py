"""The few messages this part sends itself: confirmation requests and manage links, by email or text.

They go straight through a channel (not the digest outbox): a parent is waiting on the page for them. A refusal
is acted on at once: Twilio 21610 (the number texted STOP) opts the contact out; another permanent refusal
(21211, 21614, SMTP 5xx) marks it invalid. The caller shows the parent what happened.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping

from sqlalchemy.orm import Session, sessionmaker

from notifier import links
from notifier.db import transaction
from notifier.delivery import channels as channel_registry
from notifier.delivery.channels import Channel, Message
from notifier.delivery.channels.sms import OPTED_OUT
from notifier.errors import PermanentDeliveryError, TemporaryDeliveryError
from notifier.masking import mask
from notifier.notices import templates
from notifier.status.boards import Board
from notifier.subscribers.addresses import EMAIL
from notifier.subscribers.contacts import mark_invalid, mark_opted_out
from notifier.subscribers.models import Contact

log = logging.getLogger(__name__)

SENT, REFUSED_OPTED_OUT, REFUSED_INVALID, FAILED = "sent", "opted_out", "invalid", "failed"


def follows_of(contact: Contact, boards: Mapping[str, Board]) -> list[dict]:
    """The family's follows as template data: board, its short code, and the panels followed, board by board."""
    grouped: dict[str, list[str]] = {}
    for follow in sorted(contact.subscriber.follows, key=lambda f: (f.board_id, f.panel)):
        grouped.setdefault(follow.board_id, []).append(follow.panel)
    return [{"board": boards.get(b), "code": b.upper(), "panels": panels} for b, panels in grouped.items()]


def _reference(kind: str, contact: Contact) -> str:
    return f"{kind}-{contact.id}-{secrets.token_hex(4)}"


def confirmation(settings, contact: Contact, boards: Mapping[str, Board], invited: bool = False) -> Message:
    """The double opt-in request: a signed link by email, "reply YES" by text. `invited`: from a board's list."""
    language = contact.subscriber.language
    context = {"follows": follows_of(contact, boards), "base_url": settings.base_url, "invited": invited}
    if contact.channel == EMAIL:
        context["confirm_url"] = links.confirm_url(settings, contact.id, contact.address)
        return _email(settings, contact, "confirm", templates.gettext(language, "Confirm your school status alerts"),
                      context)
    return Message(channel=contact.channel, to=contact.address, reference=_reference("confirm", contact),
                   language=language, text=templates.render("sms/confirm.txt", language, **context).strip())


def manage_link(settings, contact: Contact, boards: Mapping[str, Board]) -> Message:
    """A fresh link to the family's settings page (the lost-link form, or a sign-up of an active address)."""
    language = contact.subscriber.language
    context = {"manage_url": links.manage_url(settings, contact.subscriber_id), "base_url": settings.base_url,
               "follows": follows_of(contact, boards)}
    if contact.channel == EMAIL:
        return _email(settings, contact, "manage_link",
                      templates.gettext(language, "Your link to manage school status alerts"), context)
    return Message(channel=contact.channel, to=contact.address, reference=_reference("manage", contact),
                   language=language, text=templates.render("sms/manage_link.txt", language, **context).strip())


def _email(settings, contact: Contact, template: str, subject: str, context: dict) -> Message:
    language = contact.subscriber.language
    unsubscribe = links.unsubscribe_url(settings, contact.id)
    context = {**context, "subject": subject, "sender": settings.sender, "unsubscribe_url": unsubscribe}
    return Message(
        channel=EMAIL, to=contact.address, reference=_reference(template, contact), language=language,
        subject=subject, text=templates.render(f"email/{template}.txt", language, **context),
        html=templates.render(f"email/{template}.html", language, **context),
        # RFC 8058: every email can be left in one click, even this one ("I never asked for this").
        headers={"List-Unsubscribe": f"<{unsubscribe}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
    )


def send(session: Session, channels: Mapping[str, Channel], message: Message) -> str:
    """Send `message` now; returns sent, opted_out, invalid or failed, having marked the contact when refused."""
    try:
        channels[message.channel].send(message)
        return SENT
    except PermanentDeliveryError as error:
        if error.code == OPTED_OUT:
            mark_opted_out(session, message.channel, message.to, "provider", f"twilio {OPTED_OUT}")
            return REFUSED_OPTED_OUT
        mark_invalid(session, message.channel, message.to, str(error))
        return REFUSED_INVALID
    except TemporaryDeliveryError:
        log.warning("could not send %s to %s now; the parent is asked to try again", message.reference,
                    mask(message.to))
        return FAILED


def deliver(settings, sessions: sessionmaker[Session], messages: list[Message]) -> list[str]:
    """Send each message now through freshly built channels; one outcome per message, refusals recorded."""
    built = channel_registry.build(settings)
    outcomes = []
    for message in messages:
        with built[message.channel].session(), transaction(sessions) as session:
            outcomes.append(send(session, built, message))
    return outcomes
