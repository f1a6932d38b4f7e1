"""Contacts: ids never reused on SQLite (AUTOINCREMENT again), and a random `link_key` bound into unsubscribe links.

Migrations 0011 and 0013 rebuilt `contacts` with `batch_alter_table` (SQLite copies the table), which dropped
AUTOINCREMENT: a purged sign-up's id went to the next parent, and an unsubscribe link (which held only the id)
opted that parent out. The table is rebuilt with AUTOINCREMENT, its sequence seeded above every id in use, and each
contact gets a random `link_key` that new unsubscribe links carry (see `notifier/links.py` and docs/security.md).

A later `batch_alter_table("contacts")` must pass `table_kwargs={"sqlite_autoincrement": True}` to keep it, and
keep the outbox rows aside as this one does: on SQLite, dropping the old table deletes them by cascade (0011 and
0013 lost every queued message that way).

Revision ID: 0017
Revises: 0016
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    if sqlite:
        # Rebuilding drops the old table, and with foreign keys on (they cannot be turned off inside the migration's
        # transaction) SQLite deletes every outbox row pointing at a contact first, by cascade: kept aside here.
        bind.execute(sa.text("CREATE TEMP TABLE keep_outbox AS SELECT * FROM outbox WHERE contact_id IS NOT NULL"))
    with op.batch_alter_table("contacts", recreate="always" if sqlite else "auto",
                              table_kwargs={"sqlite_autoincrement": True}) as table:
        table.add_column(sa.Column("link_key", sa.String(32), nullable=True))
    contacts = sa.table("contacts", sa.column("id", sa.Integer), sa.column("link_key", sa.String))
    ids = [row[0] for row in bind.execute(sa.select(contacts.c.id))]
    for contact_id in ids:
        bind.execute(contacts.update().where(contacts.c.id == contact_id)
                     .values(link_key=secrets.token_urlsafe(16)))
    with op.batch_alter_table("contacts", recreate="always" if sqlite else "auto",
                              table_kwargs={"sqlite_autoincrement": True}) as table:
        table.alter_column("link_key", existing_type=sa.String(32), nullable=False)
    if sqlite:
        bind.execute(sa.text("INSERT INTO outbox SELECT * FROM keep_outbox WHERE id NOT IN (SELECT id FROM outbox)"))
        bind.execute(sa.text("DROP TABLE keep_outbox"))
        # Above every id still referenced (outbox rows of deleted contacts are gone with them, by cascade).
        highest = bind.execute(sa.text(
            "SELECT max(coalesce((SELECT max(id) FROM contacts), 0), "
            "coalesce((SELECT max(contact_id) FROM outbox), 0))")).scalar() or 0
        bind.execute(sa.text("DELETE FROM sqlite_sequence WHERE name = 'contacts'"))
        bind.execute(sa.text("INSERT INTO sqlite_sequence (name, seq) VALUES ('contacts', :seq)"), {"seq": highest})


def downgrade() -> None:
    bind = op.get_bind()
    sqlite = bind.dialect.name == "sqlite"
    if sqlite:
        bind.execute(sa.text("CREATE TEMP TABLE keep_outbox AS SELECT * FROM outbox WHERE contact_id IS NOT NULL"))
    with op.batch_alter_table("contacts", table_kwargs={"sqlite_autoincrement": True}) as table:
        table.drop_column("link_key")
    if sqlite:
        bind.execute(sa.text("INSERT INTO outbox SELECT * FROM keep_outbox WHERE id NOT IN (SELECT id FROM outbox)"))
        bind.execute(sa.text("DROP TABLE keep_outbox"))
