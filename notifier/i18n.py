"""Translation catalogues: French text lives in `translations/fr/*.po`, one file per concern, merged at load time.

English is the source language (the msgids), so only French needs a catalogue. The `.po` files are compiled to a
single `messages.mo` when missing or stale, so a fresh clone, the clock and the web app all work without a
separate build step. Used by Flask-Babel for pages and by `notices.templates` for emails and texts.
"""

from __future__ import annotations

import logging
import os
import tempfile
from functools import cache
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

from notifier.config import ROOT

log = logging.getLogger(__name__)

TRANSLATIONS = ROOT / "translations"
LANGUAGES = ("en", "fr")


def compile_catalogues(root: Path = TRANSLATIONS) -> None:
    """Merge each language's `*.po` files into `LC_MESSAGES/messages.mo`, unless it is already up to date."""
    if not root.is_dir():
        return
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        sources = sorted(folder.glob("*.po"))
        target = folder / "LC_MESSAGES" / "messages.mo"
        if not sources:
            continue
        if target.exists() and target.stat().st_mtime >= max(s.stat().st_mtime for s in sources):
            continue
        merged = Catalog(locale=folder.name, domain="messages")
        for source in sources:
            with source.open("rb") as handle:
                for message in read_po(handle, locale=folder.name):
                    if message.id and message.string and not message.fuzzy:
                        merged[message.id] = message
        tmp = None
        try:
            target.parent.mkdir(exist_ok=True)
            # A file of its own, renamed over the target in one step: a process compiling at the same moment (two
            # test workers, the web app and the clock of a fresh clone) never reads or leaves a half-written one.
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".messages-", suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                write_mo(handle, merged)
            os.chmod(tmp, 0o644 & ~_umask())  # mkstemp makes it 0600: other users' processes serve it too
            os.replace(tmp, target)
            tmp = None
        except OSError as error:  # a read-only deploy with a stale .mo: keep serving the one there
            log.warning("could not compile %s: %s", target, error)
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


@cache
def translations(language: str) -> NullTranslations:
    """The compiled translations for `language` ('en' needs none)."""
    if language == "en":
        return NullTranslations()
    compile_catalogues()
    return Translations.load(str(TRANSLATIONS), [language], "messages")


def best_language(accept_language: str | None, offered: tuple[str, ...] = LANGUAGES) -> str:
    """The first of `offered` that an Accept-Language header prefers (fr-CA counts as fr); English otherwise."""
    ranked: list[tuple[float, int, str]] = []
    for position, item in enumerate((accept_language or "").split(",")):
        tag, _, params = item.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in offered and quality > 0:
            ranked.append((-quality, position, primary))
    return min(ranked)[2] if ranked else "en"
