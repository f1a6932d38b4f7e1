"""`POST /twilio/status`: Twilio's delivery callbacks (signed), recorded per message, in any order, any number of times.

A later state never gives way to an earlier one arriving late (`delivered` then a late `sent` stays delivered), and
a callback may beat our own "sent" record: receipts are keyed by the message SID alone. An `undelivered` or `failed`
with 30004 (blocked, e.g. after STOP) marks the contact opted out; 30005/30006 (unknown number, landline) invalid.
"""

from __future__ import annotations

import logging

from flask import Blueprint, abort, request
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from notifier.db import utcnow
from notifier.delivery.outbox import DeliveryReceipt, OutboxRow
from notifier.subscribers.contacts import mark_invalid, mark_opted_out
from notifier.subscribers.models import Contact
from notifier.web.security import csrf
from notifier.web.services import services
from notifier.web.twilio_auth import require_twilio_signature

bp = Blueprint("twilio_status", __name__)
log = logging.getLogger(__name__)

# Later states win; the terminal ones are equal (Twilio may correct undelivered to delivered, or the reverse).
RANK = {"accepted": 0, "scheduled": 0, "queued": 1, "sending": 2, "sent": 3,
        "delivered": 4, "undelivered": 4, "failed": 4, "read": 5}
BLOCKED, UNKNOWN, LANDLINE = "30004", "30005", "30006"


@bp.post("/twilio/status")
@csrf.exempt
@require_twilio_signature
def status():
    """Record one status callback; answers 204 (Twilio reads nothing from the body)."""
    sid = (request.form.get("MessageSid") or request.form.get("SmsSid") or "").strip()
    state = (request.form.get("MessageStatus") or request.form.get("SmsStatus") or "").strip().lower()
    code = (request.form.get("ErrorCode") or "").strip() or None
    if not sid or state not in RANK or len(sid) > 64 or (code is not None and not code.isdigit()):
        abort(400)
    for attempt in (1, 2):  # two first callbacks for one message may race to insert: the loser updates
        try:
            _record(sid, state, code)
            break
        except IntegrityError:
            if attempt == 2:
                raise
    return "", 204


def _record(sid: str, state: str, code: str | None) -> None:
    with services().sessions() as session, session.begin():
        receipt = session.get(DeliveryReceipt, sid, with_for_update=True)
        if receipt is None:
            session.add(DeliveryReceipt(provider_id=sid, status=state, error_code=code, updated_at=utcnow()))
            session.flush()
        elif RANK[state] >= RANK.get(receipt.status, 0):
            receipt.status, receipt.error_code, receipt.updated_at = state, code, utcnow()
        else:
            return
        if state in ("undelivered", "failed") and code in (BLOCKED, UNKNOWN, LANDLINE):
            _mark_contact(session, sid, code)


def _mark_contact(session, sid: str, code: str) -> None:
    contact = session.scalars(
        select(Contact).join(OutboxRow, OutboxRow.contact_id == Contact.id).where(OutboxRow.provider_id == sid)
    ).first()
    if contact is None:
        return
    if code == BLOCKED:
        mark_opted_out(session, contact.channel, contact.address, "provider", f"twilio {code}")
    else:
        mark_invalid(session, contact.channel, contact.address, f"twilio {code}")
