"""Every kind of page and every email's HTML, in English and in French, passes the W3C Nu HTML Checker (vnu) with no
error: the public pages, the sign-up and settings pages, the staff console, /dev/outbox and the 503 page."""

from __future__ import annotations

import re

import pytest

from notifier.config import ROOT, Settings
from notifier.delivery.channels.local import read_outbox
from notifier.notices.preview import preview
from notifier.status import document
from notifier.status.boards import Board
from tests.conftest import make_withdrawal
from tests.notices.test_matrix import ROWS
from tests.notices.test_matrix import render as render_matrix_row
from tests.staff.conftest import ADMIN, TDSB_STAFF, Console, make_staff
from tests.subscribers.conftest import csrf_token

PHONE = "+16135550123"


@pytest.fixture
def debug_app(env, job_action):
    """The app as `make run` has it: debug mode, no provider (messages in the local outbox), a board in job action."""
    from notifier import create_app

    app = create_app({**env, "NOTIFIER_DEBUG": "1", "TESTING": True})
    app.extensions["notifier"].boards.check_every = 0
    app.extensions["notifier"].pages.check_every = 0
    yield app
    app.extensions["notifier"].engine.dispose()


def _newest(settings: Settings, fragment: str, to: str | None = None) -> dict:
    for message in read_outbox(settings.outbox_dir):
        if fragment in message["text"] and (to is None or message["to"] == to):
            return message
    raise AssertionError(f"no message with {fragment} in the outbox")


def _path(settings: Settings, message: dict, prefix: str) -> str:
    url = re.search(re.escape(settings.base_url + prefix) + r"[^\s?]+", message["text"]).group(0)
    return url.removeprefix(settings.base_url)


def public_pages(client, language: str) -> dict[str, str]:
    pages = {}
    for name, path in [("index", "/"), ("search", "/?q=toronto"), ("board", "/boards/tdsb"),
                       ("announced", "/boards/peel"), ("not found", "/boards/atlantis")]:
        pages[name] = client.get(path).get_data(as_text=True)
    return pages


def parent_pages(client, settings: Settings, language: str) -> dict[str, str]:
    """Every page of a parent's journey, by email and by text, with its mistakes and its ends."""
    email = f"parent-{language}@example.org"
    pages = {"subscribe": client.get("/subscribe?board=tdsb").get_data(as_text=True)}
    token = csrf_token(pages["subscribe"])
    form = {"csrf_token": token, "board-0": "tdsb", "panel-0": ["elementary", "secondary"], "language": language,
            "email_frequency": "immediate", "sms_frequency": "daily"}
    pages["subscribe with mistakes"] = client.post("/subscribe", data={**form, "email": "not-an-address",
                                                                       "phone": "12"}).get_data(as_text=True)
    pages["sent"] = client.post("/subscribe", data={**form, "email": email, "phone": PHONE}).get_data(as_text=True)
    confirm = _path(settings, _newest(settings, "/confirm/", email), "/confirm/")
    pages["confirm"] = client.get(confirm).get_data(as_text=True)
    pages["confirmed"] = client.post(confirm, data={"csrf_token": csrf_token(pages["confirm"])}).get_data(as_text=True)
    manage = re.search(r'href="https?://[^/"]+(/manage/[^"?]+)', pages["confirmed"]).group(1)
    pages["manage"] = client.get(manage).get_data(as_text=True)
    pages["lost"] = client.get("/manage").get_data(as_text=True)
    pages["lost sent"] = client.post("/manage", data={"csrf_token": csrf_token(pages["lost"]),
                                                      "address": email}).get_data(as_text=True)
    pages["link problem"] = client.get("/confirm/not-a-token").get_data(as_text=True)
    unsubscribe = _path(settings, _newest(settings, "/unsubscribe/", email), "/unsubscribe/")
    pages["unsubscribe"] = client.get(unsubscribe).get_data(as_text=True)
    pages["unsubscribed"] = client.post(unsubscribe).get_data(as_text=True)
    pages["left"] = client.post(f"{manage}/leave", data={"csrf_token": csrf_token(pages["manage"])}) \
        .get_data(as_text=True)
    pages["outbox"] = client.get("/dev/outbox").get_data(as_text=True)
    reply = {"csrf_token": csrf_token(pages["outbox"]), "from": PHONE, "word": "AIDE"}
    pages["outbox reply"] = client.post("/dev/outbox/reply", data=reply).get_data(as_text=True)
    return pages


def staff_pages(client, settings: Settings, sessions) -> dict[str, str]:
    """The console's pages: sign-in, the boards, the edit form, the preview, the history, the accounts."""
    pages = {"staff sign-in": client.get("/staff/signin").get_data(as_text=True)}
    pages["staff sign-in sent"] = client.post("/staff/signin", data={
        "email": TDSB_STAFF, "csrf_token": csrf_token(pages["staff sign-in"])}).get_data(as_text=True)
    link = _path(settings, _newest(settings, "/staff/signin/", TDSB_STAFF), "/staff/signin/")
    pages["staff sign-in confirm"] = client.get(link).get_data(as_text=True)
    console = Console(client, settings)
    console.client.post(link, data={"csrf_token": csrf_token(pages["staff sign-in confirm"])})
    pages["staff index"] = client.get("/staff/").get_data(as_text=True)
    pages["staff edit"] = client.get("/staff/boards/tdsb").get_data(as_text=True)
    pages["staff preview"] = console.edit("tdsb", action="preview", status="closed").get_data(as_text=True)
    pages["staff published"] = console.edit("tdsb", status="closed").get_data(as_text=True)
    pages["staff history"] = client.get("/staff/boards/tdsb/history").get_data(as_text=True)
    pages["staff signed out"] = client.post("/staff/signout", data={"csrf_token": csrf_token(pages["staff index"])},
                                            follow_redirects=True).get_data(as_text=True)
    console.sign_in(ADMIN)
    pages["staff accounts"] = client.get("/staff/accounts").get_data(as_text=True)
    return pages


def emails(settings: Settings, language: str) -> dict[str, str]:
    """The HTML of each kind of email in the outbox, and of a rich digest."""
    found = {}
    for kind, fragment in [("confirm email", "/confirm/"), ("manage-link email", "/manage/"),
                           ("staff sign-in email", "/staff/signin/")]:
        found[kind] = next(m["html"] for m in read_outbox(settings.outbox_dir)
                           if fragment in m["text"] and m["html"] and m["language"] == language)
    boards = document.load(str(ROOT / "boards.yaml")).status.by_id()
    closed = Board.model_validate({
        **boards["tdsb"].model_dump(mode="json"), "status": "work-to-rule", "panels": {"secondary": "closed"},
        "message": {"en": "Secondary schools are closed <today> & tomorrow."},
        "withdrawals": [make_withdrawal(panels=["secondary"], advice={"en": "Walk.", "fr": "Marchez."})],
    })
    found["digest email"] = preview(boards["tdsb"], closed, language, settings).email_html
    # Every kind of digest the clock sends, rendered by the real render_digest (the rows of the message matrix).
    for row in ROWS:
        found[f"digest email: {row.name}"] = render_matrix_row(row, language, "email").html
    return found


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_page_and_email_passes_the_w3c_nu_html_checker(debug_app, settings, sessions, runner, job_action,
                                                               vnu, language):
    runner.invoke("tick")
    job_action.update("tdsb", status="closed")
    runner.invoke("tick")  # the board page shows its history of changes
    make_staff(sessions, TDSB_STAFF, ["tdsb"])
    make_staff(sessions, ADMIN, [], admin=True)
    client = debug_app.test_client()
    client.set_cookie("lang", language)
    documents = {**public_pages(client, language), **parent_pages(client, settings, language),
                 **staff_pages(client, settings, sessions)}
    documents.update(emails(settings, language))
    assert len(documents) >= 50
    found = vnu.errors(documents)
    assert {name: errors for name, errors in found.items() if errors} == {}


def test_the_503_page_passes_the_w3c_nu_html_checker(env, boards_file, vnu):
    from notifier import create_app

    boards_file.write_text("boards: [\n")
    app = create_app({**env, "TESTING": True})
    try:
        pages = {language: app.test_client().get("/", headers={"Accept-Language": language})
                 for language in ("en", "fr")}
        assert {r.status_code for r in pages.values()} == {503}
        found = vnu.errors({language: r.get_data(as_text=True) for language, r in pages.items()})
    finally:
        app.extensions["notifier"].engine.dispose()
    assert found == {"en": [], "fr": []}


def test_pages_asked_for_with_lang_pass_the_w3c_nu_html_checker(debug_app, vnu):
    """Their links and GET forms carry the language (hidden fields included)."""
    browser = debug_app.test_client(use_cookies=False)
    documents = {path: browser.get(path).get_data(as_text=True)
                 for path in ("/?lang=fr", "/?q=toronto&lang=fr", "/boards/tdsb?lang=fr", "/boards/atlantis?lang=fr")}
    assert all('<input type="hidden" name="lang" value="fr">' in page for page in documents.values())
    found = vnu.errors(documents)
    assert {name: errors for name, errors in found.items() if errors} == {}
