"""Calendar feeds (iCalendar): one per board, public and cached, and one per family at a signed address.

The events come from `status.calendar`; this module only picks the boards, words each event in the asked language
(templates/calendar/event.txt) and serves the bytes. A calendar app keeps no cookie, so `?lang=fr` answers in French
itself. The family feed's address holds a signed token, masked in every log like the manage link's.
"""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, abort, g, render_template, url_for
from werkzeug.wrappers import Response

from notifier import links
from notifier.status.boards import Board, now_toronto
from notifier.status.calendar import Disruption, disruptions, recorded_periods, state_since, to_ical
from notifier.subscribers.models import Subscriber
from notifier.subscribers.preferences import live_contacts
from notifier.web.pagecache import respond
from notifier.web.services import board_asked, explicit_language, language_in_url, services

bp = Blueprint("calendar", __name__)

MIMETYPE = "text/calendar"


@bp.get("/boards/<board_id>/calendar.ics")
@language_in_url
def board_calendar(board_id: str) -> Response:
    """The board's disruptions, past, current and ahead, as a calendar to subscribe to (webcal://)."""
    asked = board_asked(board_id)
    found, language = asked.board, asked.language

    def build() -> bytes:
        now = now_toronto()
        with services().sessions() as session:
            events = _board_events(session, found, now)
        name = render_template("calendar/name.txt", board=found).strip()
        return _ical(events, {found.id: found}, language, name, now)

    # Today's date is part of the key: an event "until further notice" is drawn up to today, so it grows each day.
    return respond(asked.cached("calendar", MIMETYPE, build, now_toronto().date()))


@bp.get("/calendar/<token>/family.ics")
@language_in_url
def family_calendar(token: str) -> Response:
    """A family's own calendar: the disruptions of the boards and panels they follow, in their language."""
    try:
        subscriber_id = links.read_calendar(services().settings, token)
    except links.LinkError:
        abort(404)
    boards = services().boards.snapshot.status.by_id()
    now = now_toronto()
    with services().sessions() as session:
        subscriber = session.get(Subscriber, subscriber_id)
        if subscriber is None or not live_contacts(subscriber):
            abort(404)
        language = explicit_language() or subscriber.language
        g.language = language  # the family's language, not the browser's: a calendar app sends none
        followed: dict[str, set[str]] = {}
        for follow in subscriber.follows:
            followed.setdefault(follow.board_id, set()).add(follow.panel)
        events = [event for board_id, panels in sorted(followed.items()) if board_id in boards
                  for event in _board_events(session, boards[board_id], now)
                  if panels & {panel.value for panel in event.panels}]
    name = render_template("calendar/name.txt", board=None).strip()
    body = _ical(sorted(events, key=lambda e: e.start), boards, language, name, now)
    response = Response(body, content_type=f"{MIMETYPE}; charset=utf-8")
    response.headers["Cache-Control"] = "private, max-age=300"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _board_events(session, board: Board, now: datetime) -> list[Disruption]:
    return disruptions(board, now, recorded_periods(session, board.id), state_since(session, board.id))


def _ical(events: list[Disruption], boards: dict[str, Board], language: str, name: str, now: datetime) -> bytes:
    base = services().settings.base_url

    def describe(event: Disruption) -> tuple[str, str, str]:
        board = boards[event.board_id]
        text = render_template("calendar/event.txt", event=event, board=board)
        summary, _, description = text.strip().partition("\n")
        url = f"{base}{url_for('public.board', board_id=board.id, lang=language)}"
        return summary.strip(), f"{description.strip()}\n\n{url}".strip(), url

    stamp = datetime.fromtimestamp(int(services().boards.snapshot.mtime), UTC)
    return to_ical(events, describe, name, now, stamp)


def feed_urls(board_id: str, language: str) -> dict[str, str]:
    """The board's calendar feed as https:// and webcal:// addresses (the board page offers both)."""
    https = f"{services().settings.base_url}{url_for('calendar.board_calendar', board_id=board_id, lang=language)}"
    return {"https": https, "webcal": "webcal://" + https.split("://", 1)[1]}
