"""Applying migrations from code: `python -m notifier db upgrade`, the run command, and the test suite."""

from __future__ import annotations

from alembic import command
from alembic.config import Config

from notifier.config import ROOT


def alembic_config(database_url: str) -> Config:
    """An Alembic config pointing at this project's migrations and the given database."""
    config = Config()
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "heads") -> None:
    """Bring the database to the newest schema (every branch head: each concern owns its own migrations)."""
    command.upgrade(alembic_config(database_url), revision)
