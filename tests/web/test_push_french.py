"""The push control and the manifest in French."""

from __future__ import annotations

import pytest


@pytest.fixture
def push_client(push_env):
    from notifier import create_app

    app = create_app({**push_env, "TESTING": True})
    yield app.test_client()
    app.extensions["notifier"].engine.dispose()


def test_the_control_speaks_french_with_french_spacing(push_client):
    page = push_client.get("/boards/tdsb?lang=fr", follow_redirects=True).get_data(as_text=True)
    assert "Recevoir les alertes sur cet appareil" in page
    assert "Sur un iPhone ou un iPad\u00a0:" in page and "«\u00a0Sur l’écran d’accueil\u00a0»" in page
    assert '<link rel="manifest" href="/manifest.webmanifest?lang=fr">' in page


def test_the_french_manifest_names_the_site_in_french(push_client):
    manifest = push_client.get("/manifest.webmanifest?lang=fr").get_json()
    assert manifest["name"] == "État des écoles de l’Ontario" and manifest["short_name"] == "État des écoles"
    assert manifest["lang"] == "fr" and "lang=fr" in manifest["start_url"]
