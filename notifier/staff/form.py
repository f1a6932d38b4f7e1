"""The staff edit form as plain data: built from a board, read back from posted fields, and validated.

Validation builds the new `Board` with the same pydantic model that checks boards.yaml, so the form can never
produce a file the loader would refuse. Errors come back per form field as short codes; the template turns each
code into a plain sentence in the reader's language (no user-facing text lives here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from itsdangerous import BadSignature, URLSafeSerializer
from pydantic import ValidationError

from notifier.formatting import TORONTO, french_spacing
from notifier.staff import announce
from notifier.status.boards import Board, Category, Panel, Status
from notifier.status.values import toronto_time

BLANK_ROWS = 2  # empty withdrawal rows offered below the existing ones, so adding works without JavaScript
MAX_TEXT = 1000  # characters per message, description or advice: parents read these on a phone
SAME_AS_BOARD = ""


class Fields(Protocol):
    """What a posted form offers (Werkzeug's MultiDict does): one value, or every value of a repeated field."""

    def get(self, key: str) -> str | None: ...

    def getlist(self, key: str) -> list[str]: ...


@dataclass
class WithdrawalRow:
    """One row of the withdrawals table; `existing` rows came from the file, the others were blank."""

    category: str = ""
    panels: list[str] = field(default_factory=lambda: [p.value for p in Panel])
    description_en: str = ""
    description_fr: str = ""
    advice_en: str = ""
    advice_fr: str = ""
    remove: bool = False
    existing: bool = False

    @property
    def blank(self) -> bool:
        """A new row left empty: ignored (its panel boxes are pre-ticked, so they don't count)."""
        return not self.existing and not any(
            (self.category, self.description_en, self.description_fr, self.advice_en, self.advice_fr))


@dataclass
class EditForm:
    """Every field of the edit form, as text, the way the page shows it."""

    status: str
    panels: dict[str, str]
    effective: str = ""  # datetime-local, Toronto time: 2026-11-23T00:01
    until: str = ""  # the same; empty: until further notice
    message_en: str = ""
    message_fr: str = ""
    announcement_en: str = ""
    announcement_fr: str = ""
    withdrawals: list[WithdrawalRow] = field(default_factory=list)
    notify: bool = True

    def hidden_fields(self) -> list[tuple[str, str]]:
        """The form as (name, value) pairs, carried through the preview page in hidden inputs."""
        pairs = [("status", self.status), ("effective", self.effective), ("until", self.until),
                 ("message_en", self.message_en),
                 ("message_fr", self.message_fr), ("announcement_en", self.announcement_en),
                 ("announcement_fr", self.announcement_fr), ("rows", str(len(self.withdrawals)))]
        pairs += [(f"panel_{panel}", value) for panel, value in self.panels.items()]
        for i, row in enumerate(self.withdrawals):
            pairs += [(f"w{i}_category", row.category), (f"w{i}_description_en", row.description_en),
                      (f"w{i}_description_fr", row.description_fr), (f"w{i}_advice_en", row.advice_en),
                      (f"w{i}_advice_fr", row.advice_fr)]
            pairs += [(f"w{i}_panels", panel) for panel in row.panels]
            pairs += [(f"w{i}_existing", "1")] if row.existing else []
            pairs += [(f"w{i}_remove", "1")] if row.remove else []
        if self.notify:
            pairs.append(("notify", "1"))
        return pairs


def from_board(board: Board, now: datetime, blank_rows: int = BLANK_ROWS) -> EditForm:
    """The form pre-filled with what is in force now; "takes effect" starts empty (now), never a time gone by."""
    board = board.at(now)
    message = board.message
    announcement = board.announcement
    rows = [
        WithdrawalRow(
            category=w.category.value, panels=[p.value for p in w.panels],
            description_en=w.description.en or "", description_fr=w.description.fr or "",
            advice_en=(w.advice.en or "") if w.advice else "", advice_fr=(w.advice.fr or "") if w.advice else "",
            existing=True,
        )
        for w in board.withdrawals
    ]
    rows += [WithdrawalRow() for _ in range(blank_rows)]
    return EditForm(
        status=board.status.value,
        panels={p.value: board.panels[p].value if p in board.panels else SAME_AS_BOARD for p in Panel},
        message_en=(message.en or "") if message else "", message_fr=(message.fr or "") if message else "",
        announcement_en=str(announcement.en or "") if announcement else "",
        announcement_fr=str(announcement.fr or "") if announcement else "",
        withdrawals=rows,
    )


def from_fields(fields: Fields, max_rows: int = 40) -> EditForm:
    """The form as posted (every value stripped, French texts given French spacing; unknown or missing fields read as
    empty)."""

    def text(name: str) -> str:
        value = str(fields.get(name) or "").replace("\r\n", "\n").strip()
        # French as staff type it ("Correction : …") becomes French as parents should read it, in the preview too
        return french_spacing(value) if name.endswith("_fr") and not name.startswith("announcement") else value

    try:
        count = min(int(text("rows") or 0), max_rows)
    except ValueError:
        count = 0
    rows = [
        WithdrawalRow(
            category=text(f"w{i}_category"), panels=[p for p in fields.getlist(f"w{i}_panels") if p in list(Panel)],
            description_en=text(f"w{i}_description_en"), description_fr=text(f"w{i}_description_fr"),
            advice_en=text(f"w{i}_advice_en"), advice_fr=text(f"w{i}_advice_fr"),
            remove=bool(text(f"w{i}_remove")), existing=bool(text(f"w{i}_existing")),
        )
        for i in range(count)
    ]
    return EditForm(
        status=text("status"), panels={p.value: text(f"panel_{p.value}") for p in Panel},
        effective=text("effective"), until=text("until"), message_en=text("message_en"), message_fr=text("message_fr"),
        announcement_en=text("announcement_en"), announcement_fr=text("announcement_fr"),
        withdrawals=rows, notify=bool(text("notify")),
    )


def with_blank_rows(form: EditForm, blank_rows: int = BLANK_ROWS) -> EditForm:
    """The same form with at least `blank_rows` empty rows at the end (after an error, to keep adding possible)."""
    empty = sum(1 for row in form.withdrawals if row.blank)
    form.withdrawals += [WithdrawalRow() for _ in range(max(0, blank_rows - empty))]
    return form


def validate(form: EditForm, current: Board, now: datetime) -> tuple[Board | None, dict[str, str]]:
    """The board as edited, or the errors: {field name: code}. Nothing about the board is changed here.

    The form says what staff want in force and when (`announce.apply_edit`). Codes: choice, panels, description,
    duplicate, datetime, clock_change, overlap, order, contradicts, url, text, long.
    """
    errors: dict[str, str] = {name: "long" for name, value in _texts(form) if len(value) > MAX_TEXT}
    when = parse_time(form.effective, errors)
    until = parse_time(form.until, errors, "until")
    if until is not None and until <= max(when or now, now):
        errors["until"] = "order"  # a period must end after it starts, and after now
    if form.status not in list(Status):
        errors["status"] = "choice"
    panels = {}
    for panel, value in form.panels.items():
        if value == SAME_AS_BOARD:
            continue
        if value not in list(Status):
            errors[f"panel_{panel}"] = "choice"
        elif value != form.status:  # same as the board's own status: nothing to say per panel
            panels[panel] = value
    withdrawals, rows_of, seen = [], [], {}
    for i, row in enumerate(form.withdrawals):
        if row.remove or row.blank:
            continue
        if row.category not in list(Category):
            errors[f"w{i}_category"] = "choice"
        if not row.panels:
            errors[f"w{i}_panels"] = "panels"
        if not (row.description_en or row.description_fr):
            errors[f"w{i}_description_en"] = "description"
        key = (row.category, tuple(sorted(row.panels)))
        if key in seen and f"w{i}_category" not in errors:
            errors[f"w{i}_category"] = "duplicate"
        seen[key] = i
        withdrawals.append(_withdrawal(row))
        rows_of.append(i)
    data = current.at(now).model_dump(mode="json", exclude_none=True)
    data.update(status=form.status, panels=panels, withdrawals=withdrawals, upcoming=[],
                message=_bilingual(form.message_en, form.message_fr),
                announcement=_bilingual(form.announcement_en, form.announcement_fr))
    try:
        edited = Board.model_validate(data)
    except ValidationError as error:
        for item in error.errors():
            name, code = _field_of(item, rows_of)
            errors.setdefault(name, code)
        return None, errors
    if errors:
        return None, errors
    try:
        return announce.apply_edit(current, edited, when, now, until), {}
    except announce.AnnounceError as error:
        return None, {"effective": error.code}


def parse_time(text: str, errors: dict[str, str], name: str = "effective") -> datetime | None:
    """A time field ("takes effect", "until") as a Toronto time (None: empty), or an error code for it."""
    if not text:
        return None
    try:
        naive = datetime.fromisoformat(text)
    except ValueError:
        errors[name] = "datetime"
        return None
    if naive.tzinfo is not None:
        return naive
    try:
        return toronto_time(naive)
    except ValueError:
        errors[name] = "clock_change"
        return None


def _texts(form: EditForm) -> list[tuple[str, str]]:
    texts = [("message_en", form.message_en), ("message_fr", form.message_fr)]
    for i, row in enumerate(form.withdrawals):
        texts += [(f"w{i}_{name}", getattr(row, name))
                  for name in ("description_en", "description_fr", "advice_en", "advice_fr")]
    return texts


def _withdrawal(row: WithdrawalRow) -> dict[str, Any]:
    item: dict[str, Any] = {"category": row.category, "panels": list(row.panels),
                            "description": _bilingual(row.description_en, row.description_fr)}
    advice = _bilingual(row.advice_en, row.advice_fr)
    if advice:
        item["advice"] = advice
    return item


def _bilingual(en: str, fr: str) -> dict[str, str] | None:
    value = {k: v for k, v in (("en", en), ("fr", fr)) if v}
    return value or None


def _field_of(error: Mapping[str, Any], rows_of: list[int]) -> tuple[str, str]:
    """Which form field a pydantic error belongs to, and the code of its plain-words message."""
    loc = [part for part in error["loc"] if part != "[key]"]
    top = loc[0] if loc else ""
    if top == "withdrawals" and len(loc) > 1 and isinstance(loc[1], int) and loc[1] < len(rows_of):
        row = rows_of[loc[1]]
        part = loc[2] if len(loc) > 2 else "category"
        if part in ("description", "advice"):
            language = loc[3] if len(loc) > 3 and loc[3] in ("en", "fr") else "en"
            return f"w{row}_{part}_{language}", "text" if part == "advice" else "description"
        return f"w{row}_{part}", "panels" if part == "panels" else "choice"
    if top in ("message", "announcement"):
        language = loc[1] if len(loc) > 1 and loc[1] in ("en", "fr") else "en"
        return f"{top}_{language}", "url" if top == "announcement" else "text"
    if top == "effective":
        return "effective", "datetime"
    if top == "panels":
        return f"panel_{loc[1]}" if len(loc) > 1 else "status", "choice"
    if "contradicts the panels" in str(error.get("msg", "")):
        return "status", "contradicts"
    return "status", "choice"


def encode_base(board: Board, secret: str, staff_key: str) -> str:
    """The board the form was rendered from, for a hidden field: to detect and show a concurrent change.

    Signed with the app's secret and bound to the board's id and the staff member, so the browser can carry it but
    not forge it, alter it, or reuse one shown to someone else or for another board (`decode_base` checks all).
    """
    payload = {"board": board.id, "staff": staff_key, "data": board.model_dump(mode="json", exclude_none=True)}
    return _serializer(secret).dumps(payload)


def decode_base(value: str, secret: str, board_id: str, staff_key: str) -> Board | None:
    """The board a form was rendered from, or None when the field is missing, forged, altered, or was signed for
    another board or another staff member."""
    try:
        payload = _serializer(secret).loads(value)
    except BadSignature:
        return None
    if not isinstance(payload, dict) or payload.get("board") != board_id or payload.get("staff") != staff_key:
        return None
    try:
        board = Board.model_validate(payload.get("data"))
    except ValidationError:
        return None
    return board if board.id == board_id else None


def _serializer(secret: str) -> URLSafeSerializer:
    return URLSafeSerializer(secret, salt="notifier.staff.form.base")


def local_time(moment: datetime | None) -> str:
    """A time as a datetime-local input shows it, in Toronto time."""
    return moment.astimezone(TORONTO).strftime("%Y-%m-%dT%H:%M") if moment else ""
