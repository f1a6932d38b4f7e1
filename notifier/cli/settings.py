"""The settings every command reads, reported the same way everywhere when an environment variable is wrong, and
the other things commands share: a session factory on the configured database, and who ran the command."""

from __future__ import annotations

import getpass

import click
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import make_engine, make_sessionmaker
from notifier.errors import ConfigError


def settings() -> Settings:
    """The process settings, or a clean exit naming the bad variable."""
    try:
        return Settings.from_env()
    except ConfigError as error:
        raise click.ClickException(f"configuration: {error}") from None


def settings_and_sessions() -> tuple[Settings, sessionmaker[Session]]:
    """The settings, and sessions on the database they name."""
    config = settings()
    return config, make_sessionmaker(make_engine(config.database_url))


def actor() -> str:
    """Who ran the command, for the audit trail and as an author: the shell user (the CLI has no signed-in staff)."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"
