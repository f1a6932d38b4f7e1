"""The published status document: seeded once from boards.yaml, then only a new version changes it; `boards import`
is how a hand edit reaches production and `boards export` gives the text back, comments included."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from notifier.config import ROOT
from notifier.db import transaction
from notifier.status import published

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.fixture
def env(env: dict[str, str]) -> dict[str, str]:
    """Production's way: the file only seeds an empty table (NOTIFIER_FOLLOW_BOARDS_FILE=0)."""
    return {**env, "NOTIFIER_FOLLOW_BOARDS_FILE": "0"}


def versions(sessions) -> list[published.StatusDocument]:
    with sessions() as session:
        found = published.history(session)
        for version in found:
            session.expunge(version)
        return found


def hand_edit(folder: Path, old: str, new: str) -> Path:
    path = folder / "edited.yaml"
    path.write_text((ROOT / "boards.yaml").read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    return path


def test_the_first_use_seeds_the_first_version_from_boards_yaml_with_its_comments(sessions, boards_file):
    with transaction(sessions) as session:
        first = published.current(session, boards_file, NOW)
        number, text, author = first.id, first.text, first.author
    assert text == boards_file.read_text(encoding="utf-8") and author == published.SEED_AUTHOR
    with transaction(sessions) as session:
        assert published.current(session, boards_file, NOW).id == number  # seeded once


def test_once_seeded_the_file_on_disk_is_never_read_again(sessions, boards_file):
    with transaction(sessions) as session:
        published.seed(session, boards_file, NOW)
    boards_file.write_text("boards: [\n")
    with transaction(sessions) as session:
        assert published.current(session, boards_file, NOW).author == published.SEED_AUTHOR
    assert len(versions(sessions)) == 1


def test_db_upgrade_seeds_the_document(runner, sessions):
    result = runner.invoke("db", "upgrade")
    assert result.exit_code == 0 and "status document version" in result.output
    assert [v.author for v in versions(sessions)] == [published.SEED_AUTHOR]


def test_import_shows_the_changes_per_board_and_publishes_a_new_version(runner, sessions, tmp_path):
    runner.invoke("db", "upgrade")
    edited = hand_edit(tmp_path, "    status: open", "    status: closed")
    result = runner.invoke("boards", "import", str(edited), "--yes", "--note", "strike day")
    assert result.exit_code == 0, result.output
    newest, seed = versions(sessions)
    assert "  adsb: status: open → closed" in result.output
    assert f"published as version {newest.id}" in result.output
    assert newest.note == "strike day" and newest.author.startswith("cli") and newest.parent_id == seed.id
    assert newest.text == edited.read_text(encoding="utf-8")


def test_import_asks_before_publishing(runner, sessions, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from notifier.cli import cli

    runner.invoke("db", "upgrade")
    edited = hand_edit(tmp_path, "    status: open", "    status: closed")
    result = CliRunner().invoke(cli, ["boards", "import", str(edited)], input="n\n")
    assert result.exit_code == 1 and "not imported" in result.output
    assert len(versions(sessions)) == 1


def test_an_invalid_import_is_refused_with_file_and_line_and_the_document_is_unchanged(runner, sessions, tmp_path):
    runner.invoke("db", "upgrade")
    edited = hand_edit(tmp_path, "    status: open", "    status: shut")
    line = edited.read_text(encoding="utf-8").splitlines().index("    status: shut") + 1
    result = runner.invoke("boards", "import", str(edited), "--yes")
    assert result.exit_code == 1
    assert f"{edited}:{line}: boards.0.status: unknown status 'shut'" in result.output
    assert "published status document is unchanged" in result.output
    assert [v.author for v in versions(sessions)] == [published.SEED_AUTHOR]


def test_import_and_export_round_trip_the_text_with_its_comments(runner, sessions, tmp_path):
    runner.invoke("db", "upgrade")
    commented = hand_edit(tmp_path, "boards:\n", "# Checked with the board at 5 a.m.\nboards:\n")
    assert runner.invoke("boards", "import", str(commented), "--yes").exit_code == 0
    exported = tmp_path / "exported.yaml"
    assert runner.invoke("boards", "export", str(exported)).exit_code == 0
    assert exported.read_text(encoding="utf-8") == commented.read_text(encoding="utf-8")
    assert runner.invoke("boards", "export").output == commented.read_text(encoding="utf-8")


def test_importing_the_published_text_again_publishes_nothing(runner, sessions, tmp_path):
    runner.invoke("db", "upgrade")
    same = tmp_path / "same.yaml"
    shutil.copy(ROOT / "boards.yaml", same)
    result = runner.invoke("boards", "import", str(same), "--yes")
    assert result.exit_code == 0 and "nothing to import" in result.output
    assert len(versions(sessions)) == 1


def test_the_clock_tells_parents_about_an_import(runner, sessions, tmp_path, settings):
    from notifier import clock

    clock.tick(settings, sessions)  # the first cycle records the state of the world
    edited = hand_edit(tmp_path, "    status: open", "    status: closed")
    runner.invoke("boards", "import", str(edited), "--yes")
    result = clock.tick(settings, sessions)
    assert [c.kind for c in result.changes][:1] == ["status"] and clock.wakeups(sessions) == 1


def test_the_log_lists_versions_newest_first(runner, sessions, tmp_path):
    runner.invoke("db", "upgrade")
    runner.invoke("boards", "import", str(hand_edit(tmp_path, "    status: open", "    status: closed")), "--yes",
                  "--note", "strike day")
    newest, seed = versions(sessions)
    lines = runner.invoke("boards", "log").output.splitlines()
    assert lines[0].split()[0] == str(newest.id) and lines[0].endswith("strike day")
    assert lines[1].split()[0] == str(seed.id) and "seed" in lines[1]


# --- development's follow mode ------------------------------------------------------------------------------------


def test_in_development_a_hand_edit_of_the_file_is_published(sessions, boards, boards_file):
    with transaction(sessions) as session:
        published.current(session, boards_file, NOW, follow_file=True)
    boards.update("tdsb", status="closed")
    with transaction(sessions) as session:
        newest = published.current(session, boards_file, NOW, follow_file=True)
        assert newest.author == published.FILE_AUTHOR and "status: closed" in newest.text


def test_in_development_an_unchanged_file_never_reverts_a_newer_version(sessions, boards_file):
    with transaction(sessions) as session:
        seed = published.current(session, boards_file, NOW, follow_file=True)
        text = seed.text.replace("    status: open", "    status: closed", 1)
        published.publish(session, text, "comms@example.org", "", NOW, seed.id)
    with transaction(sessions) as session:
        assert published.current(session, boards_file, NOW, follow_file=True).author == "comms@example.org"
