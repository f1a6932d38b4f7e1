"""The database: one SQLAlchemy engine per process, tables declared next to the code that owns them.

State that the web and clock processes share (change history, subscribers, the outbox) lives here, never in
module globals. Tables are created only by migrations (`python -m notifier db upgrade`).
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    CursorResult,
    DateTime,
    Dialect,
    Engine,
    MetaData,
    Result,
    String,
    Text,
    bindparam,
    create_engine,
    event,
    func,
    select,
    tuple_,
    update,
)
from sqlalchemy import (
    cast as sql_cast,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.sqlite import Insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker
from sqlalchemy.types import TypeDecorator

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Base of every table; constraint names are fixed so migrations name them the same on SQLite and PostgreSQL."""

    metadata = MetaData(naming_convention=NAMING)


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every backend (SQLite forgets offsets; this puts UTC back)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UtcDateTime column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    """Now, in UTC: what every timestamp column stores."""
    return datetime.now(UTC)


def make_engine(url: str) -> Engine:
    """An engine for `url`; for SQLite, the folder is created and the file is opened in WAL mode for concurrency."""
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, pool_pre_ping=True)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(connection: Any, _record: object) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A session whose work is committed at the end of the block, or rolled back on error."""
    with factory() as session, session.begin():
        yield session


class Lock(Base):
    """Named rows used as portable locks: an UPDATE holds the row until commit on SQLite and PostgreSQL alike."""

    __tablename__ = "locks"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    held_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)


def hold_lock(session: Session, name: str) -> None:
    """Take the named lock for the rest of `session`'s transaction (waits while another process holds it)."""
    held = session.execute(update(Lock).where(Lock.name == name).values(held_at=utcnow()))
    if rowcount(held):
        return
    try:  # first use: create the row, which holds it until commit
        with session.begin_nested():
            session.add(Lock(name=name, held_at=utcnow()))
    except IntegrityError:  # another process created it at the same moment: wait for it like any other time
        session.execute(update(Lock).where(Lock.name == name).values(held_at=utcnow()))


def rowcount(result: Result[Any]) -> int:
    """How many rows an UPDATE or DELETE touched. `Session.execute` is typed as returning any `Result`; for those
    statements it is a `CursorResult`, which carries the count."""
    return cast(CursorResult[Any], result).rowcount


def insert_new(session: Session, table: Any) -> Insert:
    """An INSERT that skips rows its table's unique constraints already hold (ON CONFLICT DO NOTHING, which both
    PostgreSQL and SQLite speak): writing what is already written is then a no-op, not an error."""
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert
        # Both dialects' Insert build the same statement; typed as SQLite's, the one both spellings share.
        return cast(Insert, pg_insert(table).on_conflict_do_nothing())
    from sqlalchemy.dialects.sqlite import insert
    return insert(table).on_conflict_do_nothing()


def insert_many(session: Session, table: Any, rows: list[dict[str, Any]], batch: int = 5000) -> None:
    """Insert many rows with the driver's fastest path: `COPY … FROM STDIN` on PostgreSQL, executemany on SQLite.
    For bulk imports, where SQLAlchemy's work per row would cost more than the database's. Each column's bind
    processing runs once per distinct value. The rows go in the session's transaction, like any statement."""
    if not rows:
        return
    connection = session.connection()
    dialect = connection.dialect
    names = list(rows[0])
    pick = operator.itemgetter(*names)
    # Only the columns whose type converts values (the timestamps) are looked at one by one; a cell costs a memo
    # lookup there and nothing elsewhere (a quarter-million-row import writes millions of cells).
    converted: list[tuple[int, Any, dict[Any, Any]]] = [(i, processor, {}) for i, processor in
                 enumerate(table.c[name].type._cached_bind_processor(dialect) for name in names) if processor]

    def values(row: dict[str, Any]) -> tuple[Any, ...]:
        picked: Any = pick(row)
        if len(names) == 1:
            picked = (picked,)
        if not converted:
            return cast(tuple[Any, ...], picked)
        picked = list(picked)
        for index, processor, memo in converted:
            raw = picked[index]
            if raw is not None:
                try:
                    picked[index] = memo[raw]
                except KeyError:
                    picked[index] = memo[raw] = processor(raw)
        return tuple(picked)

    quote = dialect.identifier_preparer.quote
    columns = ", ".join(quote(n) for n in names)
    if dialect.name == "postgresql":
        driver: Any = connection.connection.driver_connection  # psycopg's connection here
        with driver.cursor() as cursor, \
                cursor.copy(f"COPY {quote(table.name)} ({columns}) FROM STDIN") as copy:  # quoted names
            for row in rows:
                copy.write_row(values(row))
        return
    mark = "?" if dialect.paramstyle == "qmark" else "%s"
    sql = f"INSERT INTO {quote(table.name)} ({columns}) VALUES ({', '.join([mark] * len(names))})"  # noqa: S608
    for start in range(0, len(rows), batch):
        connection.exec_driver_sql(sql, [values(row) for row in rows[start:start + batch]])


def among(session: Session, columns: Sequence[Any], values: Sequence[tuple[Any, ...]],
          batch: int = 5000) -> Iterator[ColumnElement[bool]]:
    """Conditions that together select the rows whose `columns` hold one of `values` (tuples, one item a column).

    On PostgreSQL a single condition joining the values sent as one parameter per column: neither SQLAlchemy nor
    the driver builds a statement of thousands of placeholders, and the join uses the index on `columns` (an IN
    list on the second column of an index scans the table). Elsewhere an IN list per `batch` values."""
    if not values:
        return
    if session.get_bind().dialect.name == "postgresql":
        arrays = [_array(column, items) for column, items in zip(columns, zip(*values, strict=True), strict=True)]
        table = func.unnest(*arrays).table_valued(*(f"c{i}" for i in range(len(columns)))).render_derived()
        yield tuple_(*columns).in_(select(table))
        return
    for start in range(0, len(values), batch):
        part = values[start:start + batch]
        yield columns[0].in_([v[0] for v in part]) if len(columns) == 1 else tuple_(*columns).in_(part)


def _array(column: Any, items: Sequence[Any]) -> ColumnElement[Any]:
    """`items` as one PostgreSQL array parameter. Joined into one string that PostgreSQL splits when no item holds
    the separator: the driver sends a list item by item, about 3 µs each, which a quarter of a million addresses
    and their hashes turn into seconds."""
    texts = [str(item) for item in items]
    joined = "\n".join(texts)
    if joined.count("\n") == len(texts) - 1 and (len(texts) > 1 or joined):
        return sql_cast(func.string_to_array(bindparam(None, joined, type_=Text), "\n"), ARRAY(column.type))
    return bindparam(None, list(items), type_=ARRAY(column.type))
