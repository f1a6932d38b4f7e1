"""A change announced ahead, then time passing through the clock: the "now in effect" notice says what is in force.

The clock's cycle runs at successive moments (before, then after the announced start), records what time alone
changed, and the notice goes out through a real SMTP server and the real twilio SDK, as fully as any first notice: the
board, the schools concerned, their status, the services withdrawn and the board's message, in the reader's
language.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.conftest import NOW, make_withdrawal

NBSP = "\u00a0"
EXPECTED = {
    "en": {
        "subject": "Elementary schools closed: Toronto District School Board",
        "email": ["Now in effect, as announced:", "Elementary schools are closed to students.",
                  "Service withdrawn at elementary schools: School buses and transportation.",
                  "No buses to elementary schools.", "Message from the board: Elementary teachers are on strike.",
                  "https://status.example.org/boards/tdsb?lang=en"],
        "sms": ["Toronto District School Board: Now in effect, as announced: Elementary schools are closed to "
                "students. Withdrawn at elementary schools: School buses and transportation.", "?lang=en"],
    },
    "fr": {
        "subject": f"Écoles élémentaires fermées{NBSP}: Toronto District School Board",
        "email": [f"En vigueur maintenant, comme annoncé{NBSP}:", "Les écoles élémentaires sont fermées aux élèves.",
                  f"Service retiré dans les écoles élémentaires{NBSP}: Transport scolaire (autobus).",
                  "Aucun autobus vers les écoles élémentaires.",
                  f"Message du conseil scolaire{NBSP}: Grève des enseignants de l’élémentaire.",
                  "https://status.example.org/boards/tdsb?lang=fr"],
        "sms": ["Toronto District School Board : En vigueur maintenant, comme annoncé : les écoles élémentaires sont "
                "fermées aux élèves. Retiré dans les écoles élémentaires : Transport scolaire (autobus).", "?lang=fr"],
    },
}


@pytest.mark.parametrize("language", ["en", "fr"])
def test_elementary_closed_two_minutes_ahead_is_told_in_full_when_it_takes_effect(
    run, subscribe, boards, smtp_server, twilio_server, language
):
    run(NOW)
    _, email, phone = subscribe(notify_on_effect=True, language=language)
    boards.update("tdsb", upcoming=[{
        "from": (NOW + timedelta(minutes=2)).isoformat(), "status": "closed", "panels": ["elementary"],
        "message": {"en": "Elementary teachers are on strike.", "fr": "Grève des enseignants de l’élémentaire."},
        "withdrawals": [make_withdrawal(panels=["elementary"], description={
            "en": "No buses to elementary schools.", "fr": "Aucun autobus vers les écoles élémentaires."})],
    }])
    run(NOW + timedelta(seconds=5))  # the announcement
    assert (len(smtp_server[0].messages()), len(twilio_server.messages)) == (1, 1)
    run(NOW + timedelta(minutes=1))  # not yet
    assert (len(smtp_server[0].messages()), len(twilio_server.messages)) == (1, 1)
    run(NOW + timedelta(minutes=3))  # the clock's next cycle after it took effect
    mails, texts = smtp_server[0].messages()[1:], twilio_server.messages[1:]
    assert [m["To"] for m in mails] == [email] and [t["to"] for t in texts] == [phone]
    expected = EXPECTED[language]
    assert mails[0]["Subject"] == expected["subject"]
    body = mails[0].get_body(("plain",)).get_content()
    assert body.splitlines()[0] == expected["subject"]
    assert [line for line in expected["email"] if line not in body] == [], body
    html = mails[0].get_body(("html",)).get_content()
    assert expected["subject"] in html
    sms = texts[0]["_form"]["Body"]
    assert [line for line in expected["sms"] if line not in sms] == [], sms
