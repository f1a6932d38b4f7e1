"""French typed by staff with plain spaces is saved, previewed and sent as a careful French translator writes it."""

from __future__ import annotations

import html

TYPED = "Correction : les écoles secondaires sont ouvertes ; voir « Info-grève » !"
FRENCH = "Correction\u00a0: les écoles secondaires sont ouvertes\u202f; voir «\u00a0Info-grève\u00a0»\u202f!"


def test_the_preview_shows_staffs_french_with_french_spacing(console, first_cycle):
    page = html.unescape(console.edit("tdsb", action="preview", status="closed", message_fr=TYPED)
                         .get_data(as_text=True))
    email = page[page.index('class="email-text" data-language="fr"'):]
    assert FRENCH in email[:email.index("</pre>")]
    assert f'name="message_fr" value="{FRENCH}"' in page


def test_staffs_french_is_saved_with_french_spacing(console, client, first_cycle):
    console.edit("tdsb", status="closed", message_fr=TYPED, w0_category="transportation",
                 w0_description_fr="Aucun autobus: voir l'horaire ; merci")
    page = html.unescape(client.get("/boards/tdsb?lang=fr", follow_redirects=True).get_data(as_text=True))
    assert FRENCH in page
    assert "Aucun autobus\u00a0: voir l'horaire\u202f; merci" in page


def test_english_and_links_are_left_as_typed(console, client, first_cycle):
    console.edit("tdsb", status="closed", message_en="Note: see https://example.org/a?b=c ; thanks!")
    page = html.unescape(client.get("/boards/tdsb?lang=en", follow_redirects=True).get_data(as_text=True))
    assert "Note: see https://example.org/a?b=c ; thanks!" in page
