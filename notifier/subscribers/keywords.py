"""Texts parents send us: STOP and ARRET, START, YES and OUI, HELP and AIDE, or a board's short name to subscribe.

Twilio handles its English keywords itself on long codes when they are the whole message (it replies, and blocks
a number after STOP), but it does not know ours (ARRET, FIN, DESINSCRIRE, AIDE, OUI, DEBUT…) nor a keyword with
more words ("STOP please"), and we must record every one of them anyway. Matching ignores case, accents and
punctuation ("Arrêt!" is ARRET); the first word decides ("Arrêtez svp" stops), and the answer is in its language.
Texting a board's code (`TDSB`, `TDSB SECONDARY`, `CEPEO
ELEMENTAIRE`) subscribes at once: the parent sent the first message, so no confirmation is needed.

A signed request can be sent again by anyone who saw it (Twilio's signature has no time in it), and Twilio itself
retries: each message is acted on once, by its MessageSid (`first_delivery`), and a keyword that changes a
contact (STOP, START, a board's code) is ignored when it is older than the last one applied to that contact.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from notifier.masking import mask
from notifier.status.boards import Board, Panel
from notifier.subscribers import consent, ratelimit, signup
from notifier.subscribers.addresses import SMS
from notifier.subscribers.contacts import activate, find_contact, mark_opted_out
from notifier.subscribers.models import Contact, ContactStatus, Follow, InboundText, Subscriber

TWILIO_STOP = {"STOP", "STOPALL", "UNSUBSCRIBE", "END", "QUIT", "CANCEL", "REVOKE", "OPTOUT"}
OUR_STOP = {"ARRET", "ARRETE", "ARRETEZ", "ARRETER", "FIN", "DESABONNER", "DESABONNEMENT", "DESINSCRIRE",
            "DESINSCRIPTION", "ANNULER"}
START = {"START", "UNSTOP", "YES", "OUI", "DEBUT", "COMMENCER", "REPRENDRE"}
HELP = {"HELP", "INFO", "AIDE"}
FRENCH = OUR_STOP | {"OUI", "DEBUT", "COMMENCER", "REPRENDRE", "AIDE"}
PANEL_WORDS = {"ELEMENTARY": ("en", Panel.ELEMENTARY), "ELEMENTAIRE": ("fr", Panel.ELEMENTARY),
               "SECONDARY": ("en", Panel.SECONDARY), "SECONDAIRE": ("fr", Panel.SECONDARY)}
REPLIES_PER_HOUR = 10  # an auto-responder on the other end must not start an endless conversation


@dataclass
class Reply:
    """What to text back: `template` under templates/sms/ (None: say nothing) in `languages`, with `context`."""

    template: str | None
    languages: tuple[str, ...] = ("en",)
    context: dict[str, Any] = field(default_factory=dict)


def words(body: str) -> list[str]:
    """The message as upper-case words without accents or punctuation: "Arrêt !" -> ["ARRET"]."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", body or "") if not unicodedata.combining(c))
    return re.sub(r"[^A-Za-z0-9-]+", " ", plain).upper().split()


def handle(session: Session, boards: Mapping[str, Board], number: str, body: str, now: datetime) -> Reply:
    """Act on one inbound text from `number` (E.164) and say what to answer."""
    said = words(body)
    contact = find_contact(session, SMS, number)
    known = contact.subscriber.language if contact is not None else None
    first = said[0] if said else ""
    keyword_language = "fr" if first in FRENCH else "en"
    changes = first in TWILIO_STOP | OUR_STOP | START or first.lower() in boards
    if changes and contact is not None and contact.keyword_at is not None and now < contact.keyword_at:
        return Reply(None)  # sent before the keyword already applied, arrived after it: the later one wins
    if first in TWILIO_STOP | OUR_STOP:
        mark_opted_out(session, SMS, number, "sms-keyword", mask(number))
        _applied(session, number, now)
        # Twilio answers its own STOP words, alone in a message, itself (and blocks further texts); we answer the
        # rest (French words, a keyword with more words), in the keyword's language.
        return Reply(None if said == [first] and first in TWILIO_STOP else "stopped", (keyword_language,))
    if first in START:
        reply = _start(session, contact, number, known or keyword_language, now)
        _applied(session, number, now)
        return reply
    if first in HELP:
        return Reply("help", (known or keyword_language,))
    if first.lower() in boards:
        reply = _subscribe(session, boards, contact, number, said, now)
        _applied(session, number, now)
        return reply
    return Reply("unknown", (known,) if known else ("en", "fr"))


def first_delivery(session: Session, sid: str, now: datetime) -> bool:
    """True the first time Twilio's MessageSid `sid` is seen; False for the same message again (a retry, a replay).

    The sid is recorded in the caller's transaction: concurrent deliveries of one message meet on its unique key.
    """
    try:
        with session.begin_nested():
            session.add(InboundText(sid=sid[:64], received_at=now))
    except IntegrityError:
        return False
    return True


def _applied(session: Session, number: str, now: datetime) -> None:
    """Remember when the last keyword was applied to this number's contact (if it has one)."""
    contact = find_contact(session, SMS, number)
    if contact is not None:
        contact.keyword_at = max(now, contact.keyword_at or now)


def _start(session: Session, contact: Contact | None, number: str, language: str, now: datetime) -> Reply:
    if contact is None:
        return Reply("unknown", (language,))
    if contact.status == ContactStatus.ACTIVE.value:
        return Reply("confirmed", (language,))
    method = "sms-reply" if contact.status == ContactStatus.PENDING.value else "sms-keyword"
    contact.address = number  # an opted-out contact had only its hash
    signup.confirm(session, contact, now, method, mask(number))
    return Reply("confirmed", (language,))


def _subscribe(session: Session, boards: Mapping[str, Board], contact: Contact | None, number: str,
               said: list[str], now: datetime) -> Reply:
    board = boards[said[0].lower()]
    panels: list[Panel] = []
    language = "fr" if board.language == "fr" else "en"
    for word in said[1:]:
        if word not in PANEL_WORDS:
            return Reply("unknown", (contact.subscriber.language,) if contact else ("en", "fr"))
        language, panel = PANEL_WORDS[word]
        panels.append(panel)
    panels = panels or list(Panel)
    if contact is None:
        subscriber = Subscriber(language=language, created_at=now)
        contact = Contact(channel=SMS, address=number, created_at=now)
        subscriber.contacts.append(contact)
        session.add(subscriber)
        session.flush()
    subscriber = contact.subscriber
    have = {(f.board_id, f.panel) for f in subscriber.follows}
    subscriber.follows.extend(
        Follow(board_id=board.id, panel=p.value) for p in panels if (board.id, p.value) not in have
    )
    if contact.status != ContactStatus.ACTIVE.value:
        activate(session, contact, number, now)
        for action in (consent.GIVEN, consent.CONFIRMED):
            consent.record(session, channel=SMS, address=number, action=action, method="sms-keyword",
                           source=mask(number), subscriber_id=subscriber.id, language=subscriber.language,
                           note=" ".join(said)[:200], now=now)
    return Reply("subscribed", (subscriber.language,), {"board": board, "code": board.id.upper(),
                                                         "panels": [p.value for p in panels]})


def may_reply(session: Session, number: str, now: datetime) -> bool:
    """True unless this number already had REPLIES_PER_HOUR answers this hour."""
    key = f"sms-reply:{consent.address_hash(session, number)[:32]}"
    return ratelimit.allow(session, key, REPLIES_PER_HOUR, 3600, now)
