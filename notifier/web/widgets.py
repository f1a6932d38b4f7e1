"""A board's status on other sites: a small page to show in an iframe, and an SVG badge.

Schools, parent councils and local news put the status where their readers already are. Both answer in the
language their URL asks for (`?lang=fr`: an iframe keeps no cookie of ours), are rendered once per generation like
every page (see `pagecache`), and run no script.
"""

from __future__ import annotations

from flask import Blueprint, render_template, url_for
from werkzeug.wrappers import Response

from notifier.status.boards import now_toronto
from notifier.web.pagecache import respond
from notifier.web.security import View, embeddable
from notifier.web.services import board_asked, language_in_url, services

bp = Blueprint("widgets", __name__)

# The widget exists to be framed by any site; nothing but our stylesheet and images load in it, and it has no form.
WIDGET_POLICY = {"default-src": "'none'", "style-src": "'self'", "img-src": "'self'", "base-uri": "'none'",
                 "form-action": "'none'"}
BADGE_POLICY = {"default-src": "'none'", "style-src": "'unsafe-inline'"}
# The iframe size the board page's snippet gives (width, height in CSS pixels): the longest board name, both panels,
# withdrawals and a period announced ahead measure 378 px tall in French in Chromium (tests/web/test_widget_size.py);
# the rest is room for other fonts.
WIDGET_SIZE = (360, 420)


def framed_anywhere(view: View) -> View:
    """The site-wide security headers forbid framing; the widget is made to be framed, under a stricter policy."""
    return embeddable(view, WIDGET_POLICY)


def shown_anywhere(view: View) -> View:
    """The badge is an image other sites show; its one inline style is all it may use."""
    return embeddable(view, BADGE_POLICY)


@bp.get("/boards/<board_id>/embed")
@language_in_url
@framed_anywhere
def embed(board_id: str) -> Response:
    """The status box alone, for an iframe: board, status in words, what is announced next, a link to the page."""
    asked = board_asked(board_id)
    found, language = asked.board, asked.language

    def build() -> str:
        page_url = f"{services().settings.base_url}{url_for('public.board', board_id=board_id, lang=language)}"
        return render_template("public/embed.html", board=found.at(now_toronto()), page_url=page_url)

    return respond(asked.cached("embed", "text/html", build))


@bp.get("/boards/<board_id>/badge.svg")
@language_in_url
@shown_anywhere
def badge(board_id: str) -> Response:
    """The status as an image with its words as its accessible name (`<title>`, role="img", aria-label)."""
    asked = board_asked(board_id)
    found = asked.board

    def build() -> str:
        return render_template("public/badge.svg", board=found.at(now_toronto())).strip() + "\n"

    return respond(asked.cached("badge", "image/svg+xml", build))


def snippets(board_id: str, language: str) -> dict[str, str | int]:
    """What the board page offers to copy: the widget's address and iframe size, and the badge's address."""
    base = services().settings.base_url
    width, height = WIDGET_SIZE
    return {"embed": f"{base}{url_for('widgets.embed', board_id=board_id, lang=language)}",
            "width": width, "height": height,
            "badge": f"{base}{url_for('widgets.badge', board_id=board_id, lang=language)}"}
