"""The status model: what a parent needs to know about one board, and nothing that depends on the web.

A board has one overall `status` and, when elementary and secondary differ (a secondary teachers' strike closes
secondary schools while elementary stay open), a status per panel. `withdrawals` lists the services that stop
during work-to-rule or a strike, each from a fixed vocabulary so it can be explained in both languages. What is
announced ahead lives apart from what is in force: `upcoming` lists periods (a one-day strike next Wednesday, a
work-to-rule from Monday until further notice), so today's state never disappears behind tomorrow's, and the board
as it is at any moment is `board.at(moment)`.
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field, HttpUrl, model_validator

from notifier.formatting import TORONTO
from notifier.status.values import Bilingual, BilingualUrl, Moment, Name, Strict, Text

__all__ = ["Bilingual", "BilingualUrl", "Board", "BoardType", "Category", "Language", "Moment", "Panel", "Period",
           "Region", "Status", "StatusFile", "Text", "Withdrawal", "now_toronto"]


class Status(StrEnum):
    """Whether schools run. Order matters: later is more disruptive."""

    OPEN = "open"
    WORK_TO_RULE = "work-to-rule"
    CLOSED = "closed"

    @property
    def severity(self) -> int:
        """0 for open, 1 for work-to-rule, 2 for closed: used to sort disrupted boards first."""
        return list(Status).index(self)


class Panel(StrEnum):
    """Ontario's two panels: elementary (JK-8) and secondary (9-12)."""

    ELEMENTARY = "elementary"
    SECONDARY = "secondary"


class Category(StrEnum):
    """The fixed vocabulary of withdrawn services; docs/staff.md explains each one for board staff."""

    TRANSPORTATION = "transportation"
    EXTRACURRICULARS = "extracurriculars"
    BEFORE_AFTER_SCHOOL = "before-after-school"
    CHILD_CARE = "child-care"
    CUSTODIAL_CLEANING = "custodial-cleaning"
    GROUNDS = "grounds"
    OFFICE_CLERICAL = "office-clerical"
    SPECIAL_EDUCATION = "special-education"
    FEE_COLLECTION = "fee-collection"
    FIELD_TRIPS_EVENTS = "field-trips-events"
    FACILITY_PERMITS = "facility-permits"
    REPORT_CARDS = "report-cards"
    OTHER = "other"


class Language(StrEnum):
    """The two languages every parent-facing word exists in."""

    EN = "en"
    FR = "fr"


class BoardType(StrEnum):
    PUBLIC = "public"
    CATHOLIC = "catholic"


class Region(StrEnum):
    TORONTO = "toronto"
    CENTRAL = "central"
    EAST = "east"
    SOUTHWEST = "southwest"
    NORTHEAST = "northeast"
    NORTHWEST = "northwest"


class Withdrawal(Strict):
    """One service withdrawn: what stops, for which panels, and what a parent should do about it."""

    category: Category
    panels: tuple[Panel, ...] = (Panel.ELEMENTARY, Panel.SECONDARY)
    description: Bilingual
    advice: Bilingual | None = None

    @property
    def key(self) -> str:
        """Identity used to tell "changed" from "added and removed": the category and the panels it affects."""
        return f"{self.category}:{'+'.join(sorted(self.panels))}"


class Period(Strict):
    """A change announced ahead: from `start` until `end` (or until further notice), these panels have this status.

    Written `{from: …, until: …, status: …, panels: […]}`. A period may carry its own message and withdrawals; without
    them the board's own stay in force while it lasts.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True, validate_by_alias=True,
                              serialize_by_alias=True)

    start: Moment = Field(alias="from")
    end: Moment | None = Field(default=None, alias="until")
    status: Status
    panels: tuple[Panel, ...] = (Panel.ELEMENTARY, Panel.SECONDARY)
    message: Bilingual | None = None
    withdrawals: tuple[Withdrawal, ...] | None = None

    @model_validator(mode="after")
    def _makes_sense(self) -> Period:
        if self.end is not None and self.end <= self.start:
            raise ValueError("until: must be after from (the period would end before it starts)")
        if not self.panels:
            raise ValueError("panels: give at least one panel, or leave panels out for both")
        return self

    @property
    def key(self) -> str:
        """Identity used to tell "changed" from "called off and announced": when it starts, for which panels."""
        return f"{self.start.isoformat()}:{'+'.join(sorted(self.panels))}"

    def covers(self, moment: datetime) -> bool:
        """True while the period is in force at `moment`."""
        return self.start <= moment and (self.end is None or moment < self.end)

    def overlaps(self, other: Period) -> bool:
        """True when both periods are in force at some moment for some panel."""
        if not set(self.panels) & set(other.panels):
            return False
        return (other.end is None or self.start < other.end) and (self.end is None or other.start < self.end)


_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,31}$")


def _slug(value: str) -> str:
    if not _SLUG.match(value):
        raise ValueError("use 2 to 32 lowercase letters, digits or hyphens, e.g. tdsb")
    return value


class Board(Strict):
    """One district school board: what is in force now, and the periods announced ahead, as written in boards.yaml."""

    id: Annotated[str, AfterValidator(_slug)]
    name: Name
    name_fr: Name | None = None
    language: Language = Language.EN
    type: BoardType = BoardType.PUBLIC
    region: Region | None = None
    website: HttpUrl | None = None
    status: Status
    panels: dict[Panel, Status] = Field(default_factory=dict)
    effective: Moment | None = None
    message: Bilingual | None = None
    announcement: BilingualUrl | None = None
    withdrawals: tuple[Withdrawal, ...]
    upcoming: tuple[Period, ...] = ()
    updated_at: Moment | None = None

    @model_validator(mode="after")
    def _coherent(self) -> Board:
        if len(self.panels) == len(Panel) and self.status not in self.panels.values():
            statuses = ", ".join(f"{panel} {status}" for panel, status in sorted(self.panels.items()))
            if len(set(self.panels.values())) == 1:
                hint = f"write status: {next(iter(self.panels.values()))} without panels"
            else:
                hint = "make status one of the two and list only the panel that differs"
            raise ValueError(f"status: {self.status!s} contradicts the panels ({statuses}); {hint}")
        for later, period in enumerate(self.upcoming):
            for index, other in enumerate(self.upcoming[:later]):
                if period.overlaps(other):
                    raise ValueError(f"upcoming.{later}.from: this period overlaps the one starting "
                                     f"{other.start.isoformat(timespec='minutes')} (upcoming item {index + 1}) for "
                                     f"{' and '.join(sorted(set(period.panels) & set(other.panels)))}; "
                                     "end one before the other starts")
        return self

    def display_name(self, language: str) -> str:
        """The name parents know in `language`: the French form where one exists, else the official name."""
        return (self.name_fr or self.name) if language == "fr" else self.name

    def panel_status(self, panel: Panel) -> Status:
        """The status of one panel: its own when it differs, else the board's."""
        return self.panels.get(panel, self.status)

    @property
    def worst_status(self) -> Status:
        """The most disruptive status of any panel: a board with secondary closed counts as closed for sorting."""
        return max([self.status, *self.panels.values()], key=lambda s: s.severity)

    @property
    def is_disrupted(self) -> bool:
        return self.worst_status is not Status.OPEN or bool(self.withdrawals)

    def withdrawals_for(self, panel: Panel) -> list[Withdrawal]:
        return [w for w in self.withdrawals if panel in w.panels]

    # --- time: what is in force at a moment, what is announced ahead, what is past ------------------------------

    def period_at(self, moment: datetime) -> Period | None:
        """The announced period in force at `moment`, if any (the latest to start, should two overlap)."""
        covering = [period for period in self.upcoming if period.covers(moment)]
        return max(covering, key=lambda period: period.start) if covering else None

    def ahead(self, moment: datetime) -> tuple[Period, ...]:
        """The periods that start after `moment`, soonest first."""
        return tuple(sorted((p for p in self.upcoming if p.start > moment), key=lambda p: p.start))

    def past(self, moment: datetime) -> tuple[Period, ...]:
        """The periods that ended by `moment`, most recent first."""
        ended = (p for p in self.upcoming if p.end is not None and p.end <= moment)
        return tuple(sorted(ended, key=lambda p: p.start, reverse=True))

    def boundaries(self) -> tuple[datetime, ...]:
        """Every moment at which what is in force changes by itself (periods starting or ending), in order."""
        moments = {p.start for p in self.upcoming} | {p.end for p in self.upcoming if p.end is not None}
        return tuple(sorted(moments))

    def is_upcoming(self, now: datetime) -> bool:
        """True while a change is announced ahead (a period that has not started yet)."""
        return bool(self.ahead(now))

    def at(self, moment: datetime) -> Board:
        """The board as it is at `moment`: its own state, overlaid by the period in force then; `upcoming` then holds
        only the periods still ahead."""
        period = self.period_at(moment)
        ahead = self.ahead(moment)
        if period is None:
            return self if ahead == self.upcoming else self.model_copy(update={"upcoming": ahead})
        statuses = {panel: period.status if panel in period.panels else self.panel_status(panel) for panel in Panel}
        status = self.status if self.status in statuses.values() else statuses[Panel.ELEMENTARY]
        return self.model_copy(update={
            "status": status,
            "panels": {panel: value for panel, value in statuses.items() if value != status},
            "effective": period.start,
            "message": period.message or self.message,
            "withdrawals": self.withdrawals if period.withdrawals is None else period.withdrawals,
            "upcoming": ahead,
        })


class StatusFile(Strict):
    """The whole of boards.yaml (ids are checked for uniqueness by the loader, which knows their lines)."""

    boards: tuple[Board, ...]

    def by_id(self) -> dict[str, Board]:
        return {board.id: board for board in self.boards}


def now_toronto() -> datetime:
    """The current time in America/Toronto, the zone every board works in."""
    return datetime.now(TORONTO)
