"""Staff console fixtures: accounts, a signed-in test client, and reading sign-in links from the outbox."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from notifier.db import transaction
from notifier.delivery import express
from notifier.delivery.channels.local import read_outbox
from notifier.staff import accounts
from notifier.status import document

TDSB_STAFF = "comms@tdsb.example.org"
PEEL_STAFF = "comms@peel.example.org"
ADMIN = "admin@province.example.org"


def make_staff(sessions, email: str = TDSB_STAFF, boards=("tdsb",), admin: bool = False) -> int:
    """Create a staff account (known boards are those of the real boards.yaml); returns its id."""
    from notifier.config import ROOT

    known = [b.id for b in document.load(ROOT / "boards.yaml").status.boards]
    with transaction(sessions) as session:
        return accounts.add(session, email, list(boards), admin, known).id


def csrf_token(html: str) -> str:
    """The CSRF token of the first form on a page."""
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def form_fields(html: str) -> list[tuple[str, str]]:
    """Every field a browser would send from the page's main form, as (name, value) pairs (no JavaScript).

    Understands the inputs, selects and textareas the staff templates use; checkboxes count only when checked.
    """
    import html as html_lib

    form = html[html.index('<form method="post" action="/staff/boards/'):]
    form = form[:form.index("</form>")]
    fields: list[tuple[str, str]] = []
    pattern = r"<(input|select|textarea)\b([^>]*)>(.*?)(?=</select>|</textarea>|<input|<select|<textarea|$)"
    for tag in re.finditer(pattern, form, re.S):
        kind, attrs, body = tag.group(1), tag.group(2), tag.group(3)
        name = re.search(r'name="([^"]*)"', attrs)
        if not name:
            continue
        name = name.group(1)
        if kind == "input":
            type_ = re.search(r'type="([^"]*)"', attrs).group(1)
            value = re.search(r'value="([^"]*)"', attrs)
            value = html_lib.unescape(value.group(1)) if value else ""
            if type_ == "checkbox" and " checked" not in attrs:
                continue
            fields.append((name, value))
        elif kind == "select":
            chosen = re.search(r'<option value="([^"]*)" selected', body)
            fields.append((name, html_lib.unescape(chosen.group(1)) if chosen else ""))
        else:
            fields.append((name, html_lib.unescape(body.split("</textarea>")[0])))
    return fields


class Console:
    """A test client signed in as one staff member, able to fill and send the edit form like a browser would."""

    def __init__(self, client, settings) -> None:
        self.client = client
        self.settings = settings

    def sign_in(self, email: str) -> None:
        page = self.client.get("/staff/signin").get_data(as_text=True)
        self.client.post("/staff/signin", data={"email": email, "csrf_token": csrf_token(page)})
        link = latest_signin_link(self.settings.outbox_dir, email)
        path = link.removeprefix(self.settings.base_url)
        confirm = self.client.get(path).get_data(as_text=True)
        response = self.client.post(path, data={"csrf_token": csrf_token(confirm)})
        assert response.status_code == 302, response.get_data(as_text=True)

    def form(self, board_id: str) -> dict[str, list[str]]:
        """The edit form's fields as a browser would send them untouched."""
        page = self.client.get(f"/staff/boards/{board_id}")
        assert page.status_code == 200
        fields: dict[str, list[str]] = {}
        for name, value in form_fields(page.get_data(as_text=True)):
            fields.setdefault(name, []).append(value)
        return fields

    def send(self, board_id: str, fields: dict, action: str = "publish"):
        data = {k: v for k, v in fields.items()}
        data["action"] = action
        return self.client.post(f"/staff/boards/{board_id}", data=data)

    def edit(self, board_id: str, action: str = "publish", **changes):
        """Open the form, change some fields (a list value for repeated fields, None to untick), send it."""
        fields = self.form(board_id)
        for name, value in changes.items():
            if value is None:
                fields.pop(name, None)
            else:
                fields[name] = value if isinstance(value, list) else [value]
        return self.send(board_id, fields, action)


def latest_signin_link(outbox: Path, email: str) -> str:
    """The sign-in link in the newest email to `email` in the outbox folder, without its `?lang=` (which only picks
    the console's language: a browser is redirected to this address, with the language in a cookie).

    The sign-in page answers at once and the email leaves in the background: waited for first."""
    express.settle()
    for message in read_outbox(outbox):
        if message["to"] == email and "/staff/signin/" in message["text"]:
            return re.search(r"(\S+/staff/signin/[^\s?]+)", message["text"]).group(1)
    raise AssertionError(f"no sign-in email to {email} in {outbox}")


@pytest.fixture
def app(app):
    """The shared app, looking for a newer status document on every request (tests edit boards.yaml within a
    second, and a form shown before the edit would be refused as outdated)."""
    app.extensions["notifier"].boards.check_every = 0
    return app


@pytest.fixture
def tdsb_staff(sessions) -> int:
    return make_staff(sessions, TDSB_STAFF, ["tdsb"])


@pytest.fixture
def console(client, settings, tdsb_staff) -> Console:
    """A client signed in as TDSB's communications officer."""
    signed = Console(client, settings)
    signed.sign_in(TDSB_STAFF)
    return signed


def make_subscriber(sessions, board_id: str = "tdsb", email: str = "parent@example.org", language: str = "en",
                    frequency: str = "immediate", phone: str | None = None) -> int:
    """An active subscriber following both panels of `board_id`, by email (and SMS when `phone` is given)."""
    from notifier.status.history import latest_event_id
    from notifier.subscribers.models import Contact, Follow, Subscriber

    with transaction(sessions) as session:
        seen = latest_event_id(session)
        subscriber = Subscriber(language=language)
        session.add(subscriber)
        session.flush()
        contacts = [("email", email)] + ([("sms", phone)] if phone else [])
        for channel, address in contacts:
            session.add(Contact(subscriber_id=subscriber.id, channel=channel, address=address, status="active",
                                frequency=frequency, seen_event_id=seen))
        for panel in ("elementary", "secondary"):
            session.add(Follow(subscriber_id=subscriber.id, board_id=board_id, panel=panel))
        return subscriber.id


@pytest.fixture
def first_cycle(settings, sessions):
    """The clock has seen the file once (its first cycle only records the state of the world)."""
    from notifier import clock

    return clock.tick(settings, sessions)
