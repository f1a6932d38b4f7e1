"""`python -m notifier check`: validate boards.yaml the way the clock and the site read it."""

from __future__ import annotations

import sys

import click

from notifier.cli.settings import settings
from notifier.errors import BoardFileError
from notifier.status import document


@click.command()
@click.argument("path", required=False, type=click.Path(dir_okay=False))
def check(path: str | None) -> None:
    """Validate boards.yaml (default: NOTIFIER_BOARDS_FILE); print PATH:LINE: message per problem."""
    target = path or str(settings().boards_file)
    try:
        snapshot = document.load(target)
    except BoardFileError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        sys.exit(1)
    click.echo(f"{target}: OK, {len(snapshot.status.boards)} boards")
