"""Rendering messages outside Flask (emails, texts, digests) with the same templates and catalogues as the pages.

The clock process has no request and no Flask app, so it gets its own Jinja2 environment per language, with the
i18n extension wired to `i18n.translations`. Templates live in `templates/`, never in Python strings.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from notifier import i18n
from notifier.config import ROOT
from notifier.formatting import install_filters

TEMPLATES = ROOT / "templates"

# GSM-7, the alphabet that keeps a text at 160 characters a segment, has no no-break spaces, guillemets or curly
# apostrophe: one of them would send the whole text as UCS-2 (70 a segment). The catalogues keep French typography
# (U+00A0 before ":", U+202F before "?", "!" and ";"), so a text gets the plain characters instead, as it is rendered.
GSM_PLAIN = str.maketrans({"\u00a0": " ", "\u202f": " ", "«": '"', "»": '"', "\u2019": "'"})


@cache
def environment(language: str) -> Environment:
    """A Jinja2 environment whose `_()`/`{% trans %}` speak `language`."""
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.install_gettext_translations(  # type: ignore[attr-defined]  # added by the jinja2.ext.i18n extension
        i18n.translations(language), newstyle=True)
    install_filters(env, language)
    env.globals["language"] = language
    return env


def render(template: str, language: str, **context: Any) -> str:
    """Render `template` (a path under templates/) in `language`; a text (under sms/) in GSM-7's plain characters."""
    rendered = environment(language).get_template(template).render(**context)
    return rendered.translate(GSM_PLAIN) if template.startswith("sms/") else rendered


def gettext(language: str, message: str, **variables: Any) -> str:
    """Translate one message outside a template (e.g. an email subject), with %-style variables."""
    text = i18n.translations(language).gettext(message)
    return text % variables if variables else text
