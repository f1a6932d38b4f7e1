"""The settings every command reads, reported the same way everywhere when an environment variable is wrong."""

from __future__ import annotations

import click

from notifier.config import Settings
from notifier.errors import ConfigError


def settings() -> Settings:
    """The process settings, or a clean exit naming the bad variable."""
    try:
        return Settings.from_env()
    except ConfigError as error:
        raise click.ClickException(f"configuration: {error}") from None
