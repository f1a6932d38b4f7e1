"""/dev/outbox: what parents would have received, when no SMTP server or Twilio account is configured, and a way to
answer a text as the parent would (OUI, STOP, AIDE…), so a text sign-up can be tried from start to finish.

Only in debug mode (NOTIFIER_DEBUG=1, as `make run` sets) and only from this machine: elsewhere these pages do not
exist (404), because the outbox holds addresses and working confirmation links, and a reply acts as the parent.
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request

from notifier.delivery.channels.local import read_outbox
from notifier.web.callers import is_loopback, socket_peer
from notifier.web.services import services
from notifier.web.twilio_inbound import answer

bp = Blueprint("dev", __name__, url_prefix="/dev")

SHOWN = 100
WORDS = ("OUI", "YES", "STOP", "ARRET", "AIDE", "HELP")


@bp.before_request
def only_in_debug_on_this_machine() -> None:
    """404 unless debug mode is on and the request comes from a loopback address (the socket's, not a header's)."""
    if not services().settings.debug or not _from_loopback():
        abort(404)


def _from_loopback() -> bool:
    # Both the socket's address and, behind NOTIFIER_TRUSTED_PROXIES proxies, the caller they saw must be this
    # machine: a forwarded header alone never opens the page, and a proxy on this machine does not either.
    return is_loopback(socket_peer()) and is_loopback(request.remote_addr)


@bp.get("/outbox")
def outbox() -> str:
    """The newest messages of the local outbox folder, each text with a form to answer it as the parent."""
    return render_template("subscribe/outbox.html", messages=read_outbox(services().settings.outbox_dir)[:SHOWN],
                           words=WORDS, exchange=None)


@bp.post("/outbox/reply")
def reply() -> tuple[str, int]:
    """Answer a text as its recipient: the same handler as Twilio's inbound webhook, then its reply in the outbox."""
    settings = services().settings
    parent = request.form.get("from", "")[:40]
    said = (request.form.get("word") or request.form.get("text", ""))[:1600]
    if not parent or not said.strip():
        return render_template("subscribe/outbox.html", messages=read_outbox(settings.outbox_dir)[:SHOWN],
                               words=WORDS, exchange={"from": parent, "said": said, "problem": True}), 400
    answered = answer(parent, said)  # which sends the answer through the outbox, in the parent's language
    exchange = {"from": parent, "said": said, "answer": answered, "problem": False}
    return render_template("subscribe/outbox.html", messages=read_outbox(settings.outbox_dir)[:SHOWN],
                           words=WORDS, exchange=exchange), 200
