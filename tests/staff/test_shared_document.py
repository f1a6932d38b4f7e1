"""One published status document for every container: a staff publish on the web is what the clock diffs, even
though each container has a boards.yaml of its own (issue 13: the clock recorded the web's publish back and told
parents again; a deploy shipping the repository's boards.yaml reverted every published status).

These run the production way: NOTIFIER_FOLLOW_BOARDS_FILE=0, so a container's own file only seeds an empty table.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select

from notifier import clock, create_app
from notifier.config import ROOT, Settings
from notifier.delivery.channels.local import read_outbox
from notifier.delivery.outbox import OutboxRow
from notifier.status import document, published
from notifier.status.history import BoardState, ChangeEvent
from tests.staff.conftest import make_subscriber

PARENT = "parent@example.org"


@pytest.fixture
def env(env: dict[str, str]) -> dict[str, str]:
    """The web container's settings, as in production (its own boards.yaml only seeds an empty table)."""
    return {**env, "NOTIFIER_FOLLOW_BOARDS_FILE": "0"}


def container(env: dict[str, str], folder: Path) -> dict[str, str]:
    """Another container's settings: the same database, its own working directory and repository boards.yaml."""
    folder.mkdir()
    shutil.copy(ROOT / "boards.yaml", folder / "boards.yaml")
    return {**env, "NOTIFIER_BOARDS_FILE": str(folder / "boards.yaml"), "NOTIFIER_INSTANCE_DIR": str(folder / "i"),
            "NOTIFIER_OUTBOX_DIR": str(folder / "outbox")}


@pytest.fixture
def clock_settings(env: dict[str, str], tmp_path: Path) -> Settings:
    return Settings.from_env(container(env, tmp_path / "clock"))


def counts(sessions) -> tuple[int, int]:
    with sessions() as session:
        return (session.scalar(select(func.count()).select_from(ChangeEvent)),
                session.scalar(select(func.count()).select_from(OutboxRow)
                               .where(~OutboxRow.digest_key.startswith("staff-signin-"))))  # the sign-in email


def tdsb_recorded(sessions) -> str:
    with sessions() as session:
        return session.get(BoardState, "tdsb").data["status"]


def test_a_publish_on_the_web_is_seen_by_the_clock_of_another_container(console, sessions, clock_settings):
    clock.tick(clock_settings, sessions)  # the clock's first cycle records the state of the world
    make_subscriber(sessions, "tdsb", PARENT)
    assert console.edit("tdsb", status="closed").status_code == 200
    events, planned = counts(sessions)
    assert events > 0 and planned == 0  # the web recorded the change; planning is the clock's

    result = clock.tick(clock_settings, sessions)  # the clock, whose own boards.yaml still says "open"
    clock.tick(clock_settings, sessions)

    assert result.ok and result.changes == []  # nothing recorded back
    assert counts(sessions) == (events, 1)  # one message planned, once
    assert tdsb_recorded(sessions) == "closed"
    assert [m["to"] for m in read_outbox(clock_settings.outbox_dir)].count(PARENT) == 1  # told once


def test_the_clock_container_file_is_never_read_once_a_version_is_published(console, sessions, clock_settings):
    clock.tick(clock_settings, sessions)
    console.edit("tdsb", status="closed")
    clock_settings.boards_file.write_text("boards: [\n")  # even a broken file there changes nothing
    assert clock.tick(clock_settings, sessions).ok
    assert tdsb_recorded(sessions) == "closed"


def test_a_deploy_shipping_the_old_boards_yaml_does_not_revert_the_published_status(console, sessions, env,
                                                                                     tmp_path, first_cycle):
    make_subscriber(sessions, "tdsb", PARENT)
    console.edit("tdsb", status="closed")
    clock.tick(Settings.from_env(env), sessions)  # the running clock plans the parents' message
    recorded = counts(sessions)

    deployed = container(env, tmp_path / "deploy")  # a new release: a fresh checkout, its boards.yaml says "open"
    clock.tick(Settings.from_env(deployed), sessions)
    app = create_app({**deployed, "TESTING": True})
    try:
        page = app.test_client().get("/api/boards/tdsb").get_json()
    finally:
        app.extensions["notifier"].engine.dispose()

    assert page["board"]["status"] == "closed"
    assert counts(sessions) == recorded and tdsb_recorded(sessions) == "closed"


def test_every_web_process_serves_the_version_published_on_another(console, env, tmp_path, sessions):
    other = create_app({**container(env, tmp_path / "web2"), "TESTING": True})
    try:
        before = other.test_client().get("/healthz").get_json()["boards_file"]["document"]
        console.edit("tdsb", status="closed")
        other.extensions["notifier"].boards.refresh(force=True)  # what the next second's look does
        client = other.test_client()
        assert client.get("/api/boards/tdsb").get_json()["board"]["status"] == "closed"
        assert client.get("/healthz").get_json()["boards_file"]["document"] == before + 1
    finally:
        other.extensions["notifier"].engine.dispose()


def test_a_publish_is_a_new_version_with_its_author_and_the_comments_kept(console, sessions, settings):
    console.edit("tdsb", status="closed")
    with sessions() as session:
        seed, edit = published.history(session)[::-1]
    assert seed.author == published.SEED_AUTHOR and edit.author == "comms@tdsb.example.org"
    assert edit.parent_id == seed.id and edit.note.startswith("tdsb: ")
    assert "# " in edit.text and edit.text.count("\n#") == seed.text.count("\n#")
    assert document.parse(edit.text).by_id()["tdsb"].status == "closed"
    assert settings.boards_file.read_text() == (ROOT / "boards.yaml").read_text()  # the disk is not the truth
