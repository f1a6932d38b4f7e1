"""Dates, times and small text helpers as parents read them: Toronto time, in their language.

Shared by the pages (through Flask's Jinja environment) and by emails and texts (through `notices.templates`), so an
effective time reads the same on the site and in a digest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal
from zoneinfo import ZoneInfo

from babel.dates import (
    format_date,
    format_datetime,
    format_time,
    get_date_format,
    get_datetime_format,
    get_day_names,
)
from babel.numbers import format_currency, format_decimal

from notifier.links import in_language

TORONTO = ZoneInfo("America/Toronto")  # the zone every Ontario board works in
# Months as Canadian Press writes them in running text ("Nov. 26", "May 4"); CLDR's en_CA drops the full stops.
ENGLISH_MONTHS = ("Jan.", "Feb.", "March", "April", "May", "June", "July", "Aug.", "Sept.", "Oct.", "Nov.", "Dec.")
FRENCH_MONTHS = ("janv.", "févr.", "mars", "avr.", "mai", "juin", "juill.", "août", "sept.", "oct.", "nov.", "déc.")


Language = str | Callable[[], str]


def moment(value: datetime | str | None, language: str, style: str = "long") -> str:
    """'Monday, November 23, 2026, 12:01 a.m.' / 'lundi 23 novembre 2026, 00 h 01', in Toronto time (Babel, CLDR);
    `style` "text" is a text message's 'Mon. Nov. 23, 12:01 a.m.' / 'lun. 23 nov., 0 h 01', "short" the ISO date."""
    if value is None:
        return ""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    local = value.astimezone(TORONTO)
    if style == "short":
        return format_datetime(local, "short", tzinfo=TORONTO, locale=_locale(language))
    if style == "text":  # a text message: the day as people say it, "Thu. Nov. 26, 12:01 a.m." / "jeu. 26 nov., 0 h 01"
        if language != "fr":
            return f"{calendar_day(local, language, 'abbreviated')}, {format_time(local, 'short', locale='en_CA')}"
        # "aout" (rectified spelling, accepted by the OQLF) keeps a text in GSM-7, which has no û
        when = calendar_day(local, language, "abbreviated").replace("août", "aout")
        return f"{when}, {local.hour}\u00a0h\u00a0{local.minute:02d}"
    day = format_date(local, _day_pattern(local, language), locale=_locale(language))
    clock = format_time(local, "short", tzinfo=TORONTO, locale=_locale(language))
    if language == "fr":  # "13 h 30" never breaks across lines (OQLF: no-break spaces around the h)
        clock = clock.replace(" h ", "\u00a0h\u00a0")
    # The locale's own pattern joining date and time (CLDR's long dateTimeFormat: "{1}, {0}" in en_CA and fr_CA).
    pattern = str(get_datetime_format("long", locale=_locale(language))).replace("'", "")
    return pattern.replace("{1}", day).replace("{0}", clock)


def calendar_day(value: datetime, language: str, width: Literal["abbreviated", "wide"] = "wide") -> str:
    """The day as people write it, without the year: 'Thursday, Nov. 26' / 'jeudi 26 nov.' ('wide'), or
    'Thu. Nov. 26' / 'jeu. 26 nov.' ('abbreviated'), in Toronto time."""
    local = value.astimezone(TORONTO)
    weekday = get_day_names(width, locale=_locale(language))[local.weekday()]
    if language == "fr":
        number = "1er" if local.day == 1 else str(local.day)
        return f"{weekday} {number} {FRENCH_MONTHS[local.month - 1]}"
    month = ENGLISH_MONTHS[local.month - 1]
    return f"{weekday}. {month} {local.day}" if width == "abbreviated" else f"{weekday}, {month} {local.day}"


def day_and_time(value: datetime | str, language: str) -> str:
    """'Thursday, November 26, 12:01 a.m.' / 'jeudi 26 novembre, 0 h 01': a moment this season, without the year."""
    local = _local(value)
    if language == "fr":
        day = format_date(local, _first_day("EEEE d MMMM", local), locale="fr_CA")
        return f"{day}, {format_time(local, 'H', locale='fr_CA')}\u00a0h\u00a0{local:%M}"
    return f"{format_date(local, 'EEEE, MMMM d', locale='en_CA')}, {format_time(local, 'short', locale='en_CA')}"


def short_day(value: datetime | str, language: str) -> str:
    """'Thursday, Nov. 26' / 'jeudi 26 nov.': the day of a moment, for a subject or a text."""
    return calendar_day(_local(value), language)


def _local(value: datetime | str) -> datetime:
    return (datetime.fromisoformat(value) if isinstance(value, str) else value).astimezone(TORONTO)


def _first_day(pattern: str, local: datetime) -> str:
    """In French the first of a month is "1er" (le 1er décembre)."""
    return pattern.replace("d ", "d'er' ", 1) if local.day == 1 else pattern


def time_of_day(value: datetime, language: str, seconds: bool = False) -> str:
    """'12:05 p.m.' / '12 h 05', with `seconds` '12:05:10 p.m.' / '12 h 05 min 10 s', in Toronto time."""
    text = format_time(value.astimezone(TORONTO), "medium" if seconds else "short", tzinfo=TORONTO,
                       locale=_locale(language))
    # "12 h 05 min 10 s" never breaks across lines (OQLF: no-break spaces around the units)
    return text.replace(" ", "\u00a0") if language == "fr" else text


def number(value: float, language: str) -> str:
    """'250,000' / '250 000', '0.5' / '0,5': a count or a rate as the language writes it (Babel, CLDR)."""
    return format_decimal(value, format="#,##0.##", locale=_locale(language))


def money(value: Decimal, currency: str, language: str) -> str:
    """'US$12.45' / '12,45 $ US': an amount in `currency` as the language writes it, to the cent (Babel, CLDR)."""
    return format_currency(value, currency, locale=_locale(language))


def full_stop(text: str) -> str:
    """`text` ending with one full stop: a time ending in "a.m." or a sentence ending in "?" gets none more."""
    return text if text.rstrip().endswith((".", "!", "?", "\u2026")) else text + "."


def after_colon(text: str, language: str) -> str:
    """What follows a colon: in French a sentence there starts in lower case (« 0 h 01 : les écoles… », OQLF)."""
    if language != "fr" or len(text) < 2 or not text[1].islower():
        return text  # English keeps its capital; an acronym ("TDSB") keeps its own
    return text[:1].lower() + text[1:]


# French punctuation as staff type it (a plain space, or none), and as a careful French text has it (OQLF): U+00A0
# before ":" and inside « », U+202F before ";", "!" and "?". A mark counts only before a space, the end, » or ")",
# so "https://", "12:30" and "?lang=fr" are left alone.
_BEFORE_COLON = re.compile(r"(?<=\S)[ \u00a0\u202f]*:(?=\s|$|»|\))")
_BEFORE_MARKS = re.compile(r"(?<=[^\s;!?])[ \u00a0\u202f]*([;!?]+)(?=\s|$|»|\))")
_OPENING = re.compile(r"«[ \u00a0\u202f]*")
_CLOSING = re.compile(r"[ \u00a0\u202f]*»")


def french_spacing(text: str) -> str:
    """`text` with the spaces of French typography: 'Correction : oui ; « non »' gets no-break ones where due."""
    text = _BEFORE_COLON.sub("\u00a0:", text)
    text = _BEFORE_MARKS.sub(lambda match: "\u202f" + match.group(1), text)
    return _CLOSING.sub("\u00a0»", _OPENING.sub("«\u00a0", text))


def html_datetime(value: datetime) -> str:
    """A `<time datetime>` value: whole seconds and an offset, since HTML allows at most three digits of fraction."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)  # the database keeps UTC
    return aware.isoformat(timespec="seconds")


def _day_pattern(local: datetime, language: str) -> str:
    """The locale's full date pattern; in French the first of a month is "1er" (le 1er décembre), which CLDR lacks."""
    pattern = get_date_format("full", locale=_locale(language)).pattern
    if language == "fr" and local.day == 1:
        pattern = re.sub(r"(?<![d'])d(?![d'])", "d'er'", pattern, count=1)
    return pattern


def _locale(language: str) -> str:
    return "fr_CA" if language == "fr" else "en_CA"


def install_filters(env: Any, language: Language) -> None:
    """Register the `moment`, `html_datetime`, `pick`, `in_language`, `number`, `money`, `time_of_day`, `full_stop` and
    `after_colon` filters on a Jinja environment; `language` may be a callable."""

    def current() -> str:
        return language() if callable(language) else language

    env.filters["moment"] = lambda value, style="long": moment(value, current(), style)
    env.filters["html_datetime"] = html_datetime
    env.filters["pick"] = lambda bilingual: bilingual.pick(current()) if bilingual is not None else ("", current())
    env.filters["in_language"] = lambda url: in_language(url, current())
    env.filters["number"] = lambda value: number(value, current())
    env.filters["money"] = lambda value, currency: money(value, currency, current())
    env.filters["time_of_day"] = lambda value, seconds=False: time_of_day(value, current(), seconds)
    env.filters["day_and_time"] = lambda value: day_and_time(value, current())
    env.filters["short_day"] = lambda value: short_day(value, current())
    env.filters["full_stop"] = full_stop
    env.filters["after_colon"] = lambda text: after_colon(text, current())


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: str) -> str:
    """A CSV cell a spreadsheet will not run: one starting like a formula (= + - @ tab CR) gets a leading '."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value
