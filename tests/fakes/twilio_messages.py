"""Twilio's Message resource as the fake keeps it: its JSON, its error bodies, the list filters and paging of
`GET …/Messages.json`, and the figures a test reads afterwards (busiest second per sender, in messages and in
segments, the segments of each second, duplicates).

A message is a dict of Twilio's public fields plus the fake's bookkeeping under keys starting with "_" (never
shown): `_form` (what the client posted), `_created` and `_date_sent` (aware datetimes), `_accepted_at` (wall
clock) and `_accepted_mono` / `_sent_mono` (monotonic seconds), `_sender` (From or MessagingServiceSid),
`_segments` (as Twilio counts them, even with a Messaging Service, whose `num_segments` reads 0 at first).

The list behaves as Twilio documents it: `To` and `From` match exactly; `DateSent`, `DateSent<` and `DateSent>`
match the date the message was SENT, so a message still queued (no date_sent) is never found by them; newest
first; `PageSize` (default 50, at most 1000) and a `next_page_uri` that carries a `PageToken` (the last SID shown),
so messages arriving between two pages do not shift what the next page holds.
"""

from __future__ import annotations

import secrets
from collections import Counter, defaultdict
from datetime import UTC, date, datetime
from email.utils import format_datetime
from urllib.parse import urlencode

API = "/2010-04-01"
WAITING = ("queued", "accepted")  # in the sender's queue, not sent yet
FINAL = ("delivered", "undelivered", "failed")

ERROR_TEXT = {
    20003: "Authenticate",
    20404: "The requested resource {path} was not found",
    20429: "Too Many Requests",
    21211: "The 'To' number {to} is not a valid phone number.",
    21602: "Message body is required.",
    21604: "A 'To' phone number is required.",
    21606: "The 'From' phone number provided ({from_}) is not a valid message-capable Twilio phone number for this "
           "destination/account.",
    21610: "Attempt to send to unsubscribed recipient",
    21614: "'To' number is not a valid mobile number",
    30001: "Queue overflow",
    30002: "Account suspended",
    30003: "Unreachable destination handset",
    30004: "Message blocked",
    30005: "Unknown destination handset",
    30006: "Landline or unreachable carrier",
    30007: "Message filtered",
    30008: "Unknown error",
}
HTTP_TEXT = {500: "Internal Server Error", 503: "Service Unavailable"}


def error_body(status: int, code: int | None, **fields: str) -> dict:
    """Twilio's error JSON: {"code", "message", "more_info", "status"}."""
    text = ERROR_TEXT.get(code, HTTP_TEXT.get(status, "Error")) if code else HTTP_TEXT.get(status, "Error")
    return {"code": code, "message": text.format_map(defaultdict(str, fields)), "status": status,
            "more_info": f"https://www.twilio.com/docs/errors/{code}" if code else None}


def rfc2822(moment: datetime | None) -> str | None:
    return format_datetime(moment) if moment else None


# GSM 03.38's default alphabet in table order (128 septets), and the extension table's characters (two septets:
# escape + one). Written out here rather than taken from the product, so that the fake checks the product's count.
GSM7 = ("@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
        "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà")
GSM7_EXTENSION = "\f^{}\\[~]|€"
assert len(GSM7) == 128


def segments(body: str) -> int:
    """The segments Twilio counts and bills: GSM-7 (160 septets, 153 a part) when every character is in GSM 03.38,
    else UCS-2 (70 UTF-16 units, 67 a part); a character never straddles two parts."""
    if all(ch in GSM7 or ch in GSM7_EXTENSION for ch in body):
        sizes, single, part = [2 if ch in GSM7_EXTENSION else 1 for ch in body], 160, 153
    else:
        sizes, single, part = [len(ch.encode("utf-16-le")) // 2 for ch in body], 70, 67
    if sum(sizes) <= single:
        return 1 if sizes else 0
    parts, used = 1, 0
    for size in sizes:
        if used + size > part:
            parts, used = parts + 1, 0
        used += size
    return parts


def new_message(account_sid: str, form: dict, now: datetime, monotonic: float) -> dict:
    """A message just accepted: `queued`, or `accepted` with a Messaging Service; date_sent null."""
    sid = "SM" + secrets.token_hex(16)
    service = form.get("MessagingServiceSid")
    body = form.get("Body", "")
    return {
        "account_sid": account_sid, "api_version": "2010-04-01", "body": body,
        "date_created": rfc2822(now), "date_sent": None, "date_updated": rfc2822(now),
        "direction": "outbound-api", "error_code": None, "error_message": None, "from": form.get("From"),
        "messaging_service_sid": service, "num_media": "0", "num_segments": "0" if service else str(segments(body)),
        "price": None, "price_unit": "USD", "sid": sid, "status": "accepted" if service else "queued",
        "subresource_uris": {"media": f"{API}/Accounts/{account_sid}/Messages/{sid}/Media.json"},
        "to": form.get("To"), "uri": f"{API}/Accounts/{account_sid}/Messages/{sid}.json",
        "_form": form, "_created": now, "_date_sent": None, "_accepted_at": now.timestamp(),
        "_segments": segments(body), "_accepted_mono": monotonic, "_sent_mono": None,
        "_sender": service or form.get("From") or "",
    }


def public(message: dict) -> dict:
    """A message as Twilio shows it: without the fake's bookkeeping."""
    return {k: v for k, v in message.items() if not k.startswith("_")}


# --- the list: filters and pages ---------------------------------------------------------------------------------


def _when(value: str) -> date | datetime:
    """A filter value as the SDK sends it ("2026-11-23T08:00:00Z") or as Twilio also accepts it ("2026-11-23")."""
    if len(value) == 10:
        return date.fromisoformat(value)
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def matches(message: dict, query: dict) -> bool:
    """True when the message passes every filter in `query` (To, From, DateSent, DateSent<, DateSent>)."""
    if "To" in query and message["to"] != query["To"]:
        return False
    if "From" in query and message["from"] != query["From"]:
        return False
    sent = message["_date_sent"]
    for key in ("DateSent", "DateSent<", "DateSent>"):
        if key not in query:
            continue
        if sent is None:
            return False  # Twilio's behaviour: a message not sent yet has no date to match
        bound = _when(query[key])
        if isinstance(bound, datetime) and key != "DateSent":
            value = sent
        else:  # a day: compare days (DateSent is always a day)
            value, bound = sent.date(), bound.date() if isinstance(bound, datetime) else bound
        if (key == "DateSent" and value != bound) or (key == "DateSent<" and value > bound) or \
                (key == "DateSent>" and value < bound):
            return False
    return True


def listing(messages: list[dict], query: dict, path: str) -> dict:
    """One page of `GET …/Messages.json`, newest first, with Twilio's paging fields."""
    found = [m for m in messages if matches(m, query)]
    order = {id(m): i for i, m in enumerate(messages)}
    found.sort(key=lambda m: (m["_date_sent"] or m["_created"], order[id(m)]), reverse=True)
    size = min(max(int(query.get("PageSize") or 50), 1), 1000)
    number = int(query.get("Page") or 0)
    start = number * size
    token = query.get("PageToken", "")
    if token.startswith("PA"):
        after = next((i for i, m in enumerate(found) if m["sid"] == token[2:]), None)
        if after is not None:
            start = after + 1
    page = found[start:start + size]
    filters = {k: v for k, v in query.items() if k in ("To", "From", "DateSent", "DateSent<", "DateSent>")}

    def uri(**paging) -> str:
        return f"{path}?{urlencode({**filters, 'PageSize': size, **paging})}"

    more = start + size < len(found)
    return {
        "messages": [public(m) for m in page], "page": number, "page_size": size, "start": start,
        "end": start + max(len(page) - 1, 0), "uri": uri(Page=number), "first_page_uri": uri(Page=0),
        "next_page_uri": uri(Page=number + 1, PageToken=f"PA{page[-1]['sid']}") if more and page else None,
        "previous_page_uri": uri(Page=number - 1) if number > 0 else None,
    }


# --- what a test reads afterwards --------------------------------------------------------------------------------


def busiest_second(times: list[float]) -> int:
    """The most events inside any window of one second (times in seconds, any order)."""
    times = sorted(times)
    best = first = 0
    for last, moment in enumerate(times):
        while moment - times[first] >= 1.0:
            first += 1
        best = max(best, last - first + 1)
    return best


def busiest_second_weighted(events: list[tuple[float, int]]) -> int:
    """The most units (segments) inside any window of one second, for (time, units) events in any order."""
    events = sorted(events)
    best = total = first = 0
    for moment, units in events:
        total += units
        while moment - events[first][0] >= 1.0:
            total -= events[first][1]
            first += 1
        best = max(best, total)
    return best


def per_second(events: list[tuple[float, int]]) -> list[int]:
    """Units in each whole second from the first event (the first second starts at it)."""
    if not events:
        return []
    start = min(t for t, _ in events)
    counts = [0] * (int(max(t for t, _ in events) - start) + 1)
    for moment, units in events:
        counts[int(moment - start)] += units
    return counts


def mean_rate(times: list[float]) -> float:
    """Events per second between the first and the last (0 with fewer than two)."""
    if len(times) < 2 or max(times) == min(times):
        return 0.0
    return (len(times) - 1) / (max(times) - min(times))


def stats(messages: list[dict]) -> dict:
    """Per sender: accepted, busiest second and mean rate of acceptance (and of sending); per `To`; duplicates."""
    by_sender: dict[str, list[dict]] = defaultdict(list)
    for message in messages:
        by_sender[message["_sender"]].append(message)
    senders = {}
    for sender, mine in by_sender.items():
        accepted = [m["_accepted_mono"] for m in mine]
        sent = [m["_sent_mono"] for m in mine if m["_sent_mono"] is not None]
        weighed = [(m["_accepted_mono"], m["_segments"]) for m in mine]
        senders[sender] = {"accepted": len(mine), "busiest_second": busiest_second(accepted),
                           "mean_rate": round(mean_rate(accepted), 3), "sent": len(sent),
                           "busiest_second_sent": busiest_second(sent), "mean_rate_sent": round(mean_rate(sent), 3),
                           "segments": sum(units for _, units in weighed),
                           "busiest_second_segments": busiest_second_weighted(weighed),
                           "segments_per_second": per_second(weighed)}
    pairs = Counter((m["to"], m["body"]) for m in messages)
    return {
        "accepted": len(messages), "per_sender": senders, "per_to": dict(Counter(m["to"] for m in messages)),
        "statuses": dict(Counter(m["status"] for m in messages)),
        "duplicates": [{"to": to, "body": body, "count": n} for (to, body), n in sorted(pairs.items()) if n > 1],
    }
