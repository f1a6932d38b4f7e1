"""Rendering a digest: the email (subject, text, HTML) and the text message, from the same view of the changes.

Every word is in templates/email/digest.*, templates/sms/digest.txt and templates/digest/_words.txt, in the
reader's language. Digests with the same changes in the same language render the same, so a send renders each
variant once (placeholders stand for the links) and only fills in each contact's own links.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from notifier.config import Settings
from notifier.formatting import calendar_day
from notifier.notices import templates
from notifier.notices.digests import PANELS, Event, NetChange, net
from notifier.status.boards import Bilingual, Board, Panel, Period, Withdrawal
from notifier.status.changes import PERIOD_KINDS, Kind, period_of

MANAGE = "@@MANAGE_URL@@"
UNSUBSCRIBE = "@@UNSUBSCRIBE_URL@@"
ORDER = [Kind.PANEL_STATUS, Kind.TOOK_EFFECT, Kind.WITHDRAWAL_ADDED, Kind.WITHDRAWAL_CHANGED,
         Kind.WITHDRAWAL_REMOVED, Kind.EFFECTIVE, Kind.PERIOD_ADDED, Kind.PERIOD_CHANGED, Kind.PERIOD_REMOVED,
         Kind.MESSAGE]


@dataclass
class BoardDigest:
    """What one board's part of a digest says: new statuses, services withdrawn or restored, when, and a link."""

    board: Board
    url: str
    statuses: list[tuple[str | None, str]] = field(default_factory=list)  # (panel, or None for both; new status)
    took_effect: str | None = None  # set when what follows happened by itself, as announced ("now in effect")
    added: list[Withdrawal] = field(default_factory=list)
    changed: list[Withdrawal] = field(default_factory=list)
    removed: list[Withdrawal] = field(default_factory=list)
    effective: datetime | None = None
    message: Bilingual | None = None
    message_changed: bool = False
    periods: list[tuple[str, Period]] = field(default_factory=list)  # ("added" / "changed" / "removed", period)

    def services_unlisted(self, status: str, panels: str | tuple[str, ...] | None,
                          period: Period | None = None) -> bool:
        """A work-to-rule for which the board lists no service at these schools (None: both panels): the period's own
        list, or the board's when the period keeps it. A notice then says so instead of "some services"."""
        if status != "work-to-rule":
            return False
        wanted = set(PANELS if panels is None else (panels,) if isinstance(panels, str) else panels)
        if period is not None and period.withdrawals is not None:
            withdrawals = list(period.withdrawals)
        else:  # the board's own, and those this digest tells of (a period now in force may bring its own)
            withdrawals = [*self.board.withdrawals, *self.added, *self.changed]
        return not any(wanted & set(w.panels) for w in withdrawals)


@dataclass(frozen=True)
class Rendered:
    """A rendered digest; `personal()` fills in one contact's manage and unsubscribe links."""

    subject: str
    text: str
    html: str | None = None
    urgent: bool = False

    def personal(self, settings: Settings, subscriber_id: int, contact_id: int) -> Rendered:
        """This digest with the links of one subscriber and contact."""
        from notifier import links

        return self.with_links(links.manage_url(settings, subscriber_id), links.unsubscribe_url(settings, contact_id))

    def with_links(self, manage: str, unsubscribe: str) -> Rendered:
        """This digest with the placeholders replaced by the given links."""

        def fill(value: str) -> str:
            return value.replace(MANAGE, manage).replace(UNSUBSCRIBE, unsubscribe)

        return replace(self, text=fill(self.text), html=fill(self.html) if self.html else None)


def board_digests(events: list[Event], boards: dict[str, Board], settings: Settings) -> list[BoardDigest]:
    """One `BoardDigest` per board with net changes, in the order the boards first changed."""
    digests: dict[str, BoardDigest] = {}
    changes = sorted(net(events), key=lambda c: (min(c.events), ORDER.index(Kind(c.kind))))
    for change in changes:
        board = boards.get(change.board_id) or _placeholder(change.board_id)
        item = digests.setdefault(change.board_id, BoardDigest(board, f"{settings.base_url}/boards/{board.id}"))
        _apply(item, change)
    for item in digests.values():
        item.statuses = _merge_panels(item.statuses)
        if item.message is None and _tells_today(item):
            item.message = item.board.message
    return list(digests.values())


def _tells_today(item: BoardDigest) -> bool:
    """Whether the digest tells what is in force now: only then is the board's current message the one it quotes.

    A notice about a period announced ahead quotes the period's own message (with the period), never the board's
    message of today, which belongs to today's state (a correction of today's status is not about Thursday's strike).
    """
    return bool(item.statuses or item.took_effect or item.added or item.changed or item.removed or item.effective)


def _apply(item: BoardDigest, change: NetChange) -> None:
    kind = Kind(change.kind)
    if change.scheduled:
        item.took_effect = item.took_effect or "yes"
    if kind in PERIOD_KINDS:
        item.periods.append((kind.value.removeprefix("period_"), period_of(change.after or change.before)))
    elif kind is Kind.PANEL_STATUS:
        item.statuses.append((change.panel, change.after))
    elif kind is Kind.TOOK_EFFECT:
        item.took_effect = change.after
    elif kind is Kind.WITHDRAWAL_ADDED:
        item.added.append(Withdrawal.model_validate(change.after))
    elif kind is Kind.WITHDRAWAL_CHANGED:
        item.changed.append(Withdrawal.model_validate(change.after))
    elif kind is Kind.WITHDRAWAL_REMOVED:
        item.removed.append(Withdrawal.model_validate(change.before))
    elif kind is Kind.EFFECTIVE and change.after:
        item.effective = datetime.fromisoformat(change.after)
    elif kind is Kind.MESSAGE:
        item.message_changed = True
        item.message = Bilingual.model_validate(change.after) if change.after else None


def _merge_panels(statuses: list[tuple[str | None, str]]) -> list[tuple[str | None, str]]:
    """Both panels with the same new status read as one sentence about all the board's schools."""
    by_panel = dict(statuses)
    if len(by_panel) == 2 and len(set(by_panel.values())) == 1:
        return [(None, next(iter(by_panel.values())))]
    return sorted(by_panel.items(), key=lambda item: [p.value for p in Panel].index(item[0] or ""))


# The subject names what changed as narrowly as it happened: "Secondary schools closed" when only secondary schools
# closed, never "Schools closed". Keys: (status, panel or None for both); the most disruptive new status wins.
ONE_BOARD: dict[tuple[str | None, str | None], str] = {
    ("closed", None): "Schools closed: %(board)s",
    ("closed", "elementary"): "Elementary schools closed: %(board)s",
    ("closed", "secondary"): "Secondary schools closed: %(board)s",
    ("work-to-rule", None): "Schools open under work-to-rule: %(board)s",
    ("work-to-rule", "elementary"): "Elementary schools open under work-to-rule: %(board)s",
    ("work-to-rule", "secondary"): "Secondary schools open under work-to-rule: %(board)s",
    ("open", None): "Schools open: %(board)s",
    ("open", "elementary"): "Elementary schools open: %(board)s",
    ("open", "secondary"): "Secondary schools open: %(board)s",
}
MANY_BOARDS: dict[tuple[str | None, str | None], str] = {
    ("closed", None): "Schools closed: %(count)d boards changed",
    ("closed", "elementary"): "Elementary schools closed: %(count)d boards changed",
    ("closed", "secondary"): "Secondary schools closed: %(count)d boards changed",
}
SEVERITY = ("closed", "work-to-rule", "open")
# A change announced ahead says what is coming and when: "Secondary schools closed Thursday, Nov. 26". Keys: (status,
# panel or None for both, True for a period of one day at most, which is named by its day alone).
COMING = {
    ("closed", None, True): "Schools closed %(day)s: %(board)s",
    ("closed", "elementary", True): "Elementary schools closed %(day)s: %(board)s",
    ("closed", "secondary", True): "Secondary schools closed %(day)s: %(board)s",
    ("closed", None, False): "Schools closed from %(day)s: %(board)s",
    ("closed", "elementary", False): "Elementary schools closed from %(day)s: %(board)s",
    ("closed", "secondary", False): "Secondary schools closed from %(day)s: %(board)s",
    ("work-to-rule", None, False): "Schools open under work-to-rule from %(day)s: %(board)s",
    ("work-to-rule", "elementary", False): "Elementary schools open under work-to-rule from %(day)s: %(board)s",
    ("work-to-rule", "secondary", False): "Secondary schools open under work-to-rule from %(day)s: %(board)s",
    ("open", None, False): "Schools open from %(day)s: %(board)s",
    ("open", "elementary", False): "Elementary schools open from %(day)s: %(board)s",
    ("open", "secondary", False): "Secondary schools open from %(day)s: %(board)s",
}
ONE_DAY = timedelta(days=1)


def subject_of(items: list[BoardDigest], language: str) -> tuple[str, dict[str, Any]]:
    """The subject's message id and its variables: the most disruptive new status and the panels it concerns."""
    statuses = [(panel, status) for item in items for panel, status in item.statuses]
    headline = next((s for s in SEVERITY if any(status == s for _, status in statuses)), None)
    panels = {p for panel, status in statuses if status == headline for p in ((panel,) if panel else PANELS)}
    key = (headline, next(iter(panels)) if len(panels) == 1 else None)
    if len(items) == 1:
        board = items[0].board.display_name(language)
        if headline is None and (coming := _coming(items[0], language)):
            return coming[0], {"board": board, "day": coming[1]}
        return ONE_BOARD.get(key, "School status update: %(board)s"), {"board": board}
    return MANY_BOARDS.get(key, "School status update: %(count)d boards"), {"count": len(items)}


def _only_called_off(items: list[BoardDigest]) -> Period | None:
    """The first period called off when that is all one board's digest says (its subject then names it)."""
    if len(items) != 1:
        return None
    item = items[0]
    if not item.periods or any(kind != "removed" for kind, _ in item.periods):
        return None
    if item.statuses or item.added or item.changed or item.removed or item.message_changed or item.effective:
        return None
    return item.periods[0][1]


def _coming(item: BoardDigest, language: str) -> tuple[str, str] | None:
    """The subject's message id and day for the most disruptive period announced or changed (the soonest of those),
    or None when none is."""
    periods = [period for kind, period in item.periods if kind != "removed"]
    if not periods:
        return None
    period = min(periods, key=lambda p: (SEVERITY.index(p.status.value), p.start))
    panel = period.panels[0].value if len(period.panels) == 1 else None
    one_day = period.status.value == "closed" and period.end is not None and period.end - period.start <= ONE_DAY
    return COMING[(period.status.value, panel, one_day)], calendar_day(period.start, language)


def _placeholder(board_id: str) -> Board:
    return Board.model_validate({"id": board_id, "name": board_id, "status": "open", "withdrawals": []})


def render_digest(
    events: list[Event], boards: dict[str, Board], language: str, channel: str, settings: Settings
) -> Rendered:
    """Render the digest of `events` for `channel` ("email" or "sms") in `language`, with link placeholders."""
    items = board_digests(events, boards, settings)
    urgent = any(status == "closed" for item in items for _, status in item.statuses)
    context: dict[str, Any] = {"items": items, "urgent": urgent, "base_url": settings.base_url,
                               "manage_url": MANAGE, "unsubscribe_url": UNSUBSCRIBE, "sender": settings.sender}
    if channel == "sms":
        text = " ".join(templates.render("sms/digest.txt", language, **context).split())
        return Rendered("", text, None, urgent)
    called_off = _only_called_off(items)
    if called_off is not None:
        subject = templates.render("digest/calloff_subject.txt", language, period=called_off,
                                   board=items[0].board.display_name(language)).strip()
    else:
        message_id, variables = subject_of(items, language)
        subject = templates.gettext(language, message_id, **variables)
    text = templates.render("email/digest.txt", language, subject=subject, **context).strip() + "\n"
    html = templates.render("email/digest.html", language, subject=subject, **context)
    return Rendered(subject, text, html, urgent)
