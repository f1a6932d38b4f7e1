"""Every module that declares tables, imported together so `Base.metadata` is complete (tests, tooling)."""

import notifier.consent  # noqa: F401 - the consent hash key (subscriptions)
import notifier.ratelimit  # noqa: F401 - rate-limit counters (subscriptions)
import notifier.staff  # noqa: F401 - staff accounts, sign-in links, audit (staff console)
from notifier import cycle, history, outbox, subscriptions  # noqa: F401
from notifier.db import Base

metadata = Base.metadata
