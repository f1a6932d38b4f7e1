"""The product app plus one trivial endpoint, for bench/status_page.py only (never deployed).

`/bench/hello` goes through the same app, middleware and before-request hooks as the status page, and does
nothing else: it is the "hello world" the status page is compared with.
"""

from __future__ import annotations

from flask import Flask

from notifier import create_app as create_product_app


def create_app() -> Flask:
    """The product app with `/bench/hello` added."""
    app = create_product_app()
    app.add_url_rule("/bench/hello", "bench_hello", lambda: "hello")
    return app
