"""A strike day called off from the console reaches, through the real pipeline (publish, the clock's cycle, the
outbox, the local channel), each parent who was told of it exactly once, and nobody else."""

from __future__ import annotations

from datetime import timedelta

from notifier import clock
from notifier.db import utcnow
from notifier.delivery.channels.local import read_outbox
from notifier.formatting import TORONTO
from notifier.staff import periods, publishing
from notifier.status import document

SECONDARY_PARENT = "secondary-parent@example.org"
SECONDARY_PHONE = "+16135550123"
ELEMENTARY_PARENT = "elementary-parent@example.org"


def sent_to(settings, address: str) -> list[dict]:
    return [m for m in read_outbox(settings.outbox_dir) if m["to"] == address]


def announce_strike_day(boards, settings, sessions):
    """TDSB's secondary schools closed the day after tomorrow, announced and already told (the clock saw it)."""
    day = (utcnow().astimezone(TORONTO) + timedelta(days=2)).replace(hour=0, minute=1, second=0, microsecond=0)
    boards.update("tdsb", upcoming=[{"from": day.isoformat(), "until": (day + timedelta(days=1)).isoformat(),
                                     "status": "closed", "panels": ["secondary"]}])
    clock.tick(settings, sessions)


def call_off(settings, sessions) -> None:
    """What the console's "Call off" does once confirmed: the board without the period, through the publish path."""
    board = document.load(settings.boards_file).status.by_id()["tdsb"]
    [period] = periods.announced(board, utcnow())
    published = document.load(settings.boards_file)
    publishing.publish(settings, sessions, periods.call_off(board, period.key, utcnow()), board,
                       published.version, utcnow(), True, "comms@tdsb.example.org", "127.0.0.1")


def test_a_parent_told_of_the_strike_day_hears_once_that_it_is_called_off(settings, sessions, boards, subscribe):
    clock.tick(settings, sessions)
    subscribe(email=SECONDARY_PARENT, phone=SECONDARY_PHONE, follows=[("tdsb", "secondary")], frequency="daily")
    announce_strike_day(boards, settings, sessions)
    assert len(sent_to(settings, SECONDARY_PARENT)) == 1  # told of the strike day when it was announced
    call_off(settings, sessions)
    clock.tick(settings, sessions)
    clock.tick(settings, sessions)
    emails = [m for m in sent_to(settings, SECONDARY_PARENT) if "called off" in m["subject"]]
    texts = [m for m in sent_to(settings, SECONDARY_PHONE) if "called off" in m["text"]]
    assert len(emails) == 1 and len(texts) == 1 and len(sent_to(settings, SECONDARY_PARENT)) == 2
    assert emails[0]["subject"].startswith("Closure called off: secondary schools, ")
    assert "Called off: the closure of secondary schools planned from" in emails[0]["text"]

def test_a_parent_of_the_other_panel_hears_nothing(settings, sessions, boards, subscribe):
    clock.tick(settings, sessions)
    subscribe(email=ELEMENTARY_PARENT, phone=None, follows=[("tdsb", "elementary")])
    announce_strike_day(boards, settings, sessions)
    call_off(settings, sessions)
    clock.tick(settings, sessions)
    assert sent_to(settings, ELEMENTARY_PARENT) == []  # never told of it, nor of its calling off
