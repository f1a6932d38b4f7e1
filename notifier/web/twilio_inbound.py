"""POST /twilio/inbound: texts parents send to the service's number, answered with TwiML.

Only requests signed by Twilio (X-Twilio-Signature over NOTIFIER_BASE_URL) get this far; anything else is 403 and
changes nothing. The keywords themselves are handled in `notifier.subscribers.keywords`.
"""

from __future__ import annotations

import logging

from flask import Blueprint, Response, request
from twilio.twiml.messaging_response import MessagingResponse

from notifier.db import transaction, utcnow
from notifier.masking import mask
from notifier.notices import templates
from notifier.subscribers import keywords
from notifier.subscribers.addresses import ContactError, parse_phone
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
    """Act on a text (keyword or board code) and answer it in TwiML, at most REPLIES_PER_HOUR times an hour."""
    twiml = MessagingResponse()
    reply = answer(request.form.get("From", ""), request.form.get("Body", ""))
    if reply:
        twiml.message(reply)
    return Response(str(twiml), mimetype="text/xml")


def answer(sender: str, body: str) -> str | None:
    """Act on one text `body` from `sender` and say what to text back (None: nothing, or a number we do not serve).

    The one path for every text a parent sends: Twilio's webhook above, and /dev/outbox's replies in debug mode.
    """
    try:
        number = parse_phone(sender)
    except ContactError:
        log.info("inbound text from a number we do not serve (%s); not answered", mask(sender))
        return None
    now, settings = utcnow(), services().settings
    with transaction(services().sessions) as session:
        reply = keywords.handle(session, boards_by_id(), number, body[:1600], now)
        speak = reply.template is not None and keywords.may_reply(session, number, now)
    log.info("inbound text from %s: %s", mask(number), reply.template or "no reply")
    if not speak:
        return None
    context = {**reply.context, "base_url": settings.base_url}
    return "\n".join(templates.render(f"sms/{reply.template}.txt", language, **context).strip()
                     for language in reply.languages)
