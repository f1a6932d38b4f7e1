"""In headless Chromium: the widget, framed at the size the board page's snippet gives, shows all it says."""

from __future__ import annotations

import re
import threading
from datetime import datetime, timedelta
from html import unescape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from notifier.formatting import TORONTO
from tests.conftest import BASE_URL, make_withdrawal

pytestmark = pytest.mark.browser

ANNOUNCED = {"en": "Announced ahead:", "fr": "Annoncé à l’avance\u00a0:"}
WITHDRAWN = {"en": "No buses for secondary schools.", "fr": "Aucun autobus pour les écoles secondaires."}
LONGEST_NAME = "pvnccdsb"  # Peterborough Victoria Northumberland and Clarington Catholic District School Board


def tomorrow_to_friday() -> dict[str, str]:
    start = (datetime.now(TORONTO) + timedelta(days=1)).replace(hour=0, minute=1, second=0, microsecond=0)
    return {"from": start.strftime("%Y-%m-%dT%H:%M"), "until": (start + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M")}


@pytest.fixture
def disrupted(boards):
    """The longest-named board: panels apart, buses and cleaning withdrawn, a secondary closure announced."""
    boards.update(
        LONGEST_NAME, status="work-to-rule", panels={"elementary": "open"}, effective="2026-11-02T00:01",
        withdrawals=[make_withdrawal(panels=["secondary"]), make_withdrawal(category="custodial-cleaning")],
        upcoming=[{**tomorrow_to_friday(), "status": "closed", "panels": ["secondary"]}],
    )
    return boards


@pytest.fixture
def another_site():
    """A daycare's site on its own port of loopback: `another_site(html)` serves that page and answers its URL."""
    pages: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's hook
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(pages[-1])

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def serve(html: str) -> str:
        pages.append(html.encode())
        return f"http://127.0.0.1:{server.server_port}/"

    yield serve
    server.shutdown()


def snippet(client, language: str) -> str:
    """The iframe the board page offers to copy, as a site would paste it."""
    html = client.get(f"/boards/{LONGEST_NAME}?lang={language}", follow_redirects=True).get_data(as_text=True)
    return unescape(re.search(r"<pre><code>(&lt;iframe .*?&gt;&lt;/iframe&gt;)</code></pre>", html).group(1))


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_widget_fits_the_snippets_frame_without_scrolling(page, live_server, another_site, client, disrupted,
                                                              language):
    iframe = snippet(client, language).replace(BASE_URL, live_server)
    host = f'<!doctype html><html lang="{language}"><head><title>Daycare</title></head><body>{iframe}</body></html>'
    page.goto(another_site(host))
    inner = page.frames[1]
    inner.locator("main").wait_for()
    sizes = inner.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth,"
                           " document.documentElement.scrollHeight, document.documentElement.clientHeight]")
    scroll_width, width, scroll_height, height = sizes
    text = inner.locator("main").inner_text()
    assert ANNOUNCED[language] in text and WITHDRAWN[language] in text
    assert (width, height) == (int(re.search(r'width="(\d+)"', iframe).group(1)),
                               int(re.search(r'height="(\d+)"', iframe).group(1)))
    assert scroll_width <= width and scroll_height <= height, (sizes, text)
