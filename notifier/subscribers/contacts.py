"""The life of a contact: found by its address (even once erased), activated, opted out, or marked invalid.

Every path that changes a contact's state goes through here (sign-up, texted keywords, one-click unsubscribe,
provider refusals), so an opted-out address is always erased the same way and its withdrawal always recorded.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from notifier.db import utcnow
from notifier.masking import mask
from notifier.status.history import latest_event_id
from notifier.subscribers import consent
from notifier.subscribers.models import FORGOTTEN, Contact, ContactStatus

log = logging.getLogger(__name__)


def find_contact(session: Session, channel: str, address: str) -> Contact | None:
    """The contact for this address, including an opted-out one whose address was replaced by its hash."""
    found = session.scalars(select(Contact).where(Contact.channel == channel, Contact.address == address)).first()
    if found is None:
        forgotten = FORGOTTEN + consent.address_hash(session, address)
        found = session.scalars(
            select(Contact).where(Contact.channel == channel, Contact.address == forgotten)
        ).first()
    return found


def activate(session: Session, contact: Contact, address: str, now: datetime | None = None) -> None:
    """Make `contact` active at `address`: it hears about changes from now on, not about old news."""
    now = now or utcnow()
    contact.address = address
    contact.status = ContactStatus.ACTIVE.value
    contact.confirmed_at = now
    contact.status_changed_at = now
    contact.seen_event_id = latest_event_id(session)


def mark_opted_out(session: Session, channel: str, address: str, method: str, source: str) -> None:
    """The person said stop (STOP, one-click unsubscribe, Twilio 21610): never write to them again.

    The contact is set opted out and its address erased (only its keyed hash stays, so START can resume it), and
    a "withdrawn" consent row is recorded. Calling it again for the same address changes nothing.
    """
    contact = find_contact(session, channel, address)
    already = consent.has_withdrawn(session, channel, address)
    if contact is not None and contact.status != ContactStatus.OPTED_OUT.value:
        contact.status = ContactStatus.OPTED_OUT.value
        contact.status_changed_at = utcnow()
        already = False
    if contact is not None:
        contact.address = FORGOTTEN + consent.address_hash(session, address)
    if not already:
        consent.record(session, channel=channel, address=address, action=consent.WITHDRAWN, method=method,
                       source=source, subscriber_id=contact.subscriber_id if contact else None,
                       language=contact.subscriber.language if contact else "en")
        log.info("%s %s opted out (%s, %s)", channel, mask(address), method, source)


def mark_invalid(session: Session, channel: str, address: str, reason: str) -> None:
    """The provider says this address cannot receive (Twilio 21211/21614, SMTP 5xx): stop sending to it."""
    contact = find_contact(session, channel, address)
    if contact is None or contact.status in (ContactStatus.INVALID.value, ContactStatus.OPTED_OUT.value):
        return
    contact.status = ContactStatus.INVALID.value
    contact.status_changed_at = utcnow()
    log.info("%s %s marked invalid: %s", channel, mask(address), reason)
