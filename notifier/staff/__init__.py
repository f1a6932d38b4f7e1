"""The staff wing: board staff who publish a board's status, safely, from a phone.

Accounts and the boards each may publish, sign-in by emailed single-use link, the edit form as plain data,
announced periods called off or changed, saving one board's edit into the status document, publishing through
the clock's own cycle, and the audit trail.

May import: notifier.clock, notifier.notices, notifier.delivery, notifier.subscribers, notifier.status and
the kernel. No Flask.
"""
