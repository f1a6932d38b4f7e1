"""The W3C Nu HTML checker fixture: many documents in one run, errors per document, valid ones empty."""

from __future__ import annotations

VALID = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Schools</title></head>
<body><main><h1>Schools are open</h1><p><time datetime="2026-11-23T08:00:00">8 a.m.</time></p></main></body></html>
"""

BROKEN = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"></head>
<body><div><p>Closed</span></div>
<time datetime="2026-11-23T08:00:00.123456">8 a.m.</time></body></html>
"""


def test_a_valid_document_has_no_errors_and_a_broken_one_has_each_of_its_errors(vnu):
    found = vnu.errors({"valid": VALID, "broken": BROKEN})
    assert found["valid"] == []
    text = "\n".join(found["broken"])
    assert "title" in text  # <head> without <title>
    assert "Stray end tag “span”" in text
    assert "datetime" in text  # six digits of a second (TECH-NOTES item 32)
    assert all(message.startswith("line ") for message in found["broken"])


def test_every_name_given_is_answered_even_with_slashes_in_it(vnu):
    documents = {f"/boards/board-{i}": VALID for i in range(5)}
    assert vnu.errors(documents) == {name: [] for name in documents}


def test_nothing_to_check_starts_no_java(vnu):
    assert vnu.errors({}) == {}


def test_a_missing_checker_says_how_to_install_it(tmp_path):
    from tests.support.vnu import Vnu

    assert "make vnu" in Vnu(jar=tmp_path / "vnu.jar").available()
