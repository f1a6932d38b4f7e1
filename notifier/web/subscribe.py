"""Sign-up pages: the form (pre-filled from a board page), "check your messages", and the email confirmation.

The confirmation link opens a page with a Confirm button: mail scanners follow links, so a GET never confirms.
Every POST carries the CSRF token (Flask-WTF). Rate limits are counted in the database, so they hold across
workers, and committed even when the request is refused.
"""

from __future__ import annotations

from flask import Blueprint, render_template, request
from werkzeug.wrappers import Response

from notifier import links
from notifier.db import transaction, utcnow
from notifier.notices import account
from notifier.status.boards import Board
from notifier.subscribers import ratelimit, signup
from notifier.subscribers.models import Contact, ContactStatus
from notifier.web.services import select_language, services, speak

bp = Blueprint("subscribe", __name__)

ROWS = 3  # boards a family can add at once on the form (more on the manage page)


def boards_by_id() -> dict[str, Board]:
    """Every board in the current boards.yaml, by id."""
    return services().boards.snapshot.status.by_id()


def sorted_boards(language: str) -> list[Board]:
    """Boards in the order a parent looks for them: by name in their language."""
    return sorted(boards_by_id().values(), key=lambda b: b.display_name(language).casefold())


def client_ip() -> str:
    """The caller's address: the socket's, or the one NOTIFIER_TRUSTED_PROXIES proxies saw (ProxyFix applied it)."""
    return request.remote_addr or "unknown"


def read_rows(prefix: str = "board", panel_prefix: str = "panel") -> list[tuple[str, list[str]]]:
    """The (board, panels) rows of a submitted form."""
    return [(request.form.get(f"{prefix}-{i}", ""), request.form.getlist(f"{panel_prefix}-{i}"))
            for i in range(ROWS + 20) if f"{prefix}-{i}" in request.form]


def render_form(form: signup.SignupForm, errors: dict[str, str] | None = None, status: int = 200,
                problem: str | None = None) -> tuple[str, int]:
    """The sign-up page with what the parent typed, and what is wrong with it."""
    language = select_language()
    rows = list(form.follows) + [("", [])] * max(0, ROWS - len(form.follows))
    return render_template("subscribe/form.html", form=form, rows=rows, errors=errors or {}, problem=problem,
                           boards=sorted_boards(language)), status


@bp.get("/subscribe")
def form() -> tuple[str, int]:
    """The sign-up form, pre-filled from ?board= and ?panel= (French messages for a French-language board)."""
    board_id = request.args.get("board", "")
    board = boards_by_id().get(board_id)
    panels = [p for p in request.args.getlist("panel") if p in signup.PANELS]
    language = "fr" if board is not None and board.language == "fr" else select_language()
    follows = [(board.id, panels or list(signup.PANELS))] if board else []
    return render_form(signup.SignupForm(follows=follows, language=language))


@bp.post("/subscribe")
def submit() -> tuple[str, int]:
    """Check limits and input, store the sign-up as pending, and queue each address its confirmation."""
    form = signup.SignupForm(
        follows=read_rows(), email=request.form.get("email", "")[:320], phone=request.form.get("phone", "")[:40],
        language=request.form.get("language", ""), email_frequency=request.form.get("email_frequency", ""),
        sms_frequency=request.form.get("sms_frequency", ""),
        notify_on_effect=bool(request.form.get("notify_on_effect")),
        email_reminder=bool(request.form.get("email_reminder")), sms_reminder=bool(request.form.get("sms_reminder")),
    )
    settings, sessions, now = services().settings, services().sessions, utcnow()
    with transaction(sessions) as session:
        allowed = ratelimit.allow(session, f"signup:ip:{client_ip()}", settings.signup_limit_per_ip, signup.HOUR, now)
    if not allowed:
        return render_form(form, status=429, problem="too_many_from_ip")
    boards = boards_by_id()
    try:
        with sessions() as session:
            valid = signup.validate(session, form, boards)
    except signup.SignupError as error:
        return render_form(form, error.errors, status=400)
    with transaction(sessions) as session:
        limited = signup.within_limits(session, settings, valid, now)
    if limited:
        return render_form(form, status=429, problem=limited)
    with transaction(sessions) as session:
        stored = signup.store(session, valid, now, source=client_ip())
        messages = [account.confirmation(settings, c, boards) for c in stored.to_confirm]
        messages += [account.manage_link(settings, c, boards) for c in stored.already_active]
    # Queued, not sent here: the page answers at once and alike for every address (its time tells nothing), and a
    # number that refuses our texts (it said STOP to the carrier) is answered like any other.
    account.queue(settings, sessions, messages)
    channels = valid.channels
    local = [c for c in channels if not (settings.email_configured if c == "email" else settings.sms_configured)]
    return render_template("subscribe/sent.html", channels=channels, local_outbox=settings.debug and local), 200


def _contact_for(token: str) -> tuple[Contact | None, str | None]:
    """The pending/active contact a confirmation link names, or (None, "expired" / "invalid")."""
    try:
        contact_id, fingerprint = links.read_confirm(services().settings, token)
    except links.LinkError as error:
        return None, error.reason
    with services().sessions() as session:
        contact = session.get(Contact, contact_id)
        if contact is None or contact.status == ContactStatus.OPTED_OUT.value \
                or not links.matches(contact.address, fingerprint):
            return None, "invalid"
        contact.subscriber  # noqa: B018 - load it while the session is open
        return contact, None


@bp.get("/confirm/<token>")
def confirm_page(token: str) -> tuple[str, int]:
    """The page behind the emailed link: a Confirm button, since opening a link must not confirm."""
    contact, problem = _contact_for(token)
    if contact is None:
        return render_template("subscribe/link_problem.html", problem=problem), 400
    speak(contact.subscriber.language)
    return render_template("subscribe/confirm.html", token=token,
                           done=contact.status == ContactStatus.ACTIVE.value), 200


@bp.post("/confirm/<token>")
def confirm(token: str) -> tuple[str, int] | Response:
    """Confirm the email address the link was made for (double opt-in done)."""
    contact, problem = _contact_for(token)
    if contact is None:
        return render_template("subscribe/link_problem.html", problem=problem), 400
    settings = services().settings
    speak(contact.subscriber.language)
    with transaction(services().sessions) as session:
        contact = session.get_one(Contact, contact.id)
        signup.confirm(session, contact, utcnow(), "email-link", client_ip())
        manage = links.manage_url(settings, contact.subscriber_id)
    return render_template("subscribe/confirmed.html", manage_url=manage), 200


@bp.app_context_processor
def signup_context() -> dict:
    """`signup_boards()` for the sign-up partial on the index and board pages (every board, by name)."""
    return {"signup_boards": lambda: sorted_boards(select_language())}
