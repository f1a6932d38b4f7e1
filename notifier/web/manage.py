"""Managing without passwords: the signed manage link, a fresh link on request, and one-click unsubscribe.

The lost-link answer is the same whether or not the address is subscribed, and as quick: the link is queued, not
sent while the visitor waits. The unsubscribe URL is the RFC 8058
one-click target: a POST with no cookies and no token but the one in the URL unsubscribes and answers 200 (no
redirect); a GET only shows a page with the button, because mail scanners fetch links.
"""

from __future__ import annotations

from flask import Blueprint, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from notifier import links
from notifier.db import transaction, utcnow
from notifier.notices import account
from notifier.subscribers import addresses, preferences, ratelimit, signup
from notifier.subscribers.contacts import find_contact, mark_opted_out
from notifier.subscribers.models import Contact, ContactStatus, Subscriber
from notifier.web.security import csrf
from notifier.web.services import select_language, services, speak
from notifier.web.subscribe import boards_by_id, client_ip, read_rows, sorted_boards

bp = Blueprint("manage", __name__)


def _speak(subscriber: Subscriber) -> None:
    """Pages about a subscription are in its language, unless the visitor chose one with the toggle."""
    speak(subscriber.language)


def _load(token: str) -> tuple[int | None, str | None]:
    try:
        return links.read_manage(services().settings, token), None
    except links.LinkError as error:
        return None, error.reason


def _page(token: str, subscriber: Subscriber, errors: dict | None = None, status: int = 200,
          changes: preferences.Changes | None = None) -> tuple[str, int]:
    _speak(subscriber)
    grouped: dict[str, list[str]] = {}
    for follow in subscriber.follows:
        grouped.setdefault(follow.board_id, []).append(follow.panel)
    rows = changes.follows if changes else list(grouped.items())
    rows = list(rows) + [("", [])]
    return render_template(
        "manage/manage.html", token=token, subscriber=subscriber, rows=rows, errors=errors or {},
        live=preferences.live_contacts(subscriber), saved="saved" in request.args, changes=changes,
        boards=sorted_boards(select_language()), display_phone=addresses.display_phone,
        calendar={"https": links.calendar_url(services().settings, subscriber.id),
                  "webcal": links.calendar_url(services().settings, subscriber.id, scheme="webcal")},
    ), status


@bp.get("/manage/<token>")
def manage(token: str) -> tuple[str, int]:
    """The family's settings, opened with the signed link from any email."""
    subscriber_id, problem = _load(token)
    with services().sessions() as session:
        subscriber = session.get(Subscriber, subscriber_id) if subscriber_id else None
        if subscriber is None or not preferences.live_contacts(subscriber):
            return render_template("subscribe/link_problem.html", problem=problem or "gone"), 400 if problem else 404
        return _page(token, subscriber)


@bp.post("/manage/<token>")
def save(token: str) -> tuple[str, int] | Response:
    """Save the settings; new addresses are added as pending and sent their confirmation."""
    subscriber_id, problem = _load(token)
    settings, sessions, now, boards = services().settings, services().sessions, utcnow(), boards_by_id()
    changes = preferences.Changes(
        follows=read_rows(), language=request.form.get("language", ""),
        notify_on_effect=bool(request.form.get("notify_on_effect")),
        frequencies={int(k.split("-", 1)[1]): v for k, v in request.form.items()
                     if k.startswith("frequency-") and k.split("-", 1)[1].isdigit()},
        stop={int(v) for v in request.form.getlist("stop") if v.isdigit()},
        new_email=request.form.get("new_email", "")[:320], new_phone=request.form.get("new_phone", "")[:40],
        new_frequency=request.form.get("new_frequency", "immediate"),
        reminders={int(v) for v in request.form.getlist("reminder") if v.isdigit()},
        new_reminder=bool(request.form.get("new_reminder")),
    )
    with transaction(sessions) as session:
        allowed = ratelimit.allow(session, f"manage:ip:{client_ip()}", settings.signup_limit_per_ip, signup.HOUR, now)
    with transaction(sessions) as session:
        subscriber = session.get(Subscriber, subscriber_id) if subscriber_id else None
        if subscriber is None or not preferences.live_contacts(subscriber):
            return render_template("subscribe/link_problem.html", problem=problem or "gone"), 400 if problem else 404
        if not allowed:
            return _page(token, subscriber, {"new": "too_many_from_ip"}, 429, changes)
        try:
            valid = preferences.validate(session, subscriber, changes, boards)
        except signup.SignupError as error:
            return _page(token, subscriber, error.errors, 400, changes)
        given = valid.addresses or valid.withheld
        limited = signup.within_limits(session, settings, valid, now) if given else None
        if limited:
            return _page(token, subscriber, {"new": limited}, 429, changes)
        stored = preferences.apply(session, subscriber, changes, valid, now, client_ip())
        messages = [account.confirmation(settings, c, boards) for c in stored.to_confirm]
        messages += [account.manage_link(settings, c, boards) for c in stored.already_active]
        left = not preferences.live_contacts(subscriber)
    account.queue(settings, sessions, messages)  # not waited for: the answer is the same whatever was added
    if left:
        return render_template("manage/left.html"), 200
    return redirect(url_for("manage.manage", token=token, saved=1), 303)


@bp.post("/manage/<token>/leave")
def leave(token: str) -> tuple[str, int]:
    """Stop every address of the family at once."""
    subscriber_id, problem = _load(token)
    with transaction(services().sessions) as session:
        subscriber = session.get(Subscriber, subscriber_id) if subscriber_id else None
        if subscriber is None:
            return render_template("subscribe/link_problem.html", problem=problem or "gone"), 400 if problem else 404
        _speak(subscriber)
        preferences.leave(session, subscriber, client_ip())
    return render_template("manage/left.html"), 200


@bp.get("/manage")
def lost() -> str:
    """The form to ask for a fresh manage link."""
    return render_template("manage/lost.html", errors={}, value="")


@bp.post("/manage")
def send_link() -> tuple[str, int]:
    """Send a fresh manage link if the address is subscribed; answer the same either way."""
    raw = request.form.get("address", "")[:320]
    settings, sessions, now = services().settings, services().sessions, utcnow()
    with transaction(sessions) as session:
        allowed = ratelimit.allow(session, f"lost:ip:{client_ip()}", settings.signup_limit_per_ip, signup.HOUR, now)
    if not allowed:
        return render_template("manage/lost.html", errors={"address": "too_many_from_ip"}, value=raw), 429
    try:
        channel, address = addresses.parse_any(raw)
    except addresses.ContactError as error:
        return render_template("manage/lost.html", errors={"address": error.code}, value=raw), 400
    with transaction(sessions) as session:
        valid = signup.Signup([(channel, address, "")], [], "en", False)
        limited = signup.within_limits(session, settings, valid, now, scope="lost")
        if limited:
            return render_template("manage/lost.html", errors={"address": limited}, value=raw), 429
        contact = find_contact(session, channel, address)
        live = contact is not None and contact.status in (ContactStatus.ACTIVE.value, ContactStatus.PENDING.value)
        messages = [account.manage_link(settings, contact, boards_by_id())] if live and contact else []
    account.queue(settings, sessions, messages)  # not waited for: answered at once, subscribed or not
    return render_template("manage/lost_sent.html", channel=channel), 200


def _unsubscribe_target(token: str) -> tuple[int | None, str | None]:
    """The contact an unsubscribe link names, or (None, "expired" / "invalid"); a link made for an earlier holder
    of the contact's id (a purged sign-up's) is invalid."""
    try:
        contact_id, key, signed_at = links.read_unsubscribe(services().settings, token)
    except links.LinkError as error:
        return None, error.reason
    with services().sessions() as session:
        contact = session.get(Contact, contact_id)
        if contact is not None and not links.unsubscribe_names(key, signed_at, contact.link_key, contact.created_at):
            return None, "invalid"
    return contact_id, None


@bp.get("/unsubscribe/<token>")
def unsubscribe_page(token: str) -> tuple[str, int]:
    """The page behind the unsubscribe link: a button, because mail scanners open links."""
    contact_id, problem = _unsubscribe_target(token)
    if problem:
        return render_template("subscribe/link_problem.html", problem=problem), 400
    with services().sessions() as session:
        contact = session.get(Contact, contact_id)
        if contact is not None:
            _speak(contact.subscriber)
        gone = contact is None or contact.status == ContactStatus.OPTED_OUT.value
        return render_template("manage/unsubscribe.html", token=token, gone=gone), 200


@bp.post("/unsubscribe/<token>")
@csrf.exempt
def unsubscribe(token: str) -> tuple[str, int]:
    """RFC 8058 one-click: no cookies, no CSRF token, no redirect; 200 whether or not it was still subscribed."""
    contact_id, problem = _unsubscribe_target(token)
    if problem:
        return render_template("subscribe/link_problem.html", problem=problem), 400
    with transaction(services().sessions) as session:
        contact = session.get(Contact, contact_id)
        if contact is not None:
            _speak(contact.subscriber)
            if contact.status != ContactStatus.OPTED_OUT.value:
                method = "one-click" if request.form.get("List-Unsubscribe") == "One-Click" else "email-link"
                mark_opted_out(session, contact.channel, contact.address, method, client_ip())
    return render_template("manage/unsubscribed.html"), 200
