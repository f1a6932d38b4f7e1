"""The migrated schema of `contacts`: ids never reused on SQLite, and a link key for every contact (0017)."""

from __future__ import annotations

from sqlalchemy import inspect, text

from notifier import migrate


def test_contacts_ids_are_never_reused_and_each_contact_has_a_link_key(tmp_path):
    from notifier.db import make_engine

    url = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
    migrate.upgrade(url)
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            created = connection.execute(text("SELECT sql FROM sqlite_master WHERE name = 'contacts'")).scalar()
            assert "AUTOINCREMENT" in created.upper()
            assert "link_key" in {c["name"] for c in inspect(connection).get_columns("contacts")}
            assert not next(c for c in inspect(connection).get_columns("contacts")
                            if c["name"] == "link_key")["nullable"]
    finally:
        engine.dispose()


def test_the_migration_seeds_the_sequence_above_every_id_and_fills_link_keys(tmp_path):
    from notifier.db import make_engine

    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    migrate.upgrade(url, "0016")
    engine = make_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO subscribers (id, language, notify_on_effect, created_at) "
                                    "VALUES (1, 'en', 0, '2026-11-01 00:00:00')"))
            for contact_id in (3, 9):
                connection.execute(text(
                    "INSERT INTO contacts (id, subscriber_id, channel, address, status, frequency, created_at, "
                    "status_changed_at, morning_reminder, seen_event_id) VALUES (:id, 1, 'email', :address, 'active', "
                    "'immediate', '2026-11-01 00:00:00', '2026-11-01 00:00:00', 0, 0)"),
                    {"id": contact_id, "address": f"p{contact_id}@example.org"})
            connection.execute(text(
                "INSERT INTO outbox (contact_id, channel, digest_key, event_ids, urgent, status, due_at, attempts, "
                "created_at, priority) VALUES (3, 'email', 'digest-1', '1', 0, 'pending', '2026-11-01 00:00:00', 0, "
                "'2026-11-01 00:00:00', 2)"))
        migrate.upgrade(url)
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM outbox")).scalar() == 1  # rebuilding kept it
            assert connection.execute(text("SELECT seq FROM sqlite_sequence WHERE name = 'contacts'")).scalar() == 9
            keys = connection.execute(text("SELECT link_key FROM contacts")).scalars().all()
            assert len(keys) == 2 and all(keys) and keys[0] != keys[1]
    finally:
        engine.dispose()
