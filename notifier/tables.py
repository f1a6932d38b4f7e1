"""Every module that declares tables, imported together so `Base.metadata` is complete (tests, tooling)."""

from notifier import cycle, history, subscriptions  # noqa: F401
from notifier.db import Base

metadata = Base.metadata
