"""The staff console (/staff): sign in by emailed link, edit one board, preview what parents get, publish, and see
what went out for each publish.

Views only parse, check who is asking, call the staff wing (`signin`, `form`, `publishing`), `notices.preview` and
`delivery` (`progress`, `publishes`, `report`; `chart` lays a report out as SVG) and render. Every refusal (not
signed in, session expired, another board, bad link, missing CSRF token) is logged.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from functools import wraps

from flask import Blueprint, abort, g, redirect, render_template, request, session, url_for
from flask_wtf.csrf import CSRFError
from werkzeug.wrappers import Response

from notifier.db import transaction, utcnow
from notifier.delivery import channels, express, progress, publishes, report
from notifier.delivery.channels import EMAIL, Message
from notifier.errors import BoardFileError, DeliveryError
from notifier.masking import mask_email
from notifier.notices import preview as previews
from notifier.notices import templates
from notifier.staff import accounts, audit, edits, models, periods, publishing, signin
from notifier.staff import form as edit_form
from notifier.staff import sessions as staff_sessions
from notifier.staff import webhooks as staff_webhooks
from notifier.status import published
from notifier.status.boards import Board, Category, now_toronto
from notifier.status.changes import diff
from notifier.subscribers import webhooks as subscriber_webhooks
from notifier.subscribers.webhooks import WebhookError, WebhookLimitError
from notifier.web import chart
from notifier.web.services import select_language, services

log = logging.getLogger(__name__)

bp = Blueprint("staff", __name__, url_prefix="/staff")
REFRESH_SECONDS = 5  # the progress page reloads itself this often while messages remain
PUBLISHES_SHOWN = 30  # the list of a board's publishes shows this many, newest first


def _ip() -> str:
    return request.remote_addr or "?"


def _signed_in() -> models.StaffMember | None:
    """The staff member of this session, or None when signed out, expired, or the account was removed.

    The cookie holds only a random session id; the session itself (account, expiry) is on the server.
    """
    token = session.get("staff_session")
    if not token:
        return None
    with services().sessions() as db:
        member = staff_sessions.member_of(db, str(token), utcnow())
        if member is None:
            log.warning("staff console refused: session signed out, expired or its account removed, from %s", _ip())
            session.clear()
            return None
        g.staff_boards = accounts.boards_of(db, member)
        return member


def signed_in(view):
    """Only for a signed-in staff member (as `g.staff`); others go to the sign-in page (POSTs are refused)."""

    @wraps(view)
    def wrapper(*args, **kwargs):
        member = _signed_in()
        if member is None:
            if request.method != "GET":
                log.warning("staff console refused: %s %s without a valid session, from %s", request.method,
                            request.path, _ip())
                return render_template("staff/signed_out.html"), 401
            return redirect(url_for("staff.signin_form"))
        g.staff = member
        return view(*args, **kwargs)

    return wrapper


def _board_for(board_id: str) -> Board:
    """The board as it is now, if the signed-in member may edit it (403 otherwise, 404 if there is none)."""
    member = g.staff
    if not (member.is_admin or board_id in g.staff_boards):
        log.warning("staff console refused: %s may not edit board %r, from %s", mask_email(member.email),
                    board_id, _ip())
        abort(403)
    board = services().boards.snapshot.status.by_id().get(board_id)
    if board is None:
        abort(404)
    return board


@bp.errorhandler(CSRFError)
def csrf_refused(error: CSRFError) -> tuple[str, int]:
    log.warning("staff console refused: %s %s, CSRF: %s, from %s", request.method, request.path, error.description,
                _ip())
    return render_template("staff/refused.html", reason="csrf"), 400


@bp.errorhandler(403)
def forbidden(_error) -> tuple[str, int]:
    return render_template("staff/refused.html", reason="board"), 403


# --- signing in and out -----------------------------------------------------------------------------------------


@bp.get("/signin")
def signin_form() -> str:
    return render_template("staff/signin.html", error=None)


@bp.post("/signin")
def signin_request() -> tuple[str, int] | str:
    email = request.form.get("email", "").strip()[:320]
    with transaction(services().sessions) as db:
        outcome, queued = signin.request_link(
            db, services().settings, email, _ip(), select_language(), utcnow(),
            link_for=lambda token: f"{services().settings.base_url}{url_for('staff.signin_link', token=token)}",
        )
    express.send_soon(services().sessions, services().settings, queued)  # never waited for: the answer tells nothing
    if outcome is signin.Outcome.INVALID:
        return render_template("staff/signin.html", error="email", email=email), 400
    if outcome is signin.Outcome.LIMITED:
        return render_template("staff/signin.html", error="limited", email=email), 429
    return render_template("staff/signin_sent.html", minutes=int(signin.LINK_LIFETIME.total_seconds() // 60))


@bp.get("/signin/<token>")
def signin_link(token: str) -> str:
    """The emailed link shows a button: mail scanners that open links must not use up the single use."""
    return render_template("staff/signin_confirm.html", token=token)


@bp.post("/signin/<token>")
def signin_confirm(token: str) -> Response | tuple[str, int]:
    lifetime = timedelta(minutes=services().settings.staff_session_minutes)
    with transaction(services().sessions) as db:
        member = signin.redeem(db, token, utcnow(), _ip())
        if member is None:
            return render_template("staff/refused.html", reason="link"), 400
        session_id = staff_sessions.start(db, member, utcnow(), lifetime, _ip())
        email = member.email
    session.clear()
    session["staff_session"] = session_id
    log.info("staff %s signed in from %s", mask_email(email), _ip())
    return redirect(url_for("staff.index"))


@bp.post("/signout")
def signout() -> Response:
    """Ends the session on the server too: a copy of the cookie stops working."""
    token = session.get("staff_session")
    if token:
        with transaction(services().sessions) as db:
            staff_sessions.end(db, str(token))
    session.clear()
    return redirect(url_for("staff.signin_form"))


# --- boards -----------------------------------------------------------------------------------------------------


@bp.get("/")
@signed_in
def index() -> str:
    boards = services().boards.snapshot.status.boards
    mine = [b for b in boards if g.staff.is_admin or b.id in g.staff_boards]
    mine.sort(key=lambda b: (-b.worst_status.severity, b.display_name(select_language())))
    return render_template("staff/index.html", boards=mine, now=now_toronto())


@bp.route("/boards/<board_id>", methods=["GET", "POST"])
@signed_in
def edit(board_id: str) -> str | tuple[str, int]:
    current = _board_for(board_id)
    snapshot = services().boards.snapshot
    if request.method == "GET":
        return _edit_page(current, edit_form.from_board(current, utcnow()), snapshot.version, current)
    form = edit_form.from_fields(request.form)
    base = edit_form.decode_base(request.form.get("base", ""), _secret(), board_id, _staff_key())
    if base is None:
        # The hidden copy of the board the form showed is signed for this board and this staff member: a missing,
        # forged or altered one (or one from another board's page) is refused, and the board is never taken from it.
        log.warning("staff edit of %s by %s refused: the form's board state is missing, altered or not theirs, "
                    "from %s", board_id, mask_email(g.staff.email), _ip())
        return render_template("staff/refused.html", reason="form"), 400
    version = request.form.get("version", "")
    action = request.form.get("action", "preview")
    if action == "edit":
        return _edit_page(current, edit_form.with_blank_rows(form), version, base)
    edited, errors = edit_form.validate(form, base, utcnow())
    if errors or edited is None:  # (validate gives a board whenever it finds no error)
        log.info("staff edit of %s by %s not saved: %s", board_id, mask_email(g.staff.email),
                 ", ".join(f"{name}={code}" for name, code in errors.items()))
        return _edit_page(current, edit_form.with_blank_rows(form), version, base, errors=errors), 400
    if action == "publish":
        return _publish(current, edited, base, version, form.notify)
    preview = _preview(base, edited)
    if action == "test":
        sent = _send_test(preview[select_language()])
        return _preview_page(current, form, version, base, edited, preview, test_sent=sent)
    return _preview_page(current, form, version, base, edited, preview)


def _secret() -> str:
    return services().settings.secret_key


def _staff_key() -> str:
    """What the edit form's signed state is bound to: the signed-in staff member (by an id never reused)."""
    return g.staff.public_id


def _edit_page(board: Board, form: edit_form.EditForm, version: str, base: Board, errors=None, conflict=None,
               published=None) -> str:
    return render_template("staff/edit.html", board=board, form=form, version=version,
                           base=edit_form.encode_base(base, _secret(), _staff_key()), errors=errors or {},
                           conflict=conflict, published=published, now=now_toronto(),
                           categories=[c.value for c in Category], fingerprint=periods.fingerprint)


def _publish(current: Board, edited: Board, base: Board, version: str, notify: bool) -> str | tuple[str, int]:
    if edited.id != current.id or base.id != current.id:  # never write a board other than the one in the URL
        log.error("staff edit of %s by %s refused: the edit names board %r", current.id, mask_email(g.staff.email),
                  edited.id)
        return render_template("staff/refused.html", reason="form"), 400
    try:
        result = publishing.publish(services().settings, services().sessions, edited, base, version, utcnow(),
                                    notify, g.staff.email, _ip())
    except edits.EditConflict as conflict:
        log.warning("staff edit of %s by %s not saved: the board changed meanwhile", current.id,
                    mask_email(g.staff.email))
        fresh = conflict.current
        return _edit_page(fresh, edit_form.from_board(fresh, utcnow()), services().boards.snapshot.version, fresh,
                          conflict=conflict.changes), 409
    except published.Outdated as outdated:  # another version was stored in between (the lock makes this rare)
        log.warning("staff edit of %s by %s not saved: %s", current.id, mask_email(g.staff.email), outdated)
        return render_template("staff/refused.html", reason="busy"), 503
    except BoardFileError as error:
        log.error("staff edit of %s not saved: the published status document is invalid: %s", current.id, error)
        return render_template("staff/refused.html", reason="file"), 503
    services().boards.refresh(force=True)
    saved = result.saved
    return _edit_page(saved.new, edit_form.from_board(saved.new, utcnow()), saved.version, saved.new,
                      published={"changes": saved.changes, "notify": notify})


def _preview(old: Board, new: Board) -> dict:
    changes = diff(old, new)
    with services().sessions() as db:
        counts = previews.audience(db, new.id, changes, utcnow())
        texts = previews.texts_now(db, new.id, changes)
    rendered = {language: previews.preview(old, new, language, services().settings) for language in ("en", "fr")}
    estimates = previews.estimates(services().settings, counts, texts,
                                   {language: shown.sms_segments for language, shown in rendered.items()})
    return {"changes": changes, "audience": counts, "estimates": estimates, **rendered}


def _preview_page(board: Board, form: edit_form.EditForm, version: str, base: Board, edited: Board, preview: dict,
                  test_sent: bool | None = None) -> str:
    return render_template("staff/preview.html", board=board, form=form, version=version,
                           base=edit_form.encode_base(base, _secret(), _staff_key()), edited=edited, preview=preview,
                           test_sent=test_sent, now=now_toronto())


def _send_test(preview) -> bool:
    """Send the preview email to the signed-in staff member only (never to parents)."""
    language = select_language()
    subject = templates.gettext(language, "[Test] %(subject)s", subject=preview.email_subject)
    message = Message(channel=EMAIL, to=g.staff.email, text=preview.email_text, html=preview.email_html or None,
                      subject=subject, language=language, reference=f"staff-test-{g.staff.id}-{int(time.time())}")
    try:
        channels.build(services().settings)[EMAIL].send(message)
    except DeliveryError as error:
        log.error("test email to %s failed: %s", mask_email(g.staff.email), error)
        return False
    return True


# --- announced periods: call off, change ------------------------------------------------------------------------


@bp.post("/boards/<board_id>/periods/calloff")
@signed_in
def call_off_period(board_id: str) -> str | tuple[str, int]:
    """Call off an announced period: the first post shows what parents will get, the second ("publish") publishes.

    The period is looked up again in the board as published now, by its key and the fingerprint shown: a period
    gone, started, changed or never there is refused and nothing is stored."""
    board = _board_for(board_id)
    key, seen = request.form.get("period", "")[:200], request.form.get("seen", "")[:64] or None
    try:
        new = periods.call_off(board, key, utcnow(), seen)
    except periods.PeriodError as error:
        return _period_refused(board, error)
    period = periods.find(board, key, utcnow())
    if request.form.get("action") == "publish":
        return _publish_period(board, new, request.form.get("notify") == "on")
    return render_template("staff/calloff.html", board=board, period=period, seen=periods.fingerprint(period),
                           preview=_preview(board, new))


@bp.post("/boards/<board_id>/periods/change")
@signed_in
def change_period(board_id: str) -> str | tuple[str, int]:
    """Change an announced period (times, status, schools, message): form, preview, publish, as for an edit."""
    board = _board_for(board_id)
    key, seen = request.form.get("period", "")[:200], request.form.get("seen", "")[:64] or None
    action = request.form.get("action", "form")
    try:
        period = periods.find(board, key, utcnow(), seen)
    except periods.PeriodError as error:
        return _period_refused(board, error)
    page = {"board": board, "period": period, "seen": periods.fingerprint(period)}
    if action == "form":
        return render_template("staff/period.html", fields=_period_fields(period), errors={}, **page)
    fields: dict = {name: request.form.get(name, "")[:periods.TEXT_LIMIT + 1 if name.startswith("message") else 40]
              for name in ("from", "until", "status", "message_en", "message_fr")}
    fields["panels"] = request.form.getlist("panels")[:2]
    new, errors = periods.change(board, key, fields, utcnow(), seen)
    if errors or new is None:
        log.info("change of a period of %s by %s not saved: %s", board_id, mask_email(g.staff.email),
                 ", ".join(f"{name}={code}" for name, code in errors.items()))
        return render_template("staff/period.html", fields=fields, errors=errors, **page), 400
    if action == "publish":
        return _publish_period(board, new, request.form.get("notify") == "on")
    return render_template("staff/period.html", fields=fields, errors={}, preview=_preview(board, new), **page)


def _period_fields(period) -> dict:
    message = period.message.model_dump() if period.message else {}
    return {"from": edit_form.local_time(period.start), "until": edit_form.local_time(period.end),
            "status": period.status.value, "panels": [p.value for p in period.panels],
            "message_en": message.get("en") or "", "message_fr": message.get("fr") or ""}


def _period_refused(board: Board, error: periods.PeriodError) -> tuple[str, int]:
    log.warning("period of %s refused for %s: %s (period %r), from %s", board.id, mask_email(g.staff.email),
                error.code, request.form.get("period", "")[:200], _ip())
    return render_template("staff/calloff.html", board=board, error=error.code, period=None), 409


def _publish_period(board: Board, new: Board, notify: bool) -> str | tuple[str, int]:
    """Publish a period called off or changed through the console's one publish path (audit, report, delivery)."""
    return _publish(board, new, board, services().boards.snapshot.version, notify)


@bp.get("/boards/<board_id>/progress")
@signed_in
def sending_progress(board_id: str) -> str:
    """The board's latest publish, channel by channel. The page reloads itself only when asked (`?auto=1`): a page
    that changes under a screen reader's user without their asking fails WCAG 2.2.1."""
    board = _board_for(board_id)
    with services().sessions() as db:
        found = progress.latest(db, services().settings, utcnow(), board_id)
        estimated = previews.for_publish(db, services().settings, board, found.event_ids) if found else {}
    if found:  # texts of several segments go at a fraction of the configured rate, which is in segments
        found = progress.in_units(found, utcnow(), {channel: e.units / e.count for channel, e in estimated.items()
                                                    if e.units and e.count})
    auto = request.args.get("auto") == "1"
    return render_template("staff/progress.html", board=board, progress=found, refresh=REFRESH_SECONDS, now=utcnow(),
                           auto=auto, estimates=estimated,
                           ends={channel: found.published_at + timedelta(seconds=e.seconds)
                                 for channel, e in estimated.items()} if found else {})


@bp.get("/boards/<board_id>/publishes")
@signed_in
def publish_list(board_id: str) -> str:
    """The board's publishes parents were told about, newest first: when, who, what changed, how many recipients."""
    board = _board_for(board_id)
    with services().sessions() as db:
        found = publishes.of_board(db, board_id, PUBLISHES_SHOWN)
        counts = publishes.recipients(db, [publish for publish, _ in found])
        credited = [publish for publish, events in found if publish.version and not publishes.as_announced(events)]
        authors = audit.authors(db, board_id, [publish.version for publish in credited if publish.version])
    by = {publish.id: authors[publish.version] for publish in credited if publish.version in authors}
    return render_template("staff/publishes.html", board=board, publishes=found, counts=counts, by=by)


@bp.get("/boards/<board_id>/publishes/<int:publish_id>")
@signed_in
def publish_report(board_id: str, publish_id: int) -> str:
    """What went out for one publish: a chart per channel and the same numbers as tables. The id is the publish's
    first change event (`publishes.find` refuses any other number, and the route anything but digits: 404)."""
    board = _board_for(board_id)
    with services().sessions() as db:
        publish = publishes.find(db, board_id, publish_id)
        if publish is None:
            abort(404)
        built = report.build(db, publish, utcnow())
        events = publishes.events(db, publish)
        credited = publish.version if publish.version and not publishes.as_announced(events) else None
        author = audit.authors(db, board_id, [credited] if credited else []).get(credited or "")
    figures = [chart.figure(channel, built.start, built.end) for channel in built.channels]
    return render_template("staff/publish_report.html", board=board, report=built, events=events, author=author,
                           figures=figures, style=_time_style(built))


def _time_style(built: report.Report) -> str:
    """How the report's times read: with seconds (buckets under a minute), or with the date (a day or more)."""
    if built.step < timedelta(minutes=1):
        return "seconds"
    return "date" if built.end - built.start >= timedelta(hours=20) else "minutes"


@bp.get("/boards/<board_id>/history")
@signed_in
def history(board_id: str) -> str:
    board = _board_for(board_id)
    with services().sessions() as db:
        entries = audit.for_board(db, board_id)
    return render_template("staff/history.html", board=board, entries=entries)


# --- webhooks ---------------------------------------------------------------------------------------------------


@bp.route("/boards/<board_id>/webhooks", methods=["GET", "POST"])
@signed_in
def webhooks_page(board_id: str) -> tuple[str, int, dict[str, str]]:
    """The board's webhooks for organisations: list, add (the secret is shown once, on this answer), remove."""
    board = _board_for(board_id)
    error, added, removed = None, None, False
    if request.method == "POST":
        error, added, removed = _change_webhook(board, request.form)
    with services().sessions() as db:
        endpoints = subscriber_webhooks.listed(db, board.id)
    page = render_template("staff/webhooks.html", board=board, endpoints=endpoints, error=error, added=added,
                           limit=services().settings.webhooks_per_board,
                           removed=removed, form=request.form if error else {})
    # The page may hold a secret: never kept by a browser or a proxy.
    return page, 400 if error else 200, {"Cache-Control": "no-store"}


def _change_webhook(board: Board, form) -> tuple[str | None, dict | None, bool]:
    """Apply the posted add/remove; (the reason it was refused, the endpoint added with its secret, removed?)."""
    with transaction(services().sessions) as db:
        if form.get("action") == "remove":
            gone = staff_webhooks.remove(db, form.get("endpoint", "")[:64], [board.id], g.staff.email, _ip())
            return (None, None, True) if gone else ("missing", None, False)
        known = [b.id for b in services().boards.snapshot.status.boards]
        try:
            endpoint = staff_webhooks.add(
                db, services().settings, known, board.id, form.get("url", "")[:2000], form.get("format", "json"),
                form.getlist("panels"), form.get("language", "en"), form.get("owner", "")[:254], g.staff.email,
                _ip())
        except WebhookLimitError as problem:
            log.info("webhook for %s not added by %s: %s", board.id, mask_email(g.staff.email), problem)
            return "full", None, False
        except WebhookError as problem:
            log.info("webhook for %s not added by %s: %s", board.id, mask_email(g.staff.email), problem)
            said = str(problem)
            return ("owner" if "email address" in said else "url" if "URL" in said or "resolve" in said
                    else "invalid"), None, False
        log.info("webhook %s added for %s by %s", endpoint.public_id, board.id, mask_email(g.staff.email))
        return None, {"id": endpoint.public_id, "secret": endpoint.secret, "url": endpoint.masked_url(),
                      "owner": endpoint.owner_email}, False


# --- accounts (administrators) ----------------------------------------------------------------------------------


@bp.route("/accounts", methods=["GET", "POST"], endpoint="accounts")
@signed_in
def accounts_page() -> str | tuple[str, int]:
    """Administrators add and remove staff accounts here (the same as `python -m notifier staff add|remove`)."""
    if not g.staff.is_admin:
        log.warning("staff console refused: %s is not an administrator (accounts page), from %s",
                    mask_email(g.staff.email), _ip())
        abort(403)
    error, done = None, None
    if request.method == "POST":
        error, done = _change_account(request.form)
    with services().sessions() as db:
        rows = accounts.everyone(db)
    return render_template("staff/accounts.html", rows=rows, error=error, done=done), 400 if error else 200


def _change_account(form) -> tuple[str | None, str | None]:
    """Apply the posted add/remove; returns (error message from the domain, or None; what was done)."""
    email = form.get("email", "").strip()[:320]
    with transaction(services().sessions) as db:
        if form.get("action") == "remove":
            if email.lower() == g.staff.email:
                return "self", None
            if accounts.remove(db, email):
                audit.record_account(db, g.staff.email, "staff_remove", email.lower(), [], _ip(), utcnow())
            return None, "removed"
        boards = form.get("boards", "").replace(",", " ").split()
        known = [b.id for b in services().boards.snapshot.status.boards]
        try:
            member = accounts.add(db, email, boards, bool(form.get("admin")), known)
        except accounts.StaffError as problem:
            log.info("account change refused: %s", problem)
            return "invalid", None
        audit.record_account(db, g.staff.email, "staff_add", member.email, boards, _ip(), utcnow())
    return None, "added"
