"""When an edit takes effect: now, from a time already past, or announced ahead as a period.

Staff edit what they want to be in force; "takes effect" says when. Now (or a time already past) replaces what is in
force, and ends the announced period in force if there is one, so the page never shows a period overriding the
edit. A time ahead leaves today's state alone and adds the edit as a period announced ahead, until further notice:
parents read "open today, closed from Monday", never the other way round. With an end ("until"), the edit is a
period from its start (now, or the time ahead) to that end, whatever is in force: a one-day strike is announced
in one edit ("closed Wednesday 00:01 until Thursday 00:01"), and the board goes back to today's state by itself.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from notifier.errors import NotifierError
from notifier.formatting import TORONTO
from notifier.status.boards import Board, Panel, Period


class AnnounceError(NotifierError):
    """The edit cannot take effect then; `code` names the reason for the form (overlap: a period is announced)."""

    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(code)


STATE_FIELDS = ("status", "panels", "withdrawals", "message", "announcement")


def apply_edit(current: Board, edited: Board, when: datetime | None, now: datetime,
               until: datetime | None = None) -> Board:
    """The board to save for `edited` (the state staff want) taking effect `when` (None: now), until `until` (None:
    until further notice)."""
    in_force = current.at(now)
    if until is not None:
        start = when if when is not None and when > now else now.astimezone(TORONTO).replace(microsecond=0)
        return _announce(current, in_force, edited, start, until)
    if when is not None and when > now:
        return _announce(current, in_force, edited, when)
    if _state(edited) == _state(in_force):
        return current  # nothing parents would notice changed: keep the file's own entry as it is
    start = (when or now).astimezone(TORONTO).replace(microsecond=0)  # as people write it: Toronto time
    statuses_change = any(edited.panel_status(panel) != in_force.panel_status(panel) for panel in Panel)
    periods = []
    for period in current.upcoming:
        if period.covers(now):
            if period.start < start:  # it ends where the edit begins
                periods.append(period.model_copy(update={"end": start}))
            continue
        periods.append(period)
    since = start if statuses_change else in_force.effective  # `effective` says since when the statuses hold
    return current.model_copy(update={**{name: getattr(edited, name) for name in STATE_FIELDS},
                                      "effective": since, "upcoming": tuple(periods)})


def _announce(current: Board, in_force: Board, edited: Board, when: datetime, end: datetime | None = None) -> Board:
    """Add the edit as periods from `when` (to `end`): one per new status, for the panels whose status changes."""
    changed: dict[str, list[Panel]] = {}
    for panel in Panel:
        if edited.panel_status(panel) != in_force.panel_status(panel):
            changed.setdefault(edited.panel_status(panel).value, []).append(panel)
    extra: dict[str, Any] = {}
    if edited.withdrawals != in_force.withdrawals:
        extra["withdrawals"] = edited.withdrawals
    if edited.message != in_force.message:
        extra["message"] = edited.message
    if not changed and not extra:
        return current
    if not changed:  # only services or the message change then: a period that keeps the statuses
        changed = {edited.panel_status(panel).value: [panel] for panel in Panel}
        if len(changed) == 1:
            changed = {next(iter(changed)): list(Panel)}
    added = [Period(start=when, end=end, status=status, panels=tuple(panels), **extra)
             for status, panels in changed.items()]
    if any(new.overlaps(old) for new in added for old in current.upcoming):
        raise AnnounceError("overlap")
    return current.model_copy(update={"upcoming": tuple(sorted((*current.upcoming, *added), key=lambda p: p.start))})


def _state(board: Board) -> tuple[Any, ...]:
    return tuple(getattr(board, name) for name in STATE_FIELDS)
