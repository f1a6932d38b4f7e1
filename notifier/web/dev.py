"""/dev/outbox: what parents would have received, when no SMTP server or Twilio account is configured.

Only in debug mode (NOTIFIER_DEBUG=1, as `make run` sets): elsewhere the page does not exist (404), because the
outbox holds addresses and working confirmation links.
"""

from __future__ import annotations

from flask import Blueprint, abort, render_template

from notifier.delivery.channels.local import read_outbox
from notifier.web.services import services

bp = Blueprint("dev", __name__)


@bp.get("/dev/outbox")
def outbox() -> str:
    """The newest 100 messages of the local outbox folder."""
    settings = services().settings
    if not settings.debug:
        abort(404)
    return render_template("subscribe/outbox.html", messages=read_outbox(settings.outbox_dir)[:100])
