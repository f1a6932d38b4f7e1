"""POST /twilio/inbound: texts parents send to the service's number.

Only requests signed by Twilio (X-Twilio-Signature over NOTIFIER_BASE_URL) get this far; anything else is 403 and
changes nothing. The keywords themselves are handled in `notifier.subscribers.keywords`. The reply is not TwiML:
it goes through the outbox, first in line, so it counts against the sender's rate like every other text (a TwiML
reply is a text Twilio sends from the same number, outside our limit); the TwiML answer is empty.
"""

from __future__ import annotations

import logging
import secrets

from flask import Blueprint, Response, request
from twilio.twiml.messaging_response import MessagingResponse

from notifier.db import transaction, utcnow
from notifier.delivery import express
from notifier.delivery.channels import SMS, Message
from notifier.masking import mask
from notifier.notices import templates
from notifier.subscribers import keywords
from notifier.subscribers.addresses import ContactError, parse_phone
from notifier.subscribers.contacts import find_contact
from notifier.web.security import csrf
from notifier.web.services import services
from notifier.web.subscribe import boards_by_id
from notifier.web.twilio_auth import require_twilio_signature

log = logging.getLogger(__name__)

bp = Blueprint("twilio_inbound", __name__)


@bp.post("/twilio/inbound")
@csrf.exempt
@require_twilio_signature
def inbound() -> Response:
    """Act on a text (keyword or board code); the answer, if any, goes out through the outbox (empty TwiML).

    A text without its MessageSid is refused (400): Twilio always sends one, and without it the replay check
    (`keywords.first_delivery`) could not tell a replayed request from a new one.
    """
    sid = request.form.get("MessageSid", "").strip()
    if not sid:
        log.warning("signed inbound text without a MessageSid from %s; refused", mask(request.form.get("From", "")))
        return Response("", status=400)
    answer(request.form.get("From", ""), request.form.get("Body", ""), sid)
    return Response(str(MessagingResponse()), mimetype="text/xml")


def answer(sender: str, body: str, sid: str | None = None) -> str | None:
    """Act on one text `body` from `sender`, send the answer, and return it (None: nothing to say, a number we do
    not serve, or Twilio's message `sid` already acted on: a retry or a replayed request gets no second reply).

    The one path for every text a parent sends: Twilio's webhook above, and /dev/outbox's replies in debug mode.
    """
    try:
        number = parse_phone(sender)
    except ContactError:
        log.info("inbound text from a number we do not serve (%s); not answered", mask(sender))
        return None
    now, settings = utcnow(), services().settings
    with transaction(services().sessions) as session:
        if sid is not None and not keywords.first_delivery(session, sid, now):
            log.info("inbound text %s from %s already acted on; ignored", sid[:64], mask(number))
            return None
        reply = keywords.handle(session, boards_by_id(), number, body[:1600], now)
        speak = reply.template is not None and keywords.may_reply(session, number, now)
    log.info("inbound text from %s: %s", mask(number), reply.template or "no reply")
    if not speak:
        return None
    context = {**reply.context, "base_url": settings.base_url}
    text = "\n".join(templates.render(f"sms/{reply.template}.txt", language, **context).strip()
                     for language in reply.languages)
    # Sent through the outbox, first in line, so it counts against the sender's shared rate like every text.
    message = Message(channel=SMS, to=number, text=text, reference=f"reply-{secrets.token_hex(8)}",
                      language=reply.languages[0])
    with transaction(services().sessions) as session:
        contact = find_contact(session, SMS, number)
        row_id = express.enqueue(session, message, contact.id if contact else None)
    express.send_soon(services().sessions, settings, [row_id])
    return text
