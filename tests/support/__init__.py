"""Test support that is not a fake provider: real processes, log scanning, the HTML checker."""
