"""notifier: tells Ontario parents whether their children's schools are open during a labour disruption.

The domain core (boards, changes, digests, delivery) never imports Flask; `create_app` lives in `notifier.web` and
is re-exported here so `gunicorn 'notifier:create_app()'` works without the clock process paying for Flask.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Build the web application (see `notifier.web.create_app`)."""
    from notifier.web import create_app as _create_app

    return _create_app(test_config)
