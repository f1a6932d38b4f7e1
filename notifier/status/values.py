"""The small value types of the status document: plain text, names, bilingual text and links, and Toronto times.

People type these by hand, so each refuses what would go wrong later rather than now: control characters (a
newline in a board name breaks an email subject), a date without a time, and a Toronto wall-clock time that does
not exist (the spring-forward hour) or happens twice (the fall-back hour) without the offset that says which.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, BaseModel, BeforeValidator, ConfigDict, HttpUrl, model_validator

from notifier.formatting import TORONTO

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")  # newline (\x0a) is checked per field
_LINE_BREAK = re.compile(r"[\n\r]")


class Strict(BaseModel):
    """Every part of the document: unknown fields are mistakes, and a loaded value never changes."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_enum_values=False)


def _text(value: str | None) -> str | None:
    """Text for parents: not blank, no control characters (line breaks are allowed in longer texts)."""
    if value is None:
        return None
    if not value.strip():
        raise ValueError("must not be empty")
    if _CONTROL.search(value):
        raise ValueError("contains a control character (an invisible character copied from elsewhere): retype it")
    return value.strip()


def _one_line(value: str | None) -> str | None:
    """A name or a title: the same as text, on one line."""
    value = _text(value)
    if value is not None and _LINE_BREAK.search(value):
        raise ValueError("must fit on one line (no line breaks)")
    return value


Text = Annotated[str, AfterValidator(_text)]
Name = Annotated[str, AfterValidator(_one_line)]


def toronto_time(naive: datetime) -> datetime:
    """A wall-clock time in Toronto made exact; refuses the hour that does not exist and the hour that happens twice."""
    first, second = naive.replace(tzinfo=TORONTO, fold=0), naive.replace(tzinfo=TORONTO, fold=1)
    if first.utcoffset() == second.utcoffset():
        return first
    shown = naive.strftime("%Y-%m-%dT%H:%M")
    if first.astimezone(UTC).astimezone(TORONTO).replace(tzinfo=None) != naive:
        raise ValueError(f"{shown} does not exist in Toronto: clocks jump from 2:00 to 3:00 a.m. that night; "
                         f"write a time after 3:00 a.m. (e.g. {naive.strftime('%Y-%m-%d')}T03:00)")
    early, late = first.isoformat(timespec="minutes"), second.isoformat(timespec="minutes")
    raise ValueError(f"{shown} happens twice in Toronto (clocks go back from 2:00 to 1:00 a.m.): add the offset "
                     f"that says which, {early} (the first) or {late} (the second)")


def _moment(value: object) -> object:
    """Accept `2026-11-23T00:01-05:00`, or a time without offset meaning America/Toronto; refuse a bare date."""
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            raise ValueError(f"{text!r} has no time of day; write e.g. {text}T00:01")
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a date-time; write e.g. 2026-11-23T00:01-05:00") from None
    if isinstance(value, datetime) and value.tzinfo is None:
        return toronto_time(value)
    return value


Moment = Annotated[AwareDatetime, BeforeValidator(_moment)]


class Bilingual(Strict):
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


class BilingualUrl(Strict):
    """A link in English and French (a board's announcement); one may stand in for the other."""

    en: HttpUrl | None = None
    fr: HttpUrl | None = None

    def pick(self, language: str) -> str | None:
        """The link for `language`, or the other language's when only one is given."""
        first, second = ("fr", "en") if language == "fr" else ("en", "fr")
        chosen = getattr(self, first) or getattr(self, second)
        return str(chosen) if chosen else None
