"""The status wing: what each board's schools are doing, as boards.yaml says, and what changed over time.

The board model, reading and writing the status document, the web processes' in-memory copy of it, the diff
between two versions, the recorded history, and the clock's cycle that turns an edit into change events.

May import: the kernel (notifier.config, db, errors, formatting, masking). Nothing else of notifier; no Flask.
"""
