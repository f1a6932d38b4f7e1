"""The status model: what a parent needs to know about one board, and nothing that depends on the web.

A board has one overall `status` and, when elementary and secondary differ (a secondary teachers' strike closes
secondary schools while elementary stay open), a status per panel. `withdrawals` lists the services that stop
during work-to-rule or a strike, each from a fixed vocabulary so it can be explained in both languages.
"""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    HttpUrl,
    model_validator,
)

from notifier.formatting import TORONTO


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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)


def _not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError("must not be empty")
    return value.strip() if value is not None else None


Text = Annotated[str, AfterValidator(_not_blank)]


def _toronto_time(value: object) -> object:
    """Accept `2026-11-23T00:01-05:00`, or a time without offset meaning America/Toronto; refuse a bare date."""
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            raise ValueError(f"{text!r} has no time of day; write e.g. {text}T00:01")
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a date-time; write e.g. 2026-11-23T00:01-05:00") from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=TORONTO)
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=TORONTO)
    return value


Moment = Annotated[AwareDatetime, BeforeValidator(_toronto_time)]


class Bilingual(_Strict):
    """A text in English and French; one may be missing, and the other stands in (marked with its `lang`)."""

    en: Text | None = None
    fr: Text | None = None

    @model_validator(mode="after")
    def _one_language_at_least(self) -> Bilingual:
        if self.en is None and self.fr is None:
            raise ValueError("give the text in English (en:), French (fr:) or both")
        return self

    def pick(self, language: str) -> tuple[str, str]:
        """The text in `language`, or in the other language if it is missing; returns (text, its language)."""
        first, second = ("fr", "en") if language == "fr" else ("en", "fr")
        value = getattr(self, first)
        if value is not None:
            return value, first
        return getattr(self, second), second


class BilingualUrl(_Strict):
    en: HttpUrl | None = None
    fr: HttpUrl | None = None

    def pick(self, language: str) -> str | None:
        """The link for `language`, or the other language's when only one is given."""
        first, second = ("fr", "en") if language == "fr" else ("en", "fr")
        chosen = getattr(self, first) or getattr(self, second)
        return str(chosen) if chosen else None


class Withdrawal(_Strict):
    """One service withdrawn: what stops, for which panels, and what a parent should do about it."""

    category: Category
    panels: tuple[Panel, ...] = (Panel.ELEMENTARY, Panel.SECONDARY)
    description: Bilingual
    advice: Bilingual | None = None

    @property
    def key(self) -> str:
        """Identity used to tell "changed" from "added and removed": the category and the panels it affects."""
        return f"{self.category}:{'+'.join(sorted(self.panels))}"


_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,31}$")


def _slug(value: str) -> str:
    if not _SLUG.match(value):
        raise ValueError("use 2 to 32 lowercase letters, digits or hyphens, e.g. tdsb")
    return value


class Board(_Strict):
    """One district school board and its current status, as written in boards.yaml."""

    id: Annotated[str, AfterValidator(_slug)]
    name: Text
    name_fr: Text | None = None
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
    updated_at: Moment | None = None

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

    def is_upcoming(self, now: datetime) -> bool:
        """True while the status is announced ahead: its effective time is still in the future."""
        return self.effective is not None and self.effective > now

    def withdrawals_for(self, panel: Panel) -> list[Withdrawal]:
        return [w for w in self.withdrawals if panel in w.panels]


class StatusFile(_Strict):
    """The whole of boards.yaml (ids are checked for uniqueness by the loader, which knows their lines)."""

    boards: tuple[Board, ...]

    def by_id(self) -> dict[str, Board]:
        return {board.id: board for board in self.boards}


def now_toronto() -> datetime:
    """The current time in America/Toronto, the zone every board works in."""
    return datetime.now(TORONTO)
