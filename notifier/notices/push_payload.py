"""What a Web Push notification says: `{"title", "body", "url", "tag"}` as JSON, in the subscriber's language.

The body is the text message's words (templates/sms/digest.txt) without its closing link, the title the email's
subject, the link the board's page in that language, and the tag the board's id, so a newer notice replaces an
older one on the device instead of piling up. The JSON stays within `MAX_BYTES` (RFC 8291's encryption adds 103
bytes, and Firefox for Android refuses much above 3,000): a long body is shortened, never the link.

`Urgency` is `high` for a closure and for its end (the push service wakes the device), `normal` otherwise; `TTL`
is how long the push service keeps a notice for a device that is off: long enough for a closure to be seen that
morning, not so long that yesterday's news arrives tomorrow.
"""

from __future__ import annotations

import json

from notifier import links
from notifier.config import Settings
from notifier.notices import templates
from notifier.notices.digests import Event, net
from notifier.notices.render import Rendered, board_digests, render_digest, subject_of
from notifier.status.boards import Board

MAX_BYTES = 3000 - 103  # the JSON, so that the encrypted request body stays within 3,000 bytes
URGENT_TTL = 12 * 3600  # a closure (or its end) waits up to half a day for a phone that is off
NORMAL_TTL = 6 * 3600
TAG_SEVERAL = "notifier"  # the tag of a digest about several boards


def render(events: list[Event], boards: dict[str, Board], language: str, settings: Settings) -> Rendered:
    """The notification for `events` as a `Rendered` whose text is the JSON payload; `urgent` says whether it is
    a closure or a closure's end (see `headers`)."""
    items = board_digests(events, boards, settings)
    text = render_digest(events, boards, language, "sms", settings).text
    message_id, variables = subject_of(items, language)
    title = templates.gettext(language, message_id, **variables)
    page = items[0].url if len(items) == 1 else settings.base_url
    url = links.in_language(page, language)
    label = templates.gettext(language, "Details:")
    body = text.removesuffix(url).rstrip().removesuffix(label).rstrip() if text.endswith(url) else text
    tag = items[0].board.id if len(items) == 1 else TAG_SEVERAL
    urgent = any(change.urgent for change in net(events))
    return Rendered(title, payload(title, body, url, tag), None, urgent)


def payload(title: str, body: str, url: str, tag: str) -> str:
    """The JSON the service worker reads, the body shortened (with an ellipsis) until it fits `MAX_BYTES`."""
    def encoded(text: str) -> str:
        return json.dumps({"title": title, "body": text, "url": url, "tag": tag}, ensure_ascii=False,
                          separators=(",", ":"))

    result = encoded(body)
    while len(result.encode("utf-8")) > MAX_BYTES and body:
        over = len(result.encode("utf-8")) - MAX_BYTES
        body = body[:max(len(body) - max(over, 1) - 1, 0)].rstrip()
        result = encoded(body + "…")
    return result


def headers(urgent: bool) -> dict[str, str]:
    """The RFC 8030 headers of a notice: `TTL` and `Urgency`."""
    return {"TTL": str(URGENT_TTL if urgent else NORMAL_TTL), "Urgency": "high" if urgent else "normal"}
